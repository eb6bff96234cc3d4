package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// DR drills: start one (its run went through the runbook's approval),
// the history per flow, its printable report and exports.

// FailoverDrillStart is POST /failover/{run}/drill: the Worker checks the
// approval and the typed flow name, records the start and runs the drill.
func (h *Handlers) FailoverDrillStart(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, 0, "Drill started: it runs every step, times the job copy, then cleans up.", func(_ context.Context, id int64) error {
		return h.startDrill(r, id)
	})
}

// drillRow is d with its flow's configured objectives.
func (h *Handlers) drillRow(d model.Drill) views.DrillRow {
	row := views.DrillRow{Drill: d}
	if f := h.Runbook.Config.Flow(d.Flow); f != nil {
		row.ObjectiveRPO, row.ObjectiveRTO = f.Objectives.RPO.D(), f.Objectives.RTO.D()
	}
	return row
}

// runDrill is the drill record of run, for its page; nil for a failover
// or a drill not started.
func (h *Handlers) runDrill(ctx context.Context, run *runbook.Run) (*views.DrillRow, error) {
	if run.Plan.Kind != runbook.PlanDrill {
		return nil, nil
	}
	d, err := h.Failovers.Drill(ctx, run.ID)
	if d == nil || err != nil {
		return nil, err
	}
	row := h.drillRow(*d)
	return &row, nil
}

func (h *Handlers) drillRows(r *http.Request) (string, []views.DrillRow, error) {
	flow := r.URL.Query().Get("flow")
	if flow != "" && h.Runbook.Config.Flow(flow) == nil {
		return flow, nil, notFound("flow " + strconv.Quote(flow))
	}
	drills, err := h.Failovers.Drills(r.Context(), flow)
	rows := make([]views.DrillRow, len(drills))
	for i, d := range drills {
		rows[i] = h.drillRow(d)
	}
	return flow, rows, err
}

// Drills is GET /drills (?flow=NAME): the drill history.
func (h *Handlers) Drills(w http.ResponseWriter, r *http.Request) {
	h.renderDrills(w, r, http.StatusOK, false, nil)
}

// DrillReport is GET /drills/report (?flow=NAME): the history to print.
func (h *Handlers) DrillReport(w http.ResponseWriter, r *http.Request) {
	h.renderDrills(w, r, http.StatusOK, true, nil)
}

// renderDrills renders the history (or its report), with what a check of
// an evidence pack found when there was one.
func (h *Handlers) renderDrills(w http.ResponseWriter, r *http.Request, status int, report bool, checked *views.EvidenceVerified) {
	flow, rows, err := h.drillRows(r)
	if rows == nil && err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.DrillsPage{Chrome: h.chrome("DR drills"), Now: h.now(), Flow: flow, Rows: rows, Report: report, Verified: checked}
	if err != nil {
		p.Error = err.Error()
	}
	for _, f := range h.Runbook.Config.Flows {
		p.Flows = append(p.Flows, f.Name)
	}
	h.render(w, r, status, views.Drills(p))
}

// drillRecord is one drill as exported: unknown figures are null, never 0.
type drillRecord struct {
	Run             int64    `json:"run"`
	Flow            string   `json:"flow"`
	Started         string   `json:"started"`
	Status          string   `json:"status"`
	Succeeded       bool     `json:"succeeded"`
	ToRunningMs     *int64   `json:"to_running_ms"`
	AchievedRTOMs   *int64   `json:"achieved_rto_ms"`
	ObjectiveRTOMs  int64    `json:"objective_rto_ms,omitempty"`
	RPOMs           *int64   `json:"rpo_ms"`
	RPOIsLowerBound bool     `json:"rpo_is_lower_bound"`
	ObjectiveRPOMs  int64    `json:"objective_rpo_ms,omitempty"`
	RereadMax       *int64   `json:"reread_max"`
	RulesFailed     []string `json:"rules_that_would_have_failed"`
	Cleanup         string   `json:"cleanup"`
	CleanupError    string   `json:"cleanup_error,omitempty"`
	Error           string   `json:"error,omitempty"`
	JobID           string   `json:"job_id"`
	Groups          []string `json:"temporary_groups"`
}

func exportRecord(d views.DrillRow) drillRecord {
	return drillRecord{Run: d.RunID, Flow: d.Flow, Started: views.UTCTime(d.StartedMs), Status: d.Status(), Succeeded: d.Succeeded(),
		ToRunningMs: d.ToRunningMs(), AchievedRTOMs: d.RTOMs(), ObjectiveRTOMs: d.ObjectiveRTO.Milliseconds(), RPOMs: d.RPOMs,
		RPOIsLowerBound: d.RPOAtLeast, ObjectiveRPOMs: d.ObjectiveRPO.Milliseconds(), RereadMax: d.RereadMax(), RulesFailed: d.RulesFailed,
		Cleanup: string(d.Cleanup), CleanupError: d.CleanupError, Error: d.Error, JobID: d.JobID, Groups: d.Groups}
}

// drillRecords are the drills ?flow= asks for, as the exports and the
// API give them.
func (h *Handlers) drillRecords(r *http.Request) ([]drillRecord, error) {
	_, rows, err := h.drillRows(r)
	if err != nil {
		return nil, err
	}
	recs := make([]drillRecord, len(rows))
	for i, d := range rows {
		recs[i] = exportRecord(d)
	}
	return recs, nil
}

// DrillsExport is GET /drills/export.{csv,json} (?flow=NAME).
func (h *Handlers) DrillsExport(w http.ResponseWriter, r *http.Request) {
	recs, err := h.drillRecords(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if strings.HasSuffix(r.URL.Path, ".json") {
		download(w, "application/json", "drconsole-drills.json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(recs)
		return
	}
	download(w, "text/csv; charset=utf-8", "drconsole-drills.csv")
	writeDrillsCSV(w, recs)
}

// writeDrillsCSV writes the drills CSV. Text cells (errors from Connect or
// Flink, job ids, group names) are defused like the audit export's
// (storage.CSVCell); the numbers are the console's own.
func writeDrillsCSV(w io.Writer, recs []drillRecord) error {
	cell := storage.CSVCell
	cw := csv.NewWriter(w)
	cw.Write([]string{"run", "flow", "started", "status", "succeeded", "to_running_ms", "achieved_rto_ms", "objective_rto_ms", "rpo_ms",
		"rpo_is_lower_bound", "objective_rpo_ms", "reread_max", "rules_that_would_have_failed", "cleanup", "cleanup_error", "error", "job_id", "temporary_groups"})
	for _, x := range recs {
		cw.Write([]string{strconv.FormatInt(x.Run, 10), cell(x.Flow), x.Started, cell(x.Status), strconv.FormatBool(x.Succeeded), orEmpty(x.ToRunningMs),
			orEmpty(x.AchievedRTOMs), msOrEmpty(x.ObjectiveRTOMs), orEmpty(x.RPOMs), strconv.FormatBool(x.RPOIsLowerBound), msOrEmpty(x.ObjectiveRPOMs),
			orEmpty(x.RereadMax), cell(strings.Join(x.RulesFailed, "; ")), cell(x.Cleanup), cell(x.CleanupError), cell(x.Error), cell(x.JobID), cell(strings.Join(x.Groups, " "))})
	}
	cw.Flush()
	return cw.Error()
}

// orEmpty is an unknown figure as an empty CSV cell, never 0.
func orEmpty(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

func msOrEmpty(v int64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprint(v)
}
