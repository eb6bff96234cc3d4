package failover

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

func (rb Book) translateGroup(ctx context.Context, w audit.Written, r *runbook.Run, idx int, s runbook.Step, who runbook.Actor) (any, error) {
	_, dr := rb.Monitor.Clients(r.Flow)
	reason := fmt.Sprintf("failover run %d step %d", r.ID, idx+1)
	group := s.Group // the DR group: in a drill, its temporary one
	group = kindOf(r.Plan).DRGroup(r.ID, group)
	// Resumed after a crash or a failed commit: an earlier attempt's change
	// is finished, not made again (a new translation could differ, and
	// would record the already translated offsets as the ones to undo to).
	earlier, err := rb.Store.GroupChanges(ctx, r.Flow, group)
	if err != nil {
		return nil, err
	}
	for _, c := range earlier { // newest first
		if c.Reason != reason {
			continue
		}
		if c.Status == "applied" {
			return groupResumed{ChangeID: c.ID, Changes: c.Changes, Note: "applied by an earlier attempt"}, nil
		}
		// Interrupted, or failed (perhaps after Kafka took the commit):
		// the same offsets again, with the previous ones it recorded.
		c, err := effect.FinishInterruptedChange(ctx, w, rb.Store, dr, c)
		return groupResumed{ChangeID: c.ID, Changes: c.Changes, Note: "an earlier attempt's change, committed again"}, err
	}
	plan, err := rb.groupPlan(ctx, r.Flow, s)
	if err != nil {
		return nil, err
	}
	var untranslatable []string
	var reread int64
	for _, row := range plan.Rows {
		if !row.Translation.Translated() {
			untranslatable = append(untranslatable, fmt.Sprintf("%s (%s)", mm2.TPKey(row.Source), row.Translation.Method))
		}
		reread += row.Translation.RereadMax
	}
	if len(untranslatable) > 0 && !s.AllowPartial {
		return groupUntranslatable{Untranslatable: untranslatable}, fmt.Errorf("%d partition(s) cannot be translated: %s", len(untranslatable), strings.Join(untranslatable, ", "))
	}
	change, err := effect.ApplyOffsets(ctx, w, rb.Store, dr, r.Flow, group, plan.Proposed(), who.Name, reason)
	return groupTranslated{From: plan.From, Group: group, ChangeID: change.ID, Changes: change.Changes, Untranslatable: untranslatable, RereadMax: reread}, err
}

// translate-group's results: the change it committed (groupTranslated),
// or an earlier attempt's it found (groupResumed), or the partitions it
// could not translate (groupUntranslatable). Their fields are in the
// order the maps they replaced were written, so the stored bytes are the
// same; V is the shape's version (absent: the first).
type (
	groupTranslated struct {
		ChangeID       int64                  `json:"change_id"`
		Changes        []storage.OffsetChange `json:"changes"`
		From           string                 `json:"from"`
		Group          string                 `json:"group"`
		RereadMax      int64                  `json:"reread_max"`
		Untranslatable []string               `json:"untranslatable"`
		V              int                    `json:"v,omitempty"`
	}
	groupResumed struct {
		ChangeID int64                  `json:"change_id"`
		Changes  []storage.OffsetChange `json:"changes"`
		Note     string                 `json:"note"`
		V        int                    `json:"v,omitempty"`
	}
	groupUntranslatable struct {
		Untranslatable []string `json:"untranslatable"`
		V              int      `json:"v,omitempty"`
	}
)

// groupPlan previews a translate-group step: the group's own primary
// offsets, or the offsets read from the savepoint it names (which must be
// in the savepoint catalog, read).
func (rb Book) groupPlan(ctx context.Context, flow string, s runbook.Step) (*model.GroupPlan, error) {
	tr := rb.Monitor.Translator(flow)
	if s.FromSavepoint == "" {
		return tr.Plan(ctx, s.Group)
	}
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(s.FromSavepoint))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("savepoint %s is not in the savepoint catalog: register it (Savepoints page) so its offsets are read", s.FromSavepoint)
	}
	if err != nil {
		return nil, err
	}
	offs, err := sp.Offsets()
	if err != nil {
		return nil, err
	}
	if offs == nil {
		return nil, fmt.Errorf("the offsets of savepoint %s could not be read: %s", sp.Path, sp.ReadError)
	}
	offsets := map[model.TP]int64{}
	for key, off := range offs {
		tp, err := mm2.ParseTPKey(key)
		if err != nil {
			return nil, fmt.Errorf("savepoint %s: %w", sp.Path, err)
		}
		offsets[tp] = off
	}
	return tr.PlanOffsets(ctx, s.Group, offsets, translation.FromSavepoint(sp.Path))
}

func (rb Book) previewGroup(ctx context.Context, flow string, s runbook.Step) ([]string, error) {
	plan, err := rb.groupPlan(ctx, flow, s)
	if err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("Primary offsets from %s. DR group %s is %s with %d member(s).", plan.From, s.Group, plan.DRState, plan.DRMembers)}
	var reread int64
	for _, row := range plan.Rows {
		now := "none"
		if row.Current != nil {
			now = fmt.Sprint(*row.Current)
		}
		if row.Translation.Translated() {
			reread += row.Translation.RereadMax
			lines = append(lines, fmt.Sprintf("%s: %s → %d (%s, primary %d, may re-read ≤ %d)", mm2.TPKey(row.DR), now,
				row.Translation.Offset, row.Translation.Method, row.Offset, row.Translation.RereadMax))
		} else {
			verdict := "NOT MOVED"
			if !s.AllowPartial {
				verdict = "THE STEP WILL FAIL"
			}
			lines = append(lines, fmt.Sprintf("%s: %s, cannot translate primary %d (%s): %s", mm2.TPKey(row.DR), now, row.Offset, row.Translation.Method, verdict))
		}
	}
	return append(lines, fmt.Sprintf("At most %d record(s) in all may be processed twice; none is skipped. The previous offsets are recorded for undo.", reread)), nil
}
