package failover

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

// The rewrite-savepoint step (issue 14): a catalog savepoint is copied
// with its KafkaSource splits moved to DR (translated offsets, DR topic
// names), registered in the catalog, and restored by a later restore-flink
// step with the same source uid and without allowNonRestoredState.

// restoredRewriteProblems says what is wrong with restore step i of p as
// a restore of a savepoint the plan rewrites.
func restoredRewriteProblems(p runbook.Plan, i int) []string {
	s := p.Steps[i]
	switch j := RewriteOf(p, s.SavepointPath); {
	case j < 0:
	case j > i:
		return []string{fmt.Sprintf("restores savepoint %s, which step %d writes later: put the restore after the rewrite", s.SavepointPath, j+1)}
	case s.AllowNonRestoredState:
		return []string{fmt.Sprintf("restores the rewritten savepoint %s: its Kafka source keeps its uid and state, so allowNonRestoredState must stay off (it would hide state that did not match the job)", s.SavepointPath)}
	}
	return nil
}

// rewriteProblems says what is wrong with step i of p as a rewrite.
func rewriteProblems(cfg *config.Config, p runbook.Plan, i int) []string {
	s := p.Steps[i]
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(s.RewriteFrom) == "" {
		bad("name the savepoint to rewrite (a savepoint catalog path)")
	}
	out = append(out, DestProblems(cfg, s.RewriteFrom, s.RewriteTo)...)
	for _, key := range slices.Sorted(maps.Keys(s.Choices)) {
		if _, err := mm2.ParseTPKey(key); err != nil {
			bad("choice for %q: %v", key, err)
		}
		if err := s.Choices[key].Validate(); err != nil {
			bad("%s: %v", key, err)
		}
	}
	for j := range i {
		if o := p.Steps[j]; Is(o.Kind, Rewrites) && flink.CanonicalPath(o.RewriteTo) == flink.CanonicalPath(s.RewriteTo) {
			bad("step %d writes %s already", j+1, s.RewriteTo)
		}
	}
	return out
}

// DestProblems says what is wrong with to as the new directory of a
// rewrite of from ("": not known yet).
func DestProblems(cfg *config.Config, from, to string) []string {
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	switch {
	case to == "":
		return []string{"name the new savepoint's directory (inside a configured savepoint directory)"}
	case !flink.UnderSavepointDir(cfg.SavepointDirs, to):
		return []string{fmt.Sprintf("%s is not inside a configured savepoint directory (%s): the catalog must find and read the new savepoint", to, strings.Join(cfg.SavepointDirs, ", "))}
	case slices.ContainsFunc(cfg.SavepointDirs, func(d string) bool { return flink.CanonicalPath(d) == flink.CanonicalPath(to) }):
		return []string{fmt.Sprintf("%s is a configured savepoint directory itself: name a new directory inside it", to)}
	case from != "" && (flink.UnderSavepointDir([]string{from}, to) || flink.UnderSavepointDir([]string{to}, from)):
		return []string{fmt.Sprintf("the new savepoint %s must be neither the source %s nor inside it (nor hold it)", to, from)}
	}
	return nil
}

// RewriteOf is the index of the plan's rewrite step writing path; -1 when
// no step does.
func RewriteOf(p runbook.Plan, path string) int {
	if strings.TrimSpace(path) == "" {
		return -1
	}
	return slices.IndexFunc(p.Steps, func(s runbook.Step) bool {
		return Is(s.Kind, Rewrites) && flink.CanonicalPath(s.RewriteTo) == flink.CanonicalPath(path)
	})
}

// RewritePreview is what a rewrite step would write, computed now: the
// catalog entry, its Kafka source, and each split's target.
type RewritePreview struct {
	Source    model.Savepoint
	SourceUID string // the source operator's uid (or id) as read
	Splits    int
	Targets   *translation.RewriteTargets
	// DestExists: something is at the destination already (the step then
	// verifies it is exactly this rewrite, or refuses).
	DestExists bool
	DestErr    string
	// Check is the rewriter's dry run (flink.CheckRewrite) once every
	// split has a target: what it would copy; CheckErr why it would refuse.
	Check    *flink.RewriteResult
	CheckErr string
}

// request is the rewrite the step asks flink.Rewrite for.
func (p *RewritePreview) request(rb Book, s runbook.Step) flink.RewriteRequest {
	return flink.RewriteRequest{Source: StoragePath(p.Source.Path), Dest: StoragePath(s.RewriteTo), SourceUID: s.SourceUID,
		Targets: p.Targets.Targets(), Files: rb.Catalog.Files(), Roots: rb.Config.SavepointDirs}
}

