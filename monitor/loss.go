package monitor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// Data lost before replication.
//
// The source log start passing the console's replicated position is only a
// suspicion: that position is a lower bound, and MirrorMaker 2 may already
// have read records retention then deleted and still be writing them to DR.
// A gap is judged once MM2's position has moved past it, from the offset
// syncs MM2 wrote around it: between two syncs (u1→d1) and (u2→d2) of the
// same history, (u2-u1) - (d2-d1) source offsets have no DR record. MM2
// writes a sync whenever it skips a source offset, so a skip cannot hide
// between syncs. A confirmed loss is stored as an incident and stays
// flagged until an operator acknowledges it.

const (
	// lossClearRefreshes and lossClearAfter: when no sync after a gap exists
	// yet, "MM2 copied it all" must hold this long, so a skip sync still on
	// its way cannot be missed.
	lossClearRefreshes = 3
	lossClearAfter     = 10 * time.Second
	// lossConfirmRefreshes: a shortfall seen from Connect's position (when
	// no sync after the gap exists) must persist this many refreshes.
	lossConfirmRefreshes = 3
)

// lossSuspect is a gap of unreplicated source offsets deleted from the
// source, not judged yet.
type lossSuspect struct {
	first, last int64 // source offsets
	detected    time.Time
	anchor      model.OffsetSync // newest sync below first when first seen
	hasAnchor   bool
	passedSince time.Time // when MM2's position first passed the gap with no sync after it
	clear       int       // refreshes that saw everything copied
	short       int       // refreshes that saw a shortfall from Connect's position
	seen        uint64    // the last judge whose reading had the partition
}

// lossJudge tracks the gaps of one flow between refreshes.
type lossJudge struct {
	suspects map[model.TP]*lossSuspect
	judges   uint64 // judge calls so far: marks the suspects a reading still has
	// anchored is where each undecided gap's syncs begin, for retention
	// (another goroutine), which must keep them; copied under mu after
	// every judge that had gaps.
	mu       sync.Mutex
	anchored map[model.TP]model.SyncKey
}

// keepFrom returns, per partition with an undecided gap, the key of the
// first sync the judge still reads (the zero key, all of them, while the
// gap has no anchor yet).
func (j *lossJudge) keepFrom() map[model.TP]model.SyncKey {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.anchored
}

// publish copies the gaps' anchors for keepFrom.
func (j *lossJudge) publish() {
	var out map[model.TP]model.SyncKey
	if len(j.suspects) > 0 {
		out = make(map[model.TP]model.SyncKey, len(j.suspects))
		for tp, su := range j.suspects {
			var k model.SyncKey
			if su.hasAnchor {
				k = su.anchor.Key()
			}
			out[tp] = k
		}
	}
	j.mu.Lock()
	j.anchored = out
	j.mu.Unlock()
}

