// Package runbooktest is the plan kinds' tests' shared set-up: a runbook
// on a demo sandbox with a store, a monitor and a Flink stand-in
// (NewEnv), the test actors, and the helpers that walk a run through its
// steps. It imports the engine and no plan kind, so each kind's own
// tests can import it.
package runbooktest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// Audit writes to the store's audit chain, as the console does (step
// records are written by the store with the step's state change), and
// counts records there.
type Audit struct{ runbook.StoreAuditor }

func (a Audit) Count(action string) int {
	es, err := a.Store.AuditEntries(context.Background(), storage.AuditFilter{Action: action})
	if err != nil {
		panic(err)
	}
	return len(es)
}

// FakeFlink is a JobManager that remembers submitted jobs by id.
type FakeFlink struct {
	Mu   sync.Mutex
	Jobs map[string]flink.RunRequest
	Runs int
}

func (f *FakeFlink) Version(context.Context) (string, error) { return "2.2.1", nil }

func (f *FakeFlink) Job(_ context.Context, id string) (flink.Job, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if _, ok := f.Jobs[id]; ok {
		return flink.Job{ID: id, State: "RUNNING"}, nil
	}
	return flink.Job{}, &flink.RESTError{Status: 404}
}

func (f *FakeFlink) RunJar(_ context.Context, _ string, r flink.RunRequest) (string, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Runs++
	f.Jobs[r.JobID] = r
	return r.JobID, nil
}

