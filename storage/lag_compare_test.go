package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The bounded lag history (migration 0015) against the reference copy of the
// per-partition history before it (lag_ref_test.go): seeded histories of two
// flows (partitions lagging, caught up, of unknown lag or age or only a lower
// bound on it; topics growing, recreated smaller, gone and back; minutes not
// saved, saved twice, saved late; flow samples exact, lower bounds, unknown,
// late (even behind retention's cut) and repeated; retention at random
// cuts) are fed to both, and every read the pages, the RPO report and
// start-up use must answer the same.
//
// Where the new layout deliberately differs, the reference's answer is
// mapped by the rule stated where it is checked. The inputs keep to what the
// monitor gives: a saved minute holds every partition 0..n-1 of each topic it
// holds (the topic's metadata), a minute saved again holds the same
// partitions, a late minute or retention cut is never more than a few
// minutes out of order with the newest (retention cuts are hours back), and
// a flow sample behind the cut is not one stored already.

var compareFlows = []string{"f", "g"}

const compareTopics = "abc" // topic names, one letter each

// lagWorld is one flow's simulated monitor.
type lagWorld struct {
	flow   string
	rng    *rand.Rand
	parts  map[string]int32 // topic -> partition count, 0 while gone
	newest int64            // newest saved minute
	last   []PartitionSample
	saved  map[int64]bool // minutes saved
	flowAt int64          // newest flow sample
	stopAt int64          // the minute the flow is taken out of the config
}

func newLagWorld(flow string, rng *rand.Rand) *lagWorld {
	w := &lagWorld{flow: flow, rng: rng, parts: map[string]int32{}, saved: map[int64]bool{}, stopAt: math.MaxInt64}
	for _, t := range compareTopics {
		w.parts[string(t)] = 1 + rng.Int32N(4)
	}
	return w
}

// figures makes one partition's figures at a refresh.
func (w *lagWorld) figures(topic string, p int32, at int64) PartitionSample {
	r := w.rng
	end := 1000 + r.Int64N(1000)
	lag := 1 + r.Int64N(50)
	x := PartitionSample{Topic: topic, Partition: p, AtMs: at, SourceEnd: i64(end)}
	switch k := r.IntN(100); {
	case k < 40: // caught up
		x.Replicated, x.LagMessages, x.LagMs = i64(end), i64(0), i64(0)
	case k < 65: // behind, age known
		x.Replicated, x.LagMessages, x.LagMs = i64(end-lag), i64(lag), i64(1+r.Int64N(600_000))
	case k < 75: // behind, only a lower bound on the age
		x.Replicated, x.LagMessages, x.LagMsAtLeast = i64(end-lag), i64(lag), i64(1+r.Int64N(600_000))
	case k < 80: // behind, age unknown
		x.Replicated, x.LagMessages = i64(end-lag), i64(lag)
	case k < 88: // DR position unknown
		if r.IntN(2) == 0 {
			x.LagMsAtLeast = i64(r.Int64N(600_000))
		}
	case k < 92: // source end unknown too
		x.SourceEnd = nil
	case k < 96: // nothing behind, age unknown
		x.Replicated, x.LagMessages = i64(end), i64(0)
	default: // behind, age read as 0 (a record timestamped in the future)
		x.Replicated, x.LagMessages, x.LagMs = i64(end-lag), i64(lag), i64(0)
	}
	return x
}

// minute returns the partitions of a minute saved at `at`: the topics'
// current shape, or the last saved minute's when it is saved again.
func (w *lagWorld) minute(at int64, again bool) []PartitionSample {
	var xs []PartitionSample
	if again {
		for _, x := range w.last {
			xs = append(xs, w.figures(x.Topic, x.Partition, at))
		}
		return xs
	}
	for _, t := range compareTopics {
		for p := range w.parts[string(t)] {
			xs = append(xs, w.figures(string(t), p, at))
		}
	}
	w.rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] }) // "sorted or not"
	return xs
}

