package failover

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
)

// recordCut notes, once the mirror has stopped, where each mirrored
// partition stood: DR's log end, the newest offset sync below it and MM2's
// committed position (model.CutPosition). After the failover they tell
// which of the old primary's records never reached DR. It reads DR and
// writes the console's database, nothing else. It never fails the step:
// the mirror is stopped and the failover must go on; what it could not
// read is recorded as unknown, and the lost records then read unknown.
func (rb Book) recordCut(ctx context.Context, runID int64, flow string) cutRecorded {
	snap := rb.Monitor.Snapshot(flow)
	_, dr := rb.Monitor.Clients(flow)
	if snap == nil || dr == nil || len(snap.Partitions) == 0 {
		return cutRecorded{Cut: "not recorded: the console knows no mirrored partition of this flow"}
	}
	now := rb.Now().UnixMilli()
	var remote []string
	for _, p := range snap.Partitions { // sorted by topic
		if len(remote) == 0 || remote[len(remote)-1] != p.RemoteTopic.String() {
			remote = append(remote, p.RemoteTopic.String())
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ends, endErr := kafka.ListBounds(rctx, dr, remote...)
	stable, stableErr := kafka.StableEnds(rctx, dr, remote...)
	connect := map[model.TP]int64{}
	cos, coErr := rb.Store.ConnectOffsets(ctx, flow)
	for _, c := range cos {
		connect[model.TP{Topic: c.Topic, Partition: c.Partition}] = c.LastOffset
	}
	cut := make([]model.CutPosition, 0, len(snap.Partitions))
	unknown := 0
	for _, p := range snap.Partitions {
		tp := model.TP{Topic: p.Topic.String(), Partition: p.Partition}
		c := model.CutPosition{Topic: p.Topic.String(), Partition: p.Partition, RemoteTopic: p.RemoteTopic.String(), AtMs: now}
		if b, ok := ends[model.TP{Topic: p.RemoteTopic.String(), Partition: p.Partition}]; ok {
			c.DREnd = &b.End
			if lso, ok := stable[model.TP{Topic: p.RemoteTopic.String(), Partition: p.Partition}]; ok {
				c.DRStableEnd = &lso
			}
			if s, ok := rb.syncBelow(flow, tp, *c.CommittedEnd()); ok {
				c.SyncUp, c.SyncDown = &s.Upstream, &s.Downstream
			}
		} else {
			unknown++
		}
		if last, ok := connect[tp]; ok {
			c.ConnectLast = &last
		}
		cut = append(cut, c)
	}
	n := len(cut)
	res := cutRecorded{Partitions: &n, DREndUnknown: &unknown,
		DRReadError: errText(endErr), DRStableReadError: errText(stableErr), ConnectOffsetsError: errText(coErr)}
	if err := rb.Store.SaveFailoverCut(context.WithoutCancel(ctx), runID, cut); err != nil {
		res.Cut = "not recorded: " + err.Error()
		rb.Log.Error("recording the failover cut", "run", runID, "err", err)
	}
	return res
}

// cutRecorded is what recordCut says of the cut it saved (or could not).
// Its fields are in the order the map it replaced was written, so the
// stored bytes are the same.
type cutRecorded struct {
	Cut                 string `json:"cut,omitempty"`
	ConnectOffsetsError string `json:"cut_connect_offsets_error,omitempty"`
	DREndUnknown        *int   `json:"cut_dr_end_unknown,omitempty"`
	DRReadError         string `json:"cut_dr_read_error,omitempty"`
	DRStableReadError   string `json:"cut_dr_stable_read_error,omitempty"`
	Partitions          *int   `json:"cut_partitions,omitempty"`
}

// errText is err's text; "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// syncBelow is tp's newest offset sync whose downstream offset is below
// drEnd: the last copied record the syncs name. The newest syncs nearly
// always hold it; the whole history is searched otherwise.
func (rb Book) syncBelow(flow string, tp model.TP, drEnd int64) (model.OffsetSync, bool) {
	hist, total := rb.Monitor.SyncHistory(flow, tp, 64)
	if s, ok := newestBelow(hist, drEnd); ok || len(hist) == total {
		return s, ok
	}
	hist, _ = rb.Monitor.SyncHistory(flow, tp, total)
	return newestBelow(hist, drEnd)
}

// newestBelow searches hist (oldest first) from its end.
func newestBelow(hist []model.OffsetSync, drEnd int64) (model.OffsetSync, bool) {
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Downstream < drEnd {
			return hist[i], true
		}
	}
	return model.OffsetSync{}, false
}
