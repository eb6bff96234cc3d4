package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// EvidenceScript opens the element the HTML pack embeds its canonical
// JSON in; ParseEvidence finds the JSON there.
const EvidenceScript = `<script type="application/json" id="drconsole-evidence">`

// ErrNotEvidence: the file is not a drill evidence pack.
var ErrNotEvidence = errors.New("not a drconsole drill evidence pack")

// ParseEvidence reads a pack from its JSON or its HTML download. The bytes
// are untrusted: anything but one well-formed pack of this version is an
// error saying what is wrong, never a panic.
func ParseEvidence(b []byte) (*model.EvidencePack, error) {
	body := bytes.TrimSpace(b)
	if len(body) > 0 && body[0] != '{' {
		i := bytes.Index(body, []byte(EvidenceScript))
		if i < 0 {
			return nil, fmt.Errorf("%w: neither its JSON nor its HTML (no %s element)", ErrNotEvidence, EvidenceScript)
		}
		body = body[i+len(EvidenceScript):]
		end := bytes.Index(body, []byte("</script>"))
		if end < 0 {
			return nil, fmt.Errorf("%w: its embedded JSON never ends (no </script>)", ErrNotEvidence)
		}
		body = bytes.TrimSpace(body[:end])
	}
	var head struct {
		Version int    `json:"version"`
		Kind    string `json:"kind"`
	}
	if json.Unmarshal(body, &head) == nil && head.Kind == model.EvidenceKind && head.Version != model.EvidenceVersion {
		return nil, fmt.Errorf("evidence pack version %d: this console reads version %d", head.Version, model.EvidenceVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var p model.EvidencePack
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: its JSON does not read as one: %v", ErrNotEvidence, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: something follows its JSON", ErrNotEvidence)
	}
	switch {
	case p.Kind != model.EvidenceKind:
		return nil, fmt.Errorf("%w: kind %q, want %q", ErrNotEvidence, p.Kind, model.EvidenceKind)
	case p.Version != model.EvidenceVersion:
		return nil, fmt.Errorf("evidence pack version %d: this console reads version %d", p.Version, model.EvidenceVersion)
	case len(p.Records) == 0:
		return nil, errors.New("the evidence pack holds no audit records")
	}
	return &p, nil
}

// EvidenceCheck is what VerifyEvidence found of an intact pack.
type EvidenceCheck struct {
	Records  int
	HeadSeq  int64
	HeadHash string
	// Anchor is the anchor record checked (0: none in the pack).
	Anchor int64
}

// Lines are what an intact pack's check says, one line each.
func (c EvidenceCheck) Lines(p *model.EvidencePack) []string {
	lines := []string{
		fmt.Sprintf("evidence: drill %d of flow %s, produced by %s at %s", p.Run, p.Flow, p.Produced.By, p.Produced.At),
		fmt.Sprintf("evidence: %d records match the log, hash for hash; none of the run's records up to the head is missing", c.Records),
		fmt.Sprintf("evidence: head record %d hash %s is in the log, and the chain from the pack's first record to it is intact", c.HeadSeq, c.HeadHash),
		"evidence: the request, approvals, steps and figures match the database",
	}
	if c.Anchor > 0 {
		lines = append(lines, fmt.Sprintf("evidence: anchor record %d matches the log", c.Anchor))
	}
	return lines
}

// EvidenceProblem is the first thing of a pack that does not match the
// log; its text says what, in one sentence.
type EvidenceProblem struct{ Why string }

func (e *EvidenceProblem) Error() string { return "evidence: " + e.Why }

func mismatch(format string, args ...any) error {
	return &EvidenceProblem{Why: fmt.Sprintf(format, args...)}
}

