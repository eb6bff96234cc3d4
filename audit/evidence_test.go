package audit_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// drillFixture is a database holding one ended drill (run 1 of flow f,
// requested by alice, approved by bob, both steps done, RTO measured, RPO
// unknown, cleaned up) among records of other things, and the anchor file
// beside it.
type drillFixture struct {
	store  *storage.Store
	path   string
	anchor string
	run    int64
	drill  model.Drill
}

const runSubject = "failover-run:1"

func newDrillFixture(t testing.TB) *drillFixture {
	t.Helper()
	st, path := open(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	entry := func(actor string, action audit.Action, subject string, details any) model.AuditEntry {
		t.Helper()
		e, err := audit.Entry(audit.WithClient(ctx, audit.Client{IP: "192.0.2.7", UserAgent: "Mozilla/5.0 <test>"}), actor, action, subject, details)
		must(err)
		return e
	}
	rec := audit.New(st)
	_, err := rec.Record(ctx, "alice", audit.Login, "user:alice", nil)
	must(err)
	// A request of the same flow by someone else: not this run's.
	_, err = rec.Record(ctx, "mallory", audit.FailoverPlan, "f", map[string]any{"plan_hash": "h1"})
	must(err)
	plan := `{"flow":"f","drill":true,"note":"<b>&amp; \u2028</b>"}`
	id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "quarterly drill", CreatedBy: "alice", CreatedMs: time.Now().UnixMilli(),
		PlanJSON: plan, PlanHash: "h1", ApprovalsRequired: 1}, []string{"translate-group", "restore-flink"},
		entry("alice", audit.FailoverPlan, "f", map[string]any{"plan_hash": "h1", "reason": "quarterly drill"}))
	must(err)
	// Run 10's records name a subject that run 1's is a prefix of.
	_, err = rec.Record(ctx, "bob", audit.FailoverCancel, "failover-run:10", map[string]any{"reason": "not this one"})
	must(err)
	now := time.Now().UnixMilli()
	_, err = st.ApproveFailoverRun(ctx, id, []model.RunStatus{model.RunPending}, model.Approval{Approver: "bob", Decision: model.DecisionApprove,
		Reason: "looks right </script> \"quoted\"", PlanHash: "h1", AtMs: now, ExpiresMs: now + 3600_000},
		entry("bob", audit.FailoverApprove, runSubject, map[string]any{"plan_hash": "h1", "comment": "looks right </script>"}))
	must(err)
	must(st.SetFailoverStatus(ctx, id, []model.RunStatus{model.RunPending}, model.RunApproved, now))
	// Recorded text that would end a script element if embedded as is.
	raw := entry("alice", audit.FailoverStepRefused, runSubject, nil)
	raw.Details = json.RawMessage(`{"why":"</script><img src=x> & \u2028"}`)
	_, err = st.AppendAudit(ctx, raw)
	must(err)
	d := model.Drill{RunID: id, Flow: "f", StartedMs: now, FlinkTarget: "flink-dr", JobID: "j1", Groups: []string{"drconsole-drill-1-billing"}, RereadExpected: 1}
	_, err = st.StartDrill(ctx, d, entry("alice", audit.DrillStart, runSubject, map[string]any{"job_id": "j1"}))
	must(err)
	for idx := range 2 {
		_, err := st.StartFailoverStep(ctx, storage.StepStart{RunID: id, Idx: idx, Runner: "p1", Actor: "alice", AtMs: now + int64(idx)*100,
			Record: entry("alice", audit.FailoverStepStart, runSubject, map[string]any{"step": idx + 1})})
		must(err)
		o := storage.StepOutcome{RunID: id, Idx: idx, Runner: "p1", Result: `{"ok":true}`, AtMs: now + int64(idx)*100 + 50,
			Record: entry("alice", audit.FailoverStepDone, runSubject, map[string]any{"step": idx + 1})}
		if idx == 1 {
			c := entry("alice", audit.FailoverCompleted, runSubject, map[string]any{"steps": 2})
			o.Completed = &c
		}
		must(st.FinishFailoverStep(ctx, o))
	}
	must(st.DrillMoment(ctx, id, storage.MomentSubmitted, now+120))
	must(st.DrillMoment(ctx, id, storage.MomentRunning, now+140))
	must(st.DrillReread(ctx, id, 0, 4))
	must(st.DrillFirstRecord(ctx, id, now+2345, nil, false)) // RPO unknown then
	_, err = st.DrillCleanupClaim(ctx, id, "", now+3000, entry("drconsole:drill-cleanup", audit.DrillCleanupStart, runSubject, nil))
	must(err)
	must(st.DrillCleanupOutcome(ctx, id, nil, now+3100, 0, entry("drconsole:drill-cleanup", audit.DrillCleanupDone, runSubject, nil)))
	_, err = rec.Record(ctx, "carol", audit.Login, "user:carol", nil)
	must(err)
	head, hash, err := st.AuditHead(ctx)
	must(err)
	anchor := filepath.Join(t.TempDir(), "anchor.log")
	must(os.WriteFile(anchor, []byte("2026-01-01T00:00:00Z record 1 hash "+strings.Repeat("0", 64)+"\n"+
		time.Now().UTC().Format(time.RFC3339)+" record "+itoa(head)+" hash "+hash+"\n"), 0o600))
	d, err = st.Drill(ctx, id)
	must(err)
	return &drillFixture{store: st, path: path, anchor: anchor, run: id, drill: d}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// export makes the drill's pack as carol, the way the console does.
