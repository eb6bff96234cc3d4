package monitor

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

func churnReader(t *testing.T, src, dst *kgo.Client) *LagReader {
	t.Helper()
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{"127.0.0.1:1"}}, "dr": {Bootstrap: []string{"127.0.0.1:2"}}},
		Flows:    []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", Topics: config.Topics{Include: []string{"events"}}}},
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	f := cfg.Flows[0]
	return &LagReader{Flow: f, Topics: flowstate.TopicsOf(f), Source: src, Target: dst}
}

func lagOf(t *testing.T, rd Reading, p int32) model.PartitionLag {
	t.Helper()
	if rd.SourceErr != nil || rd.TargetErr != nil {
		t.Fatalf("read: %v / %v", rd.SourceErr, rd.TargetErr)
	}
	for _, pl := range rd.Partitions {
		if pl.Topic.String() == "events" && pl.Partition == p {
			return pl
		}
	}
	t.Fatalf("events-%d not in %+v", p, rd.Partitions)
	return model.PartitionLag{}
}

func fill(t *testing.T, cl *kgo.Client, topic string, p int32, n int, ts time.Time) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: p, Value: []byte{byte(i)}, Timestamp: ts}
	}
	produce(t, cl, recs...)
}

// recreateEvents deletes and recreates "events" (2 partitions) and writes
// n records at ts to partition 0 of the new log, through a new client (a
// producer that knew the old topic id is refused). between runs while the
// topic does not exist.
func recreateEvents(t *testing.T, primary *kfake.Cluster, admin *kgo.Client, n int, ts time.Time, between ...func()) *kgo.Client {
	t.Helper()
	ctx := context.Background()
	adm := kadm.NewClient(admin)
	if _, err := adm.DeleteTopics(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	for _, f := range between {
		f()
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	fresh, err := kgo.NewClient(kgo.SeedBrokers(primary.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fresh.Close)
	fill(t, fresh, "events", 0, n, ts)
	return fresh
}

// tenCopied starts a primary and a DR cluster whose events-0 both hold 10
// records: MM2 copied them all.
func tenCopied(t *testing.T) (primary *kfake.Cluster, pcl, dcl *kgo.Client) {
	t.Helper()
	primary, pcl = newCluster(t, "primary", "events")
	_, dcl = newCluster(t, "dr", "events")
	fill(t, pcl, "events", 0, 10, time.Now())
	fill(t, dcl, "events", 0, 10, time.Now())
	return primary, pcl, dcl
}

// A topic deleted and recreated on the primary while MM2 is down: MM2's old
// position (above the new end) must not read as "caught up". The new log
// counts from its start until MM2 has a position on it, the partition says
// why, and its stored syncs stop translating.
func TestLagRecreatedTopicIsNeverCaughtUp(t *testing.T) {
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr", "events")
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	fill(t, pcl, "events", 0, 100, old)
	fill(t, dcl, "events", 0, 100, old)
	r := churnReader(t, pcl, dcl)
	tp := model.TP{Topic: "events", Partition: 0}
	// MM2 copied all 100: Connect says 99, the newest sync says 90->90.
	pos := mapPositions{
		connect:    map[model.TP]model.ConnectOffset{tp: {Topic: "events", LastOffset: 99, LogOffset: 7, RecordMs: 1}},
		latestSync: map[model.TP]model.OffsetSync{tp: {Topic: "events", Upstream: 90, Downstream: 90, LogOffset: 3, RecordMs: 1}},
	}
	now := time.Now()
	if p := lagOf(t, r.Read(ctx, pos, now), 0); p.LagMessages.V != 0 || p.Restarted.String() != "" {
		t.Fatalf("before: %+v", p)
	}

	written := time.Now().Add(-20 * time.Second).Truncate(time.Millisecond)
	// A client that never saw the old id (the reader's own cached one:
	// TestLagRecreationSeenThroughMetadataCache).
	r.Source = recreateEvents(t, primary, pcl, 30, written)

	now = time.Now()
	rd := r.Read(ctx, pos, now)
	p := lagOf(t, rd, 0)
	if !p.LagMessages.Known || p.LagMessages.V != 30 || p.Replicated.V != 0 || p.Method != model.PositionRestarted {
		t.Fatalf("after recreation: lag %v replicated %v (%s), want 30 from 0", p.LagMessages, p.Replicated, p.Method)
	}
	if !p.LagMs.Known || p.LagMs.V != now.Sub(written).Milliseconds() {
		t.Fatalf("lag ms %v, want the age of the new log's first record: %s", p.LagMs, describe(p))
	}
	if p.Restarted.String() == "" || len(rd.Restarted) == 0 || rd.Restarted[0] != tp {
		t.Fatalf("restart not reported: %q %v", p.Restarted, rd.Restarted)
	}
	// Still MM2's old position on the next refresh: still the whole new log.
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("second refresh: %+v", p)
	}

	// MM2 restarts, resets to the new log's start and copies 20 of it: a
	// new sync 0->100 and 20 more DR records.
	fill(t, dcl, "events", 0, 20, written)
	pos.latestSync[tp] = model.OffsetSync{Topic: "events", Upstream: 0, Downstream: 100, LogOffset: 4, RecordMs: 2}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 10 || p.Method != model.PositionEstimate || p.Restarted.String() == "" {
		t.Fatalf("MM2 on the new log: lag %v (%s) %q", p.LagMessages, p.Method, p.Restarted)
	}
	fill(t, dcl, "events", 0, 10, written)
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 || p.LagMs.V != 0 {
		t.Fatalf("caught up on the new log: %+v", p)
	}
	// MM2's old Connect offset (99) is still its newest: not believed again.
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 || p.Method != model.PositionEstimate {
		t.Fatalf("old connect offset resurfaced: %+v", p)
	}
	pos.connect[tp] = model.ConnectOffset{Topic: "events", LastOffset: 29, LogOffset: 8, RecordMs: 2}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 || p.Restarted.String() != "" {
		t.Fatalf("both positions on the new log: %+v", p)
	}
}

// After a recreation, MM2 may still write positions of the old log (a
// Connect flush of records it copied before, here with no connect offset
// at all when the restart was seen), and an MM2 that carries on from its
// old position never copies the new log's records below it. Neither may
// count as copied: only what DR received since the restart does.
func TestLagRestartIgnoresLateOldPositions(t *testing.T) {
	ctx := context.Background()
	primary, pcl, dcl := tenCopied(t)
	r := churnReader(t, pcl, dcl)
	tp := model.TP{Topic: "events", Partition: 0}
	// MM2 copied all 10 but has flushed no Connect offset yet.
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{},
		latestSync: map[model.TP]model.OffsetSync{tp: {Topic: "events", Upstream: 0, Downstream: 0, LogOffset: 1, RecordMs: 1}}}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 {
		t.Fatalf("before: %s", describe(p))
	}
	// The new log's first ten records are older than the rest.
	skippedAt := time.Now().Add(-40 * time.Second).Truncate(time.Millisecond)
	r.Source = recreateEvents(t, primary, pcl, 10, skippedAt)
	fill(t, r.Source, "events", 0, 20, time.Now())
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("after recreation: %s", describe(p))
	}
	// The late flush of the old log's position: "copied up to 9".
	pos.connect[tp] = model.ConnectOffset{Topic: "events", LastOffset: 9, LogOffset: 5, RecordMs: 2}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("old log's position flushed after the restart counted for the new log: %s", describe(p))
	}
	// MM2 carries on from offset 10 of the new log: 20 records reach DR,
	// its position says 30, but new-log offsets 0-9 were never copied.
	fill(t, dcl, "events", 0, 20, time.Now())
	pos.connect[tp] = model.ConnectOffset{Topic: "events", LastOffset: 29, LogOffset: 6, RecordMs: 3}
	pos.latestSync[tp] = model.OffsetSync{Topic: "events", Upstream: 10, Downstream: 10, LogOffset: 7, RecordMs: 3}
	for range 2 {
		p := lagOf(t, r.Read(ctx, pos, time.Now()), 0)
		if p.LagMessages.V != 10 || p.Method != model.PositionRestartCopied || p.Restarted.String() == "" {
			t.Fatalf("new-log records MM2 skipped counted as copied: %s", describe(p))
		}
		// Which ten are missing is unknown: the age is the oldest one's
		// that may be (the new log's first), not the newest records'.
		if !p.LagMs.Known || p.LagMs.V < time.Since(skippedAt).Milliseconds()-1000 {
			t.Fatalf("age of records MM2 skipped understated: %s, want >= %v", describe(p), time.Since(skippedAt))
		}
	}
	// Had MM2 copied the new log from its start, DR accounts for it all.
	fill(t, dcl, "events", 0, 10, time.Now())
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 || p.Restarted.String() != "" || p.Method != model.PositionConnect {
		t.Fatalf("caught up on the new log: %s", describe(p))
	}
}

