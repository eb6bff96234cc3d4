package monitor

import (
	"context"
	"slices"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
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
	var drStart func(model.TP) (int64, bool)
	var drStartsAt time.Time
	if st := fm.drStarts.Load(); st != nil {
		drStart, drStartsAt = func(tp model.TP) (int64, bool) { return st.offs.Get(tp.Topic, tp.Partition) }, st.at
	}
	tr := translation.NewGroupTranslator(translation.GroupTranslator{Flow: fm.flow.Name, Alias: fm.flow.SourceAlias, Policy: fm.topics.Policy,
		Index: fm.state.Syncs, Store: m.store}, nil, nil)
	// The stored offsets are read again only when this process wrote some
	// since, and at least every GroupOffsetsEvery in any case (a write by
	// another process, say a restore, has no version here).
	in := fm.groupInputs
	if in == nil || in.Cap != max(limit, 1) || in.Version != m.store.GroupRowsVersion() || s.At.Sub(in.At) >= GroupOffsetsEvery || s.At.Before(in.At) {
		in = tr.ReadQualityInputs(ctx, configured, limit, s.At)
		fm.groupInputs = nil
		if in.Complete() {
			fm.groupInputs = in
		}
	}
	return tr.Quality(ctx, translation.QualityOptions{Configured: configured, Cap: limit, Inputs: in, Lags: s.Partitions,
		PrimaryDown: s.Source.Checked && !s.Source.OK, DRStart: drStart, DRStartsAt: drStartsAt, Now: s.At})
}

// drStarts are a flow's DR log starts as last read: a group translated to
// an offset below its partition's start would find its records deleted in
// DR (retention or a truncation there) and resume as its auto.offset.reset
// says.
type drStarts struct {
	at   time.Time
	offs kafka.Offsets // by DR topic
}

// readDRStarts reads the log starts of the DR topics of snap's partitions
// (every GroupOffsetsEvery, beside the primary's group offsets): a
// refresh reads DR's ends only, and a start moves rarely.
func (m *Monitor) readDRStarts(ctx context.Context, fm *flowMonitor, snap *flowstate.FlowSnapshot) error {
	var remote []string
	for i := range snap.Partitions {
		if t := snap.Partitions[i].RemoteTopic.String(); len(remote) == 0 || remote[len(remote)-1] != t {
			remote = append(remote, t)
		}
	}
	slices.Sort(remote)
	remote = slices.Compact(remote)
	dr := m.clients[fm.flow.Target]
	leaders, _, err := kafka.TopicLayout(ctx, dr, remote)
	if err != nil {
		return err
	}
	offs, err := kafka.ListOffsets(ctx, dr, leaders, kafka.StartOffset)
	if err != nil {
		return err
	}
	fm.drStarts.Store(&drStarts{at: m.Now(), offs: offs})
	return nil
}
