package openapi

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
)

var alice, bob = runbook.Actor{Name: "alice", Role: "operator"}, runbook.Actor{Name: "bob", Role: "operator"}

// console is a console whose one flow, "link", is a Cluster Linking flow
// on the stand-in, reached through the proxy (DR's REST API and the
// primary's, as a bidirectional link has), with its monitor.
func (r *rig) console(t *testing.T) (*runbook.Runbook, *monitor.Monitor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	boot := func() []string {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "payments", "refunds"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.ListenAddrs()
	}
	rest := r.proxy.URL + "/kafka"
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: boot()}, "dr": {Bootstrap: boot()}},
		Flows: []*config.Flow{{Name: "link", Kind: config.FlowClusterLink, Source: "primary", Target: "dr",
			ClusterLink: &config.ClusterLink{RestURL: rest, ClusterID: "dr-cluster", Link: "dr-link", Username: user, Password: pass,
				Primary: &config.ClusterLink{RestURL: rest, ClusterID: demo.ClusterLinkSourceID, Username: user, Password: pass}}}},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("openapi"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	return failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log}, failover.Env{Monitor: mon}), mon
}

// plan has alice plan p and bob approve it; it returns the run's id and
// its preview (the dry runs the console sends before anyone executes).
func plan(t *testing.T, rb *runbook.Runbook, p runbook.Plan) (int64, []runbook.StepPreview) {
	t.Helper()
	ctx := context.Background()
	id, err := rb.Create(ctx, alice, p, "checked against Confluent's document")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Approve(ctx, bob, id, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	return id, rb.Preview(ctx, r)
}

// run plans p and runs its steps in order as alice.
func run(t *testing.T, rb *runbook.Runbook, p runbook.Plan) {
	t.Helper()
	ctx := context.Background()
	id, _ := plan(t, rb, p)
	for idx, s := range p.Steps {
		x, err := rb.Begin(ctx, alice, id, idx, p.Flow, "")
		if err == nil {
			err = x.Perform(ctx)
		}
		if err != nil {
			t.Fatalf("%s: %v", s.Kind, err)
		}
	}
}

// The runbook's Cluster Linking actions (runbook/internal/effect, which
// only failover/ may import, so driven through the exported runbook) and
// the monitor's reads, against the stand-in: a promote refused in its dry
// run while a mirror lags (a per-topic error inside a 200), then promoted;
// a failback (truncate-and-restore on the primary, dry run first, the wait,
// reverse-and-start); a failover with the source gone; a failback leaving
// the mirrors paused (reverse-and-pause). Every request and answer is held
// to the document.
func TestRunbookAgainstTheDocument(t *testing.T) {
	r := newRig(t, map[string]int{"payments": 2, "refunds": 1})
	r.link.SetPendingStopped(200 * time.Millisecond)
	r.link.SetLastFetchOffset("payments", 0, 100)
	r.link.SetLastFetchOffset("payments", 1, 80)
	r.link.SetLastFetchOffset("refunds", 0, 7)
	rb, mon := r.console(t)
	ctx := context.Background()
	mon.Refresh(ctx)

	promote := runbook.Plan{Flow: "link", Steps: []runbook.Step{{Kind: failover.KindPromoteMirrors}}}
	r.link.SetLag("payments", 1, 5)
	if _, err := rb.Create(ctx, alice, promote, "planned while payments lags"); err == nil || !strings.Contains(err.Error(), "payments ACTIVE lag 5") {
		t.Fatalf("a planned promote while payments lags was created: %v", err)
	}
	// Lag that comes after the plan was made: the dry run refuses it.
	r.link.SetLag("payments", 1, 0)
	id, _ := plan(t, rb, promote)
	r.link.SetLag("payments", 1, 5)
	lagging, err := rb.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if pv := rb.Preview(ctx, lagging); !strings.Contains(pv[0].Err+strings.Join(pv[0].Lines, " "), "requires zero lag") {
		t.Fatalf("the dry run of a promote while payments lags: %+v", pv)
	}
	r.link.SetLag("payments", 1, 0)
	run(t, rb, promote)
	r.link.SetTruncatable("payments", []int64{3, 0})
	run(t, rb, failback.LinkFailbackPlan("link", false))
	r.link.SetSourceUnavailable(true)
	mon.Refresh(ctx)
	run(t, rb, runbook.Plan{Flow: "link", Steps: []runbook.Step{{Kind: failover.KindFailoverMirrors}}})
	r.link.SetSourceUnavailable(false)
	run(t, rb, failback.LinkFailbackPlan("link", true))
	mon.Refresh(ctx)

	var sent []string
	for _, a := range r.link.State().Actions {
		if !a.ValidateOnly {
			sent = append(sent, a.Action)
		}
	}
	if want := []string{"promote", "truncate-and-restore", "reverse-and-start-mirror", "failover", "truncate-and-restore", "reverse-and-pause-mirror"}; !slices.Equal(sent, want) {
		t.Fatalf("actions %v, want %v", sent, want)
	}
	if m := r.link.State().Mirrors["payments"]; m.Status != "PAUSED" {
		t.Fatalf("DR's payments after the second failback: %+v", m)
	}
	requireAgreement(t, r.proxy, []string{"getKafkaLink 200", "listKafkaMirrorTopicsUnderLink 200",
		"updateKafkaMirrorTopicsPromote 200 validate_only=true", "updateKafkaMirrorTopicsPromote 200 validate_only=false",
		"updateKafkaMirrorTopicsFailover 200 validate_only=true", "updateKafkaMirrorTopicsFailover 200 validate_only=false",
		"updateKafkaMirrorTopicsTruncateAndRestoreMirror 200 validate_only=true", "updateKafkaMirrorTopicsTruncateAndRestoreMirror 200 validate_only=false",
		"updateKafkaMirrorTopicsReverseAndStartMirror 200 validate_only=false", "updateKafkaMirrorTopicsReverseAndPauseMirror 200 validate_only=false"})
}
