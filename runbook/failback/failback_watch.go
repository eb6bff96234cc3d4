package failback

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
)

// The reverse flow as a flow of its own: while a failback's reverse
// connectors copy DR to the primary (set-up-reverse started, stop-reverse
// not done), the monitor watches "<flow>~reverse" like a configured flow:
// overview card, flow page, lag, RPO, syncs, heartbeats, /metrics and RPO
// history. Which runs have one is read from the store, so every console on
// the same database, and one restarted, watches the same reverse flows.

// ReverseFlowSuffix ends a reverse flow's name. Configured flow names
// cannot contain "~" (config's flow name rule), so the two never collide.
const ReverseFlowSuffix = "~reverse"

// ReverseFlowName is the name of flow's reverse flow.
func ReverseFlowName(flow string) string { return flow + ReverseFlowSuffix }

// reverseFlowOf is f's reverse flow DR -> primary as set-up-reverse
// creates it (mm2.ForwardFlow.ReverseConfigs): aliases and clusters
// swapped, the same policy, separator, topic filter and offset-syncs
// location; its internal topics derived by the policy (the forward flow's
// overrides name the forward topics). Its Connect positions are in the
// forward flow's Connect offsets topic, on DR (config.Flow.ReverseOf).
//
// A Cluster Linking flow's reverse flow is the primary's mirrors of DR's
// topics, read from the primary's REST API, from truncate-and-restore
// until reverse-to-primary is done.
func reverseFlowOf(f *config.Flow) *config.Flow {
	if f.IsClusterLink() {
		return &config.Flow{Name: ReverseFlowName(f.Name), ReverseOf: f.Name, Kind: config.FlowClusterLink,
			Source: f.Target, Target: f.Source, SourceAlias: f.TargetAlias, TargetAlias: f.SourceAlias,
			ReplicationPolicy: f.ReplicationPolicy, Separator: f.Separator, OffsetSyncsLocation: f.OffsetSyncsLocation,
			Topics: f.Topics, ClusterLink: f.ClusterLink.Primary, Objectives: f.Objectives}
	}
	return &config.Flow{Name: ReverseFlowName(f.Name), ReverseOf: f.Name, Kind: config.FlowMM2,
		Source: f.Target, Target: f.Source, SourceAlias: f.TargetAlias, TargetAlias: f.SourceAlias,
		ReplicationPolicy: f.ReplicationPolicy, Separator: f.Separator, LegacyInternalSeparator: f.LegacyInternalSeparator,
		Topics: f.Topics, OffsetSyncsLocation: f.OffsetSyncsLocation,
		ConnectOffsetsTopic: f.ConnectOffsetsTopic, ConnectURL: f.ConnectURL, Connectors: reverseNames(f),
		Objectives: f.Objectives}
}

// WatchReverseFlows makes the monitor watch exactly the reverse flows of
// the failbacks whose reverse connectors may be copying: set-up-reverse
// started and stop-reverse not done, whatever became of the run (one
// cancelled or failed in between still has its connectors); for Cluster
// Linking, truncate-and-restore-primary started and reverse-to-primary not
// done.
func (rb Book) WatchReverseFlows(ctx context.Context) error {
	if rb.Monitor == nil {
		return nil
	}
	rb.state().watchMu.Lock()
	defer rb.state().watchMu.Unlock()
	var want []*config.Flow
	// Which pair of steps brackets a reverse flow depends on the flow's kind.
	for _, w := range []struct {
		from, to    runbook.StepKind
		clusterLink bool
	}{{KindSetUpReverse, KindStopReverse, false}, {KindRestorePrimary, KindReverseToPrimary, true}} {
		flows, err := rb.Store.FlowsBetweenSteps(ctx, string(w.from), string(w.to))
		if err != nil {
			return err
		}
		for _, name := range flows {
			f := rb.Config.Flow(name)
			if f == nil || f.IsClusterLink() != w.clusterLink || (w.clusterLink && f.ClusterLink.Primary == nil) {
				continue
			}
			want = append(want, reverseFlowOf(f))
		}
	}
	return rb.Monitor.SetWatched(ctx, want)
}

// WatchReverseFlowsEvery runs WatchReverseFlows until ctx is done; a step
// of a failback also calls it when it starts and ends. Each pass also
// marks the failed-over flows (MarkFailedOver).
func (rb Book) WatchReverseFlowsEvery(ctx context.Context, interval time.Duration) {
	for {
		rb.watchReverse(ctx)
		rb.markFailedOver(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// watchReverse is WatchReverseFlows with its error logged.
func (rb Book) watchReverse(ctx context.Context) {
	if err := rb.WatchReverseFlows(ctx); err != nil && ctx.Err() == nil {
		rb.Log.Error("watching the reverse flows of failbacks", "err", err)
	}
}