// A refresh that falls between a topic's deletion and its recreation must
// not make the console forget the old topic id: the recreated topic is a
// new log even when its end is above MM2's old position.
func TestLagRecreationAcrossARefreshWithoutTheTopic(t *testing.T) {
	ctx := context.Background()
	primary, pcl, dcl := tenCopied(t)
	r := churnReader(t, pcl, dcl)
	tp := model.TP{Topic: "events", Partition: 0}
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{tp: {Topic: "events", LastOffset: 9, LogOffset: 1, RecordMs: 1}},
		latestSync: map[model.TP]model.OffsetSync{}}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 {
		t.Fatalf("before: %s", describe(p))
	}
	r.Source = recreateEvents(t, primary, pcl, 30, time.Now(), func() {
		if rd := r.Read(ctx, pos, time.Now()); len(rd.Partitions) != 0 {
			t.Fatalf("events listed while deleted: %+v", rd.Partitions)
		}
	})
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); !p.LagMessages.Known || p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("recreated across a refresh without it: %s, want all 30 of the new log behind", describe(p))
	}
}

// A topic recreated with more records than it had, read within seconds by
// the console's own source client: kgo's metadata cache must not hide the
// new topic id, or MM2's old position passes for one on the new log.
func TestLagRecreationSeenThroughMetadataCache(t *testing.T) {
	ctx := context.Background()
	primary, pcl, dcl := tenCopied(t)
	opts, err := kafka.ClientOptions("primary", &config.Cluster{Bootstrap: primary.ListenAddrs()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := churnReader(t, src, dcl)
	tp := model.TP{Topic: "events", Partition: 0}
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{tp: {Topic: "events", LastOffset: 9, LogOffset: 1, RecordMs: 1}},
		latestSync: map[model.TP]model.OffsetSync{}}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 0 {
		t.Fatalf("before: %s", describe(p))
	}
	recreateEvents(t, primary, pcl, 30, time.Now()) // the end does not go back; MM2's 10 is not past it
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 0); p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("recreated topic read through a cached old topic id: %s restarted %q", describe(p), p.Restarted)
	}
}

