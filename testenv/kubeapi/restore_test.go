package kubeapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/kube/kubetest"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"

	// A failback plan is an unknown kind to a binary without its package:
	// these runbooks have the console's plan kinds.
	_ "github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
)

const (
	ns, dep   = "flink-dr", "events-job"
	savepoint = "s3://dr/savepoints/savepoint-4f2a1c-0123456789ab"
)

var drArgs = []string{"--bootstrap", "kafka.dr:9092", "--group", "events-dr"}

// rig is the DR side of a restore: the real API server with the
// operator's CRDs, the FlinkDeployment dep as an administrator created it
// (running the job before), and the console's runbook reaching it through
// a kubeconfig, as a console configured with `kubernetes.kubeconfig` does.
type rig struct {
	api        *APIServer
	cluster    *Cluster
	kubeconfig string
	bootstrap  string

	// deploy and jobState are the operator's (default: the job runs at once).
	deploy   func(context.Context, kube.JobSpec) (string, error)
	jobState func(context.Context, string) (string, error)

	mu       sync.Mutex
	deployed []kube.JobSpec
}

func newRig(t *testing.T, edit func(*apiextensionsv1.CustomResourceDefinition) bool) *rig {
	t.Helper()
	t0 := time.Now()
	r := &rig{api: Start(t, edit),
		deploy:   func(context.Context, kube.JobSpec) (string, error) { return "job-dr", nil },
		jobState: func(context.Context, string) (string, error) { return "RUNNING", nil }}
	r.kubeconfig = r.api.Kubeconfig(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kf.Close)
	r.bootstrap = kf.ListenAddrs()[0]
	r.createDeployment(t)
	r.cluster = r.api.Watch(t, ns)
	t.Logf("TIMING API server up, CRDs served, FlinkDeployment created: %s", time.Since(t0).Round(time.Millisecond))
	return r
}

func (r *rig) dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(r.api.Config)
}

// createDeployment creates kubetest.Deployment's FlinkDeployment (its
// status through the status subresource, as the operator writes it).
func (r *rig) createDeployment(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	obj := kubetest.Deployment(ns, dep, 0)
	st := obj["status"]
	delete(obj, "status")
	md := obj["metadata"].(map[string]any)
	delete(md, "generation") // the server's to set
	res := r.dyn(t).Resource(kube.FlinkDeployments).Namespace(ns)
	u, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("create FlinkDeployment: %v", err)
	}
	u.Object["status"] = st
	if _, err := res.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("status of FlinkDeployment: %v", err)
	}
}

// operator runs kubetest's stand-in operator loop as a client of the API
// server until the test ends or stop is called; its deploys are recorded.
func (r *rig) operator(t *testing.T, ignoreSnapshots bool) (stop func()) {
	t.Helper()
	op := &kubetest.Operator{S: r.cluster, Namespace: ns, Name: dep, Poll: 20 * time.Millisecond, IgnoreSnapshots: ignoreSnapshots,
		Deploy: func(ctx context.Context, j kube.JobSpec) (string, error) {
			r.mu.Lock()
			r.deployed = append(r.deployed, j)
			r.mu.Unlock()
			return r.deploy(ctx, j)
		},
		JobState: r.jobState}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); op.Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

func (r *rig) deploys() []kube.JobSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.deployed)
}

// config is the console's configuration: one flow, and the DR Flink
// target run by the operator.
func consoleConfig(t *testing.T, kubeconfig, bootstrap string) *config.Config {
	t.Helper()
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{bootstrap}}, "dr": {Bootstrap: []string{bootstrap}}},
		Flows:    []*config.Flow{{Source: "primary", Target: "dr"}},
		FlinkTargets: []*config.FlinkTarget{{Name: "flink-dr", RestURL: "http://127.0.0.1:1", Region: "dr",
			Kubernetes: &config.Kubernetes{Kubeconfig: kubeconfig, Namespace: ns, Deployment: dep, UseStateSnapshot: "auto",
				Timeout: config.Duration(time.Minute)}}},
	}
	if err := cfg.Normalize("kubeapi"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// console is the runbook of a console on the database db.
func console(t *testing.T, cfg *config.Config, db string) *runbook.Runbook {
	t.Helper()
	store, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mon, err := monitor.NewMonitor(context.Background(), cfg, store, log) // not run: the step needs no figures
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	return failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log}, failover.Env{Monitor: mon})
}

