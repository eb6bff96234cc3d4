package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
)

func kfakeCluster(t *testing.T, id, topic string) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c := kfake.MustCluster(kfake.NumBrokers(1), kfake.ClusterID(id), kfake.SeedTopics(4, topic))
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

func fill(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	var recs []*kgo.Record
	for p := range int32(4) {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func deleteBefore(t *testing.T, cl *kgo.Client, topic string, p int32, offset int64) {
	t.Helper()
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: topic, Partition: p, At: offset, LeaderEpoch: -1})
	res, err := kadm.NewClient(cl).DeleteRecords(context.Background(), o)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	starts, err := kadm.NewClient(cl).ListStartOffsets(context.Background(), topic)
	if s, _ := starts.Lookup(topic, p); err != nil || s.Offset != offset {
		t.Fatalf("log start of %s-%d = %d (%v), want %d", topic, p, s.Offset, err, offset)
	}
}

// The savepoint fixture flink-2.2.1-p2-events4-stop needs events-0 from 800,
// events-1 from 1300, events-2 from 750, events-3 from 1350. MM2 (default
// policy) mirrors events to primary.events in DR.
func TestUsability(t *testing.T) {
	ctx := context.Background()
	old := kafkaTimeout
	kafkaTimeout = 3 * time.Second
	t.Cleanup(func() { kafkaTimeout = old })

	primary, pcl := kfakeCluster(t, "primary", "events")
	dr, dcl := kfakeCluster(t, "dr", "primary.events")
	fill(t, pcl, "events", 1400)
	fill(t, dcl, "primary.events", 1400)
	deleteBefore(t, pcl, "events", 1, 1301)         // one record the job still needs is gone on the primary
	deleteBefore(t, dcl, "primary.events", 2, 1000) // DR lost events-2's translated offset 701 and on

	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary.ListenAddrs()}, "dr": {Bootstrap: dr.ListenAddrs()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "default", OffsetSyncsLocation: "target",
			Topics: config.Topics{Include: []string{"events"}}}},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	flow := cfg.Flows[0].Name
	store := openStore(t)
	// MM2's offset syncs as ingestion would have stored them; the monitor
	// loads them into its index at start.
	syncs := []model.OffsetSync{
		{Topic: "events", Partition: 0, Upstream: 0, Downstream: 0},
		{Topic: "events", Partition: 0, Upstream: 800, Downstream: 800}, // exact
		{Topic: "events", Partition: 1, Upstream: 1300, Downstream: 1300},
		{Topic: "events", Partition: 2, Upstream: 700, Downstream: 700},   // 750 -> 701 (conservative)
		{Topic: "events", Partition: 3, Upstream: 1360, Downstream: 1360}, // every sync newer than 1350: too old
	}
	for i := range syncs {
		syncs[i].LogOffset = int64(i)
	}
	if err := store.Apply(ctx, storage.Batch{Flow: flow, Topic: "mm2-offset-syncs.primary.internal", NextOffset: int64(len(syncs)), Syncs: syncs}); err != nil {
		t.Fatal(err)
	}
	c := monitoredCatalog(t, cfg, store)
	r := fixtureOffsets(t, fixtureEvents)
	u, err := c.Usability(ctx, model.Savepoint{ID: 1, OffsetsJSON: r.OffsetsJSON}, flow)
	if err != nil {
		t.Fatal(err)
	}
	if u.Verdict != model.VerdictUnusable || u.Primary != model.VerdictUnusable || u.DR != model.VerdictUnusable || u.PrimaryErr != "" || u.DRErr != "" || len(u.Partitions) != 4 {
		t.Fatalf("usability = %+v", u)
	}
	if strings.Join(u.Untranslatable, ",") != "events-3" {
		t.Fatalf("untranslatable %v, want events-3", u.Untranslatable)
	}
	unusable := strings.Join(u.Unusable, "\n")
	for _, want := range []string{"events-1: data deleted on the primary", "events-2: data deleted in DR", "events-3: no DR offset"} {
		if !strings.Contains(unusable, want) {
			t.Errorf("unusable list lacks %q:\n%s", want, unusable)
		}
	}
	if strings.Contains(unusable, "events-0") || len(u.Unusable) != 3 {
		t.Errorf("unusable list:\n%s", unusable)
	}
	p0, p1, p2, p3 := u.Partitions[0], u.Partitions[1], u.Partitions[2], u.Partitions[3]
	if p0.Source != (model.TP{Topic: "events", Partition: 0}) || p0.DR != (model.TP{Topic: "primary.events", Partition: 0}) || p0.Offset != 800 ||
		*p0.PrimaryLogStart != 0 || *p0.DROffset() != 800 || *p0.DRLogStart != 0 || p0.Primary != model.VerdictUsable || p0.DRVerdict != model.VerdictUsable || len(p0.Problems) != 0 {
		t.Errorf("events-0: %+v", p0)
	}
	if *p1.PrimaryLogStart != 1301 || !p1.PrimaryDeleted || p1.DRDeleted || p1.DRVerdict != model.VerdictUsable || *p1.DROffset() != 1300 {
		t.Errorf("events-1: %+v", p1)
	}
	if p2.PrimaryDeleted || *p2.DROffset() != 701 || *p2.DRLogStart != 1000 || !p2.DRDeleted || p2.Primary != model.VerdictUsable || p2.DRVerdict != model.VerdictUnusable {
		t.Errorf("events-2: %+v", p2)
	}
	if p3.DROffset() != nil || p3.Translation.Method != mm2.MethodTooOld || p3.DRVerdict != model.VerdictUnusable || p3.DRLogStart != nil || p3.Primary != model.VerdictUsable {
		t.Errorf("events-3: %+v", p3)
	}

	// Everything there: usable.
	good := model.Savepoint{ID: 2, OffsetsJSON: `{"events-0":900,"events-1":1350}`}
	u, err = c.Usability(ctx, good, flow)
	if err != nil || u.Verdict != model.VerdictUsable || u.Primary != model.VerdictUsable || u.DR != model.VerdictUsable || len(u.Unusable) != 0 {
		t.Fatalf("good savepoint: %+v %v", u, err)
	}
	if *u.Partitions[0].DROffset() != 801 || u.Partitions[0].Translation.RereadMax != 99 {
		t.Fatalf("events-0 at 900: %+v", u.Partitions[0])
	}

	// A partition without any sync (not mirrored yet) is unknown, not unusable.
	u, err = c.Usability(ctx, model.Savepoint{ID: 3, OffsetsJSON: `{"events-0":900,"audit-0":5}`}, flow)
	if err != nil || u.Verdict != model.VerdictUnknown || u.DR != model.VerdictUnknown || len(u.Unusable) != 0 || strings.Join(u.Untranslatable, ",") != "audit-0" ||
		!strings.Contains(u.PrimaryErr, "audit") {
		t.Fatalf("unmirrored partition: %+v %v", u, err)
	}

	// Not read, or unreadable: unknown, with why.
	u, err = c.Usability(ctx, model.Savepoint{ID: 4, ReadError: "s3:// is not readable here"}, flow)
	if err != nil || u.Verdict != model.VerdictUnknown || len(u.Notes) != 1 || !strings.Contains(u.Notes[0], "s3://") {
		t.Fatalf("unread savepoint: %+v %v", u, err)
	}
	if _, err := c.Usability(ctx, good, "nope"); err == nil {
		t.Fatal("unknown flow accepted")
	}

	restoreChoicesNewestUsableFirst(t, c, flow, good.OffsetsJSON, r.OffsetsJSON)

	// The primary is gone: its side is unknown, DR still answers.
	primary.Close()
	start := time.Now()
	u, err = c.Usability(ctx, good, flow)
	if err != nil {
		t.Fatal(err)
	}
	if u.Primary != model.VerdictUnknown || u.PrimaryErr == "" || u.DR != model.VerdictUsable || u.Verdict != model.VerdictUnknown || u.Partitions[0].PrimaryLogStart != nil {
		t.Fatalf("primary gone: %+v", u)
	}
	if d := time.Since(start); d > kafkaTimeout+5*time.Second {
		t.Fatalf("usability took %s with the primary gone", d)
	}
	// Issue 28 item 7: said as unreachable, the client's words folded
	// away; the verdict's one-line reason carries the sentence only.
	if head, _, folded := strings.Cut(u.PrimaryErr, model.RawErrSep); !folded || !strings.Contains(head, "the primary is unreachable") || strings.Contains(head, "TLS") {
		t.Fatalf("primary gone: %q", u.PrimaryErr)
	}
	if why := u.Why(); !strings.Contains(why, "primary: the primary is unreachable") || strings.Contains(why, model.RawErrSep) {
		t.Fatalf("primary gone: verdict reason %q", why)
	}
	// ... and DR's deletions are still flagged.
	u, err = c.Usability(ctx, model.Savepoint{ID: 1, OffsetsJSON: r.OffsetsJSON}, flow)
	if err != nil || u.Verdict != model.VerdictUnusable || u.DR != model.VerdictUnusable || u.Primary != model.VerdictUnknown {
		t.Fatalf("primary gone, DR deleted: %+v %v", u, err)
	}
}