// PreviewRewrite computes a rewrite step's targets for flow now (reads:
// the catalog, the savepoint's `_metadata`, DR for timestamp choices).
// The plan form shows it before the plan is created.
func (rb Book) PreviewRewrite(ctx context.Context, flow string, s runbook.Step) (*RewritePreview, error) {
	return rb.rewriteTargets(ctx, flow, s)
}

// RewriteForm is PreviewRewrite as the plan form shows it: the step's
// lines and the splits that need an operator's choice. It is nil when
// nothing could be computed (the error says why).
func (rb Book) RewriteForm(ctx context.Context, flow string, s runbook.Step) (*model.RewritePreview, error) {
	p, err := rb.rewriteTargets(ctx, flow, s)
	if p == nil {
		return nil, err
	}
	out := &model.RewritePreview{Lines: p.Lines(flow, s)}
	for _, row := range p.Targets.Rows {
		if row.Problem == "" && !row.Translated() {
			out.NeedChoice = append(out.NeedChoice, model.RewriteSplit{Key: row.Key, DR: row.DR, Subtask: row.Subtask,
				Offset: row.Offset, Marker: row.Marker, Translation: row.Translation})
		}
	}
	return out, err
}

func (rb Book) rewriteTargets(ctx context.Context, flow string, s runbook.Step) (*RewritePreview, error) {
	if rb.Catalog == nil {
		return nil, errors.New("no savepoint catalog: a rewrite reads and registers savepoints through it")
	}
	f := rb.Config.Flow(flow)
	tr := rb.Monitor.Translator(flow)
	if f == nil || tr == nil {
		return nil, fmt.Errorf("no flow named %q", flow)
	}
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(s.RewriteFrom))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("savepoint %s is not in the savepoint catalog: register it (Savepoints page) first", s.RewriteFrom)
	}
	if err != nil {
		return nil, err
	}
	if sp.Origin == model.OriginRewritten {
		// Its offsets are DR offsets already: translating them again
		// through the primary's syncs would move the job to wrong records.
		return nil, fmt.Errorf("savepoint %s is itself a rewritten copy (of %s, for %s): rewrite the original savepoint", sp.Path, sp.RewrittenFrom, sp.RewrittenFlow)
	}
	k, err := rb.Catalog.KafkaSplits(ctx, sp.Path, s.SourceUID)
	if err != nil {
		return nil, err
	}
	if k.Source != flink.SourceKafkaSource {
		return nil, fmt.Errorf("savepoint %s: the source operator %s holds %s state, not KafkaSource reader state: only KafkaSource splits can be rewritten", sp.Path, k.OperatorID, OrNone(k.Source))
	}
	p := &RewritePreview{Source: sp, SourceUID: k.UID, Splits: len(k.Partitions)}
	if p.SourceUID == "" {
		p.SourceUID = k.OperatorID
	}
	p.Targets, err = tr.RewriteTargets(ctx, k.Sorted(), translation.TargetOptions{Preserved: f.IsClusterLink(), Choices: s.Choices, Resolve: true})
	if err != nil {
		return nil, err
	}
	if p.DestExists, err = rb.Catalog.DirExists(ctx, s.RewriteTo); err != nil {
		p.DestErr = err.Error()
	}
	if p.Targets.Complete() {
		if p.Check, err = flink.CheckRewrite(ctx, p.request(rb, s)); err != nil {
			p.CheckErr = err.Error()
		}
	}
	return p, nil
}

// rewriteRule is the safety rule of rewrite step idx. Neither it nor
// RestoreRewrittenRule can be overridden: a wrong offset is silent data
// loss or duplication.
func (rb Book) rewriteRule(ctx context.Context, r *runbook.Run, idx int) []runbook.RuleResult {
	s := r.Plan.Steps[idx]
	rule := runbook.RuleResult{Name: "every split of the savepoint has a DR offset (translated, or chosen by an operator)"}
	p, err := rb.rewriteTargets(ctx, r.Flow, s)
	switch {
	case err != nil:
		rule.Evidence = err.Error()
	case p.Targets.Err() != nil:
		rule.Evidence = p.Targets.Err().Error()
	case p.CheckErr != "":
		rule.Evidence = "the rewriter refuses it: " + p.CheckErr
	default:
		rule.OK = true
		rule.Evidence = fmt.Sprintf("%d split(s): %d translated, %d chosen; at most %d record(s) re-read", len(p.Targets.Rows),
			countRows(p.Targets, true), countRows(p.Targets, false), p.Targets.RereadMax)
	}
	return []runbook.RuleResult{rule}
}