var alice, bob = runbook.Actor{Name: "alice", Role: "operator"}, runbook.Actor{Name: "bob", Role: "operator"}

// approvedRestore has alice plan a restore-flink step from sp with args on
// the Kubernetes target and bob approve it; it returns the run's id.
func approvedRestore(t *testing.T, rb *runbook.Runbook, sp string, args []string) int64 {
	t.Helper()
	ctx := context.Background()
	p := runbook.Plan{Flow: rb.Config.Flows[0].Name, Steps: []runbook.Step{{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr",
		SavepointPath: sp, Args: args}}}
	return approved(t, ctx, rb, p, "restore through the real API machinery")
}

// approved has alice plan p and bob approve it; it returns the run's id.
func approved(t *testing.T, ctx context.Context, rb *runbook.Runbook, p runbook.Plan, why string) int64 {
	t.Helper()
	id, err := rb.Create(ctx, alice, p, why)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rb.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Approve(ctx, bob, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	return id
}

// execute runs the run's step as bob (without a savepoint catalog what the
// restore rests on is unknown; the second operator overrides that) and
// returns its error and the step's recorded result.
func execute(t *testing.T, ctx context.Context, rb *runbook.Runbook, id int64) (error, restoreResult) {
	t.Helper()
	x, err := rb.BeginWith(ctx, bob, id, 0, runbook.StepArgs{Confirmation: rb.Config.Flows[0].Name, InputsOverride: "no savepoint catalog in this test"})
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	x.Progress = func(line string) { t.Logf("progress: %s", line) }
	err = x.Perform(ctx)
	run, gerr := rb.Get(context.Background(), id)
	if gerr != nil {
		t.Fatal(gerr)
	}
	var res restoreResult
	if s := run.Steps[0].Result; s != "" && s != "null" {
		if jerr := json.Unmarshal([]byte(s), &res); jerr != nil {
			t.Fatalf("result %s: %v", s, jerr)
		}
	}
	return err, res
}

// restoreResult is what the step records of a restore through Kubernetes.
type restoreResult struct {
	Nonce     int64  `json:"savepoint_redeploy_nonce"`
	Path      string `json:"savepoint_path"`
	Snapshot  string `json:"state_snapshot"`
	Patched   bool   `json:"patched"`
	Conflicts int    `json:"conflicts_retried"`
	JobState  string `json:"job_state"`
	JobID     string `json:"job_id"`
}

// get reads a resource from the API server itself (not the watch).
func (r *rig) get(t *testing.T, resource, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := r.dyn(t).Resource(gvr(resource)).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", resource, name, err)
	}
	return u
}

