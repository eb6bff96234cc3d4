package failback

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
)

// The Flink job in a failback. Once the writers are stopped and the
// reverse flow caught up, the job running in DR has read everything there
// is: savepoint-dr stops it with a savepoint, rewrite-savepoint-back copies
// that savepoint with each KafkaSource split moved from DR's log end
// (recorded by stop-reverse) to the primary's log end recorded then (the
// translate-back rule, backPositions), and restore-flink starts the job on
// a primary-region Flink target from the copy, with the same source uid
// and its whole state. A split inside the log (the DR job had not read
// everything when it was stopped) moves as a group's does, through the
// reverse flow's syncs or, among the records the forward flow copied, the
// forward flow's read backwards: never past a record the job has not
// read, re-reading at most the records stated per split, which its state
// then counts twice (as a conservative forward rewrite does). Or
// restore-flink alone starts the job on the primary without a savepoint,
// from the group offsets translate-group-back committed.

const (
	// KindSavepointDR stops the DR job with a savepoint (failback only).
	KindSavepointDR runbook.StepKind = "savepoint-dr"
	// KindRewriteBack copies savepoint-dr's savepoint with its Kafka
	// splits moved to the primary (failback only).
	KindRewriteBack runbook.StepKind = "rewrite-savepoint-back"
)

// WithFlinkBack puts fb's steps into failback plan p, before restart-forward.
func WithFlinkBack(p runbook.Plan, fb runbook.FlinkBack) runbook.Plan {
	var steps []runbook.Step
	if fb.DRJob != "" {
		steps = append(steps, runbook.Step{Kind: KindSavepointDR, FlinkTarget: fb.DRTarget, JobID: fb.DRJob},
			runbook.Step{Kind: KindRewriteBack, RewriteTo: fb.RewriteTo, SourceUID: fb.SourceUID})
		fb.Restore.SavepointPath = fb.RewriteTo
	}
	fb.Restore.Kind = failover.KindRestoreFlink
	steps = append(steps, fb.Restore)
	at := failover.First(p, failover.RestartsForward)
	if at < 0 {
		at = len(p.Steps)
	}
	p.Steps = slices.Concat(p.Steps[:at:at], steps, p.Steps[at:])
	return p
}

// flinkBackKinds are the Flink steps plan p has, in the one order a
// failback allows them.
func flinkBackKinds(p runbook.Plan) []runbook.StepKind {
	var out []runbook.StepKind
	for _, k := range []runbook.StepKind{KindSavepointDR, KindRewriteBack, failover.KindRestoreFlink} {
		if slices.Contains(kindsOf(p), k) {
			out = append(out, k)
		}
	}
	return out
}

// flinkBackProblems says what is wrong with the Flink steps of failback p.
func flinkBackProblems(cfg *config.Config, p runbook.Plan) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	kinds := flinkBackKinds(p)
	if len(kinds) > 0 && !slices.Equal(kinds, []runbook.StepKind{failover.KindRestoreFlink}) && !slices.Equal(kinds, []runbook.StepKind{KindSavepointDR, KindRewriteBack, failover.KindRestoreFlink}) {
		bad("the Flink steps are savepoint-dr, rewrite-savepoint-back and restore-flink, or restore-flink alone (from the groups' offsets)")
	}
	for _, s := range p.Steps {
		if k, ok := backSteps[s.Kind].(flinkBackStep); ok {
			out = append(out, k.flinkProblems(cfg, p, s)...)
		}
	}
	return out
}

// flinkBackStep is a failback step that moves the Flink job; its
// problems are checked against the whole plan.
type flinkBackStep interface {
	flinkProblems(cfg *config.Config, p runbook.Plan, s runbook.Step) []string
}

func (savepointDRStep) flinkProblems(cfg *config.Config, _ runbook.Plan, s runbook.Step) []string {
	var out []string
	switch t := failover.FlinkTarget(cfg, s.FlinkTarget); {
	case t == nil:
		out = append(out, fmt.Sprintf("savepoint-dr: no Flink target named %q in flink_targets", s.FlinkTarget))
	case t.Region != config.RegionDR:
		out = append(out, fmt.Sprintf("savepoint-dr: Flink target %q is in the %s region: the job to stop runs in DR", t.Name, t.Region))
	}
	if strings.TrimSpace(s.JobID) == "" {
		out = append(out, "savepoint-dr: name the DR job to stop with a savepoint (its job id)")
	}
	return out
}