// VerifyEvidence holds pack p to the log and database of st: each record's
// hash recomputed from its contents, in chain order; each the record at
// its seq in the log (same hash); none of the run's records up to the
// pack's head left out; the head in the log and the chain from the pack's
// first record to it intact; the anchor (when present) in the log; and
// the request, approvals, steps and drill figures as the database holds
// them. subject is the run's audit subject (runbook.RunSubject). The first
// mismatch is an *EvidenceProblem; other errors are failures to read.
func VerifyEvidence(ctx context.Context, st *storage.Store, p *model.EvidencePack, subject string) (EvidenceCheck, error) {
	var c EvidenceCheck
	logHead, _, err := st.AuditHead(ctx)
	if err != nil {
		return c, err
	}
	var prev int64
	for _, r := range p.Records {
		switch {
		case r.Seq <= 0:
			return c, mismatch("the pack has a record numbered %d: the pack was edited", r.Seq)
		case r.Seq <= prev:
			return c, mismatch("record %d comes after record %d in the pack: the records were reordered or repeated", r.Seq, prev)
		case storage.AuditHash(r.Entry()) != r.Hash:
			return c, mismatch("record %d in the pack does not match its own hash %s: the pack was edited", r.Seq, r.Hash)
		case r.Subject != subject && !(r.Action == string(FailoverPlan) && r.Subject == p.Flow):
			return c, mismatch("record %d (%s, %q) is not a record of run %d: the pack was edited", r.Seq, r.Action, r.Subject, p.Run)
		}
		if err := inLog(ctx, st, "record", r.Seq, r.Hash, logHead); err != nil {
			return c, err
		}
		prev = r.Seq
	}
	c.Records = len(p.Records)
	first := p.Records[0].Seq
	if p.Head.Seq < prev {
		return c, mismatch("the pack's head is record %d, before its last record %d: the head was edited", p.Head.Seq, prev)
	}
	if err := inLog(ctx, st, "the pack's head: record", p.Head.Seq, p.Head.Hash, logHead); err != nil {
		return c, err
	}
	if err := chainIntact(ctx, st, first, p.Head.Seq); err != nil {
		return c, err
	}
	c.HeadSeq, c.HeadHash = p.Head.Seq, p.Head.Hash
	run, err := st.FailoverRun(ctx, p.Run)
	if errors.Is(err, storage.ErrNotFound) {
		return c, mismatch("run %d is not in this database: verify the pack against the console's database it came from", p.Run)
	}
	if err != nil {
		return c, err
	}
	want, err := runRecords(ctx, st, *run, subject, p.Head.Seq)
	if err != nil {
		return c, err
	}
	for _, e := range want {
		if !slices.ContainsFunc(p.Records, func(r model.EvidenceRecord) bool { return r.Seq == e.ID }) {
			return c, mismatch("record %d (%s) of run %d is in the log but not in the pack: a record was removed from the pack", e.ID, e.Action, p.Run)
		}
	}
	for _, r := range p.Records {
		if !slices.ContainsFunc(want, func(e model.AuditEntry) bool { return e.ID == r.Seq }) {
			return c, mismatch("record %d (%s) is not one of run %d's records in the log: the pack was edited", r.Seq, r.Action, p.Run)
		}
	}
	if err := producedOnRecord(p, subject); err != nil {
		return c, err
	}
	if a := p.Anchor; a != nil && a.Line != "" {
		if fs := strings.Fields(a.Line); len(fs) < 5 || fs[0] != a.At || fs[2] != strconv.FormatInt(a.Seq, 10) || fs[4] != a.Hash {
			return c, mismatch("the pack's anchor line %q does not say record %d hash %s: the pack was edited", a.Line, a.Seq, a.Hash)
		}
		if err := inLog(ctx, st, "the pack's anchor: record", a.Seq, a.Hash, logHead); err != nil {
			return c, err
		}
		c.Anchor = a.Seq
	}
	d, err := st.Drill(ctx, p.Run)
	if errors.Is(err, storage.ErrNotFound) {
		return c, mismatch("run %d has no drill in this database", p.Run)
	}
	if err != nil {
		return c, err
	}
	return c, sameFacts(p, packOf(*run, d, 0, 0))
}

// inLog: the log's record seq has hash.
func inLog(ctx context.Context, st *storage.Store, what string, seq int64, hash string, logHead int64) error {
	if seq == 0 && hash == storage.AuditGenesis {
		return nil // an empty log's head
	}
	got, ok, err := st.AuditHashOf(ctx, seq)
	switch {
	case err != nil:
		return err
	case !ok && seq > logHead:
		return mismatch("%s %d is past the log's end (record %d): records were removed from the end of the log", what, seq, logHead)
	case !ok:
		return mismatch("%s %d is missing from the log: it was deleted", what, seq)
	case got != hash:
		return mismatch("%s %d has hash %s in the log, %s in the pack: the log was rewritten after the export, or the pack edited", what, seq, got, hash)
	}
	return nil
}