// A console started after the recreation never saw the old topic id: MM2's
// position past the source end, or an end that went backwards, gives it away.
func TestLagPositionPastEndOrEndBackwards(t *testing.T) {
	ctx := context.Background()
	_, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr", "events")
	fill(t, pcl, "events", 0, 30, time.Now())
	fill(t, pcl, "events", 1, 30, time.Now())
	fill(t, dcl, "events", 0, 100, time.Now())
	fill(t, dcl, "events", 1, 10, time.Now()) // what MM2's position 9 copied
	r := churnReader(t, pcl, dcl)
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{
		{Topic: "events", Partition: 0}: {Topic: "events", LastOffset: 99},
		{Topic: "events", Partition: 1}: {Topic: "events", Partition: 1, LastOffset: 9},
	}, latestSync: map[model.TP]model.OffsetSync{}}
	rd := r.Read(ctx, pos, time.Now())
	if p := lagOf(t, rd, 0); p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("position 100 past end 30: lag %v %q", p.LagMessages, p.Restarted)
	}
	if p := lagOf(t, rd, 1); p.LagMessages.V != 20 || p.Restarted.String() != "" {
		t.Fatalf("events-1: lag %v %q", p.LagMessages, p.Restarted)
	}
	// The end of events-1 goes back (a restarted log that MM2 has not read).
	r.parts.get(model.TP{Topic: "events", Partition: 1}).lastEnd = 40
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 1); p.LagMessages.V != 30 || p.Restarted.String() == "" {
		t.Fatalf("end went back: lag %v %q", p.LagMessages, p.Restarted)
	}
	// Same topic id: the log was truncated, not recreated, so what is below
	// its new end is still what MM2 read, and MM2's next position counts.
	pos.connect[model.TP{Topic: "events", Partition: 1}] = model.ConnectOffset{Topic: "events", Partition: 1, LastOffset: 29, LogOffset: 1}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 1); p.LagMessages.V != 0 || p.Restarted.String() != "" {
		t.Fatalf("MM2's position on the truncated log: %s restarted %q", describe(p), p.Restarted)
	}
}

