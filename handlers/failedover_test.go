package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
)

// After a completed failover run (in the store), the overview card, the
// flow page, /metrics and the RPO report show the flow failed over: when,
// by which run (linked), what the cut left, DR active; no hypothetical
// loss, and no lag, RPO or heartbeat series of the old direction to page
// anybody. After a completed failback the flow is watched as before.
func TestAfterAFailoverTheFlowIsFailedOverNotAtRisk(t *testing.T) {
	rig := newPagesRig(t, 1, 2, 0)
	ctx := context.Background()
	rb := failover.Equip(&runbook.Runbook{Store: rig.store, Config: rig.cfg, Audit: runbook.StoreAuditor{Store: rig.store},
		Log: rig.h.Log, Clock: rig.clock, StopVerifyWindow: 100 * time.Millisecond}, failover.Env{Monitor: rig.mon})
	rig.h.Runbook = rb
	rig.h.Failovers = failback.BookOf(rb)
	rig.h.Worker = &failover.Worker{Runbook: rb, Catalog: catalogOf(rig.h), Log: rig.h.Log, Now: rig.h.Now}
	r := chi.NewRouter()
	r.Get("/", rig.h.Overview)
	r.Get("/flows/{flow}", rig.h.Flow)
	r.Get("/report", rig.h.Report)
	x := &MetricsExposition{Collector: MetricsCollector{Monitor: rig.mon, Series: config.Metrics{PerPartition: new(true)}}, Live: liveRegistry()}
	flowPath := "/flows/" + url.PathEscape(rig.flow)
	get := func(path string) string { return serveAs(r, model.RoleViewer, http.MethodGet, path, nil).Body.String() }
	const hypothetical = "If the primary died now"
	metric := func(name string) string { return name + `{flow="` + rig.flow + `"` }

	if card := get("/"); !strings.Contains(card, hypothetical) || strings.Contains(card, `data-testid="failed-over"`) {
		t.Fatalf("before the failover the card judges the flow: %s", card)
	}
	alice, bob := runbook.Actor{Name: "alice", Role: model.RoleOperator}, runbook.Actor{Name: "bob", Role: model.RoleOperator}
	id, err := rb.Create(ctx, alice, runbook.Plan{Flow: rig.flow, Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, bob, id, run.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	for idx := range 2 {
		x, err := rb.Begin(ctx, alice, id, idx, rig.flow, "test: no MM2 here")
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rig.mon.Refresh(ctx) // the mark holds across refreshes
	runLink := `href="/failover/1"`
	since := rig.clock().UTC().Format("2006-01-02 15:04:05 UTC")
	card := get("/")
	if strings.Contains(card, hypothetical) || !strings.Contains(card, `data-testid="failed-over"`) || !strings.Contains(card, "FAILED_OVER") ||
		!strings.Contains(card, "<strong>Failed over</strong> at "+since) || !strings.Contains(card, runLink) ||
		!strings.Contains(card, "<strong>DR is active</strong>") || !strings.Contains(card, "Not replicated when the mirror stopped:") ||
		strings.Contains(card, "Data at risk (RPO)") {
		t.Errorf("card after the failover: %s", card)
	}
	page := get(flowPath)
	if strings.Contains(page, hypothetical) || !strings.Contains(page, `data-testid="failed-over"`) || !strings.Contains(page, runLink) ||
		!strings.Contains(page, "none at risk: failed over") || !strings.Contains(page, `class="badge status-FAILED_OVER"`) {
		t.Errorf("flow page after the failover: %s", page)
	}
	body := scrape(x).Body.String()
	for _, want := range []string{metric("kafka_mirror_status") + `,status="FAILED_OVER"} 1`, metric("kafka_mirror_status") + `,status="BROKEN"} 0`,
		metric("kafka_mirror_failed_over") + "} 1", metric("kafka_mirror_failed_over_timestamp_seconds") + `,run="1"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, gone := range []string{"kafka_mirror_rpo_ms{", "kafka_mirror_lag_ms{", "kafka_mirror_lag_messages{", "kafka_mirror_topic_lag_ms{",
		"kafka_mirror_heartbeat_age_ms{", "kafka_mirror_unknown_partitions{", "kafka_mirror_data_loss_suspected_partitions{"} {
		if strings.Contains(body, gone) {
			t.Errorf("/metrics still exports %s for the old direction", gone)
		}
	}
	if rep := get("/report"); !strings.Contains(rep, `data-testid="report-failed-over-spans"`) || !strings.Contains(rep, "<strong>DR is active</strong>") {
		t.Errorf("report after the failover: %s", rep)
	}

	// The failback completed: the primary is active, the flow watched again.
	fb, _, err := rig.store.CreateFailoverRun(ctx, model.Run{Flow: rig.flow, Reason: "back", CreatedBy: "alice", CreatedMs: 1,
		PlanJSON: `{"flow":"` + rig.flow + `","failback":true,"failback_of":1}`, PlanHash: "h", ApprovalsRequired: 1}, nil,
		model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: rig.flow})
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.store.SetFailoverStatus(ctx, fb, []model.RunStatus{model.RunPending}, model.RunCompleted, rig.clock().UnixMilli()+1); err != nil {
		t.Fatal(err)
	}
	if err := failover.BookOf(rb).MarkFailedOver(ctx); err != nil {
		t.Fatal(err)
	}
	if card := get("/"); !strings.Contains(card, hypothetical) || strings.Contains(card, `data-testid="failed-over"`) {
		t.Errorf("card after the failback: %s", card)
	}
	if body := scrape(x).Body.String(); !strings.Contains(body, metric("kafka_mirror_failed_over")+"} 0") || !strings.Contains(body, "kafka_mirror_unknown_partitions{") {
		t.Errorf("/metrics after the failback: %s", body)
	}
}