// reshape changes the topics now and then.
func (w *lagWorld) reshape() {
	for _, t := range compareTopics {
		name := string(t)
		switch k := w.rng.IntN(100); {
		case k < 4: // recreated, maybe smaller
			w.parts[name] = 1 + w.rng.Int32N(5)
		case k < 8 && w.parts[name] > 0: // partitions added
			w.parts[name]++
		case k < 12: // deleted (no longer mirrored), or back
			if w.parts[name] > 0 {
				w.parts[name] = 0
			} else {
				w.parts[name] = 1 + w.rng.Int32N(4)
			}
		}
	}
}

// flowSample makes the flow's figures at a refresh.
func (w *lagWorld) flowSample(at int64) FlowSample {
	r := w.rng
	x := FlowSample{AtMs: at, Status: []string{"OK", "OK", "WARNING", "UNKNOWN", "CRITICAL", "BROKEN", "PAUSED"}[r.IntN(7)]}
	if r.IntN(4) > 0 {
		x.RPOMs, x.RPOAtLeast = i64(r.Int64N(900_000)), r.IntN(3) == 0
	} else {
		x.RPOAtLeast = r.IntN(2) == 0 // said of an unknown figure: means nothing
	}
	if r.IntN(5) > 0 {
		x.LagMessages, x.MaxLagMessages = i64(r.Int64N(10_000)), i64(r.Int64N(500))
	}
	if r.IntN(3) > 0 {
		x.HeartbeatAgeMs = i64(r.Int64N(60_000))
	}
	return x
}

// step plays minute i of the flow into both stores.
func (w *lagWorld) step(t *testing.T, s *Store, ref *refLagHistory, i int64) {
	t.Helper()
	if i >= w.stopAt {
		return
	}
	ctx := context.Background()
	r := w.rng
	w.reshape()
	base := t0 + i*MinuteMs
	var at int64
	again := false
	switch k := r.IntN(100); {
	case k < 10: // nothing saved: the source unreachable, the console down
	case k < 17 && w.last != nil: // the last minute saved again
		at, again = w.last[0].AtMs, true
	case k < 24 && w.newest > 0: // a minute saved late
		at = w.newest - 1 - r.Int64N(110_000)
	case k < 30: // on the minute
		at = base
	default:
		at = base + r.Int64N(5_000)
	}
	if at != 0 && (again || !w.saved[at]) {
		xs := w.minute(at, again)
		if len(xs) > 0 {
			if err := s.AddPartitionMinute(ctx, w.flow, at, xs); err != nil {
				t.Fatal(err)
			}
			ref.AddPartitionSamples(w.flow, xs)
			w.saved[at], w.newest = true, max(w.newest, at)
			if !again {
				w.last = xs
			}
		}
	}
	for range 1 + r.IntN(3) {
		at := base + r.Int64N(MinuteMs)
		switch k := r.IntN(100); {
		case k < 8 && w.flowAt > 0: // late
			at = w.flowAt - 1 - r.Int64N(110_000)
		case k < 13 && w.flowAt > 0: // the newest again
			at = w.flowAt
		case k < 18: // on the minute
			at = base
		case k < 22: // so late that retention deleted its minute's samples
			at = w.behindCut(ref, at)
		}
		x := w.flowSample(at)
		if err := s.AddFlowSample(ctx, w.flow, x); err != nil {
			t.Fatal(err)
		}
		ref.AddFlowSample(w.flow, x)
		w.flowAt = max(w.flowAt, at)
	}
}

// behindCut returns a new time in a minute whose samples retention deleted
// but whose rollup it kept, or otherwise.
func (w *lagWorld) behindCut(ref *refLagHistory, otherwise int64) int64 {
	var minutes []int64
	for _, at := range slices.Sorted(maps.Keys(ref.flows[w.flow])) {
		if m := floorMinute(at); at < floorMinute(ref.lagCut) && m >= ref.rpoCut && !slices.Contains(minutes, m) {
			minutes = append(minutes, m)
		}
	}
	if len(minutes) == 0 {
		return otherwise
	}
	at := minutes[w.rng.IntN(len(minutes))] + w.rng.Int64N(MinuteMs)
	if _, taken := ref.flows[w.flow][at]; taken { // the same sample again would count twice
		return otherwise
	}
	return at
}