func (rewriteBackStep) flinkProblems(cfg *config.Config, _ runbook.Plan, s runbook.Step) []string {
	var out []string
	for _, why := range failover.DestProblems(cfg, "", s.RewriteTo) {
		out = append(out, "rewrite-savepoint-back: "+why)
	}
	return out
}

func (restoreBackStep) flinkProblems(cfg *config.Config, p runbook.Plan, s runbook.Step) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch t := failover.FlinkTarget(cfg, s.FlinkTarget); {
	case t == nil:
		bad("restore-flink: no Flink target named %q in flink_targets", s.FlinkTarget)
	case t.Region != config.RegionPrimary:
		bad("restore-flink: Flink target %q is in the %s region: a failback restores the job on the primary", t.Name, t.Region)
	}
	j := failover.RewriteOf(p, s.SavepointPath)
	switch {
	case failover.First(p, failover.RewritesDRSavepoint) >= 0 && j < 0:
		bad("restore-flink: restore the savepoint rewrite-savepoint-back writes (%s), not %q", rewriteBackDest(p), s.SavepointPath)
	case j < 0 && s.SavepointPath != "":
		bad("restore-flink: savepoint %s holds DR offsets, which are not the primary's: restore the copy rewrite-savepoint-back writes, or none (the job starts from the groups' offsets)", s.SavepointPath)
	case j >= 0 && s.AllowNonRestoredState:
		bad("restore-flink: the rewritten savepoint keeps its source uid and state, so allowNonRestoredState must stay off")
	}
	if s.JarID == "" {
		bad("restore-flink: name the uploaded jar (jar id) on the primary's Flink")
	}
	return out
}

func rewriteBackDest(p runbook.Plan) string {
	if i := failover.First(p, failover.RewritesDRSavepoint); i >= 0 {
		return p.Steps[i].RewriteTo
	}
	return ""
}

// savepointDR stops the DR job with a savepoint and registers it. Resumed
// after a crash, a job no longer running is looked up in Flink's
// checkpoint history: its newest savepoint triggered after stop-reverse is
// the one this step took. A job that cannot be read fails the step.
func (rb Book) savepointDR(ctx context.Context, w audit.Written, r *runbook.Run, s runbook.Step, progress func(string)) (*savepointTaken, error) {
	if rb.Catalog == nil {
		return nil, errors.New("no savepoint catalog: the savepoint is registered and read through it")
	}
	t := failover.FlinkTarget(rb.Config, s.FlinkTarget)
	api := rb.Flink(t.RestURL)
	job, err := api.Job(ctx, s.JobID)
	if err != nil {
		return nil, fmt.Errorf("reading DR job %s on %s: %w", s.JobID, t.Name, err)
	}
	result := &savepointTaken{Target: t.Name, JobID: s.JobID, JobName: job.Name}
	if job.State == flink.JobRunning {
		sp, err := failover.TriggerSavepoint(ctx, w, rb.Catalog, t.Name, s.JobID, true, func(d time.Duration) {
			if progress != nil {
				progress(fmt.Sprintf("stop-with-savepoint of %s in progress for %s", s.JobID, d.Round(time.Second)))
			}
		})
		if err != nil {
			return result, err
		}
		result.Savepoint, result.CatalogID = sp.Path, sp.ID
		return result, nil
	}
	after := stepFinished(r, KindStopReverse)
	h, err := api.Checkpoints(ctx, s.JobID)
	if err != nil {
		return result, fmt.Errorf("DR job %s is %s and its checkpoint history cannot be read, so whether this step's savepoint exists is unknown: %w", s.JobID, job.State, err)
	}
	var newest *flink.Checkpoint
	for _, cp := range append(h.History, derefs(h.Latest.Savepoint)...) {
		if cp.IsSavepoint && cp.Status == flink.CheckpointCompleted && cp.TriggerTime >= after && cp.ExternalPath != "" && (newest == nil || cp.TriggerTime > newest.TriggerTime) {
			newest = &cp
		}
	}
	if newest == nil {
		return result, fmt.Errorf("DR job %s is %s, not RUNNING, and Flink lists no savepoint of it completed since stop-reverse: there is no savepoint of this step to move back; start the job in DR again and retry, or plan the failback without the Flink steps", s.JobID, job.State)
	}
	id, err := rb.Catalog.Register(ctx, newest.ExternalPath)
	if err != nil {
		return result, fmt.Errorf("the savepoint %s of DR job %s could not be registered in the catalog: %w", newest.ExternalPath, s.JobID, err)
	}
	result.Savepoint, result.CatalogID, result.Note = flink.CanonicalPath(newest.ExternalPath), id, "taken by an earlier attempt (found in Flink's checkpoint history)"
	return result, nil
}

