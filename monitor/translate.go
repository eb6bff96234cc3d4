package monitor

import (
	"context"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The translation reads the pages ask of a flow, answered in model's
// values: a page names the flow and never holds a translator, or the
// clients behind it. Each fails with storage.ErrNotFound for a flow the
// monitor does not know.

// noFlow is the error for a flow the monitor does not know.
func noFlow(flow string) error {
	return fmt.Errorf("no flow named %q: %w", flow, storage.ErrNotFound)
}

// KnownGroups lists flow's consumer groups (translation.GroupTranslator's
// KnownGroups): the list is usable even when err is not nil.
func (m *Monitor) KnownGroups(ctx context.Context, flow string, primaryTimeout time.Duration) ([]model.KnownGroup, error) {
	tr := m.Translator(flow)
	if tr == nil {
		return nil, noFlow(flow)
	}
	return tr.KnownGroups(ctx, primaryTimeout)
}

// TranslateOffset is flow's translation rule for source partition tp at
// offset: its DR name and DR offset through the sync index.
func (m *Monitor) TranslateOffset(flow string, tp model.TP, offset int64) (model.TP, model.Translation, error) {
	tr := m.Translator(flow)
	if tr == nil {
		return model.TP{}, model.Translation{}, noFlow(flow)
	}
	dr, t := tr.Translate(tp, offset, false)
	return dr, t, nil
}

// GroupPlan previews translating flow's consumer group (reads only).
func (m *Monitor) GroupPlan(ctx context.Context, flow, group string) (*model.GroupPlan, error) {
	tr := m.Translator(flow)
	if tr == nil {
		return nil, noFlow(flow)
	}
	return tr.Plan(ctx, group)
}

// SeekDR finds, for each partition of topics in flow's DR cluster, the
// first offset at or after ms (a read).
func (m *Monitor) SeekDR(ctx context.Context, flow string, ms int64, topics ...string) (map[model.TP]model.SeekResult, error) {
	tr := m.Translator(flow)
	if tr == nil {
		return nil, noFlow(flow)
	}
	return tr.SeekDR(ctx, ms, topics...)
}
