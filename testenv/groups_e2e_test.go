//go:build e2e

package testenv_test

// The failover quality of a consumer group (the groups page, /metrics)
// against REAL MirrorMaker 2 (dedicated, identity policy, syncs in DR):
//
//	go test -tags e2e -count=1 -run TestGroupQualityVsMM2 -v ./testenv/
//
// The primary's events (3 partitions) holds plain records only, copied to
// a new DR topic from its start, so DR offset n holds source offset n: a
// group committed at c on the primary has consumed exactly DR offsets
// below c. So what it would read again, resuming at the console's
// translation d, is c - d records, exactly; the console's bound must be
// that, never less, and d never past c (nothing skipped). Its newest
// usable sync is the newest MM2 wrote at or below c (read from the
// offset-syncs topic here, apart from the console), and MM2's checkpoint
// of the group is seen.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/testenv"
)

func TestGroupQualityVsMM2(t *testing.T) {
	const group = "g-quality"
	primary := testenv.StartKafkaDist(t, "primary", testenv.KafkaDefault)
	dr := testenv.StartKafkaDist(t, "dr", testenv.KafkaDefault)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "identity", OffsetSyncsLocation: "target", Topics: "events.*"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	padm, dadm := primary.Admin(t), dr.Admin(t)
	if r, err := padm.CreateTopics(ctx, 3, 1, nil, "events"); err != nil || r.Error() != nil {
		t.Fatalf("create events: %v %v", err, r.Error())
	}
	plain := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	for p := range int32(3) {
		var rs []*kgo.Record
		for i := range 900 + 250*int(p) {
			rs = append(rs, &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "%d/%d", p, i)})
		}
		if err := plain.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	end := endOffsets(t, padm, "events")
	committed := map[model.TP]int64{{Topic: "events", Partition: 0}: 371, {Topic: "events", Partition: 1}: 537,
		{Topic: "events", Partition: 2}: end[tp{"events", 2}]}
	offs := kadm.Offsets{}
	for k, at := range committed {
		offs.Add(kadm.Offset{Topic: k.Topic, Partition: k.Partition, At: at, LeaderEpoch: -1})
	}
	if err := padm.CommitAllOffsets(ctx, group, offs); err != nil {
		t.Fatal(err)
	}

	offsetsTopic := dedicated.start(t, opts)
	if err := testenv.Eventually(xlWait, xlPoll, func() error {
		drEnd := endOffsets(t, dadm, "events")
		for k, e := range end {
			if drEnd[k] != e {
				return fmt.Errorf("%v on dr: end %d, want %d", k, drEnd[k], e)
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("replication did not catch up: %v", err)
	}

	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: offsetsTopic, Topics: config.Topics{Include: []string{"events.*"}},
		Groups: []config.Group{{Name: group, Critical: true, ReprocessObjective: 1}}}
	mon, _ := runConsole(t, flow, primary, dr, 30*time.Second)
	syncTopic, syncCluster := opts.OffsetSyncsTopic()
	xl := mon.Translator(xlFlow)
	// Settled: every sync MM2 wrote so far ingested, and a refresh since
	// computed the group with MM2's checkpoint of it. MM2 keeps writing a
	// sync for nearly every replicated heartbeat (one a second), so only
	// the syncs of events must hold still around the refresh.
	var g model.GroupQuality
	var syncs map[model.TP][]*kgo.Record
	if err := testenv.Eventually(xlWait, xlPoll, func() error {
		recs := readTopic(t, syncCluster, syncTopic)
		next, ok, err := xl.Store.Position(ctx, xlFlow, syncTopic, 0)
		if err != nil || !ok || next < int64(len(recs)) {
			return fmt.Errorf("syncs ingested up to %d (ok=%v, %v), topic has %d", next, ok, err, len(recs))
		}
		settled := time.Now()
		if err := testenv.Eventually(10*time.Second, xlPoll, func() error {
			if s := mon.Snapshot(xlFlow); s.At.Before(settled) {
				return fmt.Errorf("no refresh since")
			}
			return nil
		}); err != nil {
			return err
		}
		s := mon.Snapshot(xlFlow)
		if s.Groups == nil || len(s.Groups.Groups) == 0 {
			return fmt.Errorf("no groups computed")
		}
		g = s.Groups.Groups[0]
		if g.Group != group || len(g.Partitions) != 3 || g.CheckpointAt.IsZero() {
			return fmt.Errorf("group %+v", g)
		}
		syncs = syncsOf(t, recs, "events")
		for k, rs := range syncsOf(t, readTopic(t, syncCluster, syncTopic), "events") {
			if len(rs) != len(syncs[k]) {
				return fmt.Errorf("MM2 wrote more syncs of %v meanwhile (%d, then %d)", k, len(syncs[k]), len(rs))
			}
		}
		// The console holds each partition's syncs exactly as MM2 wrote them.
		for k, rs := range syncs {
			held, n := xl.Index.History(k, len(rs)+1)
			if n != len(rs) {
				return fmt.Errorf("%v: console holds %d syncs, the topic has %d", k, n, len(rs))
			}
			for i, r := range rs {
				want, _ := mm2.DecodeOffsetSync(r.Key, r.Value)
				if held[i].Upstream != want.Upstream || held[i].Downstream != want.Downstream {
					t.Fatalf("%v sync %d: console holds %d->%d, the topic %d->%d", k, i, held[i].Upstream, held[i].Downstream, want.Upstream, want.Downstream)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("group figures: %v", err)
	}
	var sum int64
	untranslatable := false
	for _, p := range g.Partitions {
		c := committed[p.Source]
		// The newest sync at or below c, from the topic itself.
		var newest *kgo.Record
		var ups []int64
		for _, r := range syncs[p.Source] {
			s, _ := mm2.DecodeOffsetSync(r.Key, r.Value)
			if s.Upstream <= c {
				newest = r
			}
			ups = append(ups, s.Upstream)
		}
		if newest == nil {
			// MM2 sends at most 10 syncs at a time, and a partition's newer
			// sync replaces its unsent one (mm2.md §3.1): on a loaded machine
			// none may be at or below c. The console must then say it cannot
			// translate, never guess.
			want := fmt.Sprintf("no offset sync at or below offset %d", c)
			if p.Offset != c || p.Reread != nil || !strings.HasPrefix(p.Problem, want) {
				t.Errorf("%v committed %d with no sync at or below it (syncs at upstream %v): reread %v, problem %q", p.Source, c, ups, p.Reread, p.Problem)
			}
			untranslatable = true
			t.Logf("%v committed %5d: untranslatable, as it must be; syncs at upstream %v", p.Source, c, ups)
			continue
		}
		if p.Offset != c || p.Reread == nil || p.Problem != "" {
			t.Fatalf("%v: offset %d (committed %d), reread %v, problem %q", p.Source, p.Offset, c, p.Reread, p.Problem)
		}
		truth := c - p.DROffset // DR offsets below c are consumed; from DROffset on they are read again
		if p.DROffset > c || *p.Reread != truth {
			t.Errorf("%v committed %d: resumes at %d, bound %d; truth %d records read again", p.Source, c, p.DROffset, *p.Reread, truth)
		}
		if !p.SyncAt.Equal(newest.Timestamp.Truncate(time.Millisecond)) {
			t.Errorf("%v: newest usable sync at %s, the topic's is %v", p.Source, p.SyncAt, newest)
		}
		sum += truth
		t.Logf("%v committed %5d: resumes at %5d (%s), reprocesses %d; newest usable sync written %s, offset read %s (%s); syncs at upstream %v",
			p.Source, c, p.DROffset, p.Method, truth, p.SyncAt.Format("15:04:05.000"), p.OffsetAt.Format("15:04:05.000"), p.OffsetFrom, ups)
	}
	if !g.Critical || g.Objective != 1 {
		t.Errorf("group: critical %v, objective %d", g.Critical, g.Objective)
	}
	switch {
	case untranslatable && (g.Reread != nil || !g.OverObjective()):
		t.Errorf("group with an untranslatable partition: bound %v, over objective %v; want unknown, over", g.Reread, g.OverObjective())
	case !untranslatable && (g.Reread == nil || *g.Reread != sum || (sum > 1) != g.OverObjective()):
		t.Errorf("group: bound %v, truth %d, over %v", g.Reread, sum, g.OverObjective())
	}
}

// syncsOf groups the offset syncs of topic among recs by partition.
func syncsOf(t *testing.T, recs []*kgo.Record, topic string) map[model.TP][]*kgo.Record {
	t.Helper()
	out := map[model.TP][]*kgo.Record{}
	for _, r := range recs {
		s, err := mm2.DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			t.Fatalf("DecodeOffsetSync at %d: %v", r.Offset, err)
		}
		if s.Topic == topic {
			k := model.TP{Topic: s.Topic, Partition: s.Partition}
			out[k] = append(out[k], r)
		}
	}
	return out
}