// Cluster Linking keeps offsets and topic names: the savepoint's offsets
// are DR's, usable once the mirror has copied up to them. The fixture
// needs events-0 from 800, events-1 from 1300, events-2 from 750,
// events-3 from 1350; the DR mirror has 1400 records in each partition
// but events-3, which has 1000 so far.
func TestUsabilityClusterLink(t *testing.T) {
	ctx := context.Background()
	primary, pcl := kfakeCluster(t, "primary", "events")
	dr, dcl := kfakeCluster(t, "dr", "events")
	fill(t, pcl, "events", 1400)
	var recs []*kgo.Record
	for p := range int32(4) {
		n := 1400
		if p == 3 {
			n = 1000
		}
		for range n {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: []byte("x")})
		}
	}
	if err := dcl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deleteBefore(t, dcl, "events", 2, 760) // DR lost events-2 from 750 to 759

	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary.ListenAddrs()}, "dr": {Bootstrap: dr.ListenAddrs()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", Kind: "cluster-link", Topics: config.Topics{Include: []string{"events"}},
			ClusterLink: &config.ClusterLink{RestURL: deadURL(t), ClusterID: "dr", Link: "primary-to-dr"}}},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	flow := cfg.Flows[0].Name
	store := openStore(t)
	c := monitoredCatalog(t, cfg, store)
	r := fixtureOffsets(t, fixtureEvents)
	u, err := c.Usability(ctx, model.Savepoint{ID: 1, OffsetsJSON: r.OffsetsJSON}, flow)
	if err != nil {
		t.Fatal(err)
	}
	if u.Verdict != model.VerdictUnusable || u.Primary != model.VerdictUsable || u.DR != model.VerdictUnusable || u.DRErr != "" || len(u.Untranslatable) != 0 || len(u.Partitions) != 4 {
		t.Fatalf("usability = %+v", u)
	}
	unusable := strings.Join(u.Unusable, "\n")
	if len(u.Unusable) != 2 || !strings.Contains(unusable, "events-2: data deleted in DR: log start 760 of events-2 is past the translated offset 750") ||
		!strings.Contains(unusable, "events-3: the DR mirror is behind the savepoint: events-3 ends at 1000, before the savepoint's offset 1350 (350 records not mirrored yet)") {
		t.Fatalf("unusable:\n%s", unusable)
	}
	for i, want := range []int64{800, 1300, 750, 1350} {
		p := u.Partitions[i]
		if p.DR != p.Source || p.Translation.Method != mm2.MethodPreserved || *p.DROffset() != want || p.DRLogEnd == nil {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
	if p := u.Partitions[0]; p.DRVerdict != model.VerdictUsable || *p.DRLogEnd != 1400 || p.DRBehind {
		t.Errorf("events-0: %+v", p)
	}

	// Caught up and nothing deleted: usable in DR, offsets unchanged.
	u, err = c.Usability(ctx, model.Savepoint{ID: 2, OffsetsJSON: `{"events-0":1400,"events-3":1000}`}, flow)
	if err != nil || u.Verdict != model.VerdictUsable || u.DR != model.VerdictUsable || *u.Partitions[1].DROffset() != 1000 {
		t.Fatalf("caught-up savepoint: %+v %v", u, err)
	}

}

// RestoreChoices offers completed (or unknown-status) entries, usable
// first, then unknown, then unusable, newest first within each, each with
// why it is not usable; failed entries are not offered.
func restoreChoicesNewestUsableFirst(t *testing.T, c *Catalog, flow, usableOffsets, unusableOffsets string) {
	ctx := context.Background()
	entry := func(path, status, offsets string, ms int64) model.Savepoint {
		return model.Savepoint{Path: path, Kind: model.KindSavepoint, Origin: model.OriginManual, Status: status, OffsetsJSON: offsets, CompletedMs: &ms}
	}
	sps := []model.Savepoint{
		entry("file:/sp/usable-old", model.SavepointCompleted, usableOffsets, 1_000),
		entry("file:/sp/unusable-newest", model.SavepointCompleted, unusableOffsets, 5_000),
		entry("file:/sp/unread", model.SavepointUnknown, "", 3_000),
		entry("file:/sp/usable-new", model.SavepointCompleted, usableOffsets, 4_000),
		entry("file:/sp/failed", model.SavepointFailed, usableOffsets, 6_000),
	}
	ids, err := c.Store.UpsertSavepoints(ctx, sps, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range sps { // offsets are stored as the catalog reads them
		if sp.OffsetsJSON != "" {
			if err := c.Store.SetSavepointOffsets(ctx, ids[i], sp.OffsetsJSON, "", 0, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	choices, err := c.RestoreChoices(ctx, flow, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range choices {
		got = append(got, ch.Savepoint.Path+" "+string(ch.Verdict))
	}
	want := []string{"file:/sp/usable-new usable", "file:/sp/usable-old usable", "file:/sp/unread unknown", "file:/sp/unusable-newest unusable"}
	if !slices.Equal(got, want) {
		t.Fatalf("choices\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if choices[0].Why != "" || !strings.Contains(choices[2].Why, "not read yet") || !strings.Contains(choices[3].Why, "data deleted") {
		t.Fatalf("why: %q / %q / %q", choices[0].Why, choices[2].Why, choices[3].Why)
	}
	// A drill's default: the newest usable, never a newer one of unknown
	// or unusable verdict; none among those looked at is an error.
	if sp, err := c.NewestUsable(ctx, flow, 10); err != nil || sp.Path != "file:/sp/usable-new" {
		t.Fatalf("newest usable: %q %v", sp.Path, err)
	}
	if sp, err := c.NewestUsable(ctx, flow, 1); !errors.Is(err, ErrNoUsableSavepoint) {
		t.Fatalf("the newest (unusable) gave %q %v", sp.Path, err)
	}
}

// monitoredCatalog is a catalog with a monitor over cfg's clusters.
func monitoredCatalog(t *testing.T, cfg *config.Config, store *storage.Store) *Catalog {
	t.Helper()
	m, err := monitor.NewMonitor(context.Background(), cfg, store, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return &Catalog{Store: store, Config: cfg, Monitor: m, Log: quietLog()}
}

// fixtureOffsets reads a real savepoint fixture's offsets.
func fixtureOffsets(t *testing.T, name string) ReadResult {
	t.Helper()
	abs, err := filepath.Abs(fixtureDir(name))
	if err != nil {
		t.Fatal(err)
	}
	r := ReadOffsets(abs, nil)
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	return r
}