// checkRestored checks what the API server holds after the restore res
// with args: spec.job is the console's patch, nothing of it pruned, the
// generation moved on once; the snapshot the operator completed; one
// deploy.
func (r *rig) checkRestored(t *testing.T, res restoreResult, args []string) {
	t.Helper()
	d := r.get(t, kube.FlinkDeployments.Resource, dep)
	job, _, _ := unstructured.NestedMap(d.Object, "spec", "job")
	want := map[string]any{"initialSavepointPath": res.Path, "savepointRedeployNonce": res.Nonce, "upgradeMode": "savepoint",
		"allowNonRestoredState": false, "state": "running", "args": args,
		"jarURI": "local:///opt/flink/usrlib/job.jar", "parallelism": int64(2)}
	if b, w := jsonOf(job), jsonOf(want); b != w {
		t.Errorf("spec.job on the API server\n%s\nwant\n%s", b, w)
	}
	if g := d.GetGeneration(); g != 2 {
		t.Errorf("generation %d, want 2 (created, then one patch of the spec)", g)
	}
	if lc, _, _ := unstructured.NestedString(d.Object, "status", "lifecycleState"); lc != "STABLE" {
		t.Errorf("status.lifecycleState %q, want STABLE", lc)
	}
	list, err := r.dyn(t).Resource(kube.FlinkStateSnapshots).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot == "" {
		if len(list.Items) != 0 {
			t.Errorf("FlinkStateSnapshots %d after a restore that registered none", len(list.Items))
		}
	} else if len(list.Items) != 1 || list.Items[0].GetName() != res.Snapshot {
		t.Fatalf("FlinkStateSnapshots %d, want exactly %s", len(list.Items), res.Snapshot)
	} else {
		r.checkSnapshot(t, list.Items[0])
	}
	if ds := r.deploys(); len(ds) != 1 || ds[0].InitialSavepointPath != res.Path || ds[0].Nonce == nil || *ds[0].Nonce != res.Nonce {
		t.Errorf("the operator deployed %+v, want once from %s with nonce %d", ds, res.Path, res.Nonce)
	}
	if errs := r.cluster.Errs(); len(errs) > 0 {
		t.Errorf("the API server refused the operator's status writes: %v", errs)
	}
}

