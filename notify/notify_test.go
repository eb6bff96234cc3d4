package notify

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// receiver is a local webhook endpoint that records what it is sent and
// answers as told.
type receiver struct {
	t      *testing.T
	secret string
	srv    *http.Server
	url    string
	mu     sync.Mutex
	got    []received
	answer func(n int) int // HTTP status for the n-th request (0-based)
	hang   chan struct{}   // when set, requests block until it is closed
	calls  int
}

type received struct {
	Event    Event
	Delivery int64
	Text     string // Slack
}

func newReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, secret: secret, url: "http://" + ln.Addr().String() + "/hook", answer: func(int) int { return 200 }}
	r.serve(ln)
	return r
}

func (r *receiver) serve(ln net.Listener) {
	r.srv = &http.Server{Handler: http.HandlerFunc(r.handle)}
	go r.srv.Serve(ln)
	r.t.Cleanup(func() { r.srv.Close() })
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	n := r.calls
	r.calls++
	hang := r.hang
	r.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-req.Context().Done():
			return
		}
	}
	status := r.answer(n)
	if status/100 == 2 {
		var got received
		if r.secret != "" {
			ts := req.Header.Get("X-Drconsole-Timestamp")
			if sig := req.Header.Get("X-Drconsole-Signature"); sig != Sign(r.secret, ts, body) {
				r.t.Errorf("bad signature %q", sig)
				status = 401
			}
			got.Delivery, _ = strconv.ParseInt(req.Header.Get("X-Drconsole-Delivery"), 10, 64)
			if err := json.Unmarshal(body, &got.Event); err != nil {
				r.t.Errorf("body %s: %v", body, err)
			}
			if got.Event.Kind != req.Header.Get("X-Drconsole-Event") {
				r.t.Errorf("event header %q, body %q", req.Header.Get("X-Drconsole-Event"), got.Event.Kind)
			}
		} else {
			var m map[string]string
			json.Unmarshal(body, &m)
			got.Text = m["text"]
		}
		if status/100 == 2 {
			r.mu.Lock()
			r.got = append(r.got, got)
			r.mu.Unlock()
		}
	}
	w.WriteHeader(status)
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *receiver) kinds() []string {
	var out []string
	for _, g := range r.received() {
		out = append(out, g.Event.Kind)
	}
	return out
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type world struct {
	t     *testing.T
	store *storage.Store
	flows *fakeFlows
}

func newWorld(t *testing.T) *world {
	t.Helper()
	store, err := storage.Open(filepath.Join(t.TempDir(), "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	for _, u := range []model.User{{Name: "alice", Role: model.RoleOperator}, {Name: "bob", Role: model.RoleOperator},
		{Name: "carol", Role: model.RoleAdmin}, {Name: "vic", Role: model.RoleViewer}, {Name: "dan", Role: model.RoleOperator, Disabled: true}} {
		if _, err := store.CreateUserAudited(ctx, u, model.AuditEntry{Actor: "cli:root", Action: "user.create", Subject: "user:" + u.Name}); err != nil {
			t.Fatal(err)
		}
		if u.Disabled {
			if _, err := store.SetDisabledAudited(ctx, u.Name, true, model.AuditEntry{Actor: "cli:root", Action: "user.disable", Subject: "user:" + u.Name}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &world{t: t, store: store, flows: &fakeFlows{}}
}

// run creates a failover run of flow primary->dr requested by alice.
func (w *world) run(reason string) int64 { return w.runOf(reason, "{}") }

// runOf creates a run of flow primary->dr with plan (JSON) requested by alice.
func (w *world) runOf(reason, plan string) int64 {
	w.t.Helper()
	id, _, err := w.store.CreateFailoverRun(context.Background(), model.Run{Flow: "primary->dr", Reason: reason, CreatedBy: "alice", CreatedMs: time.Now().UnixMilli(),
		PlanJSON: plan, PlanHash: "h", ApprovalsRequired: 1}, []string{"preflight"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "primary->dr"})
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// record writes an audit record about run id, as the runbook does.
func (w *world) record(actor, action string, id int64, details map[string]any) {
	w.t.Helper()
	b, _ := json.Marshal(details)
	if _, err := w.store.AppendAudit(context.Background(), model.AuditEntry{Actor: actor, Action: action, Subject: "failover-run:" + strconv.FormatInt(id, 10), Details: b}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) notifier(receivers ...*config.Webhook) *Notifier {
	return &Notifier{Store: w.store, Flows: w.flows, Receivers: receivers, PublicURL: "https://drconsole.example.com/", Version: "test",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Client: &http.Client{Timeout: 300 * time.Millisecond}}
}

// start runs n until the returned stop is called (and at test end).
func start(t *testing.T, n *Notifier) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// started waits until the feeder took its first positions.
func (w *world) started() {
	w.t.Helper()
	waitFor(w.t, "the feeder's first positions", func() bool {
		_, a, _ := w.store.NotifyState(context.Background(), auditKey)
		_, r, _ := w.store.NotifyState(context.Background(), runKey)
		return a && r
	})
}

func TestRunEventsDeliveredInOrderSignedThroughFailures(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, "s3cret")
	failures := 3
	hook.answer = func(n int) int {
		if n < failures {
			return 503
		}
		return 200
	}
	slack := newReceiver(t, "")
	stop := start(t, w.notifier(&config.Webhook{Name: "ops", Kind: "webhook", URL: hook.url, Secret: "s3cret"},
		&config.Webhook{Name: "chat", Kind: "slack", URL: slack.url, Events: []string{config.EventRunRequested, config.EventStepFailed}}))
	w.started()

	id := w.run("region eu-west-1 down")
	w.record("bob", "failover.approve", id, map[string]any{"comment": "go", "evidence": map[string]any{"big": "blob"}})
	w.record("alice", "failover.step-failed", id, map[string]any{"step": 2, "error": "connector stop refused"})
	w.record("alice", "failover.completed", id, nil)

	want := []string{config.EventRunRequested, config.EventRunApproved, config.EventStepFailed, config.EventRunCompleted}
	waitFor(t, "4 webhook deliveries", func() bool { return len(hook.received()) == len(want) })
	waitFor(t, "2 Slack messages", func() bool { return len(slack.received()) == 2 })
	// A receiver holds the request before the sender hears 200 and
	// records it: wait for the outbox to empty, not just for arrival.
	waitFor(t, "an empty outbox", func() bool {
		p, err := w.store.PendingNotifications(context.Background())
		return err == nil && len(p) == 0
	})
	stop()

	got := hook.received()
	if k := hook.kinds(); !slices.Equal(k, want) {
		t.Fatalf("kinds %v, want %v (in order)", k, want)
	}
	for i, g := range got {
		if g.Event.RunID != id || g.Event.Flow != "primary->dr" || g.Event.URL != "https://drconsole.example.com/failover/"+strconv.FormatInt(id, 10) {
			t.Errorf("event %d: %+v", i, g.Event)
		}
		if i > 0 && g.Delivery <= got[i-1].Delivery {
			t.Errorf("delivery ids not increasing: %d after %d", g.Delivery, got[i-1].Delivery)
		}
	}
	if req := got[0].Event; !slices.Equal(req.CanApprove, []string{"bob", "carol"}) || req.Actor != "alice" || req.Details["reason"] != "region eu-west-1 down" {
		t.Errorf("run.requested: %+v (approvers: operators and admins but the requester, not viewers or disabled accounts)", req)
	}
	if d := got[1].Event.Details; d["comment"] != "go" || d["evidence"] != nil {
		t.Errorf("approval details %v: want the comment, not the evidence", d)
	}
	if d := got[2].Event.Details; d["error"] != "connector stop refused" {
		t.Errorf("step failure details %v", d)
	}
	if hook.calls < len(want)+failures {
		t.Errorf("%d requests: the %d failures were not retried", hook.calls, failures)
	}
	texts := slack.received()
	if !strings.Contains(texts[0].Text, "Can approve: bob, carol") || !strings.Contains(texts[0].Text, "|Open in drconsole>") ||
		!strings.Contains(texts[1].Text, "\nError:\n> connector stop refused") {
		t.Errorf("slack texts: %+v", texts)
	}
	p, err := w.store.PendingNotifications(context.Background())
	if err != nil || len(p) != 0 {
		t.Fatalf("pending after delivery: %v %v", p, err)
	}
}

// A receiver that hangs holds back only its own deliveries; the others
// go on, and it gets everything once it answers again.
func TestHangingReceiverHoldsBackOnlyItself(t *testing.T) {
	w := newWorld(t)
	stuck := newReceiver(t, "k1")
	stuck.hang = make(chan struct{})
	fine := newReceiver(t, "k2")
	start(t, w.notifier(&config.Webhook{Name: "stuck", URL: stuck.url, Secret: "k1"}, &config.Webhook{Name: "fine", URL: fine.url, Secret: "k2"}))
	w.started()
	id := w.run("drill")
	w.record("bob", "failover.approve", id, nil)
	w.record("alice", "failover.completed", id, nil)
	waitFor(t, "the healthy receiver's 3 events", func() bool { return len(fine.received()) == 3 })
	waitFor(t, "the hung receiver retried", func() bool {
		stuck.mu.Lock()
		defer stuck.mu.Unlock()
		return stuck.calls >= 2 // a timeout, then another try
	})
	if len(stuck.received()) != 0 {
		t.Fatal("the hung receiver got something while hung")
	}
	waitFor(t, "the healthy receiver's outbox empty, the hung one's holding 3", func() bool {
		p, err := w.store.PendingNotifications(context.Background())
		return err == nil && p["stuck"][0] == 3 && p["fine"][0] == 0
	})
	close(stuck.hang)
	waitFor(t, "the recovered receiver's 3 events", func() bool { return len(stuck.received()) == 3 })
	if k := stuck.kinds(); !slices.Equal(k, []string{config.EventRunRequested, config.EventRunApproved, config.EventRunCompleted}) {
		t.Fatalf("recovered receiver got %v", k)
	}
}

// Stopped while its receiver is unreachable, started again later: every
// event is delivered once, in order, the ones from the downtime too.
func TestRestartLosesNothing(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens: connection refused
	hook := &config.Webhook{Name: "ops", URL: "http://" + addr + "/hook", Secret: "k"}
	stop := start(t, w.notifier(hook))
	w.started()
	id := w.run("one")
	w.record("bob", "failover.approve", id, nil)
	waitFor(t, "failed attempts on record", func() bool {
		d, _ := w.store.NextDelivery(context.Background(), "ops")
		return d != nil && d.Attempts >= 2
	})
	stop()
	// While the console is down the runbook goes on.
	w.record("alice", "failover.step-failed", id, map[string]any{"error": "x"})
	id2 := w.run("two")

	r := &receiver{t: t, secret: "k", answer: func(int) int { return 200 }}
	// The receiver comes back on its old address. Another process taking
	// that port meanwhile is unlikely; it fails the test, never skips it.
	for try := 0; ; try++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if try == 50 {
			t.Fatalf("the receiver cannot listen on %s again: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.serve(ln)
	start(t, w.notifier(hook))
	waitFor(t, "4 deliveries after the restart", func() bool { return len(r.received()) == 4 })
	time.Sleep(100 * time.Millisecond) // a duplicate would arrive within a few polls
	got := r.received()
	if k := r.kinds(); len(got) != 4 || !slices.Equal(k, []string{config.EventRunRequested, config.EventRunApproved, config.EventStepFailed, config.EventRunRequested}) {
		t.Fatalf("after restart: %v", k)
	}
	if got[3].Event.RunID != id2 {
		t.Fatalf("last event is about run %d, want %d", got[3].Event.RunID, id2)
	}
}

// History from before notifications were configured is not announced.
func TestFirstStartAnnouncesNoHistory(t *testing.T) {
	w := newWorld(t)
	id := w.run("old")
	w.record("bob", "failover.approve", id, nil)
	hook := newReceiver(t, "k")
	start(t, w.notifier(&config.Webhook{Name: "ops", URL: hook.url, Secret: "k"}))
	w.started()
	w.record("alice", "failover.completed", id, nil)
	waitFor(t, "the new event", func() bool { return len(hook.received()) == 1 })
	time.Sleep(100 * time.Millisecond)
	if k := hook.kinds(); !slices.Equal(k, []string{config.EventRunCompleted}) {
		t.Fatalf("got %v", k)
	}
}

type fakeFlows struct {
	mu    sync.Mutex
	snaps []*flowstate.FlowSnapshot
}

func (f *fakeFlows) Ready() bool { return true }
func (f *fakeFlows) Snapshots() []*flowstate.FlowSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snaps
}
func (f *fakeFlows) set(st model.FlowStatus, rpoMs int64, unknown int, incidents int64, dataLost int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snaps = []*flowstate.FlowSnapshot{{Flow: &config.Flow{Name: "primary->dr"}, Status: st, RPOMs: &rpoMs, Unknown: unknown,
		LossIncidentsTotal: incidents, DataLost: dataLost}}
}

// Flow trouble is announced once when it starts and once when it ends;
// WARNING in between changes nothing; a restart does not announce again.
func TestFlowStatusChanges(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, "k")
	cfg := &config.Webhook{Name: "ops", URL: hook.url, Secret: "k"}
	w.flows.set(model.FlowStatusOK, 0, 0, 0, 0)
	stop := start(t, w.notifier(cfg))
	w.started()
	step := func(st model.FlowStatus, rpo int64, unknown int, incidents int64, lost int, wantTotal int) {
		t.Helper()
		w.flows.set(st, rpo, unknown, incidents, lost)
		waitFor(t, "events for "+string(st), func() bool { return len(hook.received()) >= wantTotal })
		time.Sleep(60 * time.Millisecond) // three polls: nothing more may come
		if n := len(hook.received()); n != wantTotal {
			t.Fatalf("after %s: %d events %v, want %d", st, n, hook.kinds(), wantTotal)
		}
	}
	step(model.FlowStatusCritical, 150_000, 2, 0, 0, 1)
	step(model.FlowStatusCritical, 160_000, 2, 0, 0, 1)
	step(model.FlowStatusWarning, 40_000, 0, 0, 0, 1)
	step(model.FlowStatusCritical, 130_000, 0, 0, 0, 1)
	stop()
	start(t, w.notifier(cfg)) // restarted while still critical: not announced again
	step(model.FlowStatusCritical, 130_000, 0, 0, 0, 1)
	step(model.FlowStatusOK, 1_000, 0, 0, 0, 2)
	step(model.FlowStatusBroken, 1_000, 0, 0, 0, 3)
	step(model.FlowStatusBroken, 1_000, 0, 1, 1, 4)
	if k := hook.kinds(); !slices.Equal(k, []string{config.EventFlowCritical, config.EventFlowOK, config.EventFlowBroken, config.EventFlowDataLoss}) {
		t.Fatalf("kinds %v", k)
	}
	first := hook.received()[0].Event
	if !strings.Contains(first.Summary, "at least 150 s") || first.URL != "https://drconsole.example.com/flows/primary-%3Edr" {
		t.Fatalf("critical event: %+v (an RPO with unknown partitions is a lower bound)", first)
	}
}

// A flow announced BROKEN whose failover then completes (the mirror
// stopped on purpose, DR active) gets its alert resolved once, with that
// reason; while failed over nothing more is announced; after the failback
// it is watched as before.
func TestFailedOverResolvesTheOldDirectionsAlert(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, "k")
	w.flows.set(model.FlowStatusOK, 0, 0, 0, 0)
	start(t, w.notifier(&config.Webhook{Name: "ops", URL: hook.url, Secret: "k"}))
	w.started()
	w.flows.set(model.FlowStatusBroken, 300_000, 0, 0, 0)
	waitFor(t, "broken", func() bool { return len(hook.received()) >= 1 })
	failedOver := func() {
		w.flows.mu.Lock()
		defer w.flows.mu.Unlock()
		s := *w.flows.snaps[0]
		s.Status = model.FlowStatusFailedOver
		s.FailedOver = &model.FailedOver{Run: 7, SinceMs: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixMilli(), Held: model.FlowStatusBroken}
		w.flows.snaps = []*flowstate.FlowSnapshot{&s}
	}
	failedOver()
	waitFor(t, "resolved", func() bool { return len(hook.received()) >= 2 })
	time.Sleep(60 * time.Millisecond) // three polls: nothing more may come
	got := hook.received()
	if len(got) != 2 {
		t.Fatalf("events %v", hook.kinds())
	}
	res := got[1].Event
	if res.Kind != config.EventFlowOK || res.Details["status"] != "FAILED_OVER" || res.Details["reason"] != "failed over by run 7" ||
		!strings.Contains(res.Summary, "BROKEN alert is resolved, failed over by run 7") || res.URL != "https://drconsole.example.com/failover/7" {
		t.Fatalf("resolution %+v", res)
	}
	// The failback completed: watched again, BROKEN is announced again.
	w.flows.set(model.FlowStatusBroken, 1_000, 0, 0, 0)
	waitFor(t, "broken again", func() bool { return len(hook.received()) >= 3 })
	if k := hook.kinds(); !slices.Equal(k, []string{config.EventFlowBroken, config.EventFlowOK, config.EventFlowBroken}) {
		t.Fatalf("kinds %v", k)
	}
}

// A flow announced CRITICAL that stops being watched (a failback's reverse
// flow once stopped) gets its alert closed once, saying so; watched again
// and critical, it is announced again.
func TestUnwatchedFlowAlertClosed(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, "k")
	w.flows.set(model.FlowStatusOK, 0, 0, 0, 0)
	n := w.notifier(&config.Webhook{Name: "ops", URL: hook.url, Secret: "k"})
	n.UnwatchedAfter = 300 * time.Millisecond
	start(t, n)
	w.started()
	w.flows.set(model.FlowStatusCritical, 150_000, 0, 0, 0)
	waitFor(t, "critical", func() bool { return len(hook.received()) >= 1 })
	// Missing for less than UnwatchedAfter (a console watching it again
	// after a restart): nothing.
	w.flows.mu.Lock()
	w.flows.snaps = nil
	w.flows.mu.Unlock()
	time.Sleep(150 * time.Millisecond)
	w.flows.set(model.FlowStatusCritical, 150_000, 0, 0, 0)
	time.Sleep(250 * time.Millisecond)
	if n := len(hook.received()); n != 1 {
		t.Fatalf("a flow missing briefly: %d events %v", n, hook.kinds())
	}
	w.flows.mu.Lock()
	w.flows.snaps = nil
	w.flows.mu.Unlock()
	waitFor(t, "closed", func() bool { return len(hook.received()) >= 2 })
	time.Sleep(60 * time.Millisecond) // three polls: nothing more may come
	got := hook.received()
	if len(got) != 2 || got[1].Event.Kind != config.EventFlowOK || got[1].Event.Flow != "primary->dr" ||
		!strings.Contains(got[1].Event.Summary, "has not been watched for 300ms") || got[1].Event.Details["status"] != "unwatched" {
		t.Fatalf("events %+v", got)
	}
	w.flows.set(model.FlowStatusCritical, 150_000, 0, 0, 0)
	waitFor(t, "critical again", func() bool { return len(hook.received()) >= 3 })
	if k := hook.kinds(); !slices.Equal(k, []string{config.EventFlowCritical, config.EventFlowOK, config.EventFlowCritical}) {
		t.Fatalf("kinds %v", k)
	}
}

// A receiver removed from the config: its undelivered events are dropped
// at the next start (nobody will take them, and pending for ever they
// would hold the backlog alert up); the receivers still configured keep
// theirs.
func TestRemovedReceiverBacklogIsDropped(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String() + "/hook"
	ln.Close()         // nobody listens: connection refused
	var up atomic.Bool // a handler cut off by the stop may still be answering
	r := &receiver{t: t, secret: "k", answer: func(int) int {
		if up.Load() {
			return 200
		}
		return 503
	}}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.serve(ln)
	ops := &config.Webhook{Name: "ops", URL: "http://" + ln.Addr().String() + "/hook", Secret: "k"}
	stop := start(t, w.notifier(ops, &config.Webhook{Name: "old", URL: gone, Secret: "k"}))
	w.started()
	w.run("one")
	waitFor(t, "both receivers pending", func() bool {
		p, _ := w.store.PendingNotifications(context.Background())
		return p["ops"][0] == 1 && p["old"][0] == 1
	})
	stop()

	up.Store(true)
	start(t, w.notifier(ops))
	// Nothing pending: ops took its event, and old's was dropped.
	waitFor(t, "no delivery pending after the restart without old", func() bool {
		p, err := w.store.PendingNotifications(context.Background())
		return err == nil && len(p) == 0
	})
	// At least once: a slow answer may bring the same delivery again.
	ids := map[int64]bool{}
	for _, g := range r.received() {
		ids[g.Delivery] = true
	}
	if len(ids) != 1 {
		t.Fatalf("ops received %d distinct events, want 1", len(ids))
	}
}

// A drill is announced as a drill in every event of its run, never as a
// failover; a failover's events say failover, a failback's failback.
func TestDrillAnnouncedAsDrill(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, "")
	stop := start(t, w.notifier(&config.Webhook{Name: "ops", Kind: "webhook", URL: hook.url}))
	w.started()
	drill := w.runOf("quarterly drill", `{"flow":"primary->dr","drill":true}`)
	w.record("bob", "failover.approve", drill, nil)
	w.record("alice", "failover.completed", drill, nil)
	real := w.run("region down")
	w.record("alice", "failover.completed", real, nil)
	back := w.runOf("primary is back", `{"flow":"primary->dr","failback":true,"failback_of":2}`)
	waitFor(t, "6 deliveries", func() bool { return len(hook.received()) == 6 })
	stop()
	for _, g := range hook.received() {
		if g.Event.RunID == back {
			if !strings.Contains(g.Event.Summary, "requested failback run") {
				t.Errorf("failback: %q", g.Event.Summary)
			}
			continue
		}
		isDrill := g.Event.RunID == drill
		says := strings.Contains(strings.ToLower(g.Event.Summary), "drill run")
		if says != isDrill || (g.Event.Details["drill"] == true) != isDrill || isDrill && strings.Contains(g.Event.Summary, "ailover") {
			t.Errorf("run %d (drill %v): %q %v", g.Event.RunID, isDrill, g.Event.Summary, g.Event.Details)
		}
	}
}
