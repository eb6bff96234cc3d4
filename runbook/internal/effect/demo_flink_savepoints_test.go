package effect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
)

// The stand-in takes savepoints the way Flink's REST API does (trigger,
// in progress, completed with a location), writes a real savepoint there,
// lists it in the job's checkpoint history, and a stop-with-savepoint
// finishes the job.
func TestFlinkStandInSavepoints(t *testing.T) {
	f, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SetSavepointDuration(300 * time.Millisecond)
	c := flink.NewRESTClient(f.URL)
	ctx := context.Background()

	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].ID != demo.FlinkSandboxJobID || jobs[0].State != "RUNNING" {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	if len(f.Jobs()) != 0 {
		t.Fatalf("the stand-in's own job counts as submitted: %v", f.Jobs())
	}
	if _, err := TriggerSavepoint(ctx, writtenT(t), c, "00000000000000000000000000000000", "", false); err == nil {
		t.Fatal("savepoint of an unknown job")
	}
	trig, err := TriggerSavepoint(ctx, writtenT(t), c, demo.FlinkSandboxJobID, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.SavepointStatus(ctx, demo.FlinkSandboxJobID, trig); err != nil || s.Done {
		t.Fatalf("at once: %+v %v, want in progress", s, err)
	}
	var waited []time.Duration
	loc, err := c.WaitSavepoint(ctx, demo.FlinkSandboxJobID, trig, 50*time.Millisecond, func(d time.Duration) { waited = append(waited, d) })
	if err != nil || !strings.HasPrefix(loc, "file:"+f.SavepointDir+"/savepoint-5ad0b0-") || len(waited) == 0 {
		t.Fatalf("location %q %v, progress %v", loc, err, waited)
	}
	sp, err := flink.ReadSavepoint(strings.TrimPrefix(loc, "file:"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets("")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, p := range k.Sorted() {
		got[p.Key()] = p.Next
	}
	if k.UID != "kafka-source" || got["events-0"] != 800 || got["events-3"] != 1350 || len(got) != 4 {
		t.Fatalf("offsets %v uid %q", got, k.UID)
	}
	h, err := c.Checkpoints(ctx, demo.FlinkSandboxJobID)
	if err != nil || len(h.History) != 1 || h.Latest.Savepoint == nil || h.History[0].ExternalPath != loc || !h.History[0].IsSavepoint {
		t.Fatalf("history %+v %v", h, err)
	}

	// Stop with a savepoint: the job finishes, and takes no more.
	trig, err = TriggerSavepoint(ctx, writtenT(t), c, demo.FlinkSandboxJobID, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitSavepoint(ctx, demo.FlinkSandboxJobID, trig, 50*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if st := f.JobState(demo.FlinkSandboxJobID); st != "FINISHED" {
		t.Fatalf("after stop: %s", st)
	}
	if _, err := TriggerSavepoint(ctx, writtenT(t), c, demo.FlinkSandboxJobID, "", false); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("savepoint of a finished job: %v", err)
	}
	if h, _ := c.Checkpoints(ctx, demo.FlinkSandboxJobID); len(h.History) != 2 || h.History[0].CheckpointType != "SYNC_SAVEPOINT" {
		t.Fatalf("history after stop %+v", h.History)
	}
}
