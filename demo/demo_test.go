package demo

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSandbox runs one sandbox through its life: replication, the MM2
// internal topics (checked record by record against both clusters), the
// demo controls, and a clean shutdown.
func TestSandbox(t *testing.T) {
	goroutinesBefore := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	sb, err := Start(ctx, Options{Seed: 42, TrafficRate: 400, Logger: testLogger()})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sb.Close() // a no-op after the explicit Close below

	waitFor(t, 20*time.Second, "mirror to copy 500 records and write checkpoints for both groups", func() bool {
		st := sb.State()
		return st.Mirrored > 500 && st.CheckpointsWritten >= int64(len(consumerGroups)) && st.HeartbeatsEmitted > 1
	})

	t.Run("internal topics", func(t *testing.T) { checkInternalTopics(ctx, t, sb) })
	t.Run("pause", func(t *testing.T) { checkPause(ctx, t, sb) })
	t.Run("rate limit", func(t *testing.T) { checkRate(ctx, t, sb) })
	t.Run("primary outage", func(t *testing.T) { checkOutage(ctx, t, sb) })
	t.Run("exact copy", func(t *testing.T) { checkExactCopy(ctx, t, sb) })

	sb.Close()
	sb.Close() // idempotent
	waitFor(t, 10*time.Second, "goroutines to exit after Close", func() bool {
		return runtime.NumGoroutine() <= goroutinesBefore+2
	})
	t.Logf("goroutines: %d before Start, %d after Close", goroutinesBefore, runtime.NumGoroutine())
	if t.Failed() && runtime.NumGoroutine() > goroutinesBefore+2 {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
	}
}

