//go:build e2e

// End-to-end: the savepoint catalog against REAL Flink (MiniCluster with REST) running
// testenv's KafkaSource job on REAL Kafka. The console's own flink.RESTClient syncs the
// checkpoint history, triggers a savepoint and a stop-with-savepoint, and the catalog reads
// their Kafka offsets with the Go-native reader; they must equal the group's committed offsets,
// which holds here only because the job had consumed and committed everything before each
// savepoint (savepoints themselves commit nothing: README, Flink section).
//
//	go test -tags e2e -count=1 -run Catalog -v ./testenv/
package testenv_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

func catalogEndOffsets(t *testing.T, adm *kadm.Client, topic string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	l.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		out[fmt.Sprintf("%s-%d", o.Topic, o.Partition)] = o.Offset
	})
	return out
}

func catalogOffsets(t *testing.T, sp model.Savepoint) map[string]int64 {
	t.Helper()
	offs, err := sp.Offsets()
	if err != nil || offs == nil {
		t.Fatalf("catalog entry %d (%s): offsets %v, %v; read error %q", sp.ID, sp.Path, offs, err, sp.ReadError)
	}
	return offs
}

func TestCatalogE2E(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := testenv.StartKafka(t, "primary")
	// Flink 2.x retains one checkpoint by default and takes one a second here: keep three, so
	// the one the catalog lists is still there when it reads it on a loaded machine.
	f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Config: map[string]string{"execution.checkpointing.num-retained": "3"}})
	const topic, group, uid = "catalog-events", "flink-catalog", "catalog-source"
	createTopics(t, k, map[string]int32{topic: 3})
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	adm := k.Admin(t)
	produceN(t, cl, topic, 3, 900)
	end := catalogEndOffsets(t, adm, topic)

	job := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Topics: []string{topic}, GroupID: group,
		SourceUID: uid, Parallelism: 2, Name: "catalog-e2e"})
	f.WaitJobRunning(t, job)
	cp := f.WaitCheckpoint(t, job, 0)
	flinkWaitCommitted(t, adm, group, end)
	t.Logf("job %s: checkpoint %d at %s; group %s committed %v", job, cp.ID, cp.ExternalPath, group, end)

	store, err := storage.Open(filepath.Join(t.TempDir(), "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := &config.Config{
		FlinkTargets:  []*config.FlinkTarget{{Name: "flink-e2e", RestURL: f.URL, Region: "primary"}},
		SavepointDirs: []string{f.SavepointDir},
	}
	c := &catalog.Catalog{Store: store, Config: cfg, Log: slog.New(slog.NewTextHandler(t.Output(), nil))} // Flink nil: flink.NewRESTClient

	// 1. Sync: the latest retained checkpoint, read while Flink still has it. It was taken
	//    after everything was consumed (the group committed the end offsets from an earlier
	//    one, and the source has been idle since), so it holds the end offsets too.
	//    A checkpoint Flink lists may still be subsumed and deleted before the catalog reads
	//    it, so sync until an entry at or after the latest one seen here has been read
	//    (bounded; Flink's REST statistics are cached for web.refresh-interval, 500 ms).
	latest := f.WaitCheckpoint(t, job, cp.ID)
	var ck *model.Savepoint
	var all []model.Savepoint
	for try := 1; ck == nil && try <= 10; try++ {
		if err := c.Sync(ctx); err != nil {
			t.Fatalf("sync %d: %v", try, err)
		}
		all, err = store.Savepoints(ctx, storage.SavepointFilter{JobID: job})
		if err != nil {
			t.Fatal(err)
		}
		for i := range all {
			if all[i].Kind == model.KindCheckpoint && all[i].CheckpointID != nil && *all[i].CheckpointID >= latest.ID && all[i].OffsetsJSON != "" {
				ck = &all[i]
				break
			}
		}
		if ck == nil {
			t.Logf("sync %d: no checkpoint >= %d read yet (Flink subsumed it first?): %+v", try, latest.ID, all)
			time.Sleep(time.Second)
		}
	}
	if ck == nil {
		t.Fatalf("no retained checkpoint >= %d read into the catalog after 10 syncs: %+v", latest.ID, all)
	}
	if ck.FlinkTarget != "flink-e2e" || ck.JobName != "catalog-e2e" || ck.Origin != model.OriginREST || ck.SourceUID != uid ||
		!strings.HasPrefix(ck.Path, "file:"+f.CheckpointDir) {
		t.Fatalf("checkpoint entry %+v", ck)
	}
	if got := catalogOffsets(t, *ck); !flinkMapsEqual(got, end) {
		t.Fatalf("checkpoint %d offsets %v, want the end offsets %v", *ck.CheckpointID, got, end)
	}

	// 2. A plain savepoint through the console: the job keeps running.
	var ticks int
	t0 := time.Now()
	sp, err := failover.TriggerSavepoint(ctx, e2eWritten(t, store), c, "flink-e2e", job, false, func(time.Duration) { ticks++ })
	if err != nil {
		t.Fatalf("trigger: %v", err)
	}
	t.Logf("TIMING catalog.Trigger savepoint %s (%d progress calls): %s checkpoint %v size %v", time.Since(t0).Round(time.Millisecond), ticks, sp.Path, ptrString(sp.CheckpointID), ptrString(sp.SizeBytes))
	if sp.Origin != model.OriginTriggered || sp.Kind != model.KindSavepoint || sp.JobName != "catalog-e2e" || sp.SourceUID != uid ||
		!strings.HasPrefix(sp.Path, "file:"+f.SavepointDir) || sp.CheckpointID == nil {
		t.Fatalf("savepoint entry %+v", sp)
	}
	committed := flinkCommitted(t, adm, group)
	if got := catalogOffsets(t, sp); !flinkMapsEqual(got, committed) || !flinkMapsEqual(got, end) {
		t.Fatalf("savepoint offsets %v; committed %v; end %v", got, committed, end)
	}
	if ov, err := f.JobOverview(ctx, job); err != nil || ov.State != "RUNNING" {
		t.Fatalf("job after a plain savepoint: %+v %v", ov, err)
	}

	// 3. More data, consumed and committed; then stop-with-savepoint.
	produceN(t, cl, topic, 3, 600)
	end = catalogEndOffsets(t, adm, topic)
	flinkWaitCommitted(t, adm, group, end)
	t0 = time.Now()
	stopped, err := failover.TriggerSavepoint(ctx, e2eWritten(t, store), c, "flink-e2e", job, true, nil)
	if err != nil {
		t.Fatalf("stop-with-savepoint: %v", err)
	}
	t.Logf("TIMING catalog.Trigger stop-with-savepoint %s: %s", time.Since(t0).Round(time.Millisecond), stopped.Path)
	f.WaitJobState(t, job, "FINISHED")
	committed = flinkCommitted(t, adm, group)
	got := catalogOffsets(t, stopped)
	if !flinkMapsEqual(got, committed) || !flinkMapsEqual(got, end) {
		t.Fatalf("stop-with-savepoint offsets %v; committed after the stop %v; end %v", got, committed, end)
	}
	if stopped.ID == sp.ID || *stopped.CheckpointID <= *sp.CheckpointID {
		t.Fatalf("stop-with-savepoint entry %+v after savepoint %+v", stopped, sp)
	}

	// 4. Sync again (REST history and the scan of the savepoint dir both see the two
	//    savepoints): no duplicates, origin stays "triggered".
	if err := c.Sync(ctx); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	sps, err := store.Savepoints(ctx, storage.SavepointFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range sps {
		if strings.HasPrefix(e.Path, "file:"+f.SavepointDir) {
			n++
			if e.Origin != model.OriginTriggered || e.OffsetsJSON == "" {
				t.Errorf("savepoint after the second sync: %+v", e)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d catalog entries under the savepoint dir, want 2: %+v", n, sps)
	}

	// 5. The JobManager dies: the target is reported, the catalog keeps everything.
	f.Proc.Kill()
	err = c.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "flink-e2e") {
		t.Fatalf("sync with Flink gone: %v", err)
	}
	after, err := store.Savepoints(ctx, storage.SavepointFilter{})
	if err != nil || len(after) != len(sps) {
		t.Fatalf("after Flink died: %d entries (%v), want %d", len(after), err, len(sps))
	}
	if e, err := store.SavepointByID(ctx, stopped.ID); err != nil || !flinkMapsEqual(catalogOffsets(t, e), end) {
		t.Fatalf("stop-with-savepoint entry after Flink died: %+v %v", e, err)
	}
	t.Logf("TIMING whole catalog e2e %s; %d catalog entries", time.Since(start).Round(time.Millisecond), len(after))
}

func ptrString(p *int64) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}

// e2eWritten is a record on store's chain: the proof the console's effects
// demand (failover.TriggerSavepoint, failover.ApplyOffsets).
func e2eWritten(t testing.TB, store *storage.Store) audit.Written {
	t.Helper()
	w, err := audit.New(store).Record(context.Background(), "e2e", "e2e.effect", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