// After Restart, no stored sync of the old log translates an offset; the
// syncs MM2 writes for the new log do.
func TestSyncIndexRestartStartsNewHistory(t *testing.T) {
	x := mm2.NewSyncIndex()
	tp := model.TP{Topic: "events", Partition: 0}
	x.Add([]model.OffsetSync{{Topic: "events", Upstream: 0, Downstream: 0, LogOffset: 1}, {Topic: "events", Upstream: 50, Downstream: 50, LogOffset: 2}})
	if tr := x.Translate(tp, 60); tr.Method != mm2.MethodConservative {
		t.Fatalf("before: %+v", tr)
	}
	x.Restart(tp)
	if tr := x.Translate(tp, 60); tr.Method != mm2.MethodUnknown {
		t.Fatalf("old log's syncs used for the new log: %+v", tr)
	}
	// The new log's first sync is not below the old one (no rewind to see).
	x.Add([]model.OffsetSync{{Topic: "events", Upstream: 55, Downstream: 80, LogOffset: 3}})
	if tr := x.Translate(tp, 60); tr.Offset != 81 || tr.Method != mm2.MethodConservative {
		t.Fatalf("new history: %+v", tr)
	}
	if tr := x.Translate(tp, 52); tr.Method != mm2.MethodTooOld {
		t.Fatalf("an offset before the new log's first sync must not use the old log's 50->50: %+v", tr)
	}
	x.Remove([]model.SyncKey{{LogOffset: 1}}) // thinning the old history keeps the boundary
	if tr := x.Translate(tp, 52); tr.Method != mm2.MethodTooOld {
		t.Fatalf("after Remove: %+v", tr)
	}
}

// Partitions whose first unreplicated record sits in a batch of hundreds of
// KB: Kafka returns such a batch whole only for the first partition of a
// fetch response, yet every one must get its age.
func TestLagTimestampsOfBigBatches(t *testing.T) {
	ctx := context.Background()
	c := kfake.MustCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "events"))
	t.Cleanup(c.Close)
	pcl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(2<<20), kgo.ProducerLinger(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pcl.Close)
	_, dcl := newCluster(t, "dr", "events")
	base := time.Now().Add(-25 * time.Second).Truncate(time.Millisecond)
	val := bytes.Repeat([]byte("x"), 1000)
	for p := range int32(4) {
		recs := make([]*kgo.Record, 300) // one ~300 KB batch per partition
		for i := range recs {
			recs[i] = &kgo.Record{Topic: "events", Partition: p, Value: val, Timestamp: base.Add(time.Duration(p) * time.Second)}
		}
		produce(t, pcl, recs...)
	}
	r := churnReader(t, pcl, dcl)
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{}, latestSync: map[model.TP]model.OffsetSync{}}
	for p := range int32(4) { // MM2 copied the first 10 of each
		pos.connect[model.TP{Topic: "events", Partition: p}] = model.ConnectOffset{Topic: "events", Partition: p, LastOffset: 9}
	}
	now := time.Now()
	rd := r.Read(ctx, pos, now)
	for p := range int32(4) {
		pl := lagOf(t, rd, p)
		want := now.Sub(base.Add(time.Duration(p) * time.Second)).Milliseconds()
		if !pl.LagMs.Known || pl.LagMs.V != want {
			t.Errorf("events-%d: lag ms %v, want %d", p, pl.LagMs, want)
		}
	}
}

