package handlers

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/storage"
)

// The report page and its CSVs show what the stored samples say: 20
// minutes within the 30 s objective, 5 over it, 5 with the RPO unknown,
// one episode of each kind, and the rest of the 7 days as no data.
func TestReportFromStoredSamples(t *testing.T) {
	rig := newPagesRig(t, 2, 1, 0)
	ctx := context.Background()
	start := rig.now.Add(-30 * time.Minute).Truncate(time.Minute)
	for i := range 30 {
		for s := 0; s < 60; s += 5 {
			x := storage.FlowSample{AtMs: start.Add(time.Duration(i)*time.Minute + time.Duration(s)*time.Second).UnixMilli(), Status: "OK"}
			switch {
			case i < 15 || i >= 20 && i < 25:
				x.RPOMs = i64(2_000)
			case i < 20:
				x.RPOMs, x.Status = i64(90_000), "WARNING"
			default:
				x.Status = "UNKNOWN" // RPO unknown: stored as NULL
			}
			if err := rig.store.AddFlowSample(ctx, rig.flow, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := chi.NewRouter()
	r.Get("/report", rig.h.Report)
	r.Get("/report.csv", rig.h.ReportCSV)
	r.Get("/report/episodes.csv", rig.h.ReportEpisodes)
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w
	}
	page := get("/report").Body.String()
	for _, want := range []string{`data-testid="report-objective">30 s<`, ">7 days<", ">90 days<",
		// 20 of 10,080 minutes: 0.198 % rounded down; 5 over: 0.0496 % rounded up.
		`data-testid="report-within">0.19 %<`, "0.05 % <span class=\"meta\">(5 m 00 s)", "over the objective",
		"RPO unknown (may have been within)", `data-testid="report-no-losses"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	if n := strings.Count(page, `data-testid="report-episode"`); n != 2 {
		t.Errorf("%d episodes listed, want 2", n)
	}

	rows, err := csv.NewReader(get("/report.csv").Body).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("summary CSV: %d rows %v", len(rows), err)
	}
	head := map[string]int{}
	for i, k := range rows[0] {
		head[k] = i
	}
	week := rows[1]
	for k, want := range map[string]string{"flow": rig.flow, "rpo_objective_s": "30", "window_days": "7", "minutes": "10080",
		"within": "20", "over": "5", "unknown": "5", "no_data": "10050"} {
		if got := week[head[k]]; got != want {
			t.Errorf("summary CSV %s = %q, want %q", k, got, want)
		}
	}
	eps, err := csv.NewReader(get("/report/episodes.csv").Body).ReadAll()
	if err != nil || len(eps) != 3 {
		t.Fatalf("episodes CSV: %v %v", eps, err)
	}
}