func TestLagHistoryEquivalentToReference(t *testing.T) {
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 7 // several transactions per prune
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { compareLagHistory(t, seed, 45) })
	}
}

func compareLagHistory(t *testing.T, seed uint64, minutes int64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 17))
	s, ref := openTestStore(t), newRefLagHistory()
	var worlds []*lagWorld
	for _, f := range compareFlows {
		worlds = append(worlds, newLagWorld(f, rng))
	}
	if rng.IntN(2) == 0 { // the last flow leaves the config: retention alone rolls up its last minutes
		worlds[len(worlds)-1].stopAt = minutes/3 + rng.Int64N(minutes/3)
	}
	lagCut, rpoCut := t0-5*MinuteMs, t0-5*MinuteMs // the first cuts fall within the data
	prunes := 0
	for i := range minutes {
		for _, w := range worlds {
			w.step(t, s, ref, i)
		}
		// Retention now and then, a few minutes behind the newest data of
		// the flows still watched; the rollups are cut no later.
		hi := int64(math.MaxInt64)
		var ats []int64
		for _, w := range worlds {
			if i < w.stopAt {
				hi = min(hi, w.newest, w.flowAt)
			}
			ats = slices.AppendSeq(ats, maps.Keys(w.saved))
		}
		slices.Sort(ats) // the seed alone decides the cut
		if hi -= 3 * MinuteMs; rng.IntN(100) < 10 && hi > lagCut {
			lagCut = cutAt(rng, lagCut, hi, ats)
			rpoCut = cutAt(rng, rpoCut-1, lagCut, nil)
			if _, err := s.PruneLagSamples(ctx, lagCut, rpoCut); err != nil {
				t.Fatal(err)
			}
			ref.PruneLagSamples(lagCut, rpoCut)
			prunes++
		}
		since := int64(0)
		if rng.IntN(2) == 0 {
			since = t0 + rng.Int64N((i+1)*MinuteMs)
		}
		for _, f := range compareFlows {
			compareReads(t, s, ref, f, since)
		}
		if t.Failed() {
			t.Fatalf("seed %d: first difference at minute %d (lag cut %d, rpo cut %d)", seed, i, lagCut, rpoCut)
		}
	}
	if prunes == 0 {
		t.Errorf("seed %d: no prune was tried", seed)
	}
}

// cutAt picks a retention cut in (after, upTo]: any millisecond, a whole
// minute, or the time of a saved minute (ats), so that the edges are tried.
func cutAt(rng *rand.Rand, after, upTo int64, ats []int64) int64 {
	c := after + 1 + rng.Int64N(upTo-after)
	switch rng.IntN(3) {
	case 1:
		if m := floorMinute(c); m > after {
			c = m
		}
	case 2:
		for _, at := range ats {
			if at > after && at <= upTo {
				return at
			}
		}
	}
	return c
}

