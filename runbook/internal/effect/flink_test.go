package effect

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/flinktest"
)

// The stand-in answers with shapes seen from Flink 2.2.1 in testenv
// (testenv/flink.go reads the same fields from the real JobManager).
func standIn(t *testing.T, routes map[string]func(w http.ResponseWriter, body map[string]any)) *flink.RESTClient {
	return flink.NewRESTClient(flinktest.REST(t, routes) + "/")
}

func TestTriggerAndWaitSavepoint(t *testing.T) {
	var polls atomic.Int32
	var gotPlain, gotStop map[string]any
	c := standIn(t, map[string]func(http.ResponseWriter, map[string]any){
		"POST /jobs/a1/savepoints": func(w http.ResponseWriter, b map[string]any) {
			gotPlain = b
			io.WriteString(w, `{"request-id":"t1"}`)
		},
		"POST /jobs/a1/stop": func(w http.ResponseWriter, b map[string]any) {
			gotStop = b
			io.WriteString(w, `{"request-id":"t2"}`)
		},
		"GET /jobs/a1/savepoints/t1": func(w http.ResponseWriter, _ map[string]any) {
			if polls.Add(1) < 3 {
				io.WriteString(w, `{"status":{"id":"IN_PROGRESS"},"operation":null}`)
				return
			}
			io.WriteString(w, `{"status":{"id":"COMPLETED"},"operation":{"location":"file:/sp/savepoint-a1-1"}}`)
		},
		"GET /jobs/a1/savepoints/t2": func(w http.ResponseWriter, _ map[string]any) {
			io.WriteString(w, `{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{"class":"java.util.concurrent.CompletionException","stack-trace":"java.util.concurrent.CompletionException: CheckpointException: Task not running\n\tat ..."}}}`)
		},
	})
	ctx := context.Background()
	id, err := TriggerSavepoint(ctx, writtenT(t), c, "a1", "file:///sp", false)
	if err != nil || id != "t1" || gotPlain["target-directory"] != "file:///sp" || gotPlain["cancel-job"] != false {
		t.Fatalf("trigger: %q %v body %v", id, err, gotPlain)
	}
	var ticks int
	loc, err := c.WaitSavepoint(ctx, "a1", id, time.Millisecond, func(time.Duration) { ticks++ })
	if err != nil || loc != "file:/sp/savepoint-a1-1" || ticks != 2 {
		t.Fatalf("wait: %q %v after %d progress calls", loc, err, ticks)
	}
	id, err = TriggerSavepoint(ctx, writtenT(t), c, "a1", "", true)
	if err != nil || id != "t2" || gotStop["drain"] != false || gotStop["targetDirectory"] != nil {
		t.Fatalf("stop: %q %v body %v", id, err, gotStop)
	}
	if _, err := c.WaitSavepoint(ctx, "a1", id, time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "Task not running") {
		t.Fatalf("failed savepoint: %v", err)
	}
}

func TestRunJarAndRestoreModeField(t *testing.T) {
	var got map[string]any
	c := standIn(t, map[string]func(http.ResponseWriter, map[string]any){
		"POST /jars/j1_job.jar/run": func(w http.ResponseWriter, b map[string]any) {
			got = b
			io.WriteString(w, `{"jobid":"b2"}`)
		},
	})
	id, err := RunJar(context.Background(), writtenT(t), c, "j1_job.jar", flink.RunRequest{EntryClass: "x.Job", ProgramArgsList: []string{"--bootstrap", "dr:9092"},
		SavepointPath: "file:/sp/savepoint-a1-1", AllowNonRestoredState: true, ClaimMode: "NO_CLAIM"})
	if err != nil || id != "b2" || got["savepointPath"] != "file:/sp/savepoint-a1-1" || got["allowNonRestoredState"] != true ||
		got["claimMode"] != "NO_CLAIM" || got["restoreMode"] != nil {
		t.Fatalf("run: %q %v body %v", id, err, got)
	}
	for v, want := range map[string]string{"1.18.1": "restoreMode", "1.19.0": "restoreMode", "1.20.0": "claimMode", "2.2.1": "claimMode", "garbage": "restoreMode"} {
		if got := flink.RestoreModeField(v); got != want {
			t.Errorf("flink.RestoreModeField(%q) = %s, want %s", v, got, want)
		}
	}
}
