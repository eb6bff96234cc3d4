//go:build e2e

// End-to-end: restore through the Kubernetes API (issue 14 part 3).
//
// No real API server or operator runs here, so the Kubernetes side is kube/kubetest's stand-in
// API server (FlinkDeployment and FlinkStateSnapshot as the operator's CRDs publish them, JSON
// merge PATCH with resourceVersion, discovery for client-go) and its stand-in operator loop,
// whose deploy REALLY submits the job to a REAL Flink MiniCluster from initialSavepointPath
// and reports status.jobStatus.state from Flink's REST API. The console side is the real
// thing: an approved failover run's restore-flink step on a target with `kubernetes`
// (failover.Runbook -> failover/internal/effect -> client-go):
//
//  1. testenv's job reads `events` on a real Kafka; stop-with-savepoint through Flink REST;
//
//  2. the step registers the savepoint as a FlinkStateSnapshot (alreadyExists), patches the
//     FlinkDeployment (initialSavepointPath, a new savepointRedeployNonce, args for DR Kafka)
//     and follows its status;
//
//  3. the stand-in operator runs the jar from that savepoint; the step ends when the job is
//     RUNNING, and Flink says the job was restored from exactly that savepoint.
//
//     go test -tags e2e -count=1 -run TestKubeRestoreE2E -v ./testenv/
package testenv_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/failover"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/kube/kubetest"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

