package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A drill's evidence pack (model.EvidencePack): what auditors ask as
// measured evidence of recovery capability, in one file, checkable against
// the log it came from (VerifyEvidence, `drconsole audit verify
// --evidence FILE`).

// ErrDrillRunning: a drill's pack is made once its steps ended.
var ErrDrillRunning = errors.New("the drill is still running: its evidence pack is made once it has ended")

// ErrExportNotRecorded: the export's audit record could not be written, so
// no pack was made.
var ErrExportNotRecorded = errors.New("the download could not be put on the audit log, so no evidence pack was made")

// EvidenceRequest asks for the pack of one drill.
type EvidenceRequest struct {
	Run int64
	// Subject is the run's audit subject (runbook.RunSubject).
	Subject string
	// Actor is who asks (the export is recorded in their name); Format
	// is what they download ("html" or "json").
	Actor  string
	Format string
	// Objectives are the flow's configured RTO and RPO (0: none).
	Objectives func(flow string) (rto, rpo time.Duration)
	// The configured anchor (audit_anchor): its file, opened by
	// OpenAnchor (through safefile: the caller holds the file rules), and
	// whether it is POSTed to a URL.
	AnchorFile string
	OpenAnchor func() (io.ReadCloser, error)
	AnchorURL  bool
}

// Evidence puts the export on record (drill.evidence-export, under the
// run's subject: the pack holds its own export record) and then makes the
// pack of drill q.Run, with its canonical JSON. Nothing is made when the
// record cannot be written. The audit head is read after the export record
// and the run's records up to it, so the pack names every record of the
// run up to its head.
func (r *Recorder) Evidence(ctx context.Context, q EvidenceRequest) (model.EvidencePack, []byte, error) {
	st := r.store
	d, err := st.Drill(ctx, q.Run)
	if err != nil {
		return model.EvidencePack{}, nil, err
	}
	if d.Outcome == model.DrillInProgress {
		return model.EvidencePack{}, nil, fmt.Errorf("drill %d: %w", q.Run, ErrDrillRunning)
	}
	run, err := st.FailoverRun(ctx, q.Run)
	if err != nil {
		return model.EvidencePack{}, nil, err
	}
	var rto, rpo time.Duration
	if q.Objectives != nil {
		rto, rpo = q.Objectives(run.Flow)
	}
	w, err := r.Record(ctx, q.Actor, DrillEvidence, q.Subject, map[string]any{"format": q.Format})
	if err != nil {
		return model.EvidencePack{}, nil, fmt.Errorf("%w: %w", ErrExportNotRecorded, err)
	}
	p := packOf(*run, d, rto, rpo)
	if p.Head.Seq, p.Head.Hash, err = st.AuditHead(ctx); err != nil {
		return p, nil, err
	}
	recs, err := runRecords(ctx, st, *run, q.Subject, p.Head.Seq)
	if err != nil {
		return p, nil, err
	}
	for _, e := range recs {
		p.Records = append(p.Records, recordOf(e))
		if e.ID == w.ID() {
			p.Produced = model.EvidenceProduced{By: e.Actor, At: utc(e.AtMs), AtMs: e.AtMs, Record: e.ID, Format: q.Format}
		}
	}
	if p.Produced.Record == 0 {
		return p, nil, fmt.Errorf("audit: the export's own record %d is not among run %d's records", w.ID(), q.Run)
	}
	if q.AnchorFile != "" || q.AnchorURL {
		p.Anchor = readAnchor(q.AnchorFile, q.OpenAnchor, q.AnchorURL)
	}
	body, err := EvidenceJSON(p)
	return p, body, err
}

// EvidenceJSON is p's canonical form: indented, with <, > and & escaped
// (so the HTML pack can embed it verbatim in a script element).
func EvidenceJSON(p model.EvidencePack) ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("audit: encoding the evidence pack: %w", err)
	}
	return append(b, '\n'), nil
}