// judge updates the gaps from a fresh reading of parts and returns the
// losses it confirmed. It marks each part whose gap is still undecided
// (LossSuspected) and clears DataLost, which from here on means confirmed.
func (j *lossJudge) judge(parts []model.PartitionLag, idx *mm2.SyncIndex, connectOf func(model.TP) (model.ConnectOffset, bool), now time.Time) []model.LossIncident {
	if j.suspects == nil {
		j.suspects = map[model.TP]*lossSuspect{}
	}
	defer func() {
		if len(j.suspects) > 0 || j.keepFrom() != nil {
			j.publish()
		}
	}()
	var out []model.LossIncident
	// Suspects are few, partitions many: each suspect is marked as its
	// partition is read, not every partition put in a set (9 MB a refresh
	// at 100k partitions).
	j.judges++
	for i := range parts {
		p := &parts[i]
		tp := model.TP{Topic: p.Topic.String(), Partition: p.Partition}
		su := j.suspects[tp]
		if su != nil {
			su.seen = j.judges
		}
		p.DataLost = false
		if !p.Replicated.Known || !p.SourceStart.Known {
			p.LossSuspected = su != nil
			continue
		}
		if p.SourceStart.V > p.Replicated.V {
			if su == nil {
				su = &lossSuspect{first: p.Replicated.V, detected: now, seen: j.judges}
				su.anchor, su.hasAnchor = idx.SyncBelow(tp, su.first)
				j.suspects[tp] = su
			}
			su.first = min(su.first, p.Replicated.V)
			su.last = max(su.last, p.SourceStart.V-1)
			su.passedSince, su.clear, su.short = time.Time{}, 0, 0
			p.LossSuspected = true
			continue
		}
		if su == nil {
			continue
		}
		if p.SourceEnd.Known && p.SourceEnd.V <= su.first {
			delete(j.suspects, tp) // the source log restarted: another history
			continue
		}
		connect, _ := connectOf(tp) // none: the zero position
		inc, decided := su.verdict(tp, idx, connect, p.TargetEnd.Ptr(), now)
		if !decided {
			p.LossSuspected = true
			continue
		}
		delete(j.suspects, tp)
		if inc != nil {
			inc.Topic, inc.Partition = p.Topic.String(), p.Partition
			out = append(out, *inc)
		}
	}
	for tp, su := range j.suspects {
		if su.seen != j.judges {
			delete(j.suspects, tp) // the partition is no longer mirrored
		}
	}
	return out
}

// verdict judges a gap MM2's position has passed: a loss, no loss
// (decided, nil), or not yet decidable.
func (su *lossSuspect) verdict(tp model.TP, idx *mm2.SyncIndex, co model.ConnectOffset, targetEnd *int64, now time.Time) (*model.LossIncident, bool) {
	gap := su.last - su.first + 1
	incident := func(lost, lastLost int64, how string) *model.LossIncident {
		lost = min(lost, gap)
		lastLost = min(lastLost, su.last)
		return &model.LossIncident{FirstOffset: max(su.first, lastLost-lost+1), LastOffset: lastLost, Lost: lost,
			DetectedMs: su.detected.UnixMilli(), ConfirmedMs: now.UnixMilli(), How: how}
	}
	if !su.hasAnchor {
		// Syncs below the gap may still be on their way (ingestion catching
		// up after a start); until one is there, nothing to count against.
		if su.anchor, su.hasAnchor = idx.SyncBelow(tp, su.first); !su.hasAnchor {
			return nil, false
		}
	}
	if run, ok := idx.SyncsPast(tp, su.anchor, su.last); ok {
		// Count pair by pair: a restarted MM2 may copy some records again
		// (its committed position lags), which must not hide a skip.
		var skipped, firstLost, lastLost int64
		var how []string
		for i := 1; i < len(run); i++ {
			a, b := run[i-1], run[i]
			if b.Upstream <= su.first || b.Upstream <= a.Upstream || b.Downstream < a.Downstream {
				continue // before the gap, or a new history (rewind, DR truncated)
			}
			n := (b.Upstream - a.Upstream) - (b.Downstream - a.Downstream)
			if n <= 0 {
				continue
			}
			if skipped == 0 {
				firstLost = b.Upstream - n
			}
			skipped += n
			lastLost = b.Upstream - 1
			how = append(how, fmt.Sprintf("%d→%d then %d→%d: %d source offset(s) without a DR record", a.Upstream, a.Downstream, b.Upstream, b.Downstream, n))
		}
		if skipped <= 0 {
			return nil, true // every offset of the gap reached DR
		}
		inc := incident(skipped, lastLost, "offset syncs around the gap: "+strings.Join(how, "; "))
		inc.FirstOffset = max(inc.FirstOffset, min(firstLost, inc.LastOffset))
		return inc, true
	}
	// No sync past the gap yet. MM2 writes one on any skip, so while the
	// newest sync plus the DR records after it covers the gap, nothing was
	// skipped; it must hold a while, in case the skip sync is on its way.
	newest, ok := idx.Newest(tp)
	if !ok || targetEnd == nil || *targetEnd < newest.Downstream {
		return nil, false
	}
	copied := newest.Upstream + (*targetEnd - newest.Downstream) // exact while MM2 skipped nothing
	if copied > su.last {
		su.short = 0
		if su.passedSince.IsZero() {
			su.passedSince = now
		}
		su.clear++
		return nil, su.clear >= lossClearRefreshes && now.Sub(su.passedSince) >= lossClearAfter
	}
	su.clear, su.passedSince = 0, time.Time{}
	// Connect says MM2 acknowledged source offsets up to LastOffset, yet DR
	// holds fewer records than that past the newest sync: at least the
	// difference was skipped.
	if short := (co.LastOffset + 1 - newest.Upstream) - (*targetEnd - newest.Downstream); co.LastOffset >= su.last && short > 0 {
		su.short++
		if su.short >= lossConfirmRefreshes {
			return incident(short, su.last, fmt.Sprintf(
				"MirrorMaker 2's committed position %d (Connect offsets) is past the gap, but DR holds only %d record(s) after the sync %d→%d: at least %d source offset(s) were skipped",
				co.LastOffset+1, *targetEnd-newest.Downstream, newest.Upstream, newest.Downstream, short)), true
		}
		return nil, false
	}
	su.short = 0
	return nil, false
}