// When an age cannot be read at all, the partition's lag is at least the
// time since its first unreplicated record was first seen, and the flow's
// RPO is that lower bound, never the known partitions' figure alone.
func TestLagUnreadableAgeIsALowerBound(t *testing.T) {
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr", "events")
	base := time.Now().Truncate(time.Millisecond)
	fill(t, pcl, "events", 0, 10, base.Add(-5*time.Second))
	fill(t, pcl, "events", 1, 10, base.Add(-5*time.Second))
	unreadable(primary, 1)
	r := churnReader(t, pcl, dcl)
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{
		{Topic: "events", Partition: 0}: {Topic: "events", LastOffset: 4},
		{Topic: "events", Partition: 1}: {Topic: "events", Partition: 1, LastOffset: 4},
	}, latestSync: map[model.TP]model.OffsetSync{}}
	r.Read(ctx, pos, base)
	later := base.Add(40 * time.Second)
	rd := r.Read(ctx, pos, later)
	p0, p1 := lagOf(t, rd, 0), lagOf(t, rd, 1)
	if !p0.LagMs.Known || p0.LagMs.V != 45_000 {
		t.Fatalf("events-0 lag ms %v, want 45000", p0.LagMs)
	}
	if p1.LagMs.Known || !p1.LagMsAtLeast.Known || p1.LagMsAtLeast.V != 40_000 {
		t.Fatalf("events-1: lag ms %v at least %v, want unknown and at least 40000", p1.LagMs, p1.LagMsAtLeast)
	}
	p0.LagMs = model.Known(1000) // a known partition younger than the bound
	s := &flowstate.FlowSnapshot{Partitions: []model.PartitionLag{p0, p1}}
	aggregate(s)
	if s.RPOMs == nil || *s.RPOMs != 40_000 || !s.RPOAtLeast || len(s.UnknownAge) != 1 || s.UnknownAge[0] != (model.TP{Topic: "events", Partition: 1}) {
		t.Fatalf("flow RPO %v at least %v unknown %v: want at least 40000 naming events-1", s.RPOMs, s.RPOAtLeast, s.UnknownAge)
	}
	if got := s.RPOText(); got != "at least 40s; age unknown for events-1" {
		t.Fatalf("RPO text %q", got)
	}
}

func ptr64(v int64) *int64 { return &v }

// One partition caught up and one whose MM2 position is not known yet (a
// topic MM2 has not taken up, its syncs not read yet): the flow is not OK
// and its RPO is not "0".
// unreadable makes fetches of partition p of every topic fail on c (its
// leader cannot serve it), so a record's timestamp there is never read.
func unreadable(c *kfake.Cluster, p int32) {
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		fr := req.(*kmsg.FetchRequest)
		resp := fr.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = fr.Version
		has := false
		for _, rt := range fr.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				has = has || rp.Partition == p
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		if !has {
			return nil, nil, false
		}
		return resp, nil, true
	})
}

// unreadableAgeReader reads "events" from a primary whose partition 0
// never serves a record's timestamp, mirrored to an empty DR.
func unreadableAgeReader(t *testing.T) (r *LagReader, primary, dr *kgo.Client) {
	t.Helper()
	p, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr", "events")
	unreadable(p, 0)
	return churnReader(t, pcl, dcl), pcl, dcl
}

