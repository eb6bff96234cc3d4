package views

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/drconsole/drconsole/model"
)

// The cost of one live update, before (the browser polled the whole page
// every 2 s and kept #live) and after (the server renders the page's
// fragments every tick and sends those that changed). Metrics: sent-B is
// what goes over the wire per update; ns/op is the server's rendering
// time per update (the old poll also recomputed every step preview
// against Kafka, which is not counted here).

func benchRun() FailoverRunPage {
	now := time.UnixMilli(1_800_000_000_000)
	run := &Run{Run: model.Run{ID: 7, Flow: "primary->dr", Reason: "us-east-1 outage, incident INC-1234",
		CreatedBy: "alice", CreatedMs: now.Add(-10 * time.Minute).UnixMilli(), Status: model.RunRunning,
		PlanHash: strings.Repeat("ab", 32), ApprovalsRequired: 1,
		Approvals: []model.Approval{{Approver: "bob", Decision: "approve", Reason: "checked lag", PlanHash: strings.Repeat("ab", 32),
			AtMs: now.Add(-5 * time.Minute).UnixMilli(), ExpiresMs: now.Add(time.Hour).UnixMilli()}}},
		ValidApprovers: []string{"bob"}, Approved: true, NextStep: 2}
	var previews []CachedPreview
	for i, kind := range []string{"preflight", "stop-mirror", "translate-group", "restore-flink"} {
		st := model.Step{Idx: i, Kind: kind, Status: model.StepPending}
		if i < 2 {
			st = model.Step{Idx: i, Kind: kind, Status: model.StepDone, Attempts: 1, StartedBy: "alice",
				StartedMs: now.Add(-time.Minute).UnixMilli(), Result: strings.Repeat("partition events-3: moved to offset 123456\n", 12)}
		}
		run.Steps = append(run.Steps, st)
		pv := StepPreview{Idx: i, Title: "Step " + kind, Irreversible: i > 0}
		for range 12 {
			pv.Lines = append(pv.Lines, "group billing, events-3: primary offset 1234567 → DR offset 1234001 (checkpoint 4 s old)")
		}
		pv.Rules = []RuleResult{{Name: "lag", OK: true, Evidence: "RPO 2 s < 30 s"}, {Name: "heartbeats", OK: true, Evidence: "last 1 s ago"}}
		previews = append(previews, CachedPreview{StepPreview: pv, Computed: true, At: now.Add(-time.Minute)})
	}
	return FailoverRunPage{Chrome: Chrome{Title: "Failover run 7", Version: "bench"}, Now: now, Run: run, Previews: previews,
		Me: "alice", CanOperate: true, Running: map[int]bool{2: true}}
}

func benchOverview() OverviewPage {
	now := time.UnixMilli(1_800_000_000_000)
	p := OverviewPage{Chrome: Chrome{Title: "Overview", Version: "bench"}, Now: now, Window: 6 * time.Hour}
	for _, name := range []string{"primary->dr", "orders", "link"} {
		rpo, lag := int64(1200), int64(3400)
		hb := 900 * time.Millisecond
		s := &FlowSnapshot{Flow: &FlowConfig{Name: name, Source: "primary", Target: "dr"}, At: now.Add(-time.Second),
			RPOMs: &rpo, TotalLagMessages: &lag, HeartbeatAge: &hb, Status: model.FlowStatusOK, Reason: "all partitions within 30 s",
			Source: Reachability{Checked: true, OK: true}, Target: Reachability{Checked: true, OK: true}}
		pts := make([]Point, 6*3600/60)
		for i := range pts {
			pts[i] = Point{AtMs: now.Add(-6*time.Hour + time.Duration(i)*time.Minute).UnixMilli(), Y: float64(1000 + i%37*40), Known: true}
		}
		p.Cards = append(p.Cards, NewFlowCard(s, pts, SparkEnd(now), 30*time.Second))
	}
	return p
}

func render(b testing.TB, buf *bytes.Buffer, c templ.Component) int {
	buf.Reset()
	if err := c.Render(context.Background(), buf); err != nil {
		b.Fatal(err)
	}
	return buf.Len()
}

// benchWholePage: one poll of the old kind, the whole page rendered and
// sent.
func benchWholePage(b *testing.B, page templ.Component) {
	buf := &bytes.Buffer{}
	n := 0
	for b.Loop() {
		n = render(b, buf, page)
	}
	b.ReportMetric(float64(n), "sent-B")
}

// BenchmarkRunUpdateOld: one poll of the run page (previews included).
func BenchmarkRunUpdateOld(b *testing.B) { benchWholePage(b, FailoverRun(benchRun())) }

// BenchmarkRunUpdateNew: one tick of the run's stream (every fragment
// rendered to compare); sent is the running step's fragment, the one that
// changes while a step runs.
func BenchmarkRunUpdateNew(b *testing.B) {
	p, buf := benchRun(), &bytes.Buffer{}
	p.LoadedForms = RunFormsKey(p)
	sent := 0
	for b.Loop() {
		render(b, buf, RunStatusFragment(p))
		render(b, buf, RunApprovalsFragment(p))
		for i, st := range p.Run.Steps {
			if n := render(b, buf, StepStatusFragment(p, i, st)); i == 2 {
				sent = n
			}
		}
	}
	b.ReportMetric(float64(sent), "sent-B")
}

// BenchmarkOverviewUpdateOld: one poll of the overview (three flows).
func BenchmarkOverviewUpdateOld(b *testing.B) { benchWholePage(b, Overview(benchOverview())) }

// BenchmarkOverviewUpdateNew: one tick of the overview's streams, which
// share one render per tick (web.Streams.Shared): every fragment rendered
// once, then each of N streams compares it with what it last sent. ns/op
// is per tick; ns/stream is the server time per stream's update. sent-B is
// what one stream receives when a refresh changed one card's figures: that
// card's figures and the time line (its sparkline ends at the minute and
// is resent about once a minute, not with the figures).
func BenchmarkOverviewUpdateNew(b *testing.B) {
	for _, streams := range []int{1, 10} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			p, buf := benchOverview(), &bytes.Buffer{}
			last := make([]map[string][]byte, streams)
			for i := range last {
				last[i] = map[string][]byte{}
			}
			sent := 0
			for b.Loop() {
				frags := map[string][]byte{}
				keep := func(name string, c templ.Component) {
					render(b, buf, c)
					frags[name] = bytes.Clone(buf.Bytes())
				}
				keep("losses", LossNotice(p))
				keep("asof", OverviewAsOf(p.Now))
				for _, c := range p.Cards {
					keep(CardEvent(c.Snap.Flow.Name), FlowCardFragment(c, p.Now, p.Window))
					keep(SparkEvent(c.Snap.Flow.Name), SparkFragment(c))
				}
				for _, l := range last {
					for name, body := range frags {
						if !bytes.Equal(l[name], body) {
							l[name] = body
						}
					}
				}
			}
			sent = len(renderString(b, OverviewAsOf(p.Now))) + len(renderString(b, FlowCardFragment(p.Cards[0], p.Now, p.Window)))
			b.ReportMetric(float64(sent), "sent-B")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(streams), "ns/stream")
		})
	}
}

func renderString(b testing.TB, c templ.Component) string {
	buf := &bytes.Buffer{}
	render(b, buf, c)
	return buf.String()
}