// chainIntact walks the log from record from to record to: consecutive,
// each linked to the one before and matching its own hash.
func chainIntact(ctx context.Context, st *storage.Store, from, to int64) error {
	f := storage.AuditFilter{Oldest: true, Limit: 1000, AfterID: int(from - 1)}
	next, prevHash := from, ""
	for next <= to {
		page, err := st.AuditEntries(ctx, f)
		if err != nil {
			return err
		}
		for _, e := range page {
			if e.ID > to {
				break
			}
			why := ""
			switch {
			case e.ID != next:
				why = fmt.Sprintf("record %d is missing", next)
			case prevHash != "" && e.PrevHash != prevHash:
				why = fmt.Sprintf("record %d does not link to record %d", e.ID, e.ID-1)
			case storage.AuditHash(e) != e.Hash:
				why = fmt.Sprintf("record %d does not match its hash", e.ID)
			}
			if why != "" {
				return mismatch("the log's chain from record %d to the pack's head %d is broken: %s", from, to, why)
			}
			next, prevHash = e.ID+1, e.Hash
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterID = int(page[len(page)-1].ID)
	}
	if next <= to {
		return mismatch("the log's chain from record %d to the pack's head %d is broken: record %d is missing", from, to, next)
	}
	return nil
}

// producedOnRecord: the pack's producer is its export record.
func producedOnRecord(p *model.EvidencePack, subject string) error {
	i := slices.IndexFunc(p.Records, func(r model.EvidenceRecord) bool { return r.Seq == p.Produced.Record })
	if i < 0 {
		return mismatch("the pack says record %d put its export on record, but holds no such record: the pack was edited", p.Produced.Record)
	}
	r := p.Records[i]
	if r.Action != string(DrillEvidence) || r.Subject != subject || r.Actor != p.Produced.By || r.AtMs != p.Produced.AtMs {
		return mismatch("the pack says %s produced it at %d ms (record %d), but record %d is %s by %s at %d ms: the pack was edited",
			p.Produced.By, p.Produced.AtMs, p.Produced.Record, r.Seq, r.Action, r.Actor, r.AtMs)
	}
	return nil
}

// sameFacts holds what p says of the run and its drill to what the
// database holds (db). What may still change after the drill ended (the
// run's status, the cleanup) and what comes from the config (objectives)
// are not compared.
func sameFacts(p *model.EvidencePack, db model.EvidencePack) error {
	pd, dd := p.Drill, db.Drill
	pd.Status, pd.Succeeded, pd.Cleanup, pd.CleanupError, pd.CleanupDoneMs, pd.ObjectiveRTOMs, pd.ObjectiveRPOMs = "", false, "", "", nil, nil, nil
	dd.Status, dd.Succeeded, dd.Cleanup, dd.CleanupError, dd.CleanupDoneMs = "", false, "", "", nil
	type facts struct {
		name      string
		pack, log any
	}
	for _, f := range []facts{
		{"flow", p.Flow, db.Flow}, {"reason", p.Reason, db.Reason}, {"plan hash", p.PlanHash, db.PlanHash},
		{"plan", p.Plan, db.Plan},
		{"requested by", p.RequestedBy, db.RequestedBy}, {"requested at", p.RequestedAtMs, db.RequestedAtMs},
		{"approvals required", p.ApprovalsRequired, db.ApprovalsRequired}, {"break-glass", p.BreakGlass, db.BreakGlass},
		{"approvals", p.Approvals, db.Approvals}, {"steps", p.Steps, db.Steps}, {"drill figures", pd, dd},
	} {
		a, _ := json.Marshal(f.pack)
		b, _ := json.Marshal(f.log)
		if !bytes.Equal(a, b) {
			return mismatch("%s: the pack says %s, the database %s: the pack was edited, or the database changed since", f.name, clip(a), clip(b))
		}
	}
	return nil
}

// clip keeps a sentence readable when a field is long.
func clip(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ToValidUTF8(s, "")
}