// A partition written at every refresh that MM2 keeps up with keeps a
// short end history, not one entry per refresh up to the bound (4 KiB a
// partition with the array's growth, 400 MiB at 100k busy partitions); when it falls behind, its
// age is still at least the time since the end first passed MM2's
// position.
func TestLagEndHistoryOfABusyCaughtUpPartitionStaysShort(t *testing.T) {
	ctx := context.Background()
	r, pcl, dcl := unreadableAgeReader(t)
	tp := model.TP{Topic: "events"}
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{}, latestSync: map[model.TP]model.OffsetSync{}}
	at := time.Now().Truncate(time.Millisecond)
	for i := range 2 * maxSeen {
		fill(t, pcl, "events", 0, 1, at)
		fill(t, dcl, "events", 0, 1, at)
		pos.connect[tp] = model.ConnectOffset{Topic: "events", LastOffset: int64(i)} // MM2 copied it
		at = at.Add(5 * time.Second)
		if p0 := lagOf(t, r.Read(ctx, pos, at), 0); !p0.LagMessages.Known || p0.LagMessages.V != 0 {
			t.Fatalf("refresh %d: lag %v, want caught up", i, p0.LagMessages)
		}
	}
	if w := &r.parts.topic("events", 1)[0]; len(w.seen) > 0 || cap(w.seen) > 4 || !w.hasEnd {
		t.Fatalf("after %d refreshes caught up, the end history holds %d older entries (capacity %d, newest kept %v), want the newest alone", 2*maxSeen, len(w.seen), cap(w.seen), w.hasEnd)
	}
	// Behind from here: 3 records MM2 has not copied, their timestamps unreadable.
	fill(t, pcl, "events", 0, 3, at)
	behindSince := at.Add(5 * time.Second)
	lagOf(t, r.Read(ctx, pos, behindSince), 0)
	p0 := lagOf(t, r.Read(ctx, pos, behindSince.Add(40*time.Second)), 0)
	if p0.LagMessages.V != 3 || p0.LagMs.Known || !p0.LagMsAtLeast.Known || p0.LagMsAtLeast.V != 40_000 {
		t.Fatalf("behind: lag %v, ms %v, at least %v; want 3, unknown, at least 40000", p0.LagMessages, p0.LagMs, p0.LagMsAtLeast)
	}
}

// A partition written at every refresh while MM2 stands still (stopped)
// keeps at most maxSeen+1 ends, and its age stays exactly the time since
// its end first passed MM2's position: the entry that bound rests on is
// the first kept.
func TestLagEndHistoryOfABusyLaggingPartitionIsBounded(t *testing.T) {
	ctx := context.Background()
	r, pcl, dcl := unreadableAgeReader(t)
	tp := model.TP{Topic: "events"}
	fill(t, pcl, "events", 0, 1, time.Now())
	fill(t, dcl, "events", 0, 1, time.Now())
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{tp: {Topic: "events", LastOffset: 0}}, latestSync: map[model.TP]model.OffsetSync{}}
	start := time.Now().Truncate(time.Millisecond)
	lagOf(t, r.Read(ctx, pos, start), 0) // caught up
	at := start
	for i := range 4 * maxSeen {
		fill(t, pcl, "events", 0, 1, at)
		at = at.Add(5 * time.Second)
		p0 := lagOf(t, r.Read(ctx, pos, at), 0)
		// The first record behind was first seen at the first refresh after it.
		if want := at.Sub(start.Add(5 * time.Second)).Milliseconds(); p0.LagMessages.V != int64(i+1) || !p0.LagMsAtLeast.Known || p0.LagMsAtLeast.V != want {
			t.Fatalf("refresh %d: lag %v, at least %v; want %d, at least %d", i, p0.LagMessages, p0.LagMsAtLeast, i+1, want)
		}
		if w := &r.parts.topic("events", 1)[0]; len(w.seen) > maxSeen || cap(w.seen) > maxSeen {
			t.Fatalf("refresh %d: the end history holds %d older entries (capacity %d), want at most %d", i, len(w.seen), cap(w.seen), maxSeen)
		}
	}
}

func TestFlowNotOKOnMissingPosition(t *testing.T) {
	s := &flowstate.FlowSnapshot{Partitions: []model.PartitionLag{
		{Topic: model.Intern("events"), Partition: 0, LagMessages: model.Known(0), LagMs: model.Known(0)},
		{Topic: model.Intern("late"), Partition: 0, SourceEnd: model.Known(50)},
	}}
	aggregate(s)
	var tr statusTracker
	hb := time.Second
	st, why := tr.update(time.Now(), s.RPO(), &hb, "", config.Thresholds{HeartbeatTimeout: config.Duration(30 * time.Second)})
	if st != model.FlowStatusUnknown || !s.RPOAtLeast || why != "RPO at least 0s; age unknown for late-0" {
		t.Fatalf("status %s %q, rpo %v at least %v", st, why, s.RPOMs, s.RPOAtLeast)
	}
}