// packOf is what the database holds of run and its drill d, without the
// records, the head, the anchor and the producer.
func packOf(run model.Run, d model.Drill, objRTO, objRPO time.Duration) model.EvidencePack {
	p := model.EvidencePack{Version: model.EvidenceVersion, Kind: model.EvidenceKind, Run: run.ID, Flow: run.Flow, Reason: run.Reason,
		RunStatus: string(run.Status), Plan: json.RawMessage(run.PlanJSON), PlanHash: run.PlanHash, RequestedBy: run.CreatedBy,
		RequestedAt: utc(run.CreatedMs), RequestedAtMs: run.CreatedMs, ApprovalsRequired: run.ApprovalsRequired, BreakGlass: run.BreakGlass,
		Approvals: []model.EvidenceApproval{}, Steps: []model.EvidenceStep{}, Records: []model.EvidenceRecord{}}
	if !json.Valid(p.Plan) {
		p.Plan = json.RawMessage("null")
	}
	for _, a := range run.Approvals {
		p.Approvals = append(p.Approvals, model.EvidenceApproval{Approver: a.Approver, Decision: string(a.Decision), At: utc(a.AtMs), AtMs: a.AtMs,
			PlanHash: a.PlanHash, ForThisPlan: a.PlanHash == run.PlanHash, Reason: a.Reason})
	}
	for _, s := range run.Steps {
		es := model.EvidenceStep{Step: s.Idx + 1, Kind: s.Kind, Status: string(s.Status), Attempts: s.Attempts, StartedBy: s.StartedBy,
			Result: s.Result, Error: s.Error}
		if s.StartedMs > 0 {
			es.StartedMs, es.Started = &s.StartedMs, ptr(utc(s.StartedMs))
		}
		if s.FinishedMs > 0 {
			es.FinishedMs, es.Finished = &s.FinishedMs, ptr(utc(s.FinishedMs))
		}
		p.Steps = append(p.Steps, es)
	}
	p.Drill = model.EvidenceDrill{Started: utc(d.StartedMs), StartedMs: d.StartedMs, Status: drillStatus(d), Succeeded: d.Succeeded(),
		Outcome: string(d.Outcome), Error: d.Error, SubmittedMs: d.SubmittedMs, RunningMs: d.RunningMs, FirstRecordMs: d.FirstRecordMs,
		ToRunningMs: d.ToRunningMs(), AchievedRTOMs: d.RTOMs(), ObjectiveRTOMs: objective(objRTO), RPOMs: d.RPOMs,
		RPOIsLowerBound: d.RPOAtLeast, ObjectiveRPOMs: objective(objRPO), RereadMax: d.RereadMax(),
		RulesFailed: nonNil(d.RulesFailed), FlinkTarget: d.FlinkTarget, JobID: d.JobID, Groups: nonNil(d.Groups),
		Cleanup: string(d.Cleanup), CleanupError: d.CleanupError, CleanupDoneMs: d.CleanupDoneMs}
	return p
}

// drillStatus says how the drill ended, in words; a drill whose cleanup
// has not finished is never a success.
func drillStatus(d model.Drill) string {
	switch {
	case d.Succeeded():
		return "succeeded"
	case d.Outcome == model.DrillMeasured && d.FirstRecordMs == nil:
		return "no record processed"
	case d.Outcome == model.DrillMeasured:
		return "measured; cleanup " + string(d.Cleanup)
	}
	return "failed"
}

func objective(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	return ptr(d.Milliseconds())
}