func (f *drillFixture) export(t testing.TB) (model.EvidencePack, []byte) {
	t.Helper()
	p, body, err := audit.New(f.store).Evidence(context.Background(), audit.EvidenceRequest{Run: f.run, Subject: runSubject, Actor: "carol",
		Format: "json", AnchorFile: f.anchor, OpenAnchor: func() (io.ReadCloser, error) { return os.Open(f.anchor) },
		Objectives: func(string) (time.Duration, time.Duration) { return 5 * time.Minute, 0 }})
	if err != nil {
		t.Fatal(err)
	}
	return p, body
}

func (f *drillFixture) verify(t *testing.T, body []byte) error {
	t.Helper()
	p, err := audit.ParseEvidence(body)
	if err != nil {
		t.Fatal(err)
	}
	_, err = audit.VerifyEvidence(context.Background(), f.store, p, runSubject)
	return err
}

// A drill's pack names who requested and approved it, every step's
// times, the figures exactly as stored (unknown RPO null, never 0), every
// record of its run (and only those: not run 10's, not another request
// of the flow) with the head and the anchor, and its own export, which
// is on record. It verifies against the log it came from.
func TestEvidencePackOfADrill(t *testing.T) {
	f := newDrillFixture(t)
	p, body := f.export(t)
	if err := f.verify(t, body); err != nil {
		t.Fatalf("a fresh pack does not verify: %v", err)
	}
	if p.RequestedBy != "alice" || len(p.Approvals) != 1 || p.Approvals[0].Approver != "bob" || !p.Approvals[0].ForThisPlan {
		t.Fatalf("request %q, approvals %+v", p.RequestedBy, p.Approvals)
	}
	if len(p.Steps) != 2 || p.Steps[1].StartedMs == nil || p.Steps[1].FinishedMs == nil || *p.Steps[1].FinishedMs-*p.Steps[1].StartedMs != 50 {
		t.Fatalf("steps %+v", p.Steps)
	}
	if p.Drill.AchievedRTOMs == nil || *p.Drill.AchievedRTOMs != *f.drill.RTOMs() || *p.Drill.AchievedRTOMs != 2345 ||
		*p.Drill.ToRunningMs != *f.drill.ToRunningMs() || *p.Drill.RereadMax != 4 || *p.Drill.ObjectiveRTOMs != 300_000 {
		t.Fatalf("figures %+v, stored %+v", p.Drill, f.drill)
	}
	if p.Drill.RPOMs != nil || !strings.Contains(string(body), `"rpo_ms": null`) || !strings.Contains(string(body), `"objective_rpo_ms": null`) {
		t.Fatalf("an unknown RPO is not null in the pack: %+v", p.Drill)
	}
	var actions []string
	for _, r := range p.Records {
		actions = append(actions, r.Action+"@"+r.Actor)
		if r.Subject == "failover-run:10" || r.Actor == "mallory" || r.Action == string(audit.Login) {
			t.Errorf("record %d (%s by %s, %s) is not run 1's", r.Seq, r.Action, r.Actor, r.Subject)
		}
	}
	want := "failover.plan@alice failover.approve@bob failover.step-refused@alice drill.start@alice failover.step-start@alice failover.step-done@alice " +
		"failover.step-start@alice failover.step-done@alice failover.completed@alice drill.cleanup-start@drconsole:drill-cleanup " +
		"drill.cleanup-done@drconsole:drill-cleanup drill.evidence-export@carol"
	if got := strings.Join(actions, " "); got != want {
		t.Fatalf("records\n%s\nwant\n%s", got, want)
	}
	head, hash, _ := f.store.AuditHead(context.Background())
	if p.Head.Seq != head || p.Head.Hash != hash || p.Produced.Record != head || p.Produced.By != "carol" {
		t.Fatalf("head %+v, produced %+v; the log's head %d %s", p.Head, p.Produced, head, hash)
	}
	if p.Anchor == nil || p.Anchor.Seq != head-1 || p.Anchor.Problem != "" {
		t.Fatalf("anchor %+v", p.Anchor)
	}
	exports, _ := f.store.AuditEntries(context.Background(), storage.AuditFilter{Action: string(audit.DrillEvidence)})
	if len(exports) != 1 || exports[0].Actor != "carol" || exports[0].Subject != runSubject || exports[0].ClientIP != "local" {
		t.Fatalf("the export's record: %+v", exports)
	}
	// Details hold what was recorded, byte for byte, though the JSON
	// escapes <, > and & (so the HTML can embed it).
	if strings.Contains(string(body), "</script>") || p.Records[2].Details != `{"why":"</script><img src=x> & \u2028"}` {
		t.Fatalf("details %q", p.Records[2].Details)
	}
}