// checkInternalTopics reads dr's offset syncs, checkpoints, heartbeats and
// Connect offsets directly and checks them against the data in both clusters.
func checkInternalTopics(ctx context.Context, t *testing.T, sb *Sandbox) {
	dr, primary := sb.DRBootstrap(), sb.PrimaryBootstrap()
	syncRecs := readTopic(ctx, t, dr, policy.OffsetSyncsTopic(SourceAlias))[0]
	cpRecs := readTopic(ctx, t, dr, policy.CheckpointsTopic(SourceAlias))[0]
	connectRecs := readTopic(ctx, t, dr, mm2.ConnectOffsetsTopic(SourceAlias))[0]
	// Data last, so every sync and checkpoint refers to records already read.
	up, down := map[string]map[int32][]*kgo.Record{}, map[string]map[int32][]*kgo.Record{}
	for _, topic := range Topics {
		up[topic] = readTopic(ctx, t, primary, topic)
		down[topic] = readTopic(ctx, t, dr, policy.RemoteTopic(SourceAlias, topic))
	}

	syncs := map[topicPartition][]model.OffsetSync{}
	for _, r := range syncRecs {
		s, err := mm2.DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			t.Fatalf("offset sync at %d: %v", r.Offset, err)
		}
		syncs[topicPartition{s.Topic, s.Partition}] = append(syncs[topicPartition{s.Topic, s.Partition}], s)
	}
	if len(syncs) == 0 {
		t.Fatal("no offset syncs in dr")
	}
	if _, ok := syncs[topicPartition{heartbeatsTopic, 0}]; !ok {
		t.Error("no offset sync for the heartbeats partition")
	}

	gaps := 0
	for tp, hist := range syncs {
		if tp.topic == heartbeatsTopic {
			continue
		}
		for i, s := range hist {
			u := recordAt(up[tp.topic][tp.partition], s.Upstream)
			d := recordAt(down[tp.topic][tp.partition], s.Downstream)
			if u == nil || d == nil {
				t.Errorf("sync %+v: record missing (primary %v, dr %v)", s, u != nil, d != nil)
				continue
			}
			if !sameRecord(u, d) {
				t.Errorf("sync %+v: primary record %q != dr record %q", s, u.Value, d.Value)
			}
			if i > 0 && tp.topic == "orders" && s.Upstream-hist[i-1].Upstream != s.Downstream-hist[i-1].Downstream {
				gaps++
			}
		}
	}
	if gaps == 0 {
		t.Error("no offset sync on orders shows an upstream gap; transaction markers should create them")
	}
	t.Logf("%d syncs over %d partitions, %d on orders across upstream gaps", len(syncRecs), len(syncs), gaps)

	// Checkpoints: each must be one of MM2's translations of its upstream
	// offset through a sync written before it (so at most the translation
	// over all syncs, which only get more precise), and never point past a
	// record the group has not consumed.
	perGroup := map[string]int{}
	for _, r := range cpRecs {
		cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
		if err != nil {
			t.Fatalf("checkpoint at %d: %v", r.Offset, err)
		}
		perGroup[cp.Group]++
		if consumerGroups[cp.Group] != cp.Topic {
			t.Errorf("checkpoint %+v: unexpected group/topic", cp)
			continue
		}
		hist := syncs[topicPartition{cp.Topic, cp.Partition}]
		if !slices.ContainsFunc(hist, func(s model.OffsetSync) bool { return plusOneRule(s, cp.Upstream) == cp.Downstream }) {
			t.Errorf("checkpoint %+v: no sync translates %d to %d", cp, cp.Upstream, cp.Downstream)
		}
		if best := mm2.Translate(hist, cp.Upstream); !best.Translated() || cp.Downstream > best.Offset {
			t.Errorf("checkpoint %+v: beyond the translation over all syncs %+v", cp, best)
		}
		// Safety: the record just before the checkpoint in dr was consumed upstream.
		if cp.Downstream > 0 {
			d := recordAt(down[cp.Topic][cp.Partition], cp.Downstream-1)
			if u := upstreamOf(up[cp.Topic][cp.Partition], d); u == nil || u.Offset >= cp.Upstream {
				t.Errorf("checkpoint %+v: dr record before it is not below the committed upstream offset", cp)
			}
		}
	}
	for g := range consumerGroups {
		if perGroup[g] == 0 {
			t.Errorf("no checkpoint for group %s", g)
		}
	}

	// Heartbeats replicated into dr as primary.heartbeats.
	hbs := readTopic(ctx, t, dr, policy.HeartbeatsTopic(SourceAlias))[0]
	if len(hbs) == 0 {
		t.Error("no heartbeats in dr's primary.heartbeats")
	}
	for _, r := range hbs {
		hb, err := mm2.DecodeHeartbeat(r.Key, r.Value)
		if err != nil || hb.SourceAlias != TargetAlias || hb.TargetAlias != SourceAlias || hb.EmittedMs != r.Timestamp.UnixMilli() {
			t.Errorf("heartbeat at %d: %+v, %v (record ts %d)", r.Offset, hb, err, r.Timestamp.UnixMilli())
		}
	}

	// Connect offsets: the last replicated upstream offset per partition.
	seen := map[string]bool{}
	for _, r := range connectRecs {
		o, err := mm2.DecodeConnectOffset(r.Key, r.Value)
		if err != nil {
			t.Fatalf("connect offset at %d: %v", r.Offset, err)
		}
		if o.Connector != connector || o.Cluster != SourceAlias {
			t.Errorf("connect offset %+v: wrong connector or cluster", o)
		}
		seen[o.Topic] = true
		if data, ok := up[o.Topic]; ok && recordAt(data[o.Partition], o.LastOffset) == nil {
			t.Errorf("connect offset %+v: no data record at that upstream offset", o)
		}
	}
	for _, topic := range append(slices.Clone(Topics), heartbeatsTopic) {
		if !seen[topic] {
			t.Errorf("no connect offset for %s", topic)
		}
	}
}

// plusOneRule is MM2's translation through a single sync s.
func plusOneRule(s model.OffsetSync, upstream int64) int64 {
	switch {
	case s.Upstream == upstream:
		return s.Downstream
	case s.Upstream < upstream:
		return s.Downstream + 1
	}
	return -1
}