// savepointTaken is savepoint-dr's result: the DR job it stopped and the
// savepoint it took, which rewrite-savepoint-back reads (drSavepoint).
// Its fields are in the order the map it replaced was written, so the
// stored bytes are the same; V is the shape's version (absent: the first).
type savepointTaken struct {
	CatalogID int64  `json:"catalog_id,omitempty"` // set with Savepoint; catalog ids start at 1
	JobID     string `json:"job_id"`
	JobName   string `json:"job_name"`
	Note      string `json:"note,omitempty"`
	Savepoint string `json:"savepoint,omitempty"`
	Target    string `json:"target"`
	V         int    `json:"v,omitempty"`
}

func derefs(cps ...*flink.Checkpoint) []flink.Checkpoint {
	var out []flink.Checkpoint
	for _, cp := range cps {
		if cp != nil {
			out = append(out, *cp)
		}
	}
	return out
}

// stepFinished is when r's step of kind k finished (ms); 0 when it has not.
func stepFinished(r *runbook.Run, k runbook.StepKind) int64 {
	if i := slices.Index(kindsOf(r.Plan), k); i >= 0 && i < len(r.Steps) && r.Steps[i].Status == model.StepDone {
		return r.Steps[i].FinishedMs
	}
	return 0
}

// stepResult decodes the result of r's done step of kind k into out.
func stepResult(r *runbook.Run, k runbook.StepKind, out any) error {
	i := slices.Index(kindsOf(r.Plan), k)
	if i < 0 || i >= len(r.Steps) || r.Steps[i].Status != model.StepDone {
		return fmt.Errorf("%s is not done", k)
	}
	return json.Unmarshal([]byte(r.Steps[i].Result), out)
}

// drSavepoint is the catalog entry of the savepoint savepoint-dr took.
func (rb Book) drSavepoint(ctx context.Context, r *runbook.Run) (model.Savepoint, error) {
	var res savepointTaken
	if err := stepResult(r, KindSavepointDR, &res); err != nil || res.Savepoint == "" {
		return model.Savepoint{}, fmt.Errorf("savepoint-dr has not recorded a savepoint (%v)", err)
	}
	if res.V > 0 {
		return model.Savepoint{}, fmt.Errorf("savepoint-dr's result is of version %d, written by a newer drconsole", res.V)
	}
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(res.Savepoint))
	if errors.Is(err, storage.ErrNotFound) {
		return sp, fmt.Errorf("savepoint %s (taken by savepoint-dr) is not in the savepoint catalog any more", res.Savepoint)
	}
	return sp, err
}

// BackPreview is what rewrite-savepoint-back would write, computed now.
type BackPreview struct {
	Source    model.Savepoint
	SourceUID string
	Targets   map[string]flink.SplitTarget // by the split's "topic-partition"
	Primary   map[model.TP]int64           // the primary positions of Targets
	Rows      []string                     // per split: DR offset -> primary offset
	Refused   []string                     // splits the rule refuses, with their figures
	Absent    []string                     // partitions of the flow without a split
	// Check is the rewriter's dry run once every split has a target.
	Check    *flink.RewriteResult
	CheckErr string
}

// Err says why the savepoint cannot be rewritten back; nil when it can.
func (p *BackPreview) Err() error {
	switch {
	case len(p.Refused) > 0:
		return fmt.Errorf("savepoint %s: splits that cannot be moved to the primary: %s", p.Source.Path, strings.Join(p.Refused, ", "))
	case len(p.Targets) == 0:
		return fmt.Errorf("savepoint %s holds no Kafka split of the flow's topics", p.Source.Path)
	case p.CheckErr != "":
		return fmt.Errorf("the rewriter refuses it: %s", p.CheckErr)
	}
	return nil
}

