package failback

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
)

// What a failback's reverse flow copies, and where each DR partition's
// records lie on the primary, by the flow's replication policy.
//
// Identity: DR's topics carry the primary's names. The reverse flow copies
// each from the failover's cut (DR's log end when the forward mirror
// stopped) into the same topic on the primary; a partition added in DR
// since then from 0.
//
// Default: DR holds "<primary>.<topic>", the forward flow's copies, which
// the reverse flow never copies back (MM2 takes them for a cycle), and its
// own "<topic>", which it copies whole into "<dr>.<topic>" on the primary.
// Its source starts at the earliest offset (its Connect offsets reset):
// what a previous failback copied back is copied again, a duplicate in
// "<dr>.<topic>" rather than a gap. The forward copies must hold nothing
// past the cut: a record written into one in DR after the failover would
// never reach the primary, so the failback refuses it (grownPastCut).
type reverseScope struct {
	policy                mm2.ReplicationPolicy
	primaryAlias, drAlias string
	// cut is DR's log end at the failover's cut per DR partition of the
	// mirrored topics (their DR names).
	cut       map[model.TP]int64
	cutTopics map[string]bool
}

// reverseScope reads the cut of the failover r undoes (reverseStart's
// checks: every partition's DR end known).
func (rb Book) reverseScope(ctx context.Context, r *runbook.Run) (reverseScope, error) {
	cut, err := rb.reverseStart(ctx, r)
	if err != nil {
		return reverseScope{}, err
	}
	flow := rb.Config.Flow(r.Flow)
	return reverseScope{policy: flowstate.TopicsOf(flow).Policy, primaryAlias: flow.SourceAlias, drAlias: flow.TargetAlias,
		cut: cut, cutTopics: topicSet(cut)}, nil
}

// copies says whether the reverse flow copies DR partition tp, and from
// which offset the records written in DR since the failover start there.
func (s reverseScope) copies(tp model.TP) (from int64, ok bool) {
	if s.policy.Identity {
		from, ok = s.cut[tp]
		return from, ok || s.cutTopics[tp.Topic]
	}
	if _, remote := s.policy.UpstreamTopic(s.primaryAlias, tp.Topic); remote {
		return 0, false
	}
	return 0, true
}

// primaryOf is the primary partition that holds DR partition tp's
// records: the same one under the identity policy; under the default
// policy the original of a forward copy, or the reverse flow's copy of a
// DR topic.
func (s reverseScope) primaryOf(tp model.TP) model.TP {
	if s.policy.Identity {
		return tp
	}
	if up, ok := s.policy.UpstreamTopic(s.primaryAlias, tp.Topic); ok {
		return model.TP{Topic: up, Partition: tp.Partition}
	}
	return model.TP{Topic: s.policy.RemoteTopic(s.drAlias, tp.Topic), Partition: tp.Partition}
}

// startOffsets are the reverse source's start offsets the set-up sets:
// the cut under the identity policy; none under the default policy, whose
// source is reset to the earliest offset.
func (s reverseScope) startOffsets() map[model.TP]int64 {
	if s.policy.Identity {
		return s.cut
	}
	return nil
}

// copiesOnPrimary are, under the default policy, the primary's topics the
// reverse flow wrote DR's own topics into ("<dr>.<topic>"), for those of
// ends (DR's log ends) that hold anything; none under the identity policy,
// whose copies are the primary's own topics.
func (s reverseScope) copiesOnPrimary(ends map[model.TP]int64) []string {
	if s.policy.Identity {
		return nil
	}
	var out []string
	for tp, end := range ends {
		if _, copied := s.copies(tp); copied && end > 0 && !slices.Contains(out, s.primaryOf(tp).Topic) {
			out = append(out, s.primaryOf(tp).Topic)
		}
	}
	slices.Sort(out)
	return out
}

// drTopics are the DR topics whose log ends the reverse flow's progress
// reads: the cut's, and under the default policy DR's own topics that
// the reverse flow copies (listed now, as the reverse MM2 source lists
// them: the flow's filter, no internal topic, no cycle).
func (rb Book) drTopics(ctx context.Context, r *runbook.Run, s reverseScope) ([]string, error) {
	topics := slices.Sorted(maps.Keys(s.cutTopics))
	if s.policy.Identity {
		return topics, nil
	}
	_, dr := rb.Monitor.Clients(r.Flow)
	own, err := monitor.MirroredTopics(ctx, reverseFlowOf(rb.Config.Flow(r.Flow)), dr)
	if err != nil {
		return nil, fmt.Errorf("listing DR's own topics the reverse flow copies: %w", err)
	}
	for _, t := range own {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	return topics, nil
}

// grownPastCut names the DR partitions the reverse flow does not copy
// whose log end passed the cut: records (or transaction markers) written
// into the forward flow's copies in DR after the failover, which would
// never reach the primary.
func (s reverseScope) grownPastCut(ends map[model.TP]int64) []string {
	var out []string
	for tp, end := range ends {
		if _, copied := s.copies(tp); copied {
			continue
		}
		if cut := s.cut[tp]; end > cut {
			out = append(out, fmt.Sprintf("%s (DR end %d, %d at the cut: %d offset(s) written in DR into the copy of the primary's %s, which MM2 does not copy back under the default policy)",
				mm2.TPKey(tp), end, cut, end-cut, s.primaryOf(tp).Topic))
		}
	}
	slices.Sort(out)
	return out
}
