//go:build e2e

// End-to-end proof that the console's MM2 decoders (package kafka) read every record that REAL
// MirrorMaker 2 writes: offset syncs, checkpoints, heartbeats and the Connect offsets of
// MirrorSourceConnector.
//
//	go test -tags e2e -count=1 -timeout 40m ./testenv/...
//	go test -tags e2e -count=1 -run 'TestMM2Dedicated/identity' ./testenv/
//
// Self-check: DRCONSOLE_E2E_MUTATE=swap-sync-bytes makes the test decode offset syncs with
// reversed byte order (a deliberately wrong decoder); the test must then FAIL.
package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/testenv"
)

const (
	group       = "flink-events" // must not match console-consumer-.* (MM2's default group exclude)
	srcAlias    = "primary"
	tgtAlias    = "dr"
	waitTimeout = 3 * time.Minute
)

// mirrorMode says how MM2 runs.
type mirrorMode struct {
	name string
	// start starts mirroring and returns the name of the Connect offsets topic on the target.
	start func(t *testing.T, opts testenv.MM2Options) (offsetsTopic string)
	// remoteHeartbeats: whether the target gets <src>.heartbeats (dedicated mode: yes, via the
	// reverse herder; Connect cluster with only primary->dr connectors: no).
	remoteHeartbeats bool
}

var dedicated = mirrorMode{
	name: "dedicated",
	start: func(t *testing.T, opts testenv.MM2Options) string {
		testenv.StartMM2Dedicated(t, opts)
		return "mm2-offsets." + srcAlias + ".internal"
	},
	remoteHeartbeats: true,
}

var connectCluster = mirrorMode{
	name: "connect",
	start: func(t *testing.T, opts testenv.MM2Options) string {
		c := testenv.StartConnect(t, opts.Target)
		c.CreateMirrorConnectors(t, opts)
		return c.OffsetTopic
	},
	remoteHeartbeats: false,
}

type variant struct {
	name, policy, location string
}

var variants = []variant{
	{"identity-target", "identity", "target"},
	{"default-source", "default", "source"},
}

func TestMM2Dedicated(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) { runScenario(t, testenv.KafkaDefault, dedicated, v) })
	}
}

// TestMM2ConnectCluster runs the same checks with the mirror connectors on a Connect
// distributed worker (REST), one variant only to keep the run short.
func TestMM2ConnectCluster(t *testing.T) {
	for _, v := range variants[:1] {
		t.Run(v.name, func(t *testing.T) { runScenario(t, testenv.KafkaDefault, connectCluster, v) })
	}
}

// ---------------------------------------------------------------------------------------------

type tp struct {
	topic string
	part  int32
}

func (x tp) String() string { return fmt.Sprintf("%s/%d", x.topic, x.part) }

// rec is one data record as seen on a cluster.
type rec struct {
	offset int64
	value  string
	ts     time.Time
}

type commit struct {
	at       int64
	metadata string
	atEnd    bool // committed at the partition end (a fully caught-up consumer)
}