// checkPause: a paused mirror writes nothing to dr while the primary grows.
func checkPause(ctx context.Context, t *testing.T, sb *Sandbox) {
	drAdm, primaryAdm := admin(t, sb.DRBootstrap()), admin(t, sb.PrimaryBootstrap())
	drTopics := []string{policy.OffsetSyncsTopic(SourceAlias), policy.HeartbeatsTopic(SourceAlias)}
	for _, topic := range Topics {
		drTopics = append(drTopics, policy.RemoteTopic(SourceAlias, topic))
	}

	sb.SetMirrorRunning(false) // returns once no copy round is in flight
	if sb.State().MirrorRunning {
		t.Fatal("State().MirrorRunning still true")
	}
	drBefore, primaryBefore := endTotal(ctx, t, drAdm, drTopics...), endTotal(ctx, t, primaryAdm, Topics...)
	st := sb.State()
	waitFor(t, 10*time.Second, "primary to grow by 200 records and 2 heartbeats while paused", func() bool {
		now := sb.State()
		return now.Produced >= st.Produced+200 && now.HeartbeatsEmitted >= st.HeartbeatsEmitted+2
	})
	if got := endTotal(ctx, t, drAdm, drTopics...); got != drBefore {
		t.Errorf("dr end offsets moved while paused: %d -> %d", drBefore, got)
	}
	if got := endTotal(ctx, t, primaryAdm, Topics...); got <= primaryBefore {
		t.Errorf("primary did not grow while paused: %d -> %d", primaryBefore, got)
	}
	if now := sb.State(); now.Mirrored != st.Mirrored || now.SyncsWritten != st.SyncsWritten || now.CheckpointsWritten != st.CheckpointsWritten {
		t.Errorf("mirror counters moved while paused: %+v -> %+v", st, now)
	}

	sb.SetMirrorRunning(true)
	waitFor(t, 10*time.Second, "dr to grow again after resume", func() bool {
		return endTotal(ctx, t, drAdm, drTopics...) > drBefore
	})
}

// checkRate: a limited mirror copies about the configured rate.
func checkRate(ctx context.Context, t *testing.T, sb *Sandbox) {
	const rate = 50
	sb.SetMirrorRate(rate)
	defer sb.SetMirrorRate(0)
	if got := sb.State().MirrorRate; got != rate {
		t.Fatalf("State().MirrorRate = %d, want %d", got, rate)
	}
	// Skip a round that may have started before the limit applied.
	first := sb.State().Mirrored
	waitFor(t, 10*time.Second, "copying under the limit to start", func() bool {
		return sb.State().Mirrored > first+rate/5
	})
	start, before := time.Now(), sb.State().Mirrored
	waitFor(t, 10*time.Second, "50 more records copied under the limit", func() bool {
		return sb.State().Mirrored >= before+rate
	})
	// A lower bound only: 50 records at 50/s with a 10-record burst cannot
	// take less than 0.8 s (heartbeats spend tokens too, only slowing it).
	if elapsed := time.Since(start); elapsed < 750*time.Millisecond {
		t.Errorf("copied %d records in %v, faster than %d/s", sb.State().Mirrored-before, elapsed, rate)
	}
}

// checkOutage: a down primary refuses requests; back up, the mirror resumes.
func checkOutage(ctx context.Context, t *testing.T, sb *Sandbox) {
	sb.SetPrimaryDown(true)
	if !sb.State().PrimaryDown {
		t.Fatal("State().PrimaryDown still false")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.PrimaryBootstrap()...), kgo.RequestRetries(1),
		kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	lo, err := kadm.NewClient(cl).ListEndOffsets(lctx, Topics...)
	cancel()
	if err == nil && lo.Error() == nil {
		t.Fatal("ListEndOffsets against a down primary succeeded")
	}
	t.Logf("primary down: %v", errors.Join(err, lo.Error()))
	// Stay down until the sandbox's own clients (traffic, consumers, mirror,
	// heartbeats, checkpoints) have been refused many times.
	waitFor(t, 10*time.Second, "100 refused requests", func() bool {
		sb.ctl.mu.Lock()
		defer sb.ctl.mu.Unlock()
		return sb.ctl.refused >= 100
	})
	st := sb.State()

	sb.SetPrimaryDown(false)
	waitFor(t, 15*time.Second, "primary to answer again", func() bool {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		lo, err := kadm.NewClient(cl).ListEndOffsets(lctx, Topics...)
		return err == nil && lo.Error() == nil
	})
	waitFor(t, 5*time.Second, "the kfake control function to drop itself", func() bool {
		sb.ctl.mu.Lock()
		defer sb.ctl.mu.Unlock()
		return !sb.ctl.hookActive
	})
	produced := sb.State().Produced
	waitFor(t, 15*time.Second, "mirror to catch up with what was produced before the primary came back", func() bool {
		return sb.State().Mirrored >= produced
	})
	waitFor(t, 10*time.Second, "traffic, heartbeats and checkpoints to resume", func() bool {
		now := sb.State()
		return now.Produced > st.Produced+100 && now.HeartbeatsEmitted > st.HeartbeatsEmitted+1 &&
			now.CheckpointsWritten > st.CheckpointsWritten
	})
}