// A partition MM2 has no position for is unknown, except one whose log never
// held a record (end 0): nothing there can be lost. Once it holds one, it is
// unknown again until MM2 says where it is; a log emptied by retention
// (end > 0) never counts as empty.
func TestLagEmptyLogIsNothingAtRisk(t *testing.T) {
	ctx := context.Background()
	_, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr", "events")
	fill(t, pcl, "events", 0, 10, time.Now())
	fill(t, dcl, "events", 0, 10, time.Now())
	r := churnReader(t, pcl, dcl)
	pos := mapPositions{connect: map[model.TP]model.ConnectOffset{
		{Topic: "events", Partition: 0}: {Topic: "events", LastOffset: 9},
	}, latestSync: map[model.TP]model.OffsetSync{}}
	s := &flowstate.FlowSnapshot{Partitions: r.Read(ctx, pos, time.Now()).Partitions}
	aggregate(s)
	if p := lagOf(t, Reading{Partitions: s.Partitions}, 1); p.Method != model.PositionEmptyLog || p.LagMessages.V != 0 || p.LagMs.V != 0 {
		t.Fatalf("empty events-1: %s", describe(p))
	}
	if s.RPOAtLeast || len(s.UnknownAge) != 0 || s.RPOMs == nil || *s.RPOMs != 0 {
		t.Fatalf("RPO %v at least %v, unknown %v: want 0, nothing unknown", s.RPOMs, s.RPOAtLeast, s.UnknownAge)
	}
	fill(t, pcl, "events", 1, 1, time.Now().Add(-time.Minute))
	// Unknown, or behind by its record (DR's copy holds none): never caught up.
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 1); p.LagMessages.Known && p.LagMessages.V != 1 || p.Method == model.PositionEmptyLog {
		t.Fatalf("events-1 with a record and no position: %s", describe(p))
	}
	if _, err := kadm.NewClient(pcl).DeleteRecords(ctx, kadm.Offsets{"events": {1: {Topic: "events", Partition: 1, At: 1}}}); err != nil {
		t.Fatal(err)
	}
	if p := lagOf(t, r.Read(ctx, pos, time.Now()), 1); p.LagMessages.Known || p.Method == model.PositionEmptyLog {
		t.Fatalf("events-1 emptied by deletion, no position: %s", describe(p))
	}
}

