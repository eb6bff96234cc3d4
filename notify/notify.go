// Package notify tells people about failover runs and flow trouble through
// webhooks and Slack. Events come from the audit log (every run change is
// recorded there before it happens) and from the monitor's flow statuses;
// they go into a durable outbox in SQLite, and one sender per receiver
// delivers them in order, retrying with backoff. A restart, or a receiver
// that fails or hangs, loses nothing and never slows the runbook: the
// runbook only writes its audit records, as it always did.
package notify

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/storage"
)

// Event is the JSON body a generic webhook receives.
type Event struct {
	Kind    string    `json:"event"`
	At      time.Time `json:"at"`
	Flow    string    `json:"flow"`
	RunID   int64     `json:"run_id,omitempty"`
	Actor   string    `json:"actor,omitempty"`
	Summary string    `json:"summary"`
	// URL opens the run or the flow on the console (when public_url is set).
	URL string `json:"url,omitempty"`
	// CanApprove names the operators who could approve a requested run.
	CanApprove []string       `json:"can_approve,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
}

// Notifier feeds the outbox and runs the senders.
type Notifier struct {
	Store *storage.Store
	// Flows gives the flow statuses (the monitor); nil: runs only.
	Flows interface {
		Ready() bool
		Snapshots() []*flowstate.FlowSnapshot
	}
	Receivers []*config.Webhook
	// PublicURL makes links (auth.public_url); "" leaves them out.
	PublicURL string
	Version   string
	Log       *slog.Logger
	// Client sends; nil: one with a 10 s timeout per request.
	Client *http.Client
	// Poll is how often the feeder looks for new events (default 1 s);
	// MaxBackoff caps the wait between retries (default 5 min).
	Poll, MaxBackoff time.Duration
	// UnwatchedAfter is how long a flow announced CRITICAL or BROKEN must
	// be missing from the monitor before its alert is closed as no longer
	// watched (default 1 min): long enough for a restarted console to
	// watch its reverse flows again.
	UnwatchedAfter time.Duration
	Now            func() time.Time

	wake map[string]chan struct{}
	// missingSince is when each announced flow was first found missing
	// (the feeder's goroutine only).
	missingSince map[string]time.Time
}

func (n *Notifier) defaults() {
	if n.Client == nil {
		n.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if n.Poll <= 0 {
		n.Poll = time.Second
	}
	if n.UnwatchedAfter <= 0 {
		n.UnwatchedAfter = time.Minute
	}
	if n.MaxBackoff <= 0 {
		n.MaxBackoff = 5 * time.Minute
	}
	if n.Now == nil {
		n.Now = time.Now
	}
	if n.Log == nil {
		n.Log = slog.Default()
	}
	n.wake = map[string]chan struct{}{}
	for _, r := range n.Receivers {
		n.wake[r.Name] = make(chan struct{}, 1)
	}
}

// Run feeds and sends until ctx ends, then returns once every sender has
// stopped (an attempt in flight is cut off by ctx and retried next start).
func (n *Notifier) Run(ctx context.Context) {
	n.defaults()
	n.dropRemoved(ctx)
	if len(n.Receivers) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, r := range n.Receivers {
		wg.Go(func() { n.send(ctx, r) })
	}
	n.feed(ctx)
	wg.Wait()
}

// dropRemoved gives up the pending deliveries to receivers the config no
// longer names, saying so, so their backlog does not alert for ever.
func (n *Notifier) dropRemoved(ctx context.Context) {
	keep := make([]string, 0, len(n.Receivers))
	for _, r := range n.Receivers {
		keep = append(keep, r.Name)
	}
	dropped, err := n.Store.DropDeliveriesNotTo(ctx, keep)
	if err != nil {
		n.Log.Warn("notifications: could not drop deliveries to removed receivers", "err", err)
		return
	}
	for r, count := range dropped {
		n.Log.Warn("notifications: receiver no longer configured; its undelivered events are dropped", "receiver", r, "events", count)
	}
}

// link is the console URL of path, or "" without a public URL.
func (n *Notifier) link(path string) string {
	if n.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(n.PublicURL, "/") + path
}

// sleep waits d or until ctx ends; false when it ended.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}
