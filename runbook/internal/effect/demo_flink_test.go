package effect

import (
	"context"
	"testing"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
)

// The stand-in answers the console's real Flink client.
func TestFlinkStandInSpeaksTheClient(t *testing.T) {
	f, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := flink.NewRESTClient(f.URL)
	ctx := context.Background()
	if v, err := c.Version(ctx); err != nil || v != "2.2.1" {
		t.Fatalf("version %q %v", v, err)
	}
	jobID := "0123456789abcdef0123456789abcdef"
	if _, err := c.Job(ctx, jobID); err == nil {
		t.Fatal("unknown job found")
	}
	id, err := RunJar(ctx, writtenT(t), c, demo.FlinkJarID, flink.RunRequest{SavepointPath: "file:/sp/1", ClaimMode: "NO_CLAIM", JobID: jobID})
	if err != nil || id != jobID {
		t.Fatalf("run: %q %v", id, err)
	}
	if j, err := c.Job(ctx, jobID); err != nil || j.State != "RUNNING" {
		t.Fatalf("job %+v %v", j, err)
	}
	if _, err := RunJar(ctx, writtenT(t), c, demo.FlinkJarID, flink.RunRequest{JobID: jobID}); err == nil {
		t.Fatal("the same job id started twice")
	}
	if got := f.Jobs()[jobID]["savepointPath"]; got != "file:/sp/1" {
		t.Fatalf("request %v", f.Jobs()[jobID])
	}
}
