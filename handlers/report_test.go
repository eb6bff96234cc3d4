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
// one episode over it and one unknown stretch apart, and the rest of the
// 7 days as no data, in no share.
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
		// 20 of the 30 recorded minutes: 66.666 % rounded down; 5 over and
		// 5 unknown: 16.666 % rounded up; the other 10,050 no data.
		`data-testid="report-recorded">30 m 00 s<`, `data-testid="report-within">66.66 %<`, "16.67 % <span class=\"meta\">(5 m 00 s)",
		`data-testid="report-no-data">6 d 23 h`, `data-testid="report-unknown-stretches"`, `data-testid="report-no-losses"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	if n, u := strings.Count(page, `data-testid="report-episode"`), strings.Count(page, `data-testid="report-unknown-stretch"`); n != 1 || u != 1 {
		t.Errorf("%d episodes and %d unknown stretches listed, want 1 and 1", n, u)
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
		"within": "20", "over": "5", "unknown": "5", "no_data": "10050", "recorded": "30", "share_within_recorded": "0.666666",
		"share_within": "0.001984"} {
		if got := week[head[k]]; got != want {
			t.Errorf("summary CSV %s = %q, want %q", k, got, want)
		}
	}
	eps, err := csv.NewReader(get("/report/episodes.csv").Body).ReadAll()
	if err != nil || len(eps) != 2 {
		t.Fatalf("episodes CSV: %v %v", eps, err)
	}
}
