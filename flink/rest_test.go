package flink

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/flink/flinktest"
)

// The stand-in answers with shapes seen from Flink 2.2.1 in testenv
// (testenv/flink.go reads the same fields from the real JobManager).
func standIn(t *testing.T, routes map[string]func(w http.ResponseWriter, body map[string]any)) *RESTClient {
	return NewRESTClient(flinktest.REST(t, routes) + "/")
}

func TestRESTReads(t *testing.T) {
	c := standIn(t, map[string]func(http.ResponseWriter, map[string]any){
		"GET /config": func(w http.ResponseWriter, _ map[string]any) {
			io.WriteString(w, `{"refresh-interval":3000,"timezone-name":"UTC","flink-version":"2.2.1","flink-revision":"x"}`)
		},
		"GET /jobs/overview": func(w http.ResponseWriter, _ map[string]any) {
			io.WriteString(w, `{"jobs":[{"jid":"a1","name":"events","start-time":1,"end-time":-1,"duration":5,"state":"RUNNING","last-modification":2,"tasks":{"running":2},"pending-operators":0}]}`)
		},
		"GET /jobs/a1/checkpoints": func(w http.ResponseWriter, _ map[string]any) {
			io.WriteString(w, `{"counts":{"restored":0,"total":3,"in_progress":0,"completed":3,"failed":0},
			"latest":{"completed":{"id":3,"status":"COMPLETED","is_savepoint":false,"external_path":"file:/ck/chk-3"},
			"savepoint":{"id":2,"status":"COMPLETED","is_savepoint":true,"checkpoint_type":"SAVEPOINT","external_path":"file:/sp/savepoint-a1-x","state_size":4562,"trigger_timestamp":1000,"latest_ack_timestamp":1100},
			"failed":null,"restored":null},
			"history":[{"id":3,"status":"COMPLETED","is_savepoint":false,"external_path":"file:/ck/chk-3","trigger_timestamp":1200},{"id":2,"status":"COMPLETED","is_savepoint":true,"external_path":"file:/sp/savepoint-a1-x","trigger_timestamp":1000}]}`)
		},
	})
	ctx := context.Background()
	if v, err := c.Version(ctx); err != nil || v != "2.2.1" {
		t.Fatalf("version %q %v", v, err)
	}
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "a1" || jobs[0].State != "RUNNING" {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	h, err := c.Checkpoints(ctx, "a1")
	if err != nil || len(h.History) != 2 || h.Latest.Savepoint.ExternalPath != "file:/sp/savepoint-a1-x" || h.Latest.Savepoint.StateSize != 4562 || !h.History[1].IsSavepoint {
		t.Fatalf("checkpoints %+v %v", h, err)
	}
	_, err = c.Checkpoints(ctx, "nope")
	var re *RESTError
	if !asRESTError(err, &re) || re.Status != 404 || !strings.Contains(err.Error(), "Not found: /jobs/nope/checkpoints") {
		t.Fatalf("missing job: %v", err)
	}
}

func asRESTError(err error, re **RESTError) bool {
	e, ok := err.(*RESTError)
	*re = e
	return ok
}

// RecordsSeen counts what the sources emitted, or else what any vertex
// received; a job chained into one vertex shows nothing (Flink counts only
// records exchanged over the network).
func TestJobDetailRecordsSeen(t *testing.T) {
	for body, want := range map[string]int64{
		`{"jid":"a","state":"RUNNING","vertices":[{"name":"Source: events","metrics":{"read-records":0,"write-records":7}},{"name":"Sink: out","metrics":{"read-records":5,"write-records":0}}]}`: 7,
		`{"jid":"a","state":"RUNNING","vertices":[{"name":"Map","metrics":{"read-records":3,"write-records":3}}]}`:                                                                                3,
		`{"jid":"a","state":"RUNNING","vertices":[{"name":"Source: events -> Sink: out","metrics":{"read-records":0,"write-records":0}}]}`:                                                        0,
	} {
		var d JobDetail
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		if got := d.RecordsSeen(); got != want {
			t.Errorf("%s: %d records seen, want %d", body, got, want)
		}
	}
}