// RestoreRewrittenRule is the rule of restore step idx when it restores a
// savepoint the plan rewrites; nil otherwise.
func (rb Book) RestoreRewrittenRule(ctx context.Context, r *runbook.Run, idx int) []runbook.RuleResult {
	j := RewriteOf(r.Plan, r.Plan.Steps[idx].SavepointPath)
	if j < 0 {
		return nil
	}
	rule := runbook.RuleResult{Name: fmt.Sprintf("the rewrite (step %d) succeeded and its savepoint is in the catalog", j+1)}
	rule.OK, rule.Evidence = rb.rewriteDone(ctx, r, j)
	return []runbook.RuleResult{rule}
}

func countRows(t *translation.RewriteTargets, translated bool) int {
	n := 0
	for _, r := range t.Rows {
		if r.Target != nil && r.Translated() == translated {
			n++
		}
	}
	return n
}

// rewriteDone checks that rewrite step j of r is done and registered its
// savepoint as rewritten from its source for the run's flow.
func (rb Book) rewriteDone(ctx context.Context, r *runbook.Run, j int) (bool, string) {
	w := r.Plan.Steps[j]
	if j >= len(r.Steps) || r.Steps[j].Status != model.StepDone {
		return false, fmt.Sprintf("step %d has not succeeded", j+1)
	}
	from := flink.CanonicalPath(w.RewriteFrom)
	if source, ok := rewriteSources[w.Kind]; ok {
		src, err := source(ctx, rb.Runbook, r)
		if err != nil {
			return false, err.Error()
		}
		from = src
	}
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(w.RewriteTo))
	switch {
	case err != nil:
		return false, fmt.Sprintf("%s: %v", w.RewriteTo, err)
	case sp.Origin != model.OriginRewritten || sp.RewrittenFrom != from || sp.RewrittenFlow != r.Flow:
		return false, fmt.Sprintf("the catalog entry %s is not marked as rewritten from %s for %s (origin %s, from %q, flow %q)",
			sp.Path, from, r.Flow, sp.Origin, sp.RewrittenFrom, sp.RewrittenFlow)
	}
	return true, fmt.Sprintf("catalog entry #%d %s, rewritten from %s for %s", sp.ID, sp.Path, sp.RewrittenFrom, sp.RewrittenFlow)
}

// rewriteSavepoint performs a rewrite step. Resumed after a crash, it
// finds the earlier attempt's savepoint at the destination: done when it
// holds exactly this step's targets, refused when it holds anything else
// (another plan's, a hand-made copy): it is never overwritten.
func (rb Book) rewriteSavepoint(ctx context.Context, w audit.Written, r *runbook.Run, s runbook.Step) (any, error) {
	p, err := rb.rewriteTargets(ctx, r.Flow, s)
	if err != nil {
		return nil, err
	}
	if err := p.Targets.Err(); err != nil {
		return rewriteRefused{Splits: rewriteRows(p.Targets)}, fmt.Errorf("savepoint %s cannot be rewritten as planned: %w", p.Source.Path, err)
	}
	result := &SavepointRewritten{Source: p.Source.Path, SourceUID: p.SourceUID, Dest: s.RewriteTo, Splits: rewriteRows(p.Targets),
		RewroteForward: &RewroteForward{Renamed: p.Targets.Renamed, RereadMax: p.Targets.RereadMax}}
	return result, rb.WriteRewrite(ctx, w, r.Flow, s, p.request(rb, s), p.Source, result)
}

// SavepointRewritten is the result of rewrite-savepoint and of
// rewrite-savepoint-back: what was rewritten, where to, and how it was
// written and registered. Its fields are in the order the map it replaced
// was written, so the stored bytes are the same; the fields only one of
// the two kinds writes are embedded behind a pointer, absent for the
// other. V is the shape's version (absent: the first).
type SavepointRewritten struct {
	CatalogID   int64  `json:"catalog_id,omitempty"` // catalog ids start at 1
	CatalogPath string `json:"catalog_path,omitempty"`
	CopiedBytes *int64 `json:"copied_bytes,omitempty"`
	CopiedFiles *int   `json:"copied_files,omitempty"`
	Dest        string `json:"dest"`
	*RewroteBack
	Note             string   `json:"note,omitempty"`
	Path             string   `json:"path,omitempty"`
	RemovedLeftovers []string `json:"removed_leftovers,omitempty"`
	*RewroteForward
	Source    string   `json:"source"`
	SourceUID string   `json:"source_uid"`
	Splits    []string `json:"splits"`
	V         int      `json:"v,omitempty"`
}

