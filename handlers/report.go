package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/report"
	"github.com/drconsole/drconsole/views"
)

// reports builds every watched flow's RPO report as of now; flows without
// an objective of their own are held to the warning lag.
func (h *Handlers) reports(ctx context.Context, now time.Time) ([]model.FlowReport, error) {
	var flows []*config.Flow
	for _, s := range h.Monitor.Snapshots() {
		flows = append(flows, s.Flow)
	}
	return report.Build(ctx, h.Store, flows, h.Monitor.Thresholds().Warning.Lag.D(), now)
}

// Report is GET /report: per flow, the share of time within its RPO
// objective over 7, 30 and 90 days, the worst episodes and data-loss
// incidents, for a manager to read in a minute.
func (h *Handlers) Report(w http.ResponseWriter, r *http.Request) {
	now := h.now()
	flows, err := h.reports(r.Context(), now)
	if err != nil {
		h.fail(w, r, say("cannot read the RPO history", err))
		return
	}
	h.render(w, r, http.StatusOK, views.Report(views.ReportPage{Chrome: h.chrome("RPO report"), Now: now, Flows: flows}))
}

// ReportCSV is GET /report.csv: one row per flow and window, in minutes;
// share_within is of the whole window (as first published),
// share_within_recorded of the recorded minutes.
func (h *Handlers) ReportCSV(w http.ResponseWriter, r *http.Request) {
	h.reportCSV(w, r, "summary", []string{"flow", "rpo_objective_s", "window_days", "from_utc", "to_utc", "minutes",
		"within", "over", "unknown", "no_data", "before_history", "share_within", "failed_over", "recorded", "share_within_recorded"},
		func(f model.FlowReport, row func(...string) error) error {
			for _, win := range f.Windows {
				// Rounded down, like the page: never more within than it was.
				share := shareDown(win.Share(win.Within))
				// Of the recorded time; empty when nothing was recorded.
				recorded := ""
				if f, ok := win.OfRecorded(win.Within); ok {
					recorded = shareDown(f)
				}
				if err := row(f.Flow, seconds(f.Objective), strconv.Itoa(win.Days()), csvTime(win.FromMs), csvTime(win.ToMs),
					count64(win.Minutes), count64(win.Within), count64(win.Over), count64(win.Unknown), count64(win.NoData), count64(win.BeforeHistory), share,
					count64(win.FailedOver), count64(win.Recorded()), recorded); err != nil {
					return err
				}
			}
			return nil
		})
}

// ReportEpisodes is GET /report/episodes.csv: each flow's worst episodes
// of the last 90 days.
func (h *Handlers) ReportEpisodes(w http.ResponseWriter, r *http.Request) {
	h.reportCSV(w, r, "episodes", []string{"flow", "rpo_objective_s", "start_utc", "end_utc", "minutes", "peak_rpo_s",
		"peak_at_least", "over_objective", "ongoing"},
		func(f model.FlowReport, row func(...string) error) error {
			for _, e := range f.Episodes {
				peak := ""
				if e.PeakMs != nil {
					peak = strconv.FormatFloat(float64(*e.PeakMs)/1000, 'f', 3, 64)
				}
				if err := row(f.Flow, seconds(f.Objective), csvTime(e.StartMs), csvTime(e.EndMs), strconv.Itoa(e.Minutes), peak,
					strconv.FormatBool(e.PeakAtLeast), strconv.FormatBool(e.Over), strconv.FormatBool(e.Ongoing)); err != nil {
					return err
				}
			}
			return nil
		})
}

// reportCSV writes the reports as a CSV download, rows as each says.
func (h *Handlers) reportCSV(w http.ResponseWriter, r *http.Request, name string, header []string,
	rows func(model.FlowReport, func(...string) error) error) {
	now := h.now()
	flows, err := h.reports(r.Context(), now)
	if err != nil {
		h.fail(w, r, say("cannot read the RPO history", err))
		return
	}
	download(w, "text/csv; charset=utf-8", fmt.Sprintf("drconsole-rpo-%s-%s.csv", name, now.UTC().Format("20060102T1504Z")))
	cw := csv.NewWriter(w)
	row := func(v ...string) error { return cw.Write(v) }
	if err := row(header...); err != nil {
		return
	}
	for _, f := range flows {
		if err := rows(f, row); err != nil {
			h.Log.Error("writing the RPO report", "err", err)
			return
		}
	}
	cw.Flush()
}

// shareDown is a share to six places, rounded down.
func shareDown(f float64) string { return strconv.FormatFloat(float64(int64(f*1e6))/1e6, 'f', 6, 64) }

func count64(n int64) string         { return strconv.FormatInt(n, 10) }
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
func csvTime(ms int64) string        { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

// download marks the response as a file to save, never cached: exports
// of the audit log, the RPO report and the drills.
func download(w http.ResponseWriter, contentType, filename string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, filename))
}