// Every change to a pack is found and named: a field of a record edited
// (with or without its hash recomputed), a record removed, records
// reordered, the head or the figures edited.
func TestEvidenceTamperedPackFails(t *testing.T) {
	f := newDrillFixture(t)
	_, body := f.export(t)
	approve := 1 // index of the approval record in the pack
	cases := []struct {
		name string
		edit func(p *model.EvidencePack)
		want string
	}{
		{"actor", func(p *model.EvidencePack) { p.Records[approve].Actor = "mallory" }, "does not match its own hash"},
		{"action", func(p *model.EvidencePack) { p.Records[approve].Action = "failover.reject" }, "does not match its own hash"},
		{"time", func(p *model.EvidencePack) { p.Records[approve].AtMs++ }, "does not match its own hash"},
		{"client", func(p *model.EvidencePack) { p.Records[approve].ClientIP = "198.51.100.1" }, "does not match its own hash"},
		{"user agent", func(p *model.EvidencePack) { p.Records[approve].UserAgent = "curl" }, "does not match its own hash"},
		{"subject", func(p *model.EvidencePack) { p.Records[approve].Subject = "failover-run:2" }, "does not match its own hash"},
		{"details", func(p *model.EvidencePack) { p.Records[approve].Details = `{"plan_hash":"h2"}` }, "does not match its own hash"},
		{"prev hash", func(p *model.EvidencePack) { p.Records[approve].PrevHash = strings.Repeat("1", 64) }, "does not match its own hash"},
		{"hash", func(p *model.EvidencePack) { p.Records[approve].Hash = strings.Repeat("2", 64) }, "does not match its own hash"},
		{"seq", func(p *model.EvidencePack) { p.Records[approve].Seq++ }, "does not match its own hash"},
		{"edited and re-hashed", func(p *model.EvidencePack) {
			r := &p.Records[approve]
			r.Actor = "mallory"
			r.Hash = storage.AuditHash(r.Entry())
		}, "has hash " + "ANY" + " in the log"},
		{"record removed", func(p *model.EvidencePack) { p.Records = append(p.Records[:approve], p.Records[approve+1:]...) },
			"(failover.approve) of run 1 is in the log but not in the pack: a record was removed from the pack"},
		{"plan request removed", func(p *model.EvidencePack) { p.Records = p.Records[1:] },
			"(failover.plan) of run 1 is in the log but not in the pack"},
		{"reordered", func(p *model.EvidencePack) {
			p.Records[approve], p.Records[approve+1] = p.Records[approve+1], p.Records[approve]
		}, "comes after record"},
		{"head seq", func(p *model.EvidencePack) { p.Head.Seq-- }, "the pack's head is record"},
		{"head hash", func(p *model.EvidencePack) { p.Head.Hash = strings.Repeat("3", 64) }, "the pack's head: record"},
		{"head past the log", func(p *model.EvidencePack) { p.Head.Seq += 5 }, "past the log's end"},
		{"anchor", func(p *model.EvidencePack) {
			p.Anchor.Hash = strings.Repeat("4", 64)
			p.Anchor.Line = p.Anchor.At + " record " + itoa(p.Anchor.Seq) + " hash " + p.Anchor.Hash
		}, "the pack's anchor: record"},
		{"anchor line", func(p *model.EvidencePack) {
			p.Anchor.Line = strings.Replace(p.Anchor.Line, " record ", " record 1", 1)
		}, "the pack's anchor line"},
		{"achieved RTO", func(p *model.EvidencePack) { *p.Drill.AchievedRTOMs = 1000 }, "drill figures: the pack says"},
		{"unknown RPO made known", func(p *model.EvidencePack) { p.Drill.RPOMs = new(int64) }, "drill figures: the pack says"},
		{"step time", func(p *model.EvidencePack) { *p.Steps[0].FinishedMs -= 10 }, "steps: the pack says"},
		{"approver", func(p *model.EvidencePack) { p.Approvals[0].Approver = "dave" }, "approvals: the pack says"},
		{"requester", func(p *model.EvidencePack) { p.RequestedBy = "dave" }, "requested by: the pack says"},
		{"producer", func(p *model.EvidencePack) { p.Produced.By = "dave" }, "the pack says dave produced it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := audit.ParseEvidence(body)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(p)
			edited, err := audit.EvidenceJSON(*p)
			if err != nil {
				t.Fatal(err)
			}
			err = f.verify(t, edited)
			var problem *audit.EvidenceProblem
			if !errors.As(err, &problem) {
				t.Fatalf("an edited pack: %v, want a mismatch", err)
			}
			want := c.want
			if before, after, ok := strings.Cut(want, "ANY"); ok {
				if !strings.Contains(err.Error(), before) || !strings.Contains(err.Error(), after) {
					t.Fatalf("%v\nwant %q", err, want)
				}
				return
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%v\nwant %q", err, want)
			}
		})
	}
}