// RewroteForward is what only rewrite-savepoint records (exported: JSON
// decodes into an embedded pointer only of an exported type).
type RewroteForward struct {
	Renamed   map[string]string `json:"renamed_topics"`
	RereadMax int64             `json:"reread_max"`
}

// RewroteBack is what only rewrite-savepoint-back records: the flow's
// partitions the DR savepoint has no split for.
type RewroteBack struct {
	NotInSavepoint []string `json:"not_in_savepoint"`
}

// rewriteRefused is a rewrite's result when a split has no target: the
// splits, each with its reason.
type rewriteRefused struct {
	Splits []string `json:"splits"`
}

// WriteRewrite writes req's copy of src to step s's destination and
// registers it in the catalog as rewritten for flow, adding what it did to
// result. Resumed after a crash, it finds the earlier attempt's copy
// there: done when it holds exactly req's targets, refused when it holds
// anything else (another plan's, a hand-made copy): it is never
// overwritten.
func (rb Book) WriteRewrite(ctx context.Context, w audit.Written, flow string, s runbook.Step, req flink.RewriteRequest, src model.Savepoint, result *SavepointRewritten) error {
	exists, err := rb.Catalog.DirExists(ctx, s.RewriteTo)
	if err != nil {
		return fmt.Errorf("looking at %s: %w", s.RewriteTo, err)
	}
	if exists {
		if advice, ok := flink.Leftover(rb.Catalog.Files(), StoragePath(s.RewriteTo)); ok {
			return fmt.Errorf("%s exists already and is not this step's rewrite: it is neither overwritten nor used; %s", s.RewriteTo, advice)
		}
		if err := rb.sameRewrite(ctx, s, req.Targets); err != nil {
			return fmt.Errorf("%s exists already and is not this step's rewrite (%v): it is neither overwritten nor used; plan another destination", s.RewriteTo, err)
		}
		result.Note = "written by an earlier attempt and read back: it holds exactly these targets"
	} else {
		res, err := effect.RewriteSavepoint(ctx, w, req)
		if err != nil {
			return err
		}
		result.Path, result.CopiedFiles, result.CopiedBytes = res.Path, &res.CopiedFiles, &res.CopiedBytes
		result.RemovedLeftovers = res.RemovedLeftovers // hidden build directories of attempts that died
	}
	rb.Crash("rewrite-written")
	sp, err := rb.Catalog.RegisterRewritten(ctx, s.RewriteTo, src, flow)
	if err != nil {
		return fmt.Errorf("the rewritten savepoint %s could not be registered in the catalog: %w", s.RewriteTo, err)
	}
	result.CatalogID, result.CatalogPath = sp.ID, sp.Path
	return nil
}

// sameRewrite reads the savepoint at the step's destination and checks its
// splits are exactly targets (DR topic, partition, offset).
func (rb Book) sameRewrite(ctx context.Context, s runbook.Step, targets map[string]flink.SplitTarget) error {
	k, err := rb.Catalog.KafkaSplits(ctx, StoragePath(s.RewriteTo), s.SourceUID)
	if err != nil {
		return err
	}
	want := map[string]int64{}
	for key, t := range targets {
		tp, _ := mm2.ParseTPKey(key) // keys come from the savepoint's splits
		want[mm2.TPKey(model.TP{Topic: t.Topic, Partition: tp.Partition})] = t.Offset
	}
	var diff []string
	for key, p := range k.Partitions {
		if off, ok := want[key]; !ok {
			diff = append(diff, key+" is not a target")
		} else if off != p.Next {
			diff = append(diff, fmt.Sprintf("%s at %d, not %d", key, p.Next, off))
		}
	}
	for key := range want {
		if _, ok := k.Partitions[key]; !ok {
			diff = append(diff, key+" missing")
		}
	}
	if len(diff) > 0 {
		slices.Sort(diff)
		return errors.New(strings.Join(diff, ", "))
	}
	return nil
}

// StoragePath is a catalog path as the rewriter opens it: local ones as
// plain paths, remote ones (s3://) as they are.
func StoragePath(p string) string {
	if local, err := flink.LocalPath(strings.TrimSpace(p)); err == nil {
		return local
	}
	return strings.TrimSpace(p)
}

// rewriteRows are the splits for the audit record: from, to, and why.
func rewriteRows(t *translation.RewriteTargets) []string {
	out := make([]string, 0, len(t.Rows))
	for _, r := range t.Rows {
		out = append(out, rewriteLine(r))
	}
	return out
}