// judgeLoss runs the loss judge on a fresh MM2 reading, stores what it
// confirms, and fills the snapshot's loss figures from the store: a
// partition with an unacknowledged incident stays flagged as lost.
func (m *Monitor) judgeLoss(ctx context.Context, fm *flowMonitor, s *flowstate.FlowSnapshot, fresh bool, now time.Time) {
	if fm.link != nil {
		return
	}
	if fresh {
		for _, inc := range fm.loss.judge(s.Partitions, fm.state.Syncs, fm.state.connectOffset, now) {
			inc.Flow = fm.flow.Name
			if _, err := m.store.AddLossIncident(ctx, inc); err != nil {
				m.log.Error("recording a data loss", "flow", fm.flow.Name, "err", err)
				continue
			}
			m.log.Error("data lost before replication", "flow", fm.flow.Name, "topic", inc.Topic, "partition", inc.Partition,
				"first_offset", inc.FirstOffset, "last_offset", inc.LastOffset, "lost", inc.Lost, "how", inc.How)
		}
	}
	open, err := m.store.LossIncidents(ctx, fm.flow.Name, true, 1000)
	if err != nil {
		m.log.Error("reading loss incidents", "flow", fm.flow.Name, "err", err)
		return
	}
	lost := map[model.TP]bool{}
	for _, inc := range open {
		lost[model.TP{Topic: inc.Topic, Partition: inc.Partition}] = true
	}
	if ps, copied := markLost(s.Partitions, lost, fm.lastStale); copied {
		s.Partitions, fm.last = ps, ps
	}
	s.LossSuspected = 0
	for i := range s.Partitions {
		if s.Partitions[i].LossSuspected {
			s.LossSuspected++
		}
	}
	s.LossOpen = open
	if n, lost, err := m.store.LossTotals(ctx, fm.flow.Name); err == nil {
		s.LossIncidentsTotal, s.LostOffsetsTotal = n, lost
	}
}

// markLost sets each partition's DataLost from lost. A table shared with
// a published snapshot (shared) is copied before a row changes, never
// written under its readers; copied says whether it was.
func markLost(ps []model.PartitionLag, lost map[model.TP]bool, shared bool) ([]model.PartitionLag, bool) {
	copied := false
	for i := range ps {
		want := lost[model.TP{Topic: ps[i].Topic.String(), Partition: ps[i].Partition}]
		if ps[i].DataLost == want {
			continue
		}
		if shared && !copied {
			ps, copied = slices.Clone(ps), true
		}
		ps[i].DataLost = want
	}
	return ps, copied
}
