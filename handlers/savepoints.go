package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// Savepoint pages: the catalog (this file), one entry with its offsets and
// restore preview (savepoint_detail.go), and the operator's buttons: sync
// (here), register by path (savepoint_register.go), take a savepoint
// (savepoint_trigger.go; failover.Worker takes it, audited before Flink is
// asked and again with its result).
const (
	// UsabilityRows: the catalog page judges only the newest rows, within
	// model.UsabilityTimeout in all (Kafka may be gone).
	UsabilityRows = 20
	// savepointRowsShown caps the catalog page.
	savepointRowsShown = 200
)

// savepointFlows lists the flows, and picks the one asked for or else the
// first MirrorMaker 2 flow (else the first).
func (h *Handlers) savepointFlows(asked string) ([]views.SavepointFlow, string, *flowstate.FlowSnapshot) {
	var flows []views.SavepointFlow
	var chosen *flowstate.FlowSnapshot
	var firstMM2, first *flowstate.FlowSnapshot
	for _, s := range configuredFlows(h.Monitor.Snapshots()) {
		flows = append(flows, views.SavepointFlow{Name: s.Flow.Name, ClusterLink: s.Flow.IsClusterLink()})
		if s.Flow.Name == asked {
			chosen = s
		}
		if first == nil {
			first = s
		}
		if firstMM2 == nil && !s.Flow.IsClusterLink() {
			firstMM2 = s
		}
	}
	if chosen == nil {
		chosen = firstMM2
	}
	if chosen == nil {
		chosen = first
	}
	if chosen == nil {
		return flows, "", nil
	}
	return flows, chosen.Flow.Name, chosen
}

// savepointAge is how old a savepoint's position is: from its trigger
// time, else its completion; ok false when neither is known.
func savepointAge(sp model.Savepoint, now time.Time) (time.Duration, bool) {
	for _, ms := range []*int64{sp.TriggerMs, sp.CompletedMs} {
		if ms != nil {
			return now.Sub(time.UnixMilli(*ms)), true
		}
	}
	return 0, false
}

// ageVsRPO compares a savepoint's age with the flow's RPO: a savepoint
// younger than the RPO points at records DR may not hold yet.
func ageVsRPO(sp model.Savepoint, rpoMs *int64, atLeast bool, now time.Time) (string, bool) {
	age, ok := savepointAge(sp, now)
	if !ok {
		return "", false
	}
	if rpoMs == nil {
		return views.Duration(age) + " old; the flow's RPO is unknown", false
	}
	rpo := time.Duration(*rpoMs) * time.Millisecond
	if atLeast {
		// A lower bound cannot show DR is past the savepoint: warn.
		return fmt.Sprintf("%s old; the flow's RPO is at least %s (some partitions' age is unknown): DR may not hold the records up to its position yet",
			views.Duration(age), views.Duration(rpo)), true
	}
	if age > rpo {
		return fmt.Sprintf("%s old, older than the RPO (%s): DR should hold the records up to its position", views.Duration(age), views.Duration(rpo)), false
	}
	return fmt.Sprintf("%s old, newer than the RPO (%s): DR may not hold the records up to its position yet", views.Duration(age), views.Duration(rpo)), true
}

func sortedOffsets(sp model.Savepoint) []views.SavepointOffset {
	offs, err := sp.Offsets()
	if err != nil || offs == nil {
		return nil
	}
	tps := make([]model.TP, 0, len(offs))
	byTP := map[model.TP]string{}
	out := make([]views.SavepointOffset, 0, len(offs))
	for k := range offs {
		tp, err := mm2.ParseTPKey(k)
		if err != nil {
			out = append(out, views.SavepointOffset{Key: k, Offset: offs[k]})
			continue
		}
		tps = append(tps, tp)
		byTP[tp] = k
	}
	mm2.SortTPs(tps)
	for _, tp := range tps {
		out = append(out, views.SavepointOffset{Key: byTP[tp], Offset: offs[byTP[tp]]})
	}
	return out
}

// savepointsOpts is what a POST hands to the catalog page.
type savepointsOpts struct {
	flash, err           string
	registerPath, regErr string
	trigger              views.SavepointTriggerForm
	target, job, flow    string
	fromForm             bool
}

// Savepoints is GET /savepoints: the catalog per job, newest first.
func (h *Handlers) Savepoints(w http.ResponseWriter, r *http.Request) {
	f := form.NewSavepointFilter(r)
	h.renderSavepoints(w, r, http.StatusOK, savepointsOpts{target: f.Target, job: f.Job, flow: f.Flow})
}