// An MM2 internal topic created after ingestion started is read within
// seconds, not at the next 30 s layout check.
func TestIngestPicksUpLateInternalTopic(t *testing.T) {
	t.Parallel() // clusters and a store of its own; it waits on ingestion
	ctx := context.Background()
	primary, _ := newCluster(t, "primary", "events")
	dr, dcl := newCluster(t, "dr", "events")
	cfg := testConfig(t, primary, dr)
	ft := flowstate.TopicsOf(cfg.Flows[0])
	m, _ := newTestMonitor(t, cfg, t.TempDir()+"/db")
	defer runIngester(m)()
	time.Sleep(300 * time.Millisecond) // the first layout check found nothing
	if _, err := kadm.NewClient(dcl).CreateTopic(ctx, 1, 1, nil, ft.OffsetSyncs); err != nil {
		t.Fatal(err)
	}
	s := model.OffsetSync{Topic: "events", Partition: 0, Upstream: 5, Downstream: 5}
	produce(t, dcl, &kgo.Record{Topic: ft.OffsetSyncs, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)})
	created := time.Now()
	for m.flows[0].state.Syncs.Len() == 0 {
		if time.Since(created) > 8*time.Second {
			t.Fatalf("sync in %s not read %s after the topic was created", ft.OffsetSyncs, time.Since(created).Round(time.Second))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mapPositions is a positionSource of maps a test changes between reads.
type mapPositions struct {
	latestSync map[model.TP]model.OffsetSync
	connect    map[model.TP]model.ConnectOffset
}

func (p mapPositions) newestSync(tp model.TP) (model.OffsetSync, bool) {
	s, ok := p.latestSync[tp]
	return s, ok
}

func (p mapPositions) connectOffset(tp model.TP) (model.ConnectOffset, bool) {
	c, ok := p.connect[tp]
	return c, ok
}

// orderedPositions records whether any position was asked for after the
// source cluster had answered a ListOffsets request.
type orderedPositions struct {
	mapPositions
	listed    *atomic.Bool
	lateAsked atomic.Int32
}

func (p *orderedPositions) newestSync(tp model.TP) (model.OffsetSync, bool) {
	if p.listed.Load() {
		p.lateAsked.Add(1)
	}
	return p.mapPositions.newestSync(tp)
}

func (p *orderedPositions) connectOffset(tp model.TP) (model.ConnectOffset, bool) {
	if p.listed.Load() {
		p.lateAsked.Add(1)
	}
	return p.mapPositions.connectOffset(tp)
}

// MM2's positions are taken before the source's offsets are read: a
// position taken after could be newer than the end offsets read, and the
// lag would read smaller than it was at any moment.
func TestLagTakesPositionsBeforeOffsets(t *testing.T) {
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr", "events")
	fill(t, pcl, "events", 0, 10, time.Now())
	fill(t, dcl, "events", 0, 5, time.Now()) // what MM2's position 4 copied
	var listed atomic.Bool
	primary.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		listed.Store(true)
		primary.KeepControl()
		return nil, nil, false // observe only
	})
	tp := model.TP{Topic: "events", Partition: 0}
	pos := &orderedPositions{listed: &listed, mapPositions: mapPositions{
		connect: map[model.TP]model.ConnectOffset{tp: {Topic: "events", LastOffset: 4, LogOffset: 1, RecordMs: 1}}}}
	r := churnReader(t, pcl, dcl)
	p := lagOf(t, r.Read(ctx, pos, time.Now()), 0)
	if !listed.Load() {
		t.Fatal("the read listed no offsets on the primary")
	}
	if n := pos.lateAsked.Load(); n != 0 {
		t.Fatalf("%d positions asked for after the offsets were read", n)
	}
	if p.LagMessages.V != 5 {
		t.Fatalf("lag %d, want 5", p.LagMessages.V)
	}
}

// Topic figures add up whatever order the rows come in: a refresh's come
// topic by topic, but a table out of order must not split a topic in two.
func TestAggregateRowsOutOfTopicOrder(t *testing.T) {
	s := &flowstate.FlowSnapshot{Partitions: []model.PartitionLag{
		{Topic: model.Intern("b"), Partition: 0, LagMessages: model.Known(3), LagMs: model.Known(300), AbortedInDR: 12},
		{Topic: model.Intern("a"), Partition: 0, LagMessages: model.Known(1), LagMs: model.Known(100), AbortedInDR: 1},
		{Topic: model.Intern("b"), Partition: 1, LagMessages: model.Known(4), LagMs: model.Known(50)},
		{Topic: model.Intern("a"), Partition: 1, SourceEnd: model.Known(9)}, // position unknown
	}}
	aggregate(s)
	if len(s.TopicLags) != 2 {
		t.Fatalf("%d topics, want 2: %+v", len(s.TopicLags), s.TopicLags)
	}
	a, b := s.TopicLags[0], s.TopicLags[1]
	if a.Topic != "a" || a.Partitions != 2 || a.LagMessages != 1 || a.Unknown != 1 || !a.MaxLagAtLeast || *a.MaxLagMs != 100 {
		t.Errorf("topic a: %+v", a)
	}
	if b.Topic != "b" || b.Partitions != 2 || b.LagMessages != 7 || b.Unknown != 0 || *b.MaxLagMs != 300 {
		t.Errorf("topic b: %+v", b)
	}
	if *s.TotalLagMessages != 8 || *s.MaxLagMessages != 4 || *s.RPOMs != 300 || !s.RPOAtLeast || s.Unknown != 1 || s.AbortedInDR != 13 {
		t.Errorf("flow: total %d max %d rpo %d at least %v unknown %d aborted in DR %d", *s.TotalLagMessages, *s.MaxLagMessages, *s.RPOMs, s.RPOAtLeast, s.Unknown, s.AbortedInDR)
	}
}
