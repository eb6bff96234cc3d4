package failback

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// ReverseActive says whether failback r has reverse connectors now: its
// set-up-reverse step started and restart-forward is not done.
func ReverseActive(r *runbook.Run) bool {
	if r.Plan.Kind != runbook.PlanFailback {
		return false
	}
	kinds := kindsOf(r.Plan)
	up, fwd := slices.Index(kinds, KindSetUpReverse), slices.Index(kinds, KindRestartForward)
	started := up >= 0 && up < len(r.Steps) && r.Steps[up].Status != model.StepPending
	return started && (fwd < 0 || fwd >= len(r.Steps) || r.Steps[fwd].Status != model.StepDone)
}

// ReverseFlow reads the reverse flow of failback r now; nil when r has no
// reverse connectors (ReverseActive).
func (rb Book) ReverseFlow(ctx context.Context, r *runbook.Run) *model.ReverseView {
	if !ReverseActive(r) {
		return nil
	}
	v := &model.ReverseView{At: rb.Now()}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	f, err := rb.readReverse(ctx, r)
	v.States = f.States
	if err != nil {
		v.Err = err.Error()
		return v
	}
	tps := slices.Collect(maps.Keys(f.Ends))
	mm2.SortTPs(tps)
	var tails []kafka.Range
	rowOf := map[model.TP]int{} // the rows of the tails
	if grown := f.Scope.grownPastCut(f.Ends); len(grown) > 0 {
		v.Err = "written in DR where the reverse flow never copies it: " + strings.Join(grown, "; ")
	}
	for _, tp := range tps {
		end := f.Ends[tp]
		from, copied := f.from(tp)
		if !copied || end <= from {
			continue // nothing written there since the failover, or not copied back
		}
		row := model.ReverseRow{Partition: mm2.TPKey(tp), Cut: from, DREnd: end, Behind: end - from}
		if n, ok := f.Next[tp]; ok {
			row.Next, row.Behind = &n, max(end-n, 0)
			if row.Behind > 0 && row.Behind <= markerTail {
				tails = append(tails, kafka.Range{TP: tp, From: n, To: end})
				rowOf[tp] = len(v.Rows)
			}
		} else {
			v.Unknown++
		}
		v.Rows = append(v.Rows, row)
	}
	// A short tail of transaction markers only is caught up (MM2 never
	// copies markers), as wait-reverse-caught-up judges it.
	if len(tails) > 0 {
		found, err := rb.firstRecords(ctx, rb.Config.Flow(r.Flow), tails)
		if err != nil {
			v.Err = "reading DR's last offsets for records not yet copied back: " + err.Error()
			return v
		}
		for tp, i := range rowOf {
			if _, data := found[tp]; !data {
				v.Rows[i].Behind, v.Rows[i].MarkersOnly = 0, true
			}
		}
	}
	for _, row := range v.Rows {
		v.Behind += row.Behind
	}
	slices.SortStableFunc(v.Rows, func(a, b model.ReverseRow) int { // behind first, each in partition order
		switch {
		case a.Behind > 0 && b.Behind == 0:
			return -1
		case a.Behind == 0 && b.Behind > 0:
			return 1
		}
		return 0
	})
	v.Heartbeat, err = rb.reverseHeartbeat(ctx, r)
	if err != nil {
		v.HeartbeatErr = err.Error()
	}
	return v
}

// reverseHeartbeat reads the newest heartbeat on the primary's copy of
// DR's heartbeats topic (<dr>.heartbeats under either policy): the proof
// that the reverse flow replicates end to end, as the forward flow's is.
func (rb Book) reverseHeartbeat(ctx context.Context, r *runbook.Run) (*time.Time, error) {
	flow := rb.Config.Flow(r.Flow)
	topic := flowstate.TopicsOf(flow).Policy.HeartbeatsTopic(flow.TargetAlias)
	primary, _ := rb.Monitor.Clients(r.Flow)
	bounds, err := kafka.ListBounds(ctx, primary, topic)
	if err != nil {
		return nil, fmt.Errorf("reading %s on the primary: %w", topic, err)
	}
	var tails []kafka.Range
	for tp, b := range bounds {
		if b.End > b.Start {
			tails = append(tails, kafka.Range{TP: tp, From: max(b.End-markerTail, b.Start), To: b.End})
		}
	}
	if len(tails) == 0 {
		return nil, fmt.Errorf("no heartbeat on the primary's %s yet", topic)
	}
	opts, err := kafka.ClientOptions(flow.Source, rb.Config.Clusters[flow.Source], rb.Log)
	if err != nil {
		return nil, err
	}
	var newest int64
	err = kafka.ReadRecords(ctx, opts, tails, kafka.ReadLimits{MaxRecords: int64(len(tails) * markerTail), Idle: 10 * time.Second}, func(rec *kafka.Record) error {
		if h, err := mm2.DecodeHeartbeat(rec.Key, rec.Value); err == nil && h.SourceAlias == flow.TargetAlias {
			newest = max(newest, h.EmittedMs)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %s on the primary: %w", topic, err)
	}
	if newest == 0 {
		return nil, fmt.Errorf("no heartbeat from %s among the last records of the primary's %s", flow.TargetAlias, topic)
	}
	t := time.UnixMilli(newest)
	return &t, nil
}