func (rb Book) backTargets(ctx context.Context, r *runbook.Run, s runbook.Step) (*BackPreview, error) {
	sp, err := rb.drSavepoint(ctx, r)
	if err != nil {
		return nil, err
	}
	k, err := rb.Catalog.KafkaSplits(ctx, sp.Path, s.SourceUID)
	if err != nil {
		return nil, err
	}
	if k.Source != flink.SourceKafkaSource {
		return nil, fmt.Errorf("savepoint %s: the source operator %s holds %s state, not KafkaSource reader state: only KafkaSource splits can be rewritten", sp.Path, k.OperatorID, failover.OrNone(k.Source))
	}
	p := &BackPreview{Source: sp, SourceUID: orElse(k.UID, k.OperatorID), Targets: map[string]flink.SplitTarget{}}
	at := make(map[model.TP]int64, len(k.Partitions))
	keys := map[model.TP]string{}
	for key, po := range k.Partitions {
		tp := model.TP{Topic: po.Topic, Partition: po.Partition}
		at[tp], keys[tp] = po.Next, key
		if po.Marker != "" {
			p.Refused = append(p.Refused, fmt.Sprintf("%s (a %s marker, not an offset)", key, po.Marker))
		}
	}
	b, err := rb.backPositions(ctx, r, "savepoint", at)
	if err != nil {
		return nil, err
	}
	p.Refused, p.Primary = append(p.Refused, b.Refused...), b.Primary
	for _, key := range b.Outside {
		p.Refused = append(p.Refused, key+" (not a partition this flow mirrors)")
	}
	p.Absent = b.Absent
	tps := make([]model.TP, 0, len(b.Primary))
	for tp := range b.Primary {
		tps = append(tps, tp)
	}
	mm2.SortTPs(tps)
	for _, tp := range tps {
		// Under the default policy the split changes topic, too
		// (reverseScope.primaryOf).
		dr := b.From[tp]
		why := cmp.Or(b.How[tp], "DR's end -> the primary's end (stop-reverse)")
		p.Targets[keys[dr]] = flink.SplitTarget{Topic: tp.Topic, Offset: b.Primary[tp], Why: why}
		switch {
		case b.How[tp] != "":
			p.Rows = append(p.Rows, keys[dr]+": "+b.How[tp])
		case dr.Topic != tp.Topic:
			p.Rows = append(p.Rows, fmt.Sprintf("%s: DR %d → primary %s %d", keys[dr], at[dr], mm2.TPKey(tp), b.Primary[tp]))
		default:
			p.Rows = append(p.Rows, fmt.Sprintf("%s: DR %d → primary %d", keys[dr], at[dr], b.Primary[tp]))
		}
	}
	slices.Sort(p.Refused)
	if len(p.Refused) == 0 && len(p.Targets) > 0 {
		if p.Check, err = flink.CheckRewrite(ctx, p.request(rb.Book, s)); err != nil {
			p.CheckErr = err.Error()
		}
	}
	return p, nil
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (p *BackPreview) request(rb failover.Book, s runbook.Step) flink.RewriteRequest {
	return flink.RewriteRequest{Source: failover.StoragePath(p.Source.Path), Dest: failover.StoragePath(s.RewriteTo), SourceUID: s.SourceUID,
		Targets: p.Targets, Files: rb.Catalog.Files(), Roots: rb.Config.SavepointDirs}
}

// rewriteBack performs rewrite-savepoint-back; resumed, it accepts at the
// destination only exactly this rewrite, as rewrite-savepoint does.
func (rb Book) rewriteBack(ctx context.Context, w audit.Written, r *runbook.Run, s runbook.Step) (any, error) {
	p, err := rb.backTargets(ctx, r, s)
	if err != nil {
		return nil, err
	}
	result := &failover.SavepointRewritten{Source: p.Source.Path, SourceUID: p.SourceUID, Dest: s.RewriteTo, Splits: p.Rows, RewroteBack: &failover.RewroteBack{NotInSavepoint: p.Absent}}
	if err := p.Err(); err != nil {
		return result, err
	}
	return result, rb.WriteRewrite(ctx, w, r.Flow, s, p.request(rb.Book, s), p.Source, result)
}
