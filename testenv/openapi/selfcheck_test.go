package openapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// The checks can fail: answers and requests that break the document in one
// place each are caught, and named there.
func TestTheChecksCatchWhatBreaksTheDocument(t *testing.T) {
	spec, err := LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	const mirror = `"kind":"KafkaMirrorData","metadata":{"self":"x"},"link_name":"l","mirror_topic_name":"t","source_topic_name":"t","num_partitions":1`
	var answer string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	defer upstream.Close()
	p, stop, err := spec.NewProxy(upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const mirrors = "/kafka/v3/clusters/c/links/l/mirrors"
	good := `{"kind":"KafkaMirrorDataList","metadata":{"self":"x","next":null},"data":[{` + mirror +
		`,"mirror_lags":[{"partition":0,"lag":0,"last_source_fetch_offset":5}],"mirror_status":"ACTIVE","state_time_ms":1}]}`
	for _, c := range []struct {
		name, method, path, body, answer, want string
		auth                                   bool
	}{
		{"a good exchange", "GET", mirrors, "", good, "", true},
		{"a mirror state the document does not list", "GET", mirrors, "", strings.Replace(good, `"ACTIVE"`, `"RUNNING"`, 1), "mirror_status", true},
		{"a lag as a string", "GET", mirrors, "", strings.Replace(good, `"lag":0`, `"lag":"0"`, 1), "lag", true},
		{"a required field missing", "GET", mirrors, "", strings.Replace(good, `,"state_time_ms":1`, "", 1), "state_time_ms", true},
		{"a field the document does not declare", "GET", mirrors, "", strings.Replace(good, `"state_time_ms":1`, `"state_time_ms":1,"lag_ms":3`, 1), "/data/0/lag_ms is not declared", true},
		{"no credentials", "GET", mirrors, "", good, "no credentials", false},
		{"a request body of the wrong type", "POST", mirrors + ":promote", `{"mirror_topic_names":"t"}`, `{}`, "mirror_topic_names", true},
		{"a request field the document does not declare", "POST", mirrors + ":promote", `{"topics":["t"]}`, `{}`, "/topics is not declared", true},
		{"validate_only not a boolean", "POST", mirrors + ":failover?validate_only=yes", `{"mirror_topic_names":["t"]}`, `{}`, "validate_only", true},
		{"a query parameter of another action", "POST", mirrors + ":promote?include_partition_level_truncation_data=true", `{"mirror_topic_names":["t"]}`, `{}`, "include_partition_level_truncation_data is not declared", true},
		{"the legacy path without the colon", "POST", mirrors + "/promote", `{"mirror_topic_names":["t"]}`, `{}`, "no operation", true},
	} {
		answer = c.answer
		req, _ := http.NewRequest(c.method, p.URL+c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.auth {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		seen := p.Exchanges()
		x := seen[len(seen)-1]
		got := strings.Join(x.Problems, "; ")
		t.Logf("%s: %s", c.name, got)
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: problems %s", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: want a problem naming %q, got %q", c.name, c.want, got)
		}
	}

	// And a client field the document does not declare.
	type misspelt struct {
		Lag int64 `json:"lagg"`
	}
	var problems []string
	fitsSchema(reflect.TypeOf(misspelt{}), spec.Doc.Components.Schemas["MirrorLag"], "MirrorLag", &problems)
	if len(problems) != 1 || !strings.Contains(problems[0], "lagg: not declared") {
		t.Errorf("a misspelt client field: %v", problems)
	}
}