// A file that is not a pack, or not one this console reads, is refused
// with a sentence saying so.
func TestEvidenceParseRefusals(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "not a drconsole drill evidence pack",
		"<html><body>a report</body></html>": "no " + audit.EvidenceScript + " element",
		"<html>" + audit.EvidenceScript + `{"version":1`:                          "its embedded JSON never ends",
		`{"version":2,"kind":"drconsole-drill-evidence","new_field":true}`:        "evidence pack version 2: this console reads version 1",
		`{"version":1,"kind":"something-else"}`:                                   `kind "something-else"`,
		`{"version":1,"kind":"drconsole-drill-evidence","audit_records":[]}`:      "holds no audit records",
		`{"version":1,"kind":"drconsole-drill-evidence","extra":1}`:               "unknown field",
		`{"version":1,"kind":"drconsole-drill-evidence","audit_records":[{}]} {}`: "something follows its JSON",
	} {
		if _, err := audit.ParseEvidence([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want %q", in, err, want)
		}
	}
}

// rawExec runs q on the database file with its audit guards dropped, as
// someone with the file can.
func rawExec(t *testing.T, path string, q string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, trig := range []string{"audit_no_update", "audit_no_delete"} {
		if _, err := db.Exec("DROP TRIGGER IF EXISTS " + trig); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

// A log changed after the export fails the pack: a record of the run
// edited in place, the whole chain rewritten from a record on (each
// re-hashed, so the log alone looks intact), or records removed from
// the log's end.
func TestEvidenceLogChangedAfterExport(t *testing.T) {
	t.Run("record edited", func(t *testing.T) {
		f := newDrillFixture(t)
		_, body := f.export(t)
		rawExec(t, f.path, `UPDATE audit SET details='{"plan_hash":"h1","comment":"ok"}' WHERE action='failover.approve'`)
		if err := f.verify(t, body); err == nil || !strings.Contains(err.Error(), "is broken: record") || !strings.Contains(err.Error(), "does not match its hash") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("chain rewritten", func(t *testing.T) {
		f := newDrillFixture(t)
		p, body := f.export(t)
		ctx := context.Background()
		all, err := f.store.AuditEntries(ctx, storage.AuditFilter{Oldest: true})
		if err != nil {
			t.Fatal(err)
		}
		from := p.Records[1].Seq // the approval
		prev := ""
		for _, e := range all {
			if e.ID < from {
				prev = e.Hash
				continue
			}
			if e.ID == from {
				e.Actor = "mallory"
			}
			e.PrevHash = prev
			e.Hash = storage.AuditHash(e)
			rawExec(t, f.path, `UPDATE audit SET actor=?, prev_hash=?, hash=? WHERE id=?`, e.Actor, e.PrevHash, e.Hash, e.ID)
			prev = e.Hash
		}
		if v, err := audit.Verify(ctx, f.store); err != nil || v.Broken != nil {
			t.Fatalf("the rewritten log does not look intact on its own: %+v %v", v.Broken, err)
		}
		err = f.verify(t, body)
		if err == nil || !strings.Contains(err.Error(), "record "+itoa(from)+" has hash") || !strings.Contains(err.Error(), "the log was rewritten after the export") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("log truncated", func(t *testing.T) {
		f := newDrillFixture(t)
		p, body := f.export(t)
		rawExec(t, f.path, `DELETE FROM audit WHERE id >= ?`, p.Records[len(p.Records)-2].Seq)
		if err := f.verify(t, body); err == nil || !strings.Contains(err.Error(), "past the log's end") {
			t.Fatalf("%v", err)
		}
	})
}

// A drill still running has no pack, and its refusal writes nothing; a
// pack whose export cannot be put on record is not made.
func TestEvidenceRefused(t *testing.T) {
	st, path := open(t)
	ctx := context.Background()
	id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h",
		ApprovalsRequired: 1}, []string{"restore-flink"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f"})
	if err != nil {
		t.Fatal(err)
	}
	q := audit.EvidenceRequest{Run: id, Subject: runSubject, Actor: "carol", Format: "json"}
	if _, _, err := audit.New(st).Evidence(ctx, q); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a run without a drill: %v", err)
	}
	if _, err := st.StartDrill(ctx, model.Drill{RunID: id, Flow: "f", StartedMs: 5}, model.AuditEntry{Actor: "alice", Action: "drill.start", Subject: runSubject}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := audit.New(st).Evidence(ctx, q); !errors.Is(err, audit.ErrDrillRunning) {
		t.Fatalf("a running drill: %v", err)
	}
	if _, err := st.DrillCleanupClaim(ctx, id, "died", 9, model.AuditEntry{Actor: "x", Action: "drill.cleanup-start", Subject: runSubject}); err != nil {
		t.Fatal(err)
	}
	storagetest.FailAuditWrites(t, path, true)
	if _, body, err := audit.New(st).Evidence(ctx, q); !errors.Is(err, audit.ErrExportNotRecorded) || body != nil {
		t.Fatalf("an export not on record: %v, %d bytes", err, len(body))
	}
	storagetest.FailAuditWrites(t, path, false)
	if es, _ := st.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.DrillEvidence)}); len(es) != 0 {
		t.Fatalf("refused exports on record: %+v", es)
	}
	if _, _, err := audit.New(st).Evidence(ctx, q); err != nil {
		t.Fatalf("a failed drill's pack: %v", err)
	}
}
