//go:build e2e

package kubeapi

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/testenv"
)

// The whole restore: testenv's job reads `events` on a real Kafka and is stopped with a
// savepoint on a real Flink; the runbook's restore-flink step registers it as a
// FlinkStateSnapshot and patches the FlinkDeployment on the real API server; the operator loop,
// watching it there, runs the job jar on the real Flink from initialSavepointPath and reports
// the job's state from Flink through the status subresource; the step ends when the job runs,
// and Flink says it was restored from exactly that savepoint.
//
//	cd testenv/kubeapi && go test -tags e2e -count=1 -run TestRestoreRealFlinkJob -v .
func TestRestoreRealFlinkJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := testenv.StartKafka(t, "dr")
	if res, err := k.Admin(t).CreateTopic(ctx, 2, 1, nil, "events"); err != nil || res.Err != nil {
		t.Fatalf("create events: %v %v", err, res.Err)
	}
	var recs []*kgo.Record
	for i := range 200 {
		recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(i % 2), Key: []byte{byte('a' + i%7)}, Value: []byte("v")})
	}
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	f := testenv.StartFlink(t)
	before := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Parallelism: 2})
	f.WaitJobRunning(t, before)
	f.WaitCheckpoint(t, before, 0)
	spDir := f.TriggerSavepoint(t, before, t.TempDir(), true)
	f.WaitJobState(t, before, "FINISHED")
	spURI := "file://" + spDir

	r := newRig(t, nil)
	r.deployOn(t, f)
	r.operator(t, false)
	rb := console(t, consoleConfig(t, r.kubeconfig, r.bootstrap), filepath.Join(t.TempDir(), "db"))
	args := testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Parallelism: 2, Name: "drconsole-events-dr"}.ProgramArgs()
	id := approvedRestore(t, rb, spURI, args)
	t0 := time.Now()
	err, res := execute(t, ctx, rb, id)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	t.Logf("TIMING restore step: %s", time.Since(t0).Round(time.Millisecond))
	if !res.Patched || res.JobState != "RUNNING" || res.JobID == "" || res.Path != spURI {
		t.Fatalf("result %+v", res)
	}
	r.checkRestored(t, res, args)
	if o, err := f.JobOverview(ctx, res.JobID); err != nil || o.State != "RUNNING" || o.Name != "drconsole-events-dr" {
		t.Fatalf("Flink: job %s %+v %v", res.JobID, o, err)
	}
	rc := flink.NewRESTClient(f.URL)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		h, err := rc.Checkpoints(ctx, res.JobID)
		if err == nil && h.Latest.Restored != nil {
			if rs := h.Latest.Restored; !rs.IsSavepoint || !strings.Contains(rs.ExternalPath, spDir) {
				t.Fatalf("restored from %+v, want the savepoint %s", rs, spDir)
			}
			t.Logf("Flink: job %s restored from savepoint %s", res.JobID, h.Latest.Restored.ExternalPath)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Flink reports no restore for job %s: %v", res.JobID, err)
		}
	}
	f.CancelJob(t, res.JobID)
}

// deployOn has the operator loop deploy on the real Flink f: the job jar
// run from the spec's initialSavepointPath with its args (parallelism 2),
// and the job's state as f's REST API reports it.
func (r *rig) deployOn(t *testing.T, f *testenv.Flink) {
	t.Helper()
	jarID := f.JobJarID(t)
	r.deploy = func(ctx context.Context, j kube.JobSpec) (string, error) {
		return f.RunJobFrom(ctx, jarID, j.Args, 2, j.InitialSavepointPath, j.AllowNonRestoredState)
	}
	r.jobState = func(ctx context.Context, id string) (string, error) {
		o, err := f.JobOverview(ctx, id)
		return o.State, err
	}
}