func (h *Handlers) renderSavepoints(w http.ResponseWriter, r *http.Request, status int, o savepointsOpts) {
	ctx := r.Context()
	now := h.now()
	p := views.SavepointsPage{Chrome: h.chrome("Savepoints"), Now: now, CanOperate: actorMayOperate(r),
		SavepointDirs: h.Catalog.SavepointDirs(), RegisterPath: o.registerPath, RegisterError: o.regErr,
		Flash: o.flash, Error: o.err, Trigger: o.trigger}
	p.Filter = views.SavepointFilter{Target: o.target, Job: o.job, Targets: h.Catalog.Targets()}
	var snap *flowstate.FlowSnapshot
	p.Filter.Flows, p.Filter.Flow, snap = h.savepointFlows(o.flow)
	if snap != nil {
		p.FlowRPO, p.FlowRPOAtLeast = snap.RPOMs, snap.RPOAtLeast
	}
	p.Progress = views.SavepointProgress{Now: now, SinceMs: now.UnixMilli(), Triggers: savepointTriggersView(h.Worker.SavepointTriggers(now))}
	if p.CanOperate {
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		p.Trigger.Live = targetJobsView(h.Catalog.LiveJobs(lctx, 2*time.Second))
		cancel()
	}

	all, err := h.Store.Savepoints(ctx, storage.SavepointFilter{FlinkTarget: o.target})
	if err != nil {
		h.fail(w, r, say("cannot read the savepoint catalog", err))
		return
	}
	seenJob := map[string]bool{}
	var rows []model.Savepoint
	for _, sp := range all {
		if sp.JobID != "" && !seenJob[sp.FlinkTarget+"/"+sp.JobID] {
			seenJob[sp.FlinkTarget+"/"+sp.JobID] = true
			p.Filter.Jobs = append(p.Filter.Jobs, views.SavepointJob{Target: sp.FlinkTarget, ID: sp.JobID, Name: sp.JobName})
		}
		if o.job == "" || sp.JobID == o.job {
			rows = append(rows, sp)
		}
	}
	p.Total = len(rows)
	if len(rows) > savepointRowsShown {
		rows = rows[:savepointRowsShown]
	}
	p.Shown = len(rows)

	judged := rows[:min(len(rows), UsabilityRows)]
	var verdicts map[int64]model.Usability
	if p.Filter.Flow == "" {
		p.UsabilityNote = "No flow is configured: usability cannot be judged."
	} else if len(judged) > 0 {
		start := time.Now()
		verdicts, err = h.Catalog.UsabilityOf(ctx, judged, p.Filter.Flow)
		if err != nil {
			p.UsabilityErr = err.Error()
		}
		p.UsabilityNote = fmt.Sprintf("Usable in DR? is judged only for the newest %d entries (%d here), against flow %s (the primary's and DR's log-start offsets and the translation to DR), within %s in all (took %s); open an entry for the others.",
			UsabilityRows, len(judged), p.Filter.Flow, views.Duration(model.UsabilityTimeout), views.Duration(time.Since(start)))
	}

	groupOf := map[string]int{}
	for i, sp := range rows {
		row := views.SavepointRow{SP: sp, Offsets: sortedOffsets(sp)}
		row.AgeVsRPO, row.AgeVsRPOWarn = ageVsRPO(sp, p.FlowRPO, p.FlowRPOAtLeast, now)
		if i < len(judged) && p.Filter.Flow != "" {
			row.Checked = true
			if u, ok := verdicts[sp.ID]; ok {
				row.Verdict, row.Why = u.Verdict, u.Why()
			} else {
				row.Verdict, row.Why = model.VerdictUnknown, "not judged within "+views.Duration(model.UsabilityTimeout)
			}
		}
		key := sp.FlinkTarget + "/" + sp.JobID
		gi, ok := groupOf[key]
		if !ok {
			gi = len(p.Groups)
			groupOf[key] = gi
			p.Groups = append(p.Groups, views.SavepointGroup{Target: sp.FlinkTarget, JobID: sp.JobID, JobName: sp.JobName})
		}
		g := &p.Groups[gi]
		if g.JobName == "" {
			g.JobName = sp.JobName
		}
		g.Rows = append(g.Rows, row)
	}
	h.render(w, r, status, views.Savepoints(p))
}

// SavepointProgress is GET /savepoints/progress: the live block the
// catalog page polls while a savepoint is being taken. When the last one
// finished after the page was rendered, the page reloads to show it.
func (h *Handlers) SavepointProgress(w http.ResponseWriter, r *http.Request) {
	now := h.now()
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	p := views.SavepointProgress{Now: now, SinceMs: since, Triggers: savepointTriggersView(h.Worker.SavepointTriggers(now))}
	if !p.Active() && r.Header.Get("HX-Request") == "true" {
		for _, t := range p.Triggers {
			if t.Finished.UnixMilli() >= since {
				w.Header().Set("HX-Refresh", "true")
				break
			}
		}
	}
	h.render(w, r, http.StatusOK, views.SavepointProgressBlock(p))
}

// SavepointSync is POST /savepoints/sync.
func (h *Handlers) SavepointSync(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	o := savepointsOpts{flow: r.FormValue("flow")}
	start := time.Now()
	if err := h.Catalog.Sync(ctx); err != nil {
		o.err = "Synced, with problems: " + err.Error()
	} else {
		o.flash = fmt.Sprintf("Synced in %s: every Flink target asked, every savepoint directory scanned.", views.Duration(time.Since(start)))
	}
	h.renderSavepoints(w, r, http.StatusOK, o)
}
