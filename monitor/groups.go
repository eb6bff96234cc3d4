package monitor

import (
	"context"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/translation"
)

// GroupsPerFlow is how many consumer groups' failover quality a refresh
// computes per flow (Monitor.GroupCap unless set): the flow's configured
// groups first, then those MM2 checkpointed, by name. The rest are
// counted and named on the groups page, and the flow's worst group is
// then unknown: never a smaller figure than the truth.
const GroupsPerFlow = config.GroupsPerFlow

// groupQuality computes the failover quality of fm's consumer groups for
// snapshot s (MM2 flows only): from storage and the sync index, so a
// refresh asks no cluster for it, and the same while the primary is down.
func (m *Monitor) groupQuality(ctx context.Context, fm *flowMonitor, s *flowstate.FlowSnapshot) *model.FlowGroups {
	if fm.link != nil {
		return nil
	}
	limit := m.GroupCap
	if limit <= 0 {
		limit = GroupsPerFlow
	}
	configured := make([]model.GroupQuality, 0, len(fm.flow.Groups))
	for _, g := range fm.flow.Groups {
		configured = append(configured, model.GroupQuality{Group: g.Name, Critical: g.Critical, Objective: g.ReprocessObjective})
	}
	tr := translation.NewGroupTranslator(translation.GroupTranslator{Flow: fm.flow.Name, Alias: fm.flow.SourceAlias, Policy: fm.topics.Policy,
		Index: fm.state.Syncs, Store: m.store}, nil, nil)
	return tr.Quality(ctx, translation.QualityOptions{Configured: configured, Cap: limit, Lags: s.Partitions,
		PrimaryDown: s.Source.Checked && !s.Source.OK, Now: s.At})
}