// rewriteLine says what happens to one split.
func rewriteLine(r translation.TargetRow) string {
	from := fmt.Sprintf("%s (subtask %d) primary %d", r.Key, r.Subtask, r.Offset)
	if r.Marker != "" {
		from = fmt.Sprintf("%s (subtask %d) marker %s", r.Key, r.Subtask, r.Marker)
	}
	switch {
	case r.Problem != "":
		return from + ": CANNOT BE REWRITTEN: " + r.Problem
	case r.Target == nil:
		return from + ": NO TRANSLATION, NO CHOICE: choose earliest, latest or a timestamp for it, or the step is refused"
	case r.Translated():
		return fmt.Sprintf("%s → %s %d (%s, may re-read ≤ %d)", from, mm2.TPKey(r.DR), r.Target.Offset, r.Translation.Method, r.Translation.RereadMax)
	}
	to := fmt.Sprint(r.Target.Offset)
	switch r.Target.Offset {
	case flink.OffsetEarliest:
		to = "earliest"
	case flink.OffsetLatest:
		to = "latest"
	}
	return fmt.Sprintf("%s → %s %s: %s", from, mm2.TPKey(r.DR), to, r.Target.Why)
}

// previewRewrite says what a rewrite step will write: per split the old
// and the new position, the re-read bound, the topics renamed, and the
// partitions still needing a choice.
func (rb Book) previewRewrite(ctx context.Context, flow string, s runbook.Step) ([]string, error) {
	p, err := rb.rewriteTargets(ctx, flow, s)
	if err != nil {
		return nil, err
	}
	return p.Lines(flow, s), nil
}

// Lines says what the rewrite step s of flow will do, as the run page and
// the plan form show it.
func (p *RewritePreview) Lines(flow string, s runbook.Step) []string {
	lines := []string{fmt.Sprintf("Reads the KafkaSource state (uid %s, %d split(s)) of catalog savepoint #%d %s; the source is never modified.",
		p.SourceUID, p.Splits, p.Source.ID, p.Source.Path)}
	switch {
	case p.DestErr != "":
		lines = append(lines, "Writes "+s.RewriteTo+": its state could not be checked ("+p.DestErr+").")
	case p.DestExists:
		lines = append(lines, "Writes "+s.RewriteTo+": SOMETHING IS THERE ALREADY: the step accepts it only if it holds exactly the targets below (an earlier attempt), else it refuses.")
	default:
		lines = append(lines, "Writes a new savepoint at "+s.RewriteTo+" (every other operator's state carried over unchanged), reads it back, and registers it in the catalog as rewritten from the source for "+flow+".")
	}
	if len(p.Targets.Renamed) == 0 {
		lines = append(lines, "Topic names stay the same in DR.")
	}
	for _, src := range slices.Sorted(maps.Keys(p.Targets.Renamed)) {
		lines = append(lines, "Topic renamed: "+src+" → "+p.Targets.Renamed[src]+" (reader splits and enumerator state alike)")
	}
	lines = append(lines, rewriteRows(p.Targets)...)
	lines = append(lines, fmt.Sprintf("At most %d record(s) in all may be processed twice on translated partitions; none is skipped.", p.Targets.RereadMax))
	if n := countRows(p.Targets, false); n > 0 {
		lines = append(lines, fmt.Sprintf("%d partition(s) start where an operator chose: earliest re-reads all DR keeps, latest skips what arrives before the job runs, a timestamp is at-least-once around it (looked up in DR again when the step runs).", n))
	}
	switch {
	case p.Targets.Err() != nil:
		lines = append(lines, "THE STEP WILL BE REFUSED: "+p.Targets.Err().Error())
	case p.CheckErr != "":
		lines = append(lines, "THE STEP WILL BE REFUSED: the rewriter's dry run refuses it: "+p.CheckErr)
	case p.Check != nil:
		lines = append(lines, fmt.Sprintf("The rewriter's dry run accepts it: %d state file(s) (%d bytes declared) copied beside the new _metadata.",
			p.Check.CopiedFiles, p.Check.CopiedBytes))
	}
	return lines
}

// RewriteDest proposes where a rewrite of savepoint src for flow goes: a
// new directory beside it when it lies in a configured savepoint
// directory, else in the first one, named after the source and the flow.
func RewriteDest(cfg *config.Config, flow, src string) string {
	src = flink.CanonicalPath(src)
	if src == "" || len(cfg.SavepointDirs) == 0 {
		return ""
	}
	name := src[strings.LastIndexByte(src, '/')+1:] + "-dr-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, flow)
	if flink.UnderSavepointDir(cfg.SavepointDirs, src) {
		return src[:strings.LastIndexByte(src, '/')+1] + name
	}
	return strings.TrimRight(flink.CanonicalPath(cfg.SavepointDirs[0]), "/") + "/" + name
}