// checkSnapshot checks the FlinkStateSnapshot s as the operator left it
// after a restore: COMPLETED, disposeOnDelete false as the console wrote it.
func (r *rig) checkSnapshot(t *testing.T, s unstructured.Unstructured) {
	t.Helper()
	if st, _, _ := unstructured.NestedString(s.Object, "status", "state"); st != "COMPLETED" {
		t.Errorf("snapshot status.state %q", st)
	}
	if dispose, ok, _ := unstructured.NestedBool(s.Object, "spec", "savepoint", "disposeOnDelete"); !ok || dispose {
		t.Errorf("snapshot spec.savepoint.disposeOnDelete %v (set %v), want false as written", dispose, ok)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The restore end to end on the real API machinery: the console's client
// discovers FlinkStateSnapshot, creates one, waits for the operator (a
// watch of the real resources, writing status through the subresource) to
// complete it, merge-patches the FlinkDeployment on its resourceVersion,
// and follows the status until the job runs.
func TestRestoreThroughRealAPIServer(t *testing.T) {
	r := newRig(t, nil)
	r.operator(t, false)
	rb := console(t, consoleConfig(t, r.kubeconfig, r.bootstrap), filepath.Join(t.TempDir(), "db"))
	id := approvedRestore(t, rb, savepoint, drArgs)
	t0 := time.Now()
	err, res := execute(t, context.Background(), rb, id)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	t.Logf("TIMING restore step: %s", time.Since(t0).Round(time.Millisecond))
	if !res.Patched || res.JobState != "RUNNING" || res.JobID != "job-dr" || res.Path != savepoint || !strings.HasPrefix(res.Snapshot, "drconsole-run-") {
		t.Fatalf("result %+v", res)
	}
	r.checkRestored(t, res, drArgs)
}

// A concurrent edit between the console's read and its patch: the API
// server answers 409 on the stale resourceVersion, the console reads again
// and patches on the new one, and the other writer's edit stays.
func TestConcurrentEditIsReReadNotClobbered(t *testing.T) {
	r := newRig(t, nil)
	r.operator(t, false)
	cfg := consoleConfig(t, r.kubeconfig, r.bootstrap)
	rb := console(t, cfg, filepath.Join(t.TempDir(), "db"))
	var patches, conflicts atomic.Int32
	other := r.dyn(t).Resource(kube.FlinkDeployments).Namespace(ns)
	failover.BookOf(rb).Kube = func(k *config.Kubernetes) (*kube.Client, error) {
		rc, err := kube.RESTConfig(k)
		if err != nil {
			return nil, err
		}
		rc.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTrip(func(req *http.Request) (*http.Response, error) {
				spec := req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/flinkdeployments/"+dep)
				if spec && patches.Add(1) == 1 {
					// Someone else edits the spec between the read and the patch.
					body := `{"metadata":{"labels":{"team":"payments"}},"spec":{"job":{"parallelism":4}}}`
					if _, err := other.Patch(req.Context(), dep, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
						return nil, err
					}
				}
				resp, err := next.RoundTrip(req)
				if spec && err == nil && resp.StatusCode == http.StatusConflict {
					conflicts.Add(1)
				}
				return resp, err
			})
		})
		return kube.NewForConfig(rc, k.Namespace, k.Deployment)
	}
	id := approvedRestore(t, rb, savepoint, drArgs)
	err, res := execute(t, context.Background(), rb, id)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if conflicts.Load() != 1 || patches.Load() != 2 || res.Conflicts != 1 || !res.Patched {
		t.Fatalf("%d patches, %d answered 409; result %+v: want a 409, then a patch on the re-read", patches.Load(), conflicts.Load(), res)
	}
	d := r.get(t, kube.FlinkDeployments.Resource, dep)
	if p, _, _ := unstructured.NestedInt64(d.Object, "spec", "job", "parallelism"); p != 4 || d.GetLabels()["team"] != "payments" {
		t.Fatalf("the other writer's edit was clobbered: parallelism %d, labels %v", p, d.GetLabels())
	}
	if p, _, _ := unstructured.NestedString(d.Object, "spec", "job", "initialSavepointPath"); p != savepoint || d.GetGeneration() != 3 {
		t.Fatalf("initialSavepointPath %q generation %d, want the console's patch on top (generation 3)", p, d.GetGeneration())
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A field value the CRD's schema rejects (here an administrator's rule on
// spec.job: savepoints only from s3://) fails the step with the API
// server's own message, and nothing is deployed.
func TestSchemaRefusalFailsTheStep(t *testing.T) {
	const msg = "DR restores only from s3:// savepoints"
	r := newRig(t, func(crd *apiextensionsv1.CustomResourceDefinition) bool {
		if crd.Spec.Names.Kind != "FlinkDeployment" {
			return true
		}
		job := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["job"]
		job.XValidations = apiextensionsv1.ValidationRules{{Rule: "!has(self.initialSavepointPath) || self.initialSavepointPath.startsWith('s3://')", Message: msg}}
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["job"] = job
		return true
	})
	r.operator(t, false)
	cfg := consoleConfig(t, r.kubeconfig, r.bootstrap)
	cfg.FlinkTargets[0].Kubernetes.UseStateSnapshot = "false"
	rb := console(t, cfg, filepath.Join(t.TempDir(), "db"))
	ctx := context.Background()
	p := runbook.Plan{Flow: cfg.Flows[0].Name, Steps: []runbook.Step{{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr",
		SavepointPath: "file:///tmp/savepoint-local", Args: drArgs}}}
	id, err := rb.Create(ctx, alice, p, "a savepoint the cluster's policy refuses")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, bob, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	err, _ = execute(t, ctx, rb, id)
	if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "spec.job") {
		t.Fatalf("step error %v, want the API server's refusal naming spec.job and %q", err, msg)
	}
	t.Logf("the step failed with: %v", err)
	if run, _ = rb.Get(ctx, id); run.Steps[0].Status != "failed" || !strings.Contains(run.Steps[0].Error, msg) {
		t.Fatalf("step %s: %s", run.Steps[0].Status, run.Steps[0].Error)
	}
	if d := r.get(t, kube.FlinkDeployments.Resource, dep); d.GetGeneration() != 1 || len(r.deploys()) != 0 {
		t.Fatalf("generation %d, %d deploys after a refused patch", d.GetGeneration(), len(r.deploys()))
	}
}

// What kubetest's stand-in does more strictly than the real API server:
// a field the CRD does not declare is pruned with a warning (the stand-in
// refuses it, 422), unless the writer asks for strict field validation;
// a declared field of the wrong type is refused either way.
func TestUndeclaredFieldIsPrunedUnlessStrict(t *testing.T) {
	r := newRig(t, nil)
	var warnings []string
	rc := *r.api.Config
	rc.WarningHandlerWithContext = warn(func(msg string) { warnings = append(warnings, msg) })
	res := dynamic.NewForConfigOrDie(&rc).Resource(kube.FlinkDeployments).Namespace(ns)
	ctx := context.Background()
	typo := []byte(`{"spec":{"job":{"initialSavepointPth":"s3://dr/sp"}}}`)
	u, err := res.Patch(ctx, dep, types.MergePatchType, typo, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("undeclared field, default validation: %v", err)
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "job", "initialSavepointPth"); set || len(warnings) != 1 ||
		!strings.Contains(warnings[0], `unknown field "spec.job.initialSavepointPth"`) {
		t.Fatalf("undeclared field kept %t, warnings %q: want pruned with one warning", set, warnings)
	}
	if u.GetGeneration() != 1 {
		t.Errorf("a pruned-away patch moved the generation to %d", u.GetGeneration())
	}
	_, err = res.Patch(ctx, dep, types.MergePatchType, typo, metav1.PatchOptions{FieldValidation: "Strict"})
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.job.initialSavepointPth"`) {
		t.Fatalf("undeclared field, strict validation: %v", err)
	}
	_, err = res.Patch(ctx, dep, types.MergePatchType, []byte(`{"spec":{"job":{"savepointRedeployNonce":"7"}}}`), metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.job.savepointRedeployNonce") {
		t.Fatalf("mistyped field: %v", err)
	}
	t.Logf("mistyped field refused: %v", err)
}

