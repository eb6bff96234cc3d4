package failover

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/notify"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// notifyReceiver is a webhook that hangs until released, then records the
// events it is sent, once each: deliveries are at least once, so it
// dedupes on the delivery id as the README tells receivers to.
type notifyReceiver struct {
	release chan struct{}
	mu      sync.Mutex
	got     []notify.Event
	seen    map[string]bool
}

func (r *notifyReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	select {
	case <-r.release:
	case <-req.Context().Done():
		return
	}
	var ev notify.Event
	if err := json.NewDecoder(req.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := req.Header.Get("X-Drconsole-Delivery"); !r.seen[id] {
		r.seen[id] = true
		r.got = append(r.got, ev)
	}
}

func (r *notifyReceiver) events() []notify.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// The runbook's own audit records, not made-up ones, reach a receiver:
// a run requested, approved and completed; one whose step fails; one
// rejected; one cancelled, in that order. While the receiver hangs the
// runbook goes on: every run is done before it has accepted anything.
func TestRunbookActionsReachNotificationReceivers(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	catalogued(t, e, "file:/sp/1")
	ctx := context.Background()
	recv := &notifyReceiver{release: make(chan struct{}), seen: map[string]bool{}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	n := &notify.Notifier{Store: e.Store, Receivers: []*config.Webhook{{Name: "ops", URL: srv.URL, Secret: "k"}},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		Client: &http.Client{Timeout: 300 * time.Millisecond}}
	nctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { n.Run(nctx); close(done) }()
	defer func() { stop(); <-done }()
	// History from before the notifier started is not announced: wait
	// until it has taken its starting positions.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, a, _ := e.Store.NotifyState(ctx, "audit")
		_, r, _ := e.Store.NotifyState(ctx, "run")
		if a && r {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the notifier took no starting position")
		}
	}

	approved := func(plan runbook.Plan) int64 {
		t.Helper()
		id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill")
		if err != nil {
			t.Fatal(err)
		}
		r, _ := e.RB.Get(ctx, id)
		if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "go"); err != nil {
			t.Fatal(err)
		}
		return id
	}
	step := func(id int64, idx int) error {
		t.Helper()
		x, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "")
		if err != nil {
			t.Fatal(err)
		}
		return x.Perform(ctx)
	}

	completed := approved(runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}}})
	if err := step(completed, 0); err != nil {
		t.Fatal(err)
	}
	// A JobManager that refuses connections fails the restore step.
	failed := approved(runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindRestoreFlink, FlinkTarget: "flink-dr",
		JarID: "job.jar", Args: []string{"--bootstrap", "dr"}, SavepointPath: "file:/sp/1"}}})
	if err := step(failed, 0); err != nil {
		t.Fatal(err)
	}
	working := e.RB.Flink
	e.RB.Flink = func(string) *flink.RESTClient { return flink.NewRESTClient("http://127.0.0.1:1") }
	if err := step(failed, 1); err == nil {
		t.Fatal("the restore step succeeded against a JobManager that refuses connections")
	}
	e.RB.Flink = working
	rejected, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RB.Reject(ctx, runbooktest.Bob, rejected, "primary is back"); err != nil {
		t.Fatal(err)
	}
	cancelled, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RB.Cancel(ctx, runbooktest.Alice, cancelled, "drill over"); err != nil {
		t.Fatal(err)
	}
	if got := recv.events(); len(got) != 0 {
		t.Fatalf("the hanging receiver accepted %d events before it was released", len(got))
	}

	close(recv.release)
	type want struct {
		kind string
		run  int64
	}
	wants := []want{
		{config.EventRunRequested, completed}, {config.EventRunApproved, completed}, {config.EventRunCompleted, completed},
		{config.EventRunRequested, failed}, {config.EventRunApproved, failed}, {config.EventStepFailed, failed},
		{config.EventRunRequested, rejected}, {config.EventRunRejected, rejected},
		{config.EventRunRequested, cancelled}, {config.EventRunCancelled, cancelled},
	}
	for deadline := time.Now().Add(20 * time.Second); len(recv.events()) < len(wants); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the receiver has %d of %d events", len(recv.events()), len(wants))
		}
	}
	time.Sleep(200 * time.Millisecond) // a duplicate would arrive within a few polls
	got := recv.events()
	var have []want
	for _, ev := range got {
		have = append(have, want{ev.Kind, ev.RunID})
	}
	if !slices.Equal(have, wants) {
		t.Fatalf("the receiver got %v, want %v", have, wants)
	}
	if d := got[5].Details; d["error"] == nil {
		t.Fatalf("the step-failed event carries no error: %v", d)
	}
	if a := got[7].Actor; a != runbooktest.Bob.Name {
		t.Fatalf("the rejection is announced as by %q, want %q", a, runbooktest.Bob.Name)
	}
}