// checkExactCopy: each dr partition is exactly its primary partition minus
// transaction markers: same records in the same order, none skipped or
// copied twice, across pause, rate limit and outage.
func checkExactCopy(ctx context.Context, t *testing.T, sb *Sandbox) {
	sb.SetMirrorRunning(false) // freeze dr so the primary read covers it
	defer sb.SetMirrorRunning(true)
	var total int64
	for _, topic := range Topics {
		down := readTopic(ctx, t, sb.DRBootstrap(), policy.RemoteTopic(SourceAlias, topic))
		up := readTopic(ctx, t, sb.PrimaryBootstrap(), topic)
		for p, drRecs := range down {
			total += int64(len(drRecs))
			upRecs := up[p]
			if len(drRecs) > len(upRecs) {
				t.Errorf("%s/%d: dr has %d records, primary only %d", topic, p, len(drRecs), len(upRecs))
				continue
			}
			for i, d := range drRecs {
				if d.Offset != int64(i) || !sameRecord(upRecs[i], d) {
					t.Errorf("%s/%d: dr offset %d (%q) differs from primary record %d (%q)",
						topic, p, d.Offset, d.Value, upRecs[i].Offset, upRecs[i].Value)
					break
				}
			}
		}
	}
	if mirrored := sb.State().Mirrored; total != mirrored {
		t.Errorf("dr holds %d data records, the mirror counted %d copies", total, mirrored)
	}
	t.Logf("%d data records in dr, each at its place", total)
}

// --- helpers ---

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	defer func(start time.Time) { t.Logf("waited %v for %s", time.Since(start).Round(time.Millisecond), what) }(time.Now())
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func admin(t *testing.T, seeds []string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func endTotal(ctx context.Context, t *testing.T, adm *kadm.Client, topics ...string) int64 {
	t.Helper()
	lo, err := adm.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	var total int64
	lo.Each(func(o kadm.ListedOffset) { total += o.Offset })
	return total
}

// readTopic reads every partition of topic from the start up to its end
// offset at the time of the call. A partition whose last offsets are
// transaction markers (never returned) ends after a quiet poll.
func readTopic(ctx context.Context, t *testing.T, seeds []string, topic string) map[int32][]*kgo.Record {
	t.Helper()
	adm := admin(t, seeds)
	lo, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	ends := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })

	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]*kgo.Record{}
	reached := map[int32]int64{} // highest offset seen, kept or not
	done := func() bool {
		for p, end := range ends {
			if last, ok := reached[p]; end > 0 && (!ok || last < end-1) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fetches := cl.PollFetches(pctx)
		cancel()
		if fetches.NumRecords() == 0 && pctx.Err() != nil {
			break // quiet: only markers are left
		}
		fetches.EachRecord(func(r *kgo.Record) {
			reached[r.Partition] = max(reached[r.Partition], r.Offset)
			if r.Offset < ends[r.Partition] {
				out[r.Partition] = append(out[r.Partition], r)
			}
		})
		if time.Now().After(deadline) {
			t.Fatalf("reading %s: timed out", topic)
		}
	}
	return out
}

// recordAt finds the record at offset in a partition read in order.
func recordAt(recs []*kgo.Record, offset int64) *kgo.Record {
	i, ok := slices.BinarySearchFunc(recs, offset, func(r *kgo.Record, o int64) int { return int(r.Offset - o) })
	if !ok {
		return nil
	}
	return recs[i]
}

// upstreamOf finds the primary record a dr record was copied from; values
// are unique (they carry a sequence number).
func upstreamOf(recs []*kgo.Record, d *kgo.Record) *kgo.Record {
	if d == nil {
		return nil
	}
	for _, r := range recs {
		if sameRecord(r, d) {
			return r
		}
	}
	return nil
}

func sameRecord(a, b *kgo.Record) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) &&
		a.Timestamp.Equal(b.Timestamp) && slices.EqualFunc(a.Headers, b.Headers, func(x, y kgo.RecordHeader) bool {
		return x.Key == y.Key && bytes.Equal(x.Value, y.Value)
	})
}

func testLogger() *slog.Logger {
	if os.Getenv("DEMO_DEBUG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
