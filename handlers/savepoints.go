package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// Savepoint pages: the catalog, one entry with its offsets and restore
// preview, and the operator's buttons (sync, register by path, take a
// savepoint). Taking a savepoint is audited before it is asked of Flink and
// again with its result.
const (
	// UsabilityRows: the catalog page judges only the newest rows...
	UsabilityRows = 20
	// UsabilityTimeout: ...within this time in all (Kafka may be gone).
	UsabilityTimeout = 10 * time.Second
	// savepointRowsShown caps the catalog page.
	savepointRowsShown = 200
	// triggerKeep: finished triggers stay on the page this long.
	triggerKeep = 15 * time.Minute
)

var jobIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// spTriggers are the savepoints being taken through this console.
type spTriggers struct {
	mu   sync.Mutex
	seq  int64
	list []*views.SavepointTrigger
}

// start records a trigger; one per job at a time.
func (t *spTriggers) start(target, jobID, jobName, actor string, stop bool, now time.Time) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.list {
		if !x.Done && x.Target == target && x.JobID == jobID {
			return 0, fmt.Errorf("a savepoint of job %s on %s is already in progress (started by %s)", jobID, target, x.Actor)
		}
	}
	t.seq++
	t.list = append(t.list, &views.SavepointTrigger{ID: t.seq, Target: target, JobID: jobID, JobName: jobName, Stop: stop, Actor: actor, Started: now})
	return t.seq, nil
}

func (t *spTriggers) update(id int64, f func(*views.SavepointTrigger)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.list {
		if x.ID == id {
			f(x)
		}
	}
}

func (t *spTriggers) remove(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.list {
		if x.ID == id {
			t.list = append(t.list[:i], t.list[i+1:]...)
			return
		}
	}
}