// Serve puts f behind Flink's REST API: the runbook talks to a JobManager
// over HTTP, its jar runs going through runbook/internal/effect.
func (f *FakeFlink) Serve(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case r.Method == http.MethodGet && p == "/config":
			v, _ := f.Version(r.Context())
			json.NewEncoder(w).Encode(map[string]string{"flink-version": v})
		case r.Method == http.MethodGet && strings.HasPrefix(p, "/jobs/"):
			j, err := f.Job(r.Context(), strings.TrimPrefix(p, "/jobs/"))
			if err != nil {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"errors":["job not found"]}`)
				return
			}
			json.NewEncoder(w).Encode(map[string]string{"jid": j.ID, "state": string(j.State)})
		case r.Method == http.MethodPost && strings.HasPrefix(p, "/jars/") && strings.HasSuffix(p, "/run"):
			var req flink.RunRequest
			json.NewDecoder(r.Body).Decode(&req)
			id, _ := f.RunJar(r.Context(), strings.TrimSuffix(strings.TrimPrefix(p, "/jars/"), "/run"), req)
			json.NewEncoder(w).Encode(map[string]string{"jobid": id})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Env is a runbook with what a test reaches past it: the sandbox, the
// store, the config, the Flink stand-in and the clock (Now).
type Env struct {
	Path  string // the database file
	RB    *runbook.Runbook
	Mon   *monitor.Monitor // the monitor the plan kinds read (Equip)
	SB    *demo.Sandbox
	Audit Audit
	Flink *FakeFlink
	Store *storage.Store
	Cfg   *config.Config
	Now   time.Time
}

// The test actors: three operators and a viewer.
var (
	Alice = runbook.Actor{Name: "alice", Role: "operator"}
	Bob   = runbook.Actor{Name: "bob", Role: "operator"}
	Carol = runbook.Actor{Name: "carol", Role: "operator"}
	Vera  = runbook.Actor{Name: "vera", Role: "viewer"}
)

// SandboxCheckpoints is the test sandboxes' checkpoint interval: short, so
// set-up does not wait two seconds for the first checkpoints.
const SandboxCheckpoints = 200 * time.Millisecond

// Equip gives a test's runbook the plan kinds' environment over mon
// (failover.Equip). runbooktest imports no plan kind, so each kind's test
// package sets it (in an init of a _test.go file) before NewEnv.
var Equip func(rb *runbook.Runbook, mon *monitor.Monitor)

// NewEnv is a runbook needing approvals approvals on a fresh sandbox flow
// primary->dr (and the extra flows, watched from the start), once the flow
// is healthy. Its tests run in parallel, each on
// its own sandbox, store and clock, except those that call newRunner (one
// identity per process), use s3test (t.Setenv) or time a replica's lag
// (runbook/failover's standby_test.go).
func NewEnv(t testing.TB, approvals int, extra ...*config.Flow) *Env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sb, err := demo.Start(ctx, demo.Options{Logger: log, Seed: 3, CheckpointInterval: SandboxCheckpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: sb.PrimaryBootstrap()}, "dr": {Bootstrap: sb.DRBootstrap()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: demo.Topics}}},
		RefreshInterval: config.Duration(time.Second),
		Failover:        config.Failover{ApprovalsRequired: approvals},
		FlinkTargets:    []*config.FlinkTarget{{Name: "flink-dr", RestURL: "http://127.0.0.1:1", Region: "dr"}, {Name: "flink-primary", RestURL: "http://127.0.0.1:2", Region: "primary"}},
	}
	// extra flows join before the monitor starts: it reads cfg from then
	// on, so a flow appended later would race with its refreshes.
	cfg.Flows = append(cfg.Flows, extra...)
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "db")
	store, mon := Monitored(ctx, t, cfg, path, log)
	e := &Env{Path: path, SB: sb, Audit: Audit{runbook.StoreAuditor{Store: store}}, Flink: &FakeFlink{Jobs: map[string]flink.RunRequest{}}, Store: store, Cfg: cfg, Now: time.Now()}
	if Equip == nil {
		t.Fatal("runbooktest.Equip is not set: the plan kind's tests set it to give the runbook its environment")
	}
	e.Mon = mon
	e.RB = &runbook.Runbook{Store: store, Config: cfg, Audit: e.Audit, Log: log, Clock: func() time.Time { return e.Now },
		StopVerifyWindow: time.Second}
	flinkURL := e.Flink.Serve(t)
	e.RB.Flink = func(string) *flink.RESTClient { return flink.NewRESTClient(flinkURL) }
	Equip(e.RB, mon)
	// Wait for a healthy flow with checkpoints for the groups: 90 s, as a
	// loaded machine running many sandboxes at once can take a minute.
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := mon.Snapshot("primary->dr")
		cps, _ := store.Checkpoints(ctx, "primary->dr")
		if s.Status == model.FlowStatusOK && len(cps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox flow not ready in 90 s: status %s (%s), %d checkpoint(s)", s.Status, s.Reason, len(cps))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return e
}

// Monitored opens a store at path and runs a monitor of cfg on it until
// ctx is done; the test's cleanup closes both.
func Monitored(ctx context.Context, t testing.TB, cfg *config.Config, path string, log *slog.Logger) (*storage.Store, *monitor.Monitor) {
	t.Helper()
	store, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	go mon.Run(ctx)
	return store, mon
}

// FakeConnect stops connectors after a couple of status polls.
type FakeConnect struct {
	Mu    sync.Mutex
	Stops map[string]int
	Polls map[string]int
}

func (f *FakeConnect) Stop(_ context.Context, name string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Stops[name]++
	return nil
}

func (f *FakeConnect) Status(_ context.Context, name string) (connect.ConnectorStatus, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var s connect.ConnectorStatus
	s.Name = name
	s.Connector.State = "RUNNING"
	s.Tasks = make([]connect.TaskStatus, 1)
	if f.Stops[name] > 0 {
		if f.Polls[name]++; f.Polls[name] > 2 {
			s.Connector.State, s.Tasks = "STOPPED", nil
		}
	}
	return s, nil
}

// Serve puts f behind Kafka Connect's REST API.
func (f *FakeConnect) Serve(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, verb, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/connectors/"), "/")
		switch {
		case r.Method == http.MethodPut && verb == "stop":
			f.Stop(r.Context(), name)
			w.WriteHeader(http.StatusAccepted)
		case r.Method == http.MethodGet && verb == "status":
			s, _ := f.Status(r.Context(), name)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(s)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// OnConnect runs the flow's MM2 on Kafka Connect: fc behind its REST API.
func (e *Env) OnConnect(t testing.TB) *FakeConnect {
	fc := &FakeConnect{Stops: map[string]int{}, Polls: map[string]int{}}
	connectURL := fc.Serve(t)
	e.RB.Connect = func(string) *connect.Client { return connect.New(connectURL) }
	f := e.Cfg.Flow("primary->dr")
	f.ConnectURL, f.Connectors = "http://connect:8083", []string{"MirrorSourceConnector", "MirrorCheckpointConnector"}
	return fc
}

// PrimaryClient and DRClient are flow's clients as the monitor holds them.
func PrimaryClient(m *monitor.Monitor, flow string) *kafka.Client {
	p, _ := m.Clients(flow)
	return p
}

func DRClient(m *monitor.Monitor, flow string) *kafka.Client {
	_, d := m.Clients(flow)
	return d
}

// Step begins and runs step idx of run id as Alice.
func (e *Env) Step(ctx context.Context, id int64, idx int) error {
	x, err := e.RB.Begin(ctx, Alice, id, idx, "primary->dr", "")
	if err != nil {
		return err
	}
	return x.Perform(ctx)
}

func (e *Env) Approved(t *testing.T, ctx context.Context, p runbook.Plan) int64 {
	t.Helper()
	id, err := e.RB.Create(ctx, Alice, p, "test")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, Bob, id, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	return id
}

// Written writes an audit record and returns its proof, for calling a
// step's effect function directly.
func Written(t *testing.T, e *Env) audit.Written {
	t.Helper()
	w, err := audit.New(e.Store).Record(context.Background(), Alice.Name, "test.retry", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// CompleteRun stores a run of plan and walks it to completed through the
// store, as the runbook would (break-glass standing in for approvals).
func CompleteRun(t *testing.T, store *storage.Store, plan runbook.Plan, atMs int64) int64 {
	t.Helper()
	ctx := context.Background()
	rec := func(action audit.Action) model.AuditEntry {
		e, err := runbook.AuditEntry(Alice, action, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	body, _ := json.Marshal(plan)
	id, _, err := store.CreateFailoverRun(ctx, model.Run{Flow: plan.Flow, Reason: "test", CreatedBy: Alice.Name, CreatedMs: atMs,
		PlanJSON: string(body), PlanHash: plan.Hash(), ApprovalsRequired: 1}, runbook.StepKinds(plan), rec("failover.plan"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetBreakGlass(ctx, id, "test run", atMs, rec("failover.BREAK-GLASS")); err != nil {
		t.Fatal(err)
	}
	for i := range plan.Steps {
		if _, err := store.StartFailoverStep(ctx, storage.StepStart{RunID: id, Idx: i, Runner: "r", Actor: Alice.Name, AtMs: atMs, Record: rec("failover.step-start")}); err != nil {
			t.Fatal(err)
		}
		o := storage.StepOutcome{RunID: id, Idx: i, Runner: "r", Result: "{}", AtMs: atMs, Record: rec("failover.step-done")}
		if i == len(plan.Steps)-1 {
			c := rec("failover.completed")
			o.Completed = &c
		}
		if err := store.FinishFailoverStep(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// RewriteFixture is a real Flink 2.2.1 savepoint: KafkaSource uid
// orders-users-source over orders (2 partitions) and users (3). The path
// is relative to a plan kind's package directory (runbook/<kind>), where
// its tests run.
const RewriteFixture = "../../flink/testdata/savepoints/flink-2.2.1-p1-orders2-users3-stop"

// I64 is a pointer to v.
func I64(v int64) *int64 { return &v }