// compareReads compares every read of one flow's history since sinceMs.
func compareReads(t *testing.T, s *Store, ref *refLagHistory, flow string, sinceMs int64) {
	t.Helper()
	ctx := context.Background()
	for _, topic := range []string{"a", "b", "c", "never"} {
		// A topic's saved minutes: counts, maxima and totals as grouping the
		// old rows gives them; an unknown partition makes the maximum age
		// only a lower bound, never 0.
		tm, err := s.TopicMinutes(ctx, flow, topic, sinceMs)
		if err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("%s topic %s minutes since %d", flow, topic, sinceMs), tm, ref.topicMinutes(flow, topic, sinceMs))
		for p := range int32(7) {
			got, err := s.PartitionSamples(ctx, flow, topic, p, sinceMs)
			if err != nil {
				t.Fatal(err)
			}
			// Rule: a caught-up partition (0 behind, 0 ms) reads back
			// CaughtUp with lag 0 and 0 ms, its offsets not kept; every
			// other sample reads back as given, unknown figures nil.
			var want []PartitionSample
			for _, x := range ref.PartitionSamples(flow, topic, p, sinceMs) {
				if x.LagMessages != nil && *x.LagMessages == 0 && x.LagMs != nil && *x.LagMs == 0 {
					x = PartitionSample{Topic: x.Topic, Partition: x.Partition, AtMs: x.AtMs, CaughtUp: true, LagMessages: i64(0), LagMs: i64(0)}
				}
				want = append(want, x)
			}
			same(t, fmt.Sprintf("%s %s-%d since %d", flow, topic, p, sinceMs), got, want)
		}
	}

	// Rule: start-up reads the newest saved minute, every partition in it
	// with its figures as given; a partition last saved in an older minute
	// (its topic gone, or recreated smaller) is no longer watched and not
	// shown. The figures outlive retention (the old store lost them once
	// the cut passed a flow's newest minute).
	last, err := s.LatestPartitionSamples(ctx, flow)
	if err != nil {
		t.Fatal(err)
	}
	var wantLast []PartitionSample
	var latest []PartitionSample
	atCut(ref, 0, func() { latest = ref.LatestPartitionSamples(flow) })
	var newest int64
	for _, x := range latest {
		newest = max(newest, x.AtMs)
	}
	for _, x := range latest {
		if x.AtMs == newest {
			wantLast = append(wantLast, x)
		}
	}
	same(t, flow+" last known", sortedSamples(last), wantLast)

	// Rules: a lower bound is only said of a figure: an unknown RPO reads
	// unknown, not "at least". Retention cuts the raw samples on a whole
	// minute.
	fs, err := s.FlowSamples(ctx, flow, sinceMs)
	if err != nil {
		t.Fatal(err)
	}
	var wantFs, kept []FlowSample
	atCut(ref, floorMinute(ref.lagCut), func() { kept = ref.FlowSamples(flow, sinceMs) })
	for _, x := range kept {
		x.RPOAtLeast = x.RPOAtLeast && x.RPOMs != nil
		wantFs = append(wantFs, x)
	}
	same(t, fmt.Sprintf("%s flow samples since %d", flow, sinceMs), fs, wantFs)

	// Rule: a minute is rolled up once it is complete: a sample of a later
	// minute came, or retention reached it (a flow no longer watched).
	fm, err := s.FlowMinutes(ctx, flow, sinceMs)
	if err != nil {
		t.Fatal(err)
	}
	open := floorMinute(ref.lagCut) + MinuteMs
	for at := range ref.flows[flow] {
		open = max(open, floorMinute(at))
	}
	var wantFm []FlowMinute
	for _, m := range ref.flowMinutes(flow, sinceMs) {
		if m.MinuteMs < open {
			wantFm = append(wantFm, m)
		}
	}
	same(t, fmt.Sprintf("%s flow minutes since %d", flow, sinceMs), fm, wantFm)
}

// atCut runs read on ref as if its detail had been cut at c.
func atCut(ref *refLagHistory, c int64, read func()) {
	defer func(was int64) { ref.lagCut = was }(ref.lagCut)
	ref.lagCut = c
	read()
}

// sortedSamples orders samples by topic, then partition (the snapshot keeps
// the order they were given in).
func sortedSamples(xs []PartitionSample) []PartitionSample {
	ref := newRefLagHistory()
	ref.AddPartitionSamples("", xs)
	return ref.rows("", func(PartitionSample) bool { return true })
}

// same compares by value (nil figures stay distinct from 0) and reports the
// first difference.
func same[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w []byte
		if i < len(got) {
			g, _ = json.Marshal(got[i])
		}
		if i < len(want) {
			w, _ = json.Marshal(want[i])
		}
		if string(g) != string(w) {
			t.Errorf("%s: %d rows, want %d; row %d:\n got %s\nwant %s", what, len(got), len(want), i, g, w)
			return
		}
	}
}
