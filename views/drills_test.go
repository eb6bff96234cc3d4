package views

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// A drill is judged against its flow's objectives without overstating:
// an unknown figure or a lower bound under the objective has no verdict,
// and a drill whose cleanup has not finished is never "succeeded".
func TestDrillRowVerdicts(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	base := model.Drill{StartedMs: 1000, FirstRecordMs: ms(4000), RPOMs: ms(20_000), Outcome: model.DrillMeasured, Cleanup: model.CleanupDone}
	row := func(change func(*DrillRow)) DrillRow {
		d := DrillRow{Drill: base, ObjectiveRPO: 30 * time.Second, ObjectiveRTO: 2 * time.Second}
		change(&d)
		return d
	}
	for name, tc := range map[string]struct {
		d               DrillRow
		rto, rpo, state string
	}{
		"RTO missed, RPO met":        {row(func(*DrillRow) {}), "missed", "met", "succeeded"},
		"no objectives":              {row(func(d *DrillRow) { d.ObjectiveRPO, d.ObjectiveRTO = 0, 0 }), "", "", "succeeded"},
		"RPO unknown":                {row(func(d *DrillRow) { d.RPOMs = nil }), "missed", "", "succeeded"},
		"lower bound under":          {row(func(d *DrillRow) { d.RPOAtLeast = true }), "missed", "", "succeeded"},
		"lower bound over":           {row(func(d *DrillRow) { d.RPOAtLeast, d.RPOMs = true, ms(40_000) }), "missed", "missed", "succeeded"},
		"no first record":            {row(func(d *DrillRow) { d.FirstRecordMs = nil }), "", "met", "no record processed"},
		"cleanup failed":             {row(func(d *DrillRow) { d.Cleanup = model.CleanupFailed }), "missed", "met", "cleanup failed: retried"},
		"measured, cleanup pending":  {row(func(d *DrillRow) { d.Cleanup = model.CleanupRunning }), "missed", "met", "cleaning up"},
		"RTO met":                    {row(func(d *DrillRow) { d.ObjectiveRTO = 3 * time.Second }), "met", "met", "succeeded"},
		"failed step, cleanup done":  {row(func(d *DrillRow) { d.Outcome = model.DrillFailed }), "missed", "met", "failed"},
		"running, cleanup not tried": {row(func(d *DrillRow) { d.Outcome, d.Cleanup = model.DrillInProgress, model.CleanupPending }), "missed", "met", "running"},
	} {
		if got := tc.d.RTOVerdict(); got != tc.rto {
			t.Errorf("%s: RTO verdict %q, want %q", name, got, tc.rto)
		}
		if got := tc.d.RPOVerdict(); got != tc.rpo {
			t.Errorf("%s: RPO verdict %q, want %q", name, got, tc.rpo)
		}
		if got := tc.d.Status(); got != tc.state {
			t.Errorf("%s: status %q, want %q", name, got, tc.state)
		}
	}
	if got := row(func(d *DrillRow) { d.RPOAtLeast = true }).RPOText(); got != "at least 20 s" {
		t.Errorf("lower-bound RPO reads %q", got)
	}
}

// A drill's evidence pack is offered once the drill ended, as links a
// keyboard reaches and a screen reader names; a running drill has none,
// and the printed report shows no download column.
func TestDrillsOfferEvidenceOnceEnded(t *testing.T) {
	rows := []DrillRow{
		{Drill: model.Drill{RunID: 7, Flow: "f", StartedMs: 1000, Outcome: model.DrillInProgress, Cleanup: model.CleanupPending}},
		{Drill: model.Drill{RunID: 8, Flow: "f", StartedMs: 1000, Outcome: model.DrillFailed, Cleanup: model.CleanupDone}},
	}
	render := func(report bool) string {
		var b strings.Builder
		if err := Drills(DrillsPage{Rows: rows, Report: report}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	page := render(false)
	for _, want := range []string{`href="/drills/8/evidence.html"`, `href="/drills/8/evidence.json"`, `aria-label="Evidence pack of drill 8, HTML"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the drills page lacks %s", want)
		}
	}
	if strings.Contains(page, "/drills/7/evidence") {
		t.Error("a running drill offers an evidence pack")
	}
	if report := render(true); strings.Contains(report, "/evidence.") || strings.Contains(report, ">Evidence<") {
		t.Error("the printed report shows the download column")
	}
}
