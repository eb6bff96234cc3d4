package failover

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/kube/kubetest"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// A restore-flink step on a target with `kubernetes` patches the
// FlinkDeployment (never a jar run), registers the savepoint as a
// FlinkStateSnapshot when served, shows the operator's progress on the
// run page while it follows the redeploy, and records the result. The plan
// is checked for what a FlinkDeployment decides itself.
func TestRestoreFlinkThroughKubernetes(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	catalogued(t, e, "s3://dr/sp-1")
	ctx := context.Background()
	s := kubetest.New(t)
	s.Put(kubetest.Deployment("flink-dr", "events-job", 0))
	var states atomic.Int32 // the job INITIALIZING for a few reads, then RUNNING
	op := &kubetest.Operator{S: s, Namespace: "flink-dr", Name: "events-job", Poll: 5 * time.Millisecond,
		Deploy: func(context.Context, kube.JobSpec) (string, error) { return "job-dr", nil },
		JobState: func(context.Context, string) (string, error) {
			if states.Add(1) < 40 {
				return "INITIALIZING", nil
			}
			return "RUNNING", nil
		}}
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	go op.Run(octx)
	k := &config.Kubernetes{InCluster: true, Namespace: "flink-dr", Deployment: "events-job", UseStateSnapshot: "auto", Timeout: config.Duration(30 * time.Second)}
	e.Cfg.FlinkTargets = append(e.Cfg.FlinkTargets, &config.FlinkTarget{Name: "flink-k8s", RestURL: "http://127.0.0.1:3", Region: "dr", Kubernetes: k})
	envOf(e.RB).Kube = func(got *config.Kubernetes) (*kube.Client, error) {
		return s.Client(t, got.Namespace, got.Deployment), nil
	}

	bad := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindRestoreFlink, FlinkTarget: "flink-k8s", JarID: "job.jar", ClaimMode: "CLAIM"}}}
	err := bad.Validate(e.Cfg)
	if err == nil || !strings.Contains(err.Error(), "needs a savepoint") {
		t.Fatalf("no savepoint: %v", err)
	}
	bad.Steps[0].SavepointPath = "s3://dr/sp-1"
	if err = bad.Validate(e.Cfg); err == nil || !strings.Contains(err.Error(), "its spec names the jar") {
		t.Fatalf("jar on a FlinkDeployment: %v", err)
	}

	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindRestoreFlink, FlinkTarget: "flink-k8s", SavepointPath: "s3://dr/sp-1",
		Args: []string{"--bootstrap", "kafka.dr:9092"}}}}
	id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Carol, id, r.PlanHash, "go"); err != nil {
		t.Fatal(err)
	}
	if p := e.RB.PreviewStep(ctx, r, 0); !strings.Contains(strings.Join(p.Lines, "\n"), `"savepointRedeployNonce": `) ||
		!strings.Contains(strings.Join(p.Lines, "\n"), "now: lifecycle STABLE, job RUNNING, savepointRedeployNonce unset") {
		t.Fatalf("preview %q", p.Lines)
	}
	w := &Worker{Runbook: e.RB}
	if err := w.Execute(ctx, runbooktest.Alice, id, 0, "primary->dr", ""); err != nil {
		t.Fatal(err)
	}
	var saw string
	deadline := time.Now().Add(30 * time.Second)
	for {
		if p := w.Progress(id, 1)[0]; strings.Contains(p, "FlinkDeployment flink-dr/events-job: ") {
			saw = p
		}
		if r, _ = e.RB.Get(ctx, id); r.Steps[0].Status == "done" || r.Steps[0].Status == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if r.Steps[0].Status != "done" {
		t.Fatalf("step %s: %s", r.Steps[0].Status, r.Steps[0].Error)
	}
	if saw == "" {
		t.Error("the run page never showed the operator's progress")
	}
	for _, want := range []string{`"patched":true`, `"job_state":"RUNNING"`, `"state_snapshot":"drconsole-run-`} {
		if !strings.Contains(r.Steps[0].Result, want) {
			t.Errorf("result %s lacks %s", r.Steps[0].Result, want)
		}
	}
	if e.Flink.Runs != 0 {
		t.Fatalf("%d jar runs through Flink REST for a Kubernetes target", e.Flink.Runs)
	}
	job := s.Get("flinkdeployments", "flink-dr", "events-job")["spec"].(map[string]any)["job"].(map[string]any)
	if job["initialSavepointPath"] != "s3://dr/sp-1" || job["savepointRedeployNonce"] == nil {
		t.Fatalf("spec.job %v", job)
	}
	// The step's record is written before its goroutine ends: wait for
	// the worker to let go of it.
	for deadline := time.Now().Add(10 * time.Second); len(w.Executing(id, 1)) != 0 && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
	if len(w.Progress(id, 1)) != 0 {
		t.Error("progress kept after the step ended")
	}
}