func runScenario(t *testing.T, dist testenv.KafkaDist, mode mirrorMode, v variant) {
	testStart := time.Now()
	primary := testenv.StartKafkaDist(t, srcAlias, dist)
	dr := testenv.StartKafkaDist(t, tgtAlias, dist)
	opts := testenv.MM2Options{
		Source: primary, Target: dr,
		SourceAlias: srcAlias, TargetAlias: tgtAlias,
		Policy: v.policy, OffsetSyncsLocation: v.location,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// --- topics and traffic on primary -------------------------------------------------------
	padm := primary.Admin(t)
	dadm := dr.Admin(t)
	parts := map[string]int32{"events": 3, "orders": 2, "ignored": 1}
	for topic, n := range parts {
		r, err := padm.CreateTopics(ctx, n, 1, nil, topic)
		if err == nil {
			err = r.Error()
		}
		if err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	produceStart := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	plain := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	produce := func(cl *kgo.Client, topic string, part int32, n int, tag string) {
		t.Helper()
		recs := make([]*kgo.Record, 0, n)
		for i := range n {
			recs = append(recs, &kgo.Record{
				Topic: topic, Partition: part,
				Key:   fmt.Appendf(nil, "k-%d", rng.IntN(50)),
				Value: fmt.Appendf(nil, "%s/%d/%s/%d/%016x", topic, part, tag, i, rng.Uint64()),
			})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce %s/%d: %v", topic, part, err)
		}
	}
	for p := range parts["events"] {
		produce(plain, "events", p, 1000+150*int(p), "plain")
	}
	produce(plain, "ignored", 0, 10, "plain")
	for p := range parts["orders"] {
		produce(plain, "orders", p, 150, "plain")
	}
	// Transactions on orders: every commit/abort marker takes an offset, so upstream offsets have
	// gaps that downstream offsets do not (MM2's producer is not transactional here).
	txn := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("orders-tx"))
	for i := range 6 {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		tag, end := "txn-commit", kgo.TryCommit
		if i == 3 {
			tag, end = "txn-abort", kgo.TryAbort
		}
		for p := range parts["orders"] {
			produce(txn, "orders", p, 10+5*i, fmt.Sprintf("%s-%d", tag, i))
		}
		if err := txn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, end); err != nil {
			t.Fatalf("end txn %d: %v", i, err)
		}
	}
	// EndTransaction returns before the broker has written the markers; wait until the last
	// stable offset (read_committed end) equals the high watermark so that no marker lands after
	// the tail below.
	if err := testenv.Eventually(30*time.Second, 100*time.Millisecond, func() error {
		lso, err := padm.ListCommittedOffsets(ctx, "orders")
		if err != nil {
			return err
		}
		hwm := endOffsets(t, padm, "orders")
		for p := range parts["orders"] {
			if o, _ := lso.Lookup("orders", p); o.Offset != hwm[tp{"orders", p}] {
				return fmt.Errorf("orders/%d: LSO %d, HWM %d", p, o.Offset, hwm[tp{"orders", p}])
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// End with plain records so that the last offset of every partition is a data record.
	for p := range parts["orders"] {
		produce(plain, "orders", p, 40, "plain-tail")
	}
	t.Logf("produced on primary in %s", time.Since(produceStart).Round(time.Millisecond))

	// Read back what primary holds. MM2's source consumer uses the default isolation level
	// (read_uncommitted), so aborted records are replicated too; read the same way.
	srcTopics := []string{"events", "orders"}
	primaryData := map[tp][]rec{}
	for _, topic := range srcTopics {
		for k, rs := range readAll(t, primary, topic) {
			primaryData[k] = rs
		}
	}
	primaryEnd := endOffsets(t, padm, srcTopics...)
	valueAt := map[tp]map[int64]string{}
	for k, rs := range primaryData {
		m := map[int64]string{}
		for _, r := range rs {
			m[r.offset] = r.value
		}
		valueAt[k] = m
		if last := rs[len(rs)-1].offset; last+1 != primaryEnd[k] {
			t.Fatalf("%s: last data record at %d but end offset %d; test setup expects a data record last", k, last, primaryEnd[k])
		}
	}
	if got, want := len(primaryData[tp{"orders", 0}]), int(primaryEnd[tp{"orders", 0}]); got >= want {
		t.Fatalf("orders/0: %d records for end offset %d: expected transaction markers to leave gaps", got, want)
	}

	// Consumer group on primary: some partitions fully consumed, some in the middle (one inside
	// the transactional range of orders).
	commits := map[tp]commit{
		{"events", 0}: {at: primaryEnd[tp{"events", 0}], metadata: "flink-ckpt-7", atEnd: true},
		{"events", 1}: {at: 537, metadata: ""},
		{"events", 2}: {at: primaryEnd[tp{"events", 2}], metadata: "", atEnd: true},
		{"orders", 0}: {at: primaryEnd[tp{"orders", 0}], metadata: "", atEnd: true},
		{"orders", 1}: {at: 187, metadata: "mid-txn"},
	}
	offs := kadm.Offsets{}
	for k, c := range commits {
		offs.Add(kadm.Offset{Topic: k.topic, Partition: k.part, At: c.at, LeaderEpoch: -1, Metadata: c.metadata})
	}
	if r, err := padm.CommitOffsets(ctx, group, offs); err != nil || r.Error() != nil {
		t.Fatalf("commit %s: %v %v", group, err, r.Error())
	}

	// --- MM2 -----------------------------------------------------------------------------------
	mm2Start := time.Now()
	offsetsTopic := mode.start(t, opts)
	remote := func(k tp) tp { return tp{opts.RemoteTopic(k.topic), k.part} }

	// 1. DR catches up: every primary data record is on DR, same order, same values.
	var drData map[tp][]rec
	err := testenv.Eventually(waitTimeout, time.Second, func() error {
		drEnd := endOffsets(t, dadm, opts.RemoteTopic("events"), opts.RemoteTopic("orders"))
		for k, rs := range primaryData {
			if got := drEnd[remote(k)]; got != int64(len(rs)) {
				return fmt.Errorf("%s on dr: end offset %d, want %d", remote(k), got, len(rs))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("replication did not catch up: %v", err)
	}
	t.Logf("dr caught up %s after MM2 start", time.Since(mm2Start).Round(time.Millisecond))
	drData = map[tp][]rec{}
	for _, topic := range srcTopics {
		for k, rs := range readAll(t, dr, opts.RemoteTopic(topic)) {
			drData[k] = rs
		}
	}
	// upToDown maps each replicated primary offset to its DR offset (by position; values unique).
	upToDown := map[tp]map[int64]int64{}
	downToUp := map[tp]map[int64]int64{}
	for k, prs := range primaryData {
		drs := drData[remote(k)]
		if len(drs) != len(prs) {
			t.Fatalf("%s: dr has %d records, primary %d", remote(k), len(drs), len(prs))
		}
		upToDown[k], downToUp[k] = map[int64]int64{}, map[int64]int64{}
		for i := range prs {
			if drs[i].value != prs[i].value || drs[i].offset != int64(i) {
				t.Fatalf("%s[%d]: dr offset %d value %q, primary offset %d value %q", k, i, drs[i].offset, drs[i].value, prs[i].offset, prs[i].value)
			}
			upToDown[k][prs[i].offset] = drs[i].offset
			downToUp[k][drs[i].offset] = prs[i].offset
		}
	}
	if tl := topicList(t, dadm); slices.Contains(tl, opts.RemoteTopic("ignored")) {
		t.Errorf("topic %q was replicated although it does not match %q", opts.RemoteTopic("ignored"), opts.Topics)
	}

	// 2. Checkpoints: wait until the latest checkpoint of every committed partition carries the
	// committed upstream offset, and the fully consumed ones translate to the DR end offset
	// (before KAFKA-15906: to the +1 rule over the partition's newest sync).
	cpTopic := opts.CheckpointsTopic()
	syncTopic, syncCluster := opts.OffsetSyncsTopic()
	atEndWant := func(k tp) int64 {
		if timedSyncs(dist) {
			return int64(len(drData[remote(k)]))
		}
		var ss []model.OffsetSync
		for _, r := range readTopic(t, syncCluster, syncTopic) {
			if s, err := mm2.DecodeOffsetSync(r.Key, r.Value); err == nil && s.Topic == k.topic && s.Partition == k.part {
				ss = append(ss, s)
			}
		}
		want, _ := translate(ss, commits[k].at)
		return want
	}
	var latestCP map[tp]model.Checkpoint
	var cpRecords int
	err = testenv.Eventually(waitTimeout, time.Second, func() error {
		latestCP, cpRecords = map[tp]model.Checkpoint{}, 0
		if !slices.Contains(topicList(t, dadm), cpTopic) {
			return fmt.Errorf("no %s on dr yet", cpTopic)
		}
		for _, r := range readTopic(t, dr, cpTopic) {
			cpRecords++
			cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
			if err != nil {
				t.Fatalf("DecodeCheckpoint(%x, %x) at %s/%d@%d: %v", r.Key, r.Value, r.Topic, r.Partition, r.Offset, err)
			}
			if cp.Group == group {
				latestCP[tp{cp.Topic, cp.Partition}] = cp
			}
		}
		for k, c := range commits {
			cp, ok := latestCP[remote(k)]
			if !ok {
				return fmt.Errorf("no checkpoint for %s yet", remote(k))
			}
			if cp.Upstream != c.at {
				return fmt.Errorf("checkpoint %s upstream %d, committed %d", remote(k), cp.Upstream, c.at)
			}
			if want := atEndWant(k); c.atEnd && cp.Downstream != want {
				return fmt.Errorf("checkpoint %s downstream %d, want %d (dr end %d)", remote(k), cp.Downstream, want, len(drData[remote(k)]))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("checkpoints: %v", err)
	}
	t.Logf("checkpoints complete %s after MM2 start (%d records in %s)", time.Since(mm2Start).Round(time.Millisecond), cpRecords, cpTopic)

	// 3. Connect offsets of MirrorSourceConnector catch up: last replicated offset + 1 = end.
	var latestSrcOff map[tp]model.ConnectOffset
	var offRecords, offOther int
	err = testenv.Eventually(waitTimeout, time.Second, func() error {
		latestSrcOff, offRecords, offOther = map[tp]model.ConnectOffset{}, 0, 0
		for _, r := range readTopic(t, dr, offsetsTopic) {
			offRecords++
			o, err := mm2.DecodeConnectOffset(r.Key, r.Value)
			if errors.Is(err, mm2.ErrNotSourceOffset) {
				offOther++
				continue
			}
			if err != nil {
				t.Fatalf("DecodeConnectOffset(%s, %s) at %s/%d@%d: %v", r.Key, r.Value, r.Topic, r.Partition, r.Offset, err)
			}
			if o.Connector != "MirrorSourceConnector" || o.Cluster != srcAlias {
				t.Fatalf("connect offset %s -> %+v: want connector MirrorSourceConnector, cluster %s", r.Key, o, srcAlias)
			}
			k := tp{o.Topic, o.Partition}
			if vals, ok := valueAt[k]; ok {
				if _, ok := vals[o.LastOffset]; !ok {
					t.Fatalf("connect offset %+v: primary %s has no data record at %d", o, k, o.LastOffset)
				}
			}
			latestSrcOff[k] = o
		}
		for k := range primaryData {
			o, ok := latestSrcOff[k]
			if !ok {
				return fmt.Errorf("no MirrorSourceConnector offset for %s yet", k)
			}
			if o.LastOffset+1 != primaryEnd[k] {
				return fmt.Errorf("%s: connect offset %d + 1 != primary end %d", k, o.LastOffset, primaryEnd[k])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("connect offsets in %s: %v", offsetsTopic, err)
	}
	t.Logf("%s: %d records, %d MirrorSourceConnector partitions, %d other-connector entries (ErrNotSourceOffset)",
		offsetsTopic, offRecords, len(latestSrcOff), offOther)

	// 4. Offset syncs: on the cluster the location says, not on the other one.
	other := dr
	if syncCluster == dr {
		other = primary
	}
	if !slices.Contains(topicList(t, syncCluster.Admin(t)), syncTopic) {
		t.Fatalf("offset-syncs topic %s not on %s (location=%s); topics there: %v", syncTopic, syncCluster.Name, v.location, topicList(t, syncCluster.Admin(t)))
	}
	for _, name := range topicList(t, other.Admin(t)) {
		if strings.HasPrefix(name, "mm2-offset-syncs") {
			t.Errorf("unexpected offset-syncs topic %s on %s (location=%s)", name, other.Name, v.location)
		}
	}
	decodeSync := mm2.DecodeOffsetSync
	if os.Getenv("DRCONSOLE_E2E_MUTATE") == "swap-sync-bytes" {
		t.Log("MUTATION: decoding offset syncs with reversed INT64 byte order; this test must fail")
		decodeSync = func(key, value []byte) (model.OffsetSync, error) {
			v := slices.Clone(value)
			for i := 0; i+8 <= len(v); i += 8 {
				slices.Reverse(v[i : i+8])
			}
			return mm2.DecodeOffsetSync(key, v)
		}
	}
	syncs := map[tp][]model.OffsetSync{}
	syncRecs := readTopic(t, syncCluster, syncTopic)
	// The heartbeats topics are replicated too (and so have syncs); read them after the syncs.
	hbUp := map[int64]string{}
	hbDown := map[int64]string{}
	if mode.remoteHeartbeats {
		for _, rs := range readAll(t, primary, "heartbeats") {
			for _, r := range rs {
				hbUp[r.offset] = r.value
			}
		}
		for _, rs := range readAll(t, dr, srcAlias+".heartbeats") {
			for _, r := range rs {
				hbDown[r.offset] = r.value
			}
		}
	}
	for _, r := range syncRecs {
		s, err := decodeSync(r.Key, r.Value)
		if err != nil {
			t.Fatalf("DecodeOffsetSync(%x, %x) at %s@%d: %v", r.Key, r.Value, syncTopic, r.Offset, err)
		}
		k := tp{s.Topic, s.Partition}
		syncs[k] = append(syncs[k], s)
		switch {
		case s.Topic == "heartbeats" && mode.remoteHeartbeats:
			up, okU := hbUp[s.Upstream]
			down, okD := hbDown[s.Downstream]
			if !okU || !okD || up != down {
				t.Errorf("sync %+v: primary heartbeats@%d=%x (%v), dr %s.heartbeats@%d=%x (%v)", s, s.Upstream, up, okU, srcAlias, s.Downstream, down, okD)
			}
		case valueAt[k] != nil:
			up, okU := valueAt[k][s.Upstream]
			var down string
			okD := s.Downstream >= 0 && s.Downstream < int64(len(drData[remote(k)]))
			if okD {
				down = drData[remote(k)][s.Downstream].value
			}
			if !okU || !okD || up != down {
				t.Errorf("sync %+v: primary %s@%d=%q (%v), dr %s@%d=%q (%v)", s, k, s.Upstream, up, okU, remote(k), s.Downstream, down, okD)
			}
		default:
			t.Errorf("sync for unexpected topic-partition %+v", s)
		}
	}
	for k := range primaryData {
		ss := syncs[k]
		if len(ss) == 0 {
			t.Errorf("no offset syncs for %s", k)
			continue
		}
		gap := false
		for _, s := range ss {
			gap = gap || s.Upstream != s.Downstream
		}
		// events has no upstream gaps, so up == down; orders has transaction markers.
		if want := k.topic == "orders"; gap != want {
			t.Errorf("%s: syncs with upstream != downstream: %v, want %v (%v)", k, gap, want, ss)
		}
	}
	t.Logf("%s on %s: %d syncs for %d partitions", syncTopic, syncCluster.Name, len(syncRecs), len(syncs))

	// 5. Checkpoint values vs. the +1 rule over the syncs we read.
	for k, c := range commits {
		cp := latestCP[remote(k)]
		if cp.Metadata != c.metadata {
			t.Errorf("checkpoint %s metadata %q, committed %q", remote(k), cp.Metadata, c.metadata)
		}
		full, ok := translate(syncs[k], c.at)
		if !ok {
			t.Errorf("%s: committed %d is older than every sync", k, c.at)
			continue
		}
		// MM2 keeps a sparse subset of syncs in memory (OffsetSyncStore), so its answer is the +1
		// rule applied to SOME sync at or below U; never more than the answer from all syncs.
		fromSome := false
		for _, s := range syncs[k] {
			if s.Upstream <= c.at && plusOne(s, c.at) == cp.Downstream {
				fromSome = true
			}
		}
		if !fromSome || cp.Downstream > full {
			t.Errorf("checkpoint %s %d->%d: not the +1 rule over any sync (all-syncs answer %d)", remote(k), cp.Upstream, cp.Downstream, full)
		}
		if c.atEnd && cp.Downstream != full {
			t.Errorf("checkpoint %s %d->%d, +1 rule over the latest sync gives %d", remote(k), cp.Upstream, cp.Downstream, full)
		}
		// Safety: the record just before the translated position was consumed upstream.
		if cp.Downstream > 0 {
			if up, ok := downToUp[k][cp.Downstream-1]; !ok || up >= c.at {
				t.Errorf("checkpoint %s -> %d: dr record %d is primary offset %d (ok=%v), not below committed %d", remote(k), cp.Downstream, cp.Downstream-1, up, ok, c.at)
			}
		}
		t.Logf("checkpoint %s: upstream %d -> downstream %d (all-syncs +1 rule: %d, metadata %q)", remote(k), cp.Upstream, cp.Downstream, full, cp.Metadata)
	}
	var atEnd []endCheckpoint
	for k, c := range commits {
		if c.atEnd {
			atEnd = append(atEnd, endCheckpoint{remote(k).String(), latestCP[remote(k)].Downstream, int64(len(drData[remote(k)]))})
		}
	}
	checkTimedSyncs(t, dist, atEnd)

	// 6. sync.group.offsets.enabled: the DR group follows the checkpoints.
	err = testenv.Eventually(waitTimeout, time.Second, func() error {
		r, err := testenv.FetchCommitted(ctx, dadm, group)
		if err != nil {
			return err
		}
		// Compare with the checkpoints as they are now (a later checkpoint may have moved on).
		for _, rec := range readTopic(t, dr, cpTopic) {
			if cp, err := mm2.DecodeCheckpoint(rec.Key, rec.Value); err == nil && cp.Group == group {
				latestCP[tp{cp.Topic, cp.Partition}] = cp
			}
		}
		for k := range commits {
			o, ok := r.Lookup(remote(k).topic, k.part)
			if !ok || o.Err != nil {
				return fmt.Errorf("dr group %s has no offset for %s (%v)", group, remote(k), o.Err)
			}
			if want := latestCP[remote(k)].Downstream; o.At != want {
				return fmt.Errorf("dr group %s %s at %d, checkpoint says %d", group, remote(k), o.At, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("group offset sync: %v", err)
	}

	// 7. Heartbeats (emitted every second; wait for a few).
	checkHeartbeats := func(k *testenv.Kafka, topic, wantSrc, wantTgt string) {
		t.Helper()
		const want = 3
		var recs []*kgo.Record
		var now time.Time
		if err := testenv.Eventually(waitTimeout, time.Second, func() error {
			recs = readTopic(t, k, topic)
			now = time.Now() // after the read: a heartbeat written while it ran is in recs
			if len(recs) < want {
				return fmt.Errorf("%s on %s: %d heartbeats, want at least %d", topic, k.Name, len(recs), want)
			}
			return nil
		}); err != nil {
			t.Error(err)
			return
		}
		for _, r := range recs {
			hb, err := mm2.DecodeHeartbeat(r.Key, r.Value)
			if err != nil {
				t.Fatalf("DecodeHeartbeat(%x, %x) at %s/%d@%d: %v", r.Key, r.Value, topic, r.Partition, r.Offset, err)
			}
			if hb.SourceAlias != wantSrc || hb.TargetAlias != wantTgt {
				t.Errorf("%s on %s: heartbeat %s->%s, want %s->%s", topic, k.Name, hb.SourceAlias, hb.TargetAlias, wantSrc, wantTgt)
			}
			ts := time.UnixMilli(hb.EmittedMs)
			if ts.Before(testStart.Truncate(time.Millisecond)) || ts.After(now) {
				t.Errorf("%s on %s: heartbeat timestamp %s outside the test window [%s, %s]", topic, k.Name, ts, testStart, now)
			}
			if !r.Timestamp.Equal(ts) {
				t.Errorf("%s on %s: record timestamp %s != heartbeat timestamp %s", topic, k.Name, r.Timestamp, ts)
			}
		}
		t.Logf("%s on %s: %d heartbeats %s->%s", topic, k.Name, len(recs), wantSrc, wantTgt)
	}
	drTopics := topicList(t, dadm)
	// Local heartbeats written by the primary->dr MirrorHeartbeatConnector into dr.
	checkHeartbeats(dr, "heartbeats", srcAlias, tgtAlias)
	remoteHB := srcAlias + ".heartbeats" // prefixed even under IdentityReplicationPolicy
	if mode.remoteHeartbeats {
		// Written by the dr->primary herder into primary's `heartbeats`, replicated to dr.
		checkHeartbeats(primary, "heartbeats", tgtAlias, srcAlias)
		checkHeartbeats(dr, remoteHB, tgtAlias, srcAlias)
	} else if slices.Contains(drTopics, remoteHB) {
		t.Errorf("%s exists on dr although nothing writes primary's heartbeats in mode %s", remoteHB, mode.name)
	}

	t.Logf("topics on primary: %v", topicList(t, padm))
	t.Logf("topics on dr: %v", drTopics)
	t.Logf("scenario %s %s/%s done in %s", dist, mode.name, v.name, time.Since(testStart).Round(time.Millisecond))
}

// translate applies MM2's rule with ALL syncs: greatest sync with upstream <= u, then
// downstream + (u == upstream ? 0 : 1). ok=false if u is older than every sync.
func translate(syncs []model.OffsetSync, u int64) (int64, bool) {
	best := model.OffsetSync{Upstream: -1}
	for _, s := range syncs {
		if s.Upstream <= u && s.Upstream >= best.Upstream {
			best = s
		}
	}
	if best.Upstream < 0 {
		return -1, false
	}
	return plusOne(best, u), true
}

func plusOne(s model.OffsetSync, u int64) int64 {
	if u == s.Upstream {
		return s.Downstream
	}
	return s.Downstream + 1
}

// ---------------------------------------------------------------------------------------------
// Reading helpers

func topicList(t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	names := td.Names()
	sort.Strings(names)
	return names
}

func endOffsets(t *testing.T, adm *kadm.Client, topics ...string) map[tp]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	lo, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		t.Fatalf("list end offsets %v: %v", topics, err)
	}
	m := map[tp]int64{}
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			m[tp{o.Topic, o.Partition}] = o.Offset
		}
	})
	return m
}

// readTopic returns every record of topic currently on k (all partitions, from the log start to
// the end offset read before consuming).
func readTopic(t *testing.T, k *testenv.Kafka, topic string) []*kgo.Record {
	t.Helper()
	return readTopicAs(t, k, topic, false)
}

// readCommitted is readTopic as a read_committed consumer sees it, up to the last stable
// offset: what DR holds when MirrorMaker 2 writes it in transactions (exactly-once support).
func readCommitted(t *testing.T, k *testenv.Kafka, topic string) []*kgo.Record {
	t.Helper()
	return readTopicAs(t, k, topic, true)
}

func readTopicAs(t *testing.T, k *testenv.Kafka, topic string, committed bool) []*kgo.Record {
	t.Helper()
	adm := k.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		t.Fatalf("list start offsets %s on %s: %v", topic, k.Name, err)
	}
	list, isolation := adm.ListEndOffsets, kgo.ReadUncommitted()
	if committed {
		list, isolation = adm.ListCommittedOffsets, kgo.ReadCommitted()
	}
	ends, err := list(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets %s on %s: %v", topic, k.Name, err)
	}
	assign := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(o.Topic, o.Partition)
		if o.Offset > s.Offset {
			assign[o.Partition] = kgo.NewOffset().At(s.Offset)
			want[o.Partition] = o.Offset
		}
	})
	if len(assign) == 0 {
		return nil
	}
	cl := k.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}), kgo.FetchIsolationLevel(isolation))
	defer cl.Close()
	var out []*kgo.Record
	pos := map[int32]int64{}
	idleSince := time.Now()
	for len(want) > 0 {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s on %s: timed out at %v, want %v", topic, k.Name, pos, want)
		}
		got := false
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Fatalf("fetch %s/%d on %s: %v", topic, p, k.Name, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; ok && r.Offset < end {
				out = append(out, r)
				pos[r.Partition] = r.Offset + 1
				got = true
				if r.Offset+1 >= end {
					delete(want, r.Partition)
				}
			}
		})
		if got {
			idleSince = time.Now()
		} else if time.Since(idleSince) > 3*time.Second && onlyMarkersLeft(pos, want) {
			// Only control records (transaction markers) are left below the end offset.
			break
		}
	}
	return out
}

// onlyMarkersLeft tells a partition whose last data records are followed by transaction
// markers (never delivered) from a slow fetch: every partition still short of its end has
// delivered records and is within a few offsets of it.
func onlyMarkersLeft(pos, want map[int32]int64) bool {
	for p, end := range want {
		at, ok := pos[p]
		if !ok || end-at > 4 {
			return false
		}
	}
	return true
}

// readAll reads topic on k and groups its data records by partition, in offset order.
func readAll(t *testing.T, k *testenv.Kafka, topic string) map[tp][]rec {
	t.Helper()
	m := map[tp][]rec{}
	for _, r := range readTopic(t, k, topic) {
		key := tp{r.Topic, r.Partition}
		m[key] = append(m[key], rec{offset: r.Offset, value: string(r.Value), ts: r.Timestamp})
	}
	for _, rs := range m {
		slices.SortFunc(rs, func(a, b rec) int { return int(a.offset - b.offset) })
	}
	return m
}