func TestKubeRestoreE2E(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := testenv.StartKafka(t, "dr")
	adm := k.Admin(t)
	if res, err := adm.CreateTopic(ctx, 2, 1, nil, "events"); err != nil || res.Err != nil {
		t.Fatalf("create events: %v %v", err, res.Err)
	}
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	var recs []*kgo.Record
	for i := range 200 {
		recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(i % 2), Key: []byte{byte('a' + i%7)}, Value: []byte("v")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// 1. the job before, and its savepoint.
	f := testenv.StartFlink(t)
	opts := testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Parallelism: 2}
	before := f.SubmitJob(t, opts)
	f.WaitJobRunning(t, before)
	f.WaitCheckpoint(t, before, 0)
	spDir := f.TriggerSavepoint(t, before, t.TempDir(), true)
	f.WaitJobState(t, before, "FINISHED")
	spURI := "file://" + spDir

	// The Kubernetes side: the DR FlinkDeployment, running the job before.
	ks := startKubeStandIn(t, ctx, f, "flink-dr", "events-job", 2)

	// The console side: config, store, runbook.
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{k.Bootstrap}}, "dr": {Bootstrap: []string{k.Bootstrap}}},
		Flows:    []*config.Flow{{Source: "primary", Target: "dr"}},
		FlinkTargets: []*config.FlinkTarget{{Name: "flink-dr", RestURL: f.URL, Region: "dr",
			Kubernetes: &config.Kubernetes{InCluster: true, Namespace: "flink-dr", Deployment: "events-job", UseStateSnapshot: "true"}}},
	}
	if err := cfg.Normalize("e2e"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mon, err := monitor.NewMonitor(ctx, cfg, store, log) // not run: the step needs no figures
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	rb := &failover.Runbook{Store: store, Monitor: mon, Config: cfg, Audit: failover.StoreAuditor{Store: store}, Log: log,
		Flink: flink.NewRESTClient,
		Kube:  ks.client}
	drArgs := testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Parallelism: 2, Name: "drconsole-events-dr"}.ProgramArgs()
	t0 := time.Now()
	run, progress := e2eRunApproved(t, ctx, rb, failover.Plan{Flow: cfg.Flows[0].Name, Steps: []failover.Step{
		{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr", SavepointPath: spURI, Args: drArgs}}}, "e2e: restore through Kubernetes")
	res := kubeStepResult(t, run, 0, spURI)
	t.Logf("restored through Kubernetes in %s: job %s RUNNING from %s (FlinkStateSnapshot %s)", time.Since(t0).Round(time.Millisecond), res.JobID, spURI, res.Snapshot)
	ks.checkDeployed(t, spURI, drArgs)
	if o, err := f.JobOverview(ctx, res.JobID); err != nil || o.State != "RUNNING" || o.Name != "drconsole-events-dr" {
		t.Fatalf("Flink: job %s %+v %v", res.JobID, o, err)
	}
	// Flink's own word that the job started from that savepoint.
	rc := flink.NewRESTClient(f.URL)
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := rc.Checkpoints(ctx, res.JobID)
		if err == nil && h.Latest.Restored != nil {
			if r := h.Latest.Restored; !r.IsSavepoint || !strings.Contains(r.ExternalPath, spDir) {
				t.Fatalf("restored from %+v, want the savepoint %s", r, spDir)
			}
			t.Logf("Flink: job %s restored from savepoint %s", res.JobID, h.Latest.Restored.ExternalPath)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Flink reports no restore for job %s: %v", res.JobID, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(progress) == 0 {
		t.Error("no progress reported while following the operator")
	}
	ks.checkSnapshot(t, res.Snapshot, spURI)
	f.CancelJob(t, res.JobID)
}

// kubeStandIn is the DR Kubernetes side for a Flink cluster f: kube/kubetest's stand-in API
// server holding the FlinkDeployment ns/name, and its stand-in operator loop (until ctx ends),
// whose deploy REALLY runs the job jar on f from initialSavepointPath (the spec's args and
// allowNonRestoredState, claimMode NO_CLAIM) and reports the job's state from Flink REST.
type kubeStandIn struct {
	s        *kubetest.Server
	ns, name string
	mu       sync.Mutex
	deployed []kube.JobSpec
}

func startKubeStandIn(t *testing.T, ctx context.Context, f *testenv.Flink, ns, name string, parallelism int) *kubeStandIn {
	t.Helper()
	ks := &kubeStandIn{s: kubetest.New(t), ns: ns, name: name}
	ks.s.Put(kubetest.Deployment(ns, name, 0))
	jarID := f.JobJarID(t)
	op := &kubetest.Operator{S: ks.s, Namespace: ns, Name: name, Poll: 100 * time.Millisecond,
		Deploy: func(ctx context.Context, j kube.JobSpec) (string, error) {
			ks.mu.Lock()
			ks.deployed = append(ks.deployed, j)
			ks.mu.Unlock()
			var res struct {
				JobID string `json:"jobid"`
			}
			err := f.Do(ctx, http.MethodPost, "/jars/"+jarID+"/run", map[string]any{"entryClass": testenv.FlinkJobEntryClass,
				"programArgsList": j.Args, "parallelism": parallelism, "savepointPath": j.InitialSavepointPath,
				"allowNonRestoredState": j.AllowNonRestoredState, "claimMode": "NO_CLAIM"}, &res)
			return res.JobID, err
		},
		JobState: func(ctx context.Context, id string) (string, error) {
			o, err := f.JobOverview(ctx, id)
			return o.State, err
		}}
	octx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go op.Run(octx)
	return ks
}

// client is failover.Runbook.Kube: client-go against the stand-in API server.
func (ks *kubeStandIn) client(k *config.Kubernetes) (*kube.Client, error) {
	return kube.NewForConfig(ks.s.Config(), k.Namespace, k.Deployment)
}

// checkDeployed checks the operator deployed exactly once, from savepoint with args, in
// upgradeMode savepoint and without allowNonRestoredState.
func (ks *kubeStandIn) checkDeployed(t *testing.T, savepoint string, args []string) {
	t.Helper()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if len(ks.deployed) != 1 || ks.deployed[0].InitialSavepointPath != savepoint || strings.Join(ks.deployed[0].Args, " ") != strings.Join(args, " ") ||
		ks.deployed[0].UpgradeMode != "savepoint" || ks.deployed[0].AllowNonRestoredState {
		t.Errorf("the operator deployed %+v, want once from %s with args %v, upgradeMode savepoint, allowNonRestoredState off", ks.deployed, savepoint, args)
	}
}

// checkSnapshot checks the operator recorded the FlinkStateSnapshot the console registered as
// COMPLETED at savepoint.
func (ks *kubeStandIn) checkSnapshot(t *testing.T, name, savepoint string) {
	t.Helper()
	snap := ks.s.Get("flinkstatesnapshots", ks.ns, name)
	if st, _ := snap["status"].(map[string]any); st["state"] != "COMPLETED" || st["path"] != savepoint {
		t.Fatalf("snapshot %s status %v, want COMPLETED at %s", name, st, savepoint)
	}
}

// kubeResult is the result of a restore-flink step on a target with `kubernetes`.
type kubeResult struct {
	Patched  bool   `json:"patched"`
	JobState string `json:"job_state"`
	JobID    string `json:"job_id"`
	Snapshot string `json:"state_snapshot"`
	Path     string `json:"savepoint_path"`
}

// kubeStepResult reads step idx of a completed run as a restore through Kubernetes from
// savepoint that ended with the job RUNNING.
func kubeStepResult(t *testing.T, run *failover.Run, idx int, savepoint string) kubeResult {
	t.Helper()
	var res kubeResult
	if err := json.Unmarshal([]byte(run.Steps[idx].Result), &res); err != nil || run.Status != "completed" || !res.Patched ||
		res.JobState != "RUNNING" || res.JobID == "" || res.Path != savepoint {
		t.Fatalf("run %s, step %d result %s (%v)", run.Status, idx+1, run.Steps[idx].Result, err)
	}
	return res
}

// e2eRunApproved has alice plan p, bob approve it, and alice run every step in order (each
// step's progress logged and collected); it returns the run once done and the progress lines.
func e2eRunApproved(t *testing.T, ctx context.Context, rb *failover.Runbook, p failover.Plan, why string) (*failover.Run, []string) {
	t.Helper()
	alice, bob := failover.Actor{Name: "alice", Role: "operator"}, failover.Actor{Name: "bob", Role: "operator"}
	runID, err := rb.Create(ctx, alice, p, why)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rb.Get(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Approve(ctx, bob, runID, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	// Without a savepoint catalog (and a monitor that is not run) what a
	// restore rests on cannot be checked when it starts: the second
	// operator overrides that, as the runbook allows.
	who, args := alice, failover.StepArgs{Confirmation: p.Flow}
	if rb.Catalog == nil {
		who, args.InputsOverride = bob, "e2e: no savepoint catalog in this test"
	}
	var progress []string
	for idx, s := range p.Steps {
		x, err := rb.BeginWith(ctx, who, runID, idx, args)
		if err != nil {
			t.Fatalf("step %d (%s): %v", idx+1, s.Kind, err)
		}
		x.Progress = func(line string) {
			if len(progress) == 0 || progress[len(progress)-1] != line {
				progress = append(progress, line)
				t.Logf("step %d progress: %s", idx+1, line)
			}
		}
		t0 := time.Now()
		if err := x.Run(ctx); err != nil {
			t.Fatalf("step %d (%s): %v", idx+1, s.Kind, err)
		}
		t.Logf("TIMING step %d (%s): %s", idx+1, s.Kind, time.Since(t0).Round(time.Millisecond))
	}
	if run, err = rb.Get(ctx, runID); err != nil {
		t.Fatal(err)
	}
	return run, progress
}
