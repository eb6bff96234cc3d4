package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// RestoreChoices offers the newest limit catalog entries that may be
// restored (completed, or of unknown status), judged against flow:
// usable first, then unknown, then unusable, newest first within each
// (reads only). err is the first judgement that failed; the list is
// complete even then, with those entries model.VerdictUnknown.
func (c *Catalog) RestoreChoices(ctx context.Context, flow string, limit int) ([]model.SavepointChoice, error) {
	all, err := c.Store.Savepoints(ctx, storage.SavepointFilter{Limit: 4 * limit})
	if err != nil {
		return nil, err
	}
	var sps []model.Savepoint
	for _, sp := range all {
		if (sp.Status == model.SavepointCompleted || sp.Status == model.SavepointUnknown) && len(sps) < limit {
			sps = append(sps, sp)
		}
	}
	verdicts, judgeErr := c.UsabilityOf(ctx, sps, flow)
	out := make([]model.SavepointChoice, len(sps))
	for i, sp := range sps {
		out[i] = model.SavepointChoice{Savepoint: sp, Verdict: model.VerdictUnknown}
		if u, ok := verdicts[sp.ID]; ok {
			out[i].Verdict, out[i].Why = u.Verdict, u.Why()
		}
	}
	rank := map[model.Verdict]int{model.VerdictUsable: 0, model.VerdictUnknown: 1, model.VerdictUnusable: 2}
	// Stable: the store's order (newest first) holds within a verdict.
	slices.SortStableFunc(out, func(a, b model.SavepointChoice) int { return cmp.Compare(rank[a.Verdict], rank[b.Verdict]) })
	return out, judgeErr
}

// Jars lists the jars uploaded to a Flink target, newest upload first
// (a read), each with its entry classes.
func (c *Catalog) Jars(ctx context.Context, target string) ([]flink.Jar, error) {
	ft, err := c.target(target)
	if err != nil {
		return nil, err
	}
	jars, err := c.client(ft.RestURL).Jars(ctx)
	slices.SortStableFunc(jars, func(a, b flink.Jar) int { return cmp.Compare(b.Uploaded, a.Uploaded) })
	return jars, err
}

// ErrNoUsableSavepoint: none of the newest entries is judged usable for
// the flow (an entry of unknown verdict is not picked: a drill must
// rehearse a restore that would work).
var ErrNoUsableSavepoint = errors.New("no usable savepoint in the catalog")

// NewestUsable is the newest catalog entry judged usable for flow among
// the limit newest that may be restored (reads only).
func (c *Catalog) NewestUsable(ctx context.Context, flow string, limit int) (model.Savepoint, error) {
	choices, err := c.RestoreChoices(ctx, flow, limit)
	if len(choices) > 0 && choices[0].Verdict == model.VerdictUsable {
		return choices[0].Savepoint, nil
	}
	if err != nil {
		return model.Savepoint{}, fmt.Errorf("%w for flow %s among the newest %d (some could not be judged: %v)", ErrNoUsableSavepoint, flow, limit, err)
	}
	return model.Savepoint{}, fmt.Errorf("%w for flow %s among the newest %d", ErrNoUsableSavepoint, flow, limit)
}