func ptr[T any](v T) *T { return &v }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func utc(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

func recordOf(e model.AuditEntry) model.EvidenceRecord {
	return model.EvidenceRecord{Seq: e.ID, At: utc(e.AtMs), AtMs: e.AtMs, Actor: e.Actor, Action: e.Action, ClientIP: e.ClientIP,
		UserAgent: e.UserAgent, Subject: e.Subject, Details: string(e.Details), PrevHash: e.PrevHash, Hash: e.Hash}
}

// runRecords are run's audit records up to record head, in chain order:
// every record under its subject, and the request that created it.
func runRecords(ctx context.Context, st *storage.Store, run model.Run, subject string, head int64) ([]model.AuditEntry, error) {
	var out []model.AuditEntry
	f := storage.AuditFilter{Subject: subject, Oldest: true, Limit: 1000}
	for {
		page, err := st.AuditEntries(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.Subject == subject && e.ID <= head { // Subject filters by substring
				out = append(out, e)
			}
		}
		if len(page) < f.Limit || page[len(page)-1].ID > head {
			break
		}
		f.AfterID = int(page[len(page)-1].ID)
	}
	req, err := planRecord(ctx, st, run, out, head)
	if err != nil || req == nil {
		return out, err
	}
	i, _ := slices.BinarySearchFunc(out, req.ID, func(e model.AuditEntry, id int64) int { return int(e.ID - id) })
	return slices.Insert(out, i, *req), nil
}

// planRecord is the record of run's request (failover.plan), which names
// the flow, not the run, because it is written before the run has an id:
// the flow's request by the run's requester, for the run's first plan
// hash, before any record of the run, nearest the run's creation time.
// nil when none is on record up to head.
func planRecord(ctx context.Context, st *storage.Store, run model.Run, ofRun []model.AuditEntry, head int64) (*model.AuditEntry, error) {
	first := run.PlanHash
	before := head + 1
	for _, e := range ofRun {
		before = min(before, e.ID)
		if e.Action == string(FailoverPlanChanged) {
			var d struct {
				OldHash string `json:"old_hash"`
			}
			if json.Unmarshal(e.Details, &d) == nil && d.OldHash != "" {
				first = d.OldHash
				break // the first change names the hash the run was created with
			}
		}
	}
	cands, err := st.AuditEntries(ctx, storage.AuditFilter{Action: string(FailoverPlan), Actor: run.CreatedBy, Subject: run.Flow})
	if err != nil {
		return nil, err
	}
	var best *model.AuditEntry
	for i, e := range cands {
		var d struct {
			PlanHash string `json:"plan_hash"`
		}
		if e.Subject != run.Flow || e.ID >= before || json.Unmarshal(e.Details, &d) != nil || d.PlanHash != first {
			continue
		}
		if best == nil || abs(e.AtMs-run.CreatedMs) < abs(best.AtMs-run.CreatedMs) {
			best = &cands[i]
		}
	}
	return best, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// readAnchor is the newest anchor line of file (an anchor file's "<time>
// record <id> hash <hex>" lines); url says the anchor is POSTed to a URL
// too (which the console cannot read back).
func readAnchor(file string, open func() (io.ReadCloser, error), url bool) *model.EvidenceAnchor {
	a := &model.EvidenceAnchor{File: file, URL: url}
	if file == "" || open == nil {
		a.Problem = "the anchor is POSTed to a URL only: compare the head above with what it received"
		return a
	}
	f, err := open()
	if err != nil {
		a.Problem = "the anchor file cannot be read: " + err.Error()
		return a
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 6 && fs[5] == "restore" {
			fs = fs[:5]
		}
		if len(fs) != 5 || fs[1] != "record" || fs[3] != "hash" || len(fs[4]) != 64 {
			continue
		}
		if id, err := strconv.ParseInt(fs[2], 10, 64); err == nil && id >= 0 {
			a.Line, a.At, a.Seq, a.Hash = strings.TrimSpace(sc.Text()), fs[0], id, fs[4]
		}
	}
	if err := sc.Err(); err != nil {
		a.Line, a.At, a.Seq, a.Hash = "", "", 0, ""
		a.Problem = "the anchor file cannot be read: " + err.Error()
	} else if a.Line == "" {
		a.Problem = "the anchor file has no anchor line yet"
	}
	return a
}
