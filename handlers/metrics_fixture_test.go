package handlers

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// fakeSource stands in for the monitor: fixed snapshots, and a count of
// the kafka_mirror_* builds (each reads the thresholds once).
type fakeSource struct {
	snaps  atomic.Pointer[[]*flowstate.FlowSnapshot]
	builds atomic.Int32
	reads  atomic.Int32
	// gate, when set, holds every build until it is closed.
	gate chan struct{}
}

func newFakeSource(snaps []*flowstate.FlowSnapshot) *fakeSource {
	f := &fakeSource{}
	f.snaps.Store(&snaps)
	return f
}

func (f *fakeSource) Snapshots() []*flowstate.FlowSnapshot { f.reads.Add(1); return *f.snaps.Load() }

func (f *fakeSource) Thresholds() config.Thresholds {
	f.builds.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	return config.Thresholds{Warning: config.LagThreshold{Lag: config.Duration(30 * time.Second)},
		Critical: config.LagThreshold{Lag: config.Duration(2 * time.Minute)}}
}

func i64(v int64) *int64 { return &v }

// syntheticSnapshots is one MM2 flow of n partitions in topics of 100,
// as a refresh publishes it: every 97th partition's lag unknown, every
// 89th known in messages only with a lower bound on its age; plus a small
// Cluster Linking flow whose source was never checked.
func syntheticSnapshots(n int) []*flowstate.FlowSnapshot {
	at := time.UnixMilli(1_800_000_000_000)
	hb := 1500 * time.Millisecond
	s := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "primary->dr", Kind: "mm2"}, At: at, Status: model.FlowStatusWarning,
		HeartbeatAge: &hb, Source: model.Reachability{Checked: true, OK: true}, Target: model.Reachability{Checked: true, OK: false},
		DataLost: 1, LossSuspected: 2, LostOffsetsTotal: 12345, LossIncidentsTotal: 3}
	for i := range n {
		p := model.PartitionLag{Topic: model.Intern(fmt.Sprintf("orders.v%d", i/100)), Partition: int32(i % 100)}
		switch {
		case i%97 == 5:
		case i%89 == 7:
			p.LagMessages, p.LagMsAtLeast = model.Known(int64(i)), model.Known(int64(90_000+i))
		default:
			p.LagMessages, p.LagMs = model.Known(int64(i%1000)*37), model.Known(int64(i%500)*11)
		}
		s.Partitions = append(s.Partitions, p)
	}
	var rpo, maxMsgs int64
	for _, p := range s.Partitions {
		if !p.LagMessages.Known || !p.LagMs.Known {
			s.Unknown++
		}
		if p.LagMessages.Known {
			maxMsgs = max(maxMsgs, p.LagMessages.V)
		}
		if p.LagMs.Known {
			rpo = max(rpo, p.LagMs.V)
		} else if p.LagMsAtLeast.Known {
			rpo = max(rpo, p.LagMsAtLeast.V)
		}
	}
	s.RPOMs, s.MaxLagMessages = &rpo, &maxMsgs
	s.Groups = groupSnapshot().Groups // the pre-encoded group series too
	link := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "link", Kind: "cluster-link"}, At: at, Status: model.FlowStatusUnknown,
		Target:     model.Reachability{Checked: true, OK: true},
		Partitions: []model.PartitionLag{{Topic: model.Intern(`we"ird\topic`), Partition: 0, LagMessages: model.Known(0), LagMs: model.Known(0)}, {Topic: model.Intern("gone"), Partition: 0}}}
	return []*flowstate.FlowSnapshot{s, link}
}