type warn func(string)

func (w warn) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, msg string) { w(msg) }

// An operator before 1.10 (no FlinkStateSnapshot CRD): with
// use_state_snapshot auto the console's discovery on the real server finds
// none and the step patches initialSavepointPath alone; with true it
// fails, saying so.
func TestWithoutTheSnapshotCRD(t *testing.T) {
	r := newRig(t, func(crd *apiextensionsv1.CustomResourceDefinition) bool {
		return crd.Spec.Names.Kind != "FlinkStateSnapshot"
	})
	r.operator(t, false)
	cfg := consoleConfig(t, r.kubeconfig, r.bootstrap)
	cfg.FlinkTargets[0].Kubernetes.UseStateSnapshot = "true"
	rb := console(t, cfg, filepath.Join(t.TempDir(), "db"))
	err, _ := execute(t, context.Background(), rb, approvedRestore(t, rb, savepoint, drArgs))
	if err == nil || !strings.Contains(err.Error(), "flinkstatesnapshots") {
		t.Fatalf("use_state_snapshot true without the CRD: %v", err)
	}
	t.Logf("use_state_snapshot true without the CRD: %v", err)
	if len(r.deploys()) != 0 {
		t.Fatalf("deployed after the snapshot failed: %+v", r.deploys())
	}

	cfg.FlinkTargets[0].Kubernetes.UseStateSnapshot = "auto"
	rb = console(t, cfg, filepath.Join(t.TempDir(), "db"))
	err, res := execute(t, context.Background(), rb, approvedRestore(t, rb, savepoint, drArgs))
	if err != nil || res.Snapshot != "" || !res.Patched || res.JobState != "RUNNING" {
		t.Fatalf("auto without the CRD: %v %+v", err, res)
	}
	if ds := r.deploys(); len(ds) != 1 || ds[0].InitialSavepointPath != savepoint {
		t.Fatalf("the operator deployed %+v", ds)
	}
}