// recent copies the triggers in progress or finished within triggerKeep,
// newest first, forgetting older ones.
func (t *spTriggers) recent(now time.Time) []views.SavepointTrigger {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keep []*views.SavepointTrigger
	var out []views.SavepointTrigger
	for _, x := range t.list {
		if x.Done && now.Sub(x.Finished) > triggerKeep {
			continue
		}
		keep = append(keep, x)
		out = append(out, *x)
	}
	t.list = keep
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// savepointFlows lists the flows, and picks the one asked for or else the
// first MirrorMaker 2 flow (else the first).
func (h *Handlers) savepointFlows(asked string) ([]views.SavepointFlow, string, *monitor.FlowSnapshot) {
	var flows []views.SavepointFlow
	var chosen *monitor.FlowSnapshot
	var firstMM2, first *monitor.FlowSnapshot
	for _, s := range h.Monitor.Snapshots() {
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
func savepointAge(sp storage.Savepoint, now time.Time) (time.Duration, bool) {
	for _, ms := range []*int64{sp.TriggerMs, sp.CompletedMs} {
		if ms != nil {
			return now.Sub(time.UnixMilli(*ms)), true
		}
	}
	return 0, false
}

// ageVsRPO compares a savepoint's age with the flow's RPO: a savepoint
// younger than the RPO points at records DR may not hold yet.
func ageVsRPO(sp storage.Savepoint, rpoMs *int64, atLeast bool, now time.Time) (string, bool) {
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

func sortedOffsets(sp storage.Savepoint) []views.SavepointOffset {
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

// usabilities judges sps against flow, a few at a time, all within
// UsabilityTimeout; entries not judged in time come back unknown.
func (h *Handlers) usabilities(ctx context.Context, sps []storage.Savepoint, flow string) (map[int64]catalog.Usability, error) {
	ctx, cancel := context.WithTimeout(ctx, UsabilityTimeout)
	defer cancel()
	out := make(map[int64]catalog.Usability, len(sps))
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, sp := range sps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				return
			}
			u, err := h.Catalog.Usability(ctx, sp, flow)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			out[sp.ID] = u
		}()
	}
	wg.Wait()
	return out, firstErr
}

// why summarises what keeps a savepoint from being usable.
func why(u catalog.Usability) string {
	var parts []string
	switch u.Verdict {
	case catalog.Usable:
		return ""
	case catalog.Unusable:
		parts = u.Unusable
	default:
		if len(u.Untranslatable) > 0 {
			parts = append(parts, fmt.Sprintf("%d partition(s) without a DR offset yet", len(u.Untranslatable)))
		}
		if u.PrimaryErr != "" {
			parts = append(parts, "primary: "+u.PrimaryErr)
		}
		if u.DRErr != "" {
			parts = append(parts, "DR: "+u.DRErr)
		}
		parts = append(parts, u.Notes...)
	}
	s := strings.Join(parts, "; ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
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
	q := r.URL.Query()
	h.renderSavepoints(w, r, http.StatusOK, savepointsOpts{target: q.Get("target"), job: q.Get("job"), flow: q.Get("flow")})
}

func (h *Handlers) renderSavepoints(w http.ResponseWriter, r *http.Request, status int, o savepointsOpts) {
	ctx := r.Context()
	now := h.now()
	p := views.SavepointsPage{Chrome: h.chrome("Savepoints"), Now: now, CanOperate: actorMayOperate(r),
		SavepointDirs: h.Catalog.Config.SavepointDirs, RegisterPath: o.registerPath, RegisterError: o.regErr,
		Flash: o.flash, Error: o.err, Trigger: o.trigger}
	p.Filter = views.SavepointFilter{Target: o.target, Job: o.job, Targets: h.Catalog.Targets()}
	var snap *monitor.FlowSnapshot
	p.Filter.Flows, p.Filter.Flow, snap = h.savepointFlows(o.flow)
	if snap != nil {
		p.FlowRPO, p.FlowRPOAtLeast = snap.RPOMs, snap.RPOAtLeast
	}
	p.Progress = views.SavepointProgress{Now: now, SinceMs: now.UnixMilli(), Triggers: h.savepointTriggers.recent(now)}
	if p.CanOperate {
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		p.Trigger.Live = h.Catalog.LiveJobs(lctx, 2*time.Second)
		cancel()
	}

	all, err := h.Store.Savepoints(ctx, storage.SavepointFilter{FlinkTarget: o.target})
	if err != nil {
		h.Log.Error("reading the savepoint catalog", "err", err)
		http.Error(w, "cannot read the savepoint catalog", http.StatusInternalServerError)
		return
	}
	seenJob := map[string]bool{}
	var rows []storage.Savepoint
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
	var verdicts map[int64]catalog.Usability
	if p.Filter.Flow == "" {
		p.UsabilityNote = "No flow is configured: usability cannot be judged."
	} else if len(judged) > 0 {
		start := time.Now()
		verdicts, err = h.usabilities(ctx, judged, p.Filter.Flow)
		if err != nil {
			p.UsabilityErr = err.Error()
		}
		p.UsabilityNote = fmt.Sprintf("Usable in DR? is judged only for the newest %d entries (%d here), against flow %s (the primary's and DR's log-start offsets and the translation to DR), within %s in all (took %s); open an entry for the others.",
			UsabilityRows, len(judged), p.Filter.Flow, views.Duration(UsabilityTimeout), views.Duration(time.Since(start)))
	}

	groupOf := map[string]int{}
	for i, sp := range rows {
		row := views.SavepointRow{SP: sp, Offsets: sortedOffsets(sp)}
		row.AgeVsRPO, row.AgeVsRPOWarn = ageVsRPO(sp, p.FlowRPO, p.FlowRPOAtLeast, now)
		if i < len(judged) && p.Filter.Flow != "" {
			row.Checked = true
			if u, ok := verdicts[sp.ID]; ok {
				row.Verdict, row.Why = u.Verdict, why(u)
			} else {
				row.Verdict, row.Why = catalog.Unknown, "not judged within "+views.Duration(UsabilityTimeout)
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
	p := views.SavepointProgress{Now: now, SinceMs: since, Triggers: h.savepointTriggers.recent(now)}
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

// SavepointRegister is POST /savepoints/register: add a savepoint by path
// (inside a configured savepoint directory) and read its offsets.
func (h *Handlers) SavepointRegister(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSpace(r.FormValue("path"))
	o := savepointsOpts{flow: r.FormValue("flow"), registerPath: path}
	if path == "" {
		o.regErr = "give the savepoint's path"
		h.renderSavepoints(w, r, http.StatusUnprocessableEntity, o)
		return
	}
	// Audit first: a registration that cannot be put on record does not
	// happen. The outcome (the catalog id) is recorded after it.
	if err := h.Audit(r, "savepoint.register-start", "savepoint-path:"+path, map[string]any{"path": path}); err != nil {
		o.regErr = "the audit record could not be written, so nothing was registered: " + err.Error()
		h.renderSavepoints(w, r, http.StatusServiceUnavailable, o)
		return
	}
	id, err := h.Catalog.Register(r.Context(), path)
	if err != nil && !errors.Is(err, catalog.ErrOffsetsUnreadable) {
		o.regErr = err.Error()
		h.renderSavepoints(w, r, http.StatusUnprocessableEntity, o)
		return
	}
	details := map[string]any{"path": path, "savepoint_id": id, "offsets_read": err == nil}
	if err != nil {
		details["error"] = err.Error()
	}
	if aerr := h.Audit(r, "savepoint.register", "savepoint:"+strconv.FormatInt(id, 10), details); aerr != nil {
		h.Log.Error("savepoint registered, but its outcome is not in the audit log", "savepoint", id, "err", aerr)
		o.regErr = fmt.Sprintf("registered as #%d (its registration is on record), but the outcome could not be written to the audit log: %v", id, aerr)
		h.renderSavepoints(w, r, http.StatusServiceUnavailable, o)
		return
	}
	target := views.SavepointURL(id)
	if f := r.FormValue("flow"); f != "" {
		target += "?flow=" + url.QueryEscape(f)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// SavepointTrigger is POST /savepoints/trigger: take a savepoint (or stop
// the job with one) through Flink REST. Checked and audited here; the
// savepoint itself runs in the background and the catalog page shows its
// progress.
func (h *Handlers) SavepointTrigger(w http.ResponseWriter, r *http.Request) {
	target := strings.TrimSpace(r.FormValue("target"))
	jobID := strings.ToLower(strings.TrimSpace(r.FormValue("job")))
	stop := r.FormValue("stop") != ""
	flow := r.FormValue("flow")
	o := savepointsOpts{flow: flow, trigger: views.SavepointTriggerForm{Target: target, Job: jobID, Stop: stop}}
	refuse := func(status int, msg string) {
		o.trigger.Error = msg
		h.renderSavepoints(w, r, status, o)
	}
	var ft string
	for _, t := range h.Catalog.Targets() {
		if t == target {
			ft = t
		}
	}
	if ft == "" {
		refuse(http.StatusUnprocessableEntity, fmt.Sprintf("Flink target %q is not configured (have %s)", target, strings.Join(h.Catalog.Targets(), ", ")))
		return
	}
	if !jobIDRE.MatchString(jobID) {
		refuse(http.StatusUnprocessableEntity, fmt.Sprintf("job id %q: want Flink's 32 hexadecimal digits", jobID))
		return
	}
	if stop && strings.ToLower(strings.TrimSpace(r.FormValue("confirm_job"))) != jobID {
		refuse(http.StatusUnprocessableEntity, "stop-with-savepoint ends the job: type its job id again to confirm (the typed confirmation does not match)")
		return
	}
	who := actor(r)
	jctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	jobName := ""
	if j, err := h.flinkJob(jctx, ft, jobID); err == nil {
		jobName = j.Name
	}
	cancel()
	id, err := h.savepointTriggers.start(ft, jobID, jobName, who.Name, stop, h.now())
	if err != nil {
		refuse(http.StatusConflict, err.Error())
		return
	}
	action := "savepoint.trigger"
	if stop {
		action = "savepoint.stop"
	}
	subject := "flink-job:" + ft + "/" + jobID
	details := map[string]any{"flink_target": ft, "job_id": jobID, "job_name": jobName, "stop": stop}
	if _, fl, snap := h.savepointFlows(flow); snap != nil {
		ev := map[string]any{"flow": fl, "status": snap.Status, "as_of": snap.At.UTC().Format(time.RFC3339)}
		if snap.RPOMs != nil {
			ev["rpo_ms"] = *snap.RPOMs
			if snap.RPOAtLeast {
				ev["rpo_at_least"] = true // a lower bound, not the RPO
			}
		} else {
			ev["rpo_ms"] = "unknown"
		}
		details["lag"] = ev
	}
	if err := h.Audit(r, action, subject, details); err != nil {
		h.savepointTriggers.remove(id)
		refuse(http.StatusServiceUnavailable, "the audit record could not be written, so nothing was asked of Flink: "+err.Error())
		return
	}
	// The request ends now; the savepoint and its closing audit record do not.
	bg := r.Clone(context.WithoutCancel(r.Context()))
	go func() {
		started := time.Now()
		sp, err := h.Catalog.Trigger(bg.Context(), ft, jobID, stop, func(d time.Duration) {
			h.savepointTriggers.update(id, func(t *views.SavepointTrigger) { t.Waited = d })
		})
		if err != nil {
			h.Log.Warn("savepoint failed", "target", ft, "job", jobID, "stop", stop, "err", err)
			aerr := h.Audit(bg, "savepoint.failed", subject, map[string]any{"flink_target": ft, "job_id": jobID, "stop": stop,
				"error": err.Error(), "waited_ms": time.Since(started).Milliseconds()})
			msg := err.Error() + outcomeNotAudited(h, aerr)
			h.savepointTriggers.update(id, func(t *views.SavepointTrigger) { t.Done, t.Err, t.Finished = true, msg, h.now() })
			return
		}
		done := map[string]any{"flink_target": ft, "job_id": jobID, "stop": stop, "savepoint_id": sp.ID, "path": sp.Path,
			"waited_ms": time.Since(started).Milliseconds(), "offsets_read": sp.OffsetsJSON != "", "source_uid": sp.SourceUID}
		if sp.CheckpointID != nil {
			done["checkpoint_id"] = *sp.CheckpointID
		}
		if sp.ReadError != "" {
			done["read_error"] = sp.ReadError
		}
		msg := ""
		if aerr := outcomeNotAudited(h, h.Audit(bg, "savepoint.done", subject, done)); aerr != "" {
			msg = fmt.Sprintf("savepoint taken and catalogued as #%d (%s)%s", sp.ID, sp.Path, aerr)
		}
		h.savepointTriggers.update(id, func(t *views.SavepointTrigger) {
			t.Done, t.Finished, t.ResultID, t.ResultPath, t.Err = true, h.now(), sp.ID, sp.Path, msg
			if t.JobName == "" {
				t.JobName = sp.JobName
			}
		})
	}()
	q := url.Values{}
	if flow != "" {
		q.Set("flow", flow)
	}
	http.Redirect(w, r, "/savepoints?"+q.Encode()+"#sp-progress", http.StatusSeeOther)
}

// outcomeNotAudited says (and logs) that a savepoint's outcome record could
// not be written: the trigger itself was on record before Flink was asked,
// but the outcome must not pass silently. "" when aerr is nil.
func outcomeNotAudited(h *Handlers, aerr error) string {
	if aerr == nil {
		return ""
	}
	h.Log.Error("savepoint outcome not written to the audit log", "err", aerr)
	return "; the outcome could not be written to the audit log: " + aerr.Error()
}

// flinkJob looks a job up on a target (for its name; a read).
func (h *Handlers) flinkJob(ctx context.Context, target, jobID string) (flink.Job, error) {
	for _, ft := range h.Catalog.Config.FlinkTargets {
		if ft.Name == target {
			cl := flink.NewRESTClient(ft.RestURL)
			if h.Catalog.Flink != nil {
				cl = h.Catalog.Flink(ft.RestURL)
			}
			return cl.Job(ctx, jobID)
		}
	}
	return flink.Job{}, fmt.Errorf("no Flink target %q", target)
}

// savepointParam resolves {id}; it has written the answer when ok is false.
func (h *Handlers) savepointParam(w http.ResponseWriter, r *http.Request) (storage.Savepoint, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id < 1 {
		http.Error(w, "bad savepoint id", http.StatusBadRequest)
		return storage.Savepoint{}, false
	}
	sp, err := h.Store.SavepointByID(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		h.notFound(w, r, fmt.Sprintf("savepoint %d", id))
		return sp, false
	}
	if err != nil {
		h.Log.Error("reading a savepoint", "id", id, "err", err)
		http.Error(w, "cannot read the savepoint catalog", http.StatusInternalServerError)
		return sp, false
	}
	return sp, true
}

// offsetsFile renders a savepoint's offsets as the JSON translate takes;
// "" when they were not read.
func offsetsFile(sp storage.Savepoint) (string, int) {
	offs, err := sp.Offsets()
	if err != nil || offs == nil {
		return "", 0
	}
	m := map[model.TP]int64{}
	for k, v := range offs {
		tp, err := mm2.ParseTPKey(k)
		if err != nil {
			return sp.OffsetsJSON, len(offs)
		}
		m[tp] = v
	}
	var b bytes.Buffer
	mm2.WriteOffsetsJSON(&b, m)
	return b.String(), len(offs)
}

// SavepointOffsets is GET /savepoints/{id}/offsets.json: the offsets file,
// as a download.
func (h *Handlers) SavepointOffsets(w http.ResponseWriter, r *http.Request) {
	sp, ok := h.savepointParam(w, r)
	if !ok {
		return
	}
	body, _ := offsetsFile(sp)
	if body == "" {
		http.Error(w, "the offsets of this savepoint were not read: "+sp.ReadError, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="savepoint-%d-offsets.json"`, sp.ID))
	w.Write([]byte(body))
}

// k8sNameRE: Kubernetes names (DNS-1123 subdomain, which covers labels).
var k8sNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// Savepoint is GET /savepoints/{id}: metadata, offsets with their
// usability for a flow, the translate form and the restore preview
// (with the Kubernetes patch for a typed namespace/name). Side-effect free.
func (h *Handlers) Savepoint(w http.ResponseWriter, r *http.Request) {
	sp, ok := h.savepointParam(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	now := h.now()
	p := views.SavepointDetailPage{Chrome: h.chrome(fmt.Sprintf("Savepoint #%d", sp.ID)), Now: now, SP: sp, CanOperate: actorMayOperate(r)}
	var snap *monitor.FlowSnapshot
	p.Flows, p.Flow, snap = h.savepointFlows(q.Get("flow"))
	if snap != nil {
		p.ClusterLink = snap.Flow.IsClusterLink()
		p.FlowRPO, p.FlowRPOAtLeast = snap.RPOMs, snap.RPOAtLeast
	}
	p.AgeVsRPO, p.AgeVsRPOWarn = ageVsRPO(sp, p.FlowRPO, p.FlowRPOAtLeast, now)
	p.OffsetsJSON, p.Partitions = offsetsFile(sp)
	if p.Flow != "" {
		ctx, cancel := context.WithTimeout(r.Context(), UsabilityTimeout)
		start := time.Now()
		u, err := h.Catalog.Usability(ctx, sp, p.Flow)
		p.UsabilityAt = time.Since(start)
		cancel()
		if err != nil {
			p.UsabilityErr = err.Error()
		} else {
			p.Usability = &u
		}
	} else {
		p.UsabilityErr = "no flow is configured"
	}
	p.Strategies, p.K8s.Strategy = restoreStrategies(p)
	if sp.SourceUID != "" && !jobIDRE.MatchString(sp.SourceUID) {
		p.SuggestedUID = sp.SourceUID + "-dr"
	}
	p.K8s.Namespace, p.K8s.Name = strings.TrimSpace(q.Get("ns")), strings.TrimSpace(q.Get("name"))
	if s, err := strconv.Atoi(q.Get("strategy")); err == nil && (s == 1 || s == 2) {
		p.K8s.Strategy = s
	}
	if p.K8s.Namespace != "" || p.K8s.Name != "" {
		switch {
		case len(p.K8s.Namespace) > 63 || !k8sNameRE.MatchString(p.K8s.Namespace) || strings.Contains(p.K8s.Namespace, "."):
			p.K8s.Error = fmt.Sprintf("namespace %q: want a Kubernetes namespace (lower-case letters, digits and '-', at most 63)", p.K8s.Namespace)
		case len(p.K8s.Name) > 253 || !k8sNameRE.MatchString(p.K8s.Name):
			p.K8s.Error = fmt.Sprintf("FlinkDeployment name %q: want a Kubernetes name (lower-case letters, digits, '-' and '.')", p.K8s.Name)
		default:
			k := flink.K8sRestore{Namespace: p.K8s.Namespace, Name: p.K8s.Name, SavepointPath: sp.Path, Nonce: now.UnixMilli(),
				AllowNonRestoredState: p.K8s.Strategy == 2}
			p.K8s.File = fmt.Sprintf("restore-%s-savepoint-%d.yaml", p.K8s.Name, sp.ID)
			p.K8s.Patch, p.K8s.Command = k.MergePatch(), k.KubectlCommand(p.K8s.File)
		}
	}
	h.render(w, r, http.StatusOK, views.SavepointDetail(p))
}

// renamedTopics lists "source → DR" for the savepoint's topics whose
// names differ in DR; "" when none do or usability is not known.
func renamedTopics(u *catalog.Usability) string {
	if u == nil {
		return ""
	}
	var out []string
	for _, pu := range u.Partitions {
		if pu.DR.Topic != pu.Source.Topic {
			if r := pu.Source.Topic + " → " + pu.DR.Topic; !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return strings.Join(out, ", ")
}

// restoreStrategies are README "Savepoints"' three restores, judged for
// the chosen flow; the second value is the recommended savepoint restore
// for the Kubernetes form (1 or 2).
func restoreStrategies(p views.SavepointDetailPage) ([]views.RestoreStrategy, int) {
	s := []views.RestoreStrategy{
		{N: 1, Title: "The same savepoint, unchanged",
			How:      "Restore this savepoint as it is, with the job pointed at DR Kafka (same topic names).",
			TradeOff: "Exact: no record skipped or read twice. Needs an offset-preserving mirror (Cluster Linking) caught up past the savepoint's offsets."},
		{N: 2, Title: "Translated offsets, new source uid",
			How: "Translate the savepoint's offsets to DR, commit them to the job's DR consumer group, and restore this savepoint " +
				"with a new uid on the Kafka source and allowNonRestoredState, the source starting from the group's committed offsets.",
			TradeOff: "No skipped data; up to the stated re-read count processed twice; the other operators' state is no longer exactly aligned with the source position."},
		{N: 3, Title: "Timestamp start",
			How:      "Start the source at a timestamp (OffsetsInitializer.timestamp) in DR, from this savepoint with a new source uid or from empty state.",
			TradeOff: "Simplest, needs no offset syncs; at-least-once around the boundary, and the timestamp is the producer's, not event time."},
	}
	rec := 2
	switch {
	case p.Flow == "":
		for i := range s {
			s[i].FitsWhy = "no flow configured"
		}
	case p.ClusterLink && renamedTopics(p.Usability) != "":
		// KafkaSource state is keyed by topic name: the savepoint's
		// partitions do not exist under the mirror's names.
		s[0].FitsWhy = "Not as it is: the link renames topics (" + renamedTopics(p.Usability) + "), and the source's state names the old ones."
		s[1].Fits, s[1].Recommended, s[1].FitsWhy = true, true,
			"Cluster Linking keeps offsets, so no translation: commit the savepoint's offsets under the mirror's topic names to the job's DR group "+
				"(by hand, e.g. kafka-consumer-groups.sh --reset-offsets --from-file: the runbook translates groups only for MirrorMaker 2 flows), "+
				"then restore with a new source uid."
		s[2].Fits, s[2].FitsWhy = true, "Fallback when the mirror is not caught up past the savepoint."
	case p.ClusterLink:
		rec = 1
		s[0].Fits, s[0].Recommended, s[0].FitsWhy = true, true, "Cluster Linking preserves offsets and these topic names: this is the exact restore."
		s[1].FitsWhy = "Not needed: the offsets are the same in DR."
		s[2].Fits, s[2].FitsWhy = true, "Fallback when the mirror is not caught up past the savepoint."
	default:
		s[0].FitsWhy = "Not for MirrorMaker 2: DR offsets differ from the primary's, the job would start at the wrong records."
		s[1].Fits, s[1].Recommended, s[1].FitsWhy = true, true, "MirrorMaker 2: the offsets must be translated."
		s[2].Fits, s[2].FitsWhy = true, "Fallback when partitions cannot be translated (no usable offset syncs)."
		if u := p.Usability; u != nil && len(u.Partitions) > 0 {
			var reread int64
			for _, pu := range u.Partitions {
				if pu.Translation.Translated() {
					reread += pu.Translation.RereadMax
				}
			}
			s[1].FitsWhy += fmt.Sprintf(" Now: %d of %d partition(s) translate, at most %d record(s) re-read.",
				len(u.Partitions)-len(u.Untranslatable), len(u.Partitions), reread)
			if len(u.Untranslatable) == len(u.Partitions) {
				s[1].Recommended = false
				s[2].Recommended = true
				s[2].FitsWhy = "No partition translates now: the timestamp start is what is left."
			}
		}
	}
	return s, rec
}
