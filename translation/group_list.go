package translation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
)

// SourceGroups lists the consumer groups the primary knows (a read). It
// fails when the translator has no primary client or the primary does not
// answer within ctx.
func (t *GroupTranslator) SourceGroups(ctx context.Context) ([]string, error) {
	if t.source == nil {
		return nil, errNoSource
	}
	groups, err := kafka.Groups(ctx, t.source)
	if err != nil {
		return nil, kafka.Explained(ctx, t.source, "the primary", time.Time{}, err)
	}
	return groups, nil
}

// SeekDR finds, for each partition of topics in DR, the first offset at
// or after ms (a read: OffsetsInitializer.timestamp's answer).
func (t *GroupTranslator) SeekDR(ctx context.Context, ms int64, topics ...string) (map[model.TP]model.SeekResult, error) {
	return kafka.SeekByTimestamp(ctx, t.target, ms, topics...)
}

// errNoSource: the flow's translator was built without a primary client.
var errNoSource = errors.New("no client for the primary cluster")

// KnownGroups lists the groups of the flow, sorted by name: every group
// with a stored checkpoint (with its newest checkpoint's time), and the
// primary's groups when it answers within primaryTimeout (reads only).
// The list is usable even when err is not nil: err says why the primary's
// groups are missing (or why the stored checkpoints could not be read).
func (t *GroupTranslator) KnownGroups(ctx context.Context, primaryTimeout time.Duration) ([]model.KnownGroup, error) {
	byName := map[string]*model.KnownGroup{}
	var errs []error
	if groups, err := t.Store.CheckpointGroups(ctx, t.Flow); err != nil {
		errs = append(errs, fmt.Errorf("stored checkpoints: %w", err))
	} else {
		for name, ms := range groups {
			byName[name] = &model.KnownGroup{Name: name, LastCheckpointMs: ms}
		}
	}
	lctx, cancel := context.WithTimeout(ctx, primaryTimeout)
	defer cancel()
	if groups, err := t.SourceGroups(lctx); err != nil {
		errs = append(errs, fmt.Errorf("the primary's groups: %w", err))
	} else {
		for _, name := range groups {
			g := byName[name]
			if g == nil {
				g = &model.KnownGroup{Name: name}
				byName[name] = g
			}
			g.OnPrimary = true
		}
	}
	out := make([]model.KnownGroup, 0, len(byName))
	for _, g := range byName {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b model.KnownGroup) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}
