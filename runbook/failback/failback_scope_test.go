package failback

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

// What the reverse flow copies and where DR's partitions' records lie on
// the primary, under each policy.
func TestReverseScope(t *testing.T) {
	t.Parallel()
	tp := func(topic string, p int32) model.TP { return model.TP{Topic: topic, Partition: p} }
	identity := reverseScope{policy: mm2.ReplicationPolicy{Identity: true}, primaryAlias: "primary", drAlias: "dr",
		cut: map[model.TP]int64{tp("events", 0): 100, tp("events", 1): 0}, cutTopics: map[string]bool{"events": true}}
	def := reverseScope{policy: mm2.ReplicationPolicy{}, primaryAlias: "primary", drAlias: "dr",
		cut: map[model.TP]int64{tp("primary.events", 0): 100, tp("primary.events", 1): 7}, cutTopics: map[string]bool{"primary.events": true}}
	for _, c := range []struct {
		name    string
		s       reverseScope
		tp      model.TP
		from    int64
		copied  bool
		primary model.TP
	}{
		{"identity, at the cut", identity, tp("events", 0), 100, true, tp("events", 0)},
		{"identity, a partition added in DR since", identity, tp("events", 2), 0, true, tp("events", 2)},
		{"identity, a topic not in the cut", identity, tp("other", 0), 0, false, tp("other", 0)},
		{"default, the forward copy", def, tp("primary.events", 0), 0, false, tp("events", 0)},
		{"default, DR's own topic", def, tp("events", 1), 0, true, tp("dr.events", 1)},
		{"default, DR's own topic, not in the primary", def, tp("audit", 0), 0, true, tp("dr.audit", 0)},
	} {
		from, copied := c.s.copies(c.tp)
		if from != c.from || copied != c.copied || c.s.primaryOf(c.tp) != c.primary {
			t.Errorf("%s: copies %d %v, primary %v; want %d %v, %v", c.name, from, copied, c.s.primaryOf(c.tp), c.from, c.copied, c.primary)
		}
	}
	if got := identity.startOffsets(); !maps.Equal(got, identity.cut) {
		t.Errorf("identity start offsets %v, want the cut", got)
	}
	if got := def.startOffsets(); got != nil {
		t.Errorf("default start offsets %v, want none (reset to the earliest)", got)
	}
	// Written into a forward copy after the failover: refused, named with its figures. DR's
	// own topics and an unchanged copy are not.
	grown := def.grownPastCut(map[model.TP]int64{tp("primary.events", 0): 100, tp("primary.events", 1): 9, tp("primary.events", 2): 1, tp("events", 0): 500})
	want := []string{
		"primary.events-1 (DR end 9, 7 at the cut: 2 offset(s) written in DR into the copy of the primary's events, which MM2 does not copy back under the default policy)",
		"primary.events-2 (DR end 1, 0 at the cut: 1 offset(s) written in DR into the copy of the primary's events, which MM2 does not copy back under the default policy)",
	}
	if !slices.Equal(grown, want) {
		t.Errorf("grown past the cut:\n%s\nwant\n%s", strings.Join(grown, "\n"), strings.Join(want, "\n"))
	}
	if g := identity.grownPastCut(map[model.TP]int64{tp("events", 0): 900}); len(g) != 0 {
		t.Errorf("identity: %v, want none (the reverse flow copies every DR partition)", g)
	}
}

// Under the default policy the set-up creates the reverse source stopped
// and resets its offsets, so a source of the same name that Connect still
// holds offsets for (an earlier failback's) starts at the earliest offset.
// A retry finds it stopped and resets it again, or running with this
// config and is done; running with another config is refused.
func TestSetUpReverseFromEarliest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc, url := newConnectREST(t, nil)
	api := connect.New(url)
	flow := &config.Flow{Source: "primary", Target: "dr", SourceAlias: "primary", TargetAlias: "dr", ReplicationPolicy: "default",
		Topics: config.Topics{Include: []string{"events.*"}}, ConnectURL: url}
	ff := forwardFlow(flow, nil)
	rev, err := ff.ReverseConfigs()
	if err != nil {
		t.Fatal(err)
	}
	rb := &runbook.Runbook{}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w, err := audit.New(store).Record(ctx, runbooktest.Alice.Name, "test.set-up", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	// An earlier attempt created it and crashed before the reset; Connect
	// kept the offsets of an earlier failback's source of that name.
	cfg := maps.Clone(rev.Configs[rev.Source])
	cfg["name"] = rev.Source
	fc.conn[rev.Source] = &fakeConnector{config: cfg, state: "STOPPED"}
	fc.copied(rev.Source, "dr", map[model.TP]int64{{Topic: "events", Partition: 0}: 40})
	res := &reverseSetUp{}
	if err := book(rb).setUpReverseFromEarliest(ctx, w, api, rev, res); err != nil {
		t.Fatal(err)
	}
	if n := fc.next(t, rev.Source); len(n) != 0 {
		t.Fatalf("offsets after the set-up: %v, want none", n)
	}
	if !slices.Contains(fc.log, "DELETE "+rev.Source+" offsets") || fc.state(rev.Source) != "STOPPED" {
		t.Fatalf("requests %v, state %s", fc.log, fc.state(rev.Source))
	}
	// Resumed (the step's next effect) and killed: Connect applies the
	// resume later than it answers, so the retry reads STOPPED, its reset
	// is refused, and the status read again says RUNNING: done.
	fc.lagging = true
	if err := effect.ResumeConnector(ctx, w, api, rev.Source); err != nil {
		t.Fatal(err)
	}
	res = &reverseSetUp{}
	if err := book(rb).setUpReverseFromEarliest(ctx, w, api, rev, res); err != nil || !strings.Contains(res.Note, "earlier attempt") {
		t.Fatalf("retried right after the resume: %v %v (requests %v)", res, err, fc.log)
	}
	fc.lagging = false
	// Retried again, nothing is sent.
	before := len(fc.log)
	res = &reverseSetUp{}
	if err := book(rb).setUpReverseFromEarliest(ctx, w, api, rev, res); err != nil || !strings.Contains(res.Note, "earlier attempt") {
		t.Fatalf("retried while running: %v %v", res, err)
	}
	for _, l := range fc.log[before:] {
		if !strings.HasPrefix(l, "GET") {
			t.Fatalf("a retry sent %s", l)
		}
	}
	fc.conn[rev.Source].config["topics"] = "other"
	if err := book(rb).setUpReverseFromEarliest(ctx, w, api, rev, &reverseSetUp{}); err == nil || !strings.Contains(err.Error(), "another config") {
		t.Fatalf("running with another config: %v", err)
	}
}

// Under the default policy a record written in DR into its copy of a
// primary topic after the failover would never reach the primary: the
// set-up's rule refuses it, and the wait fails at once (no wait helps),
// naming the partition; DR's own topics written since are what the
// reverse flow waits for.
func TestDefaultPolicyFailbackRefusesWritesIntoForwardCopies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, _ := kafkatest.NewCluster(t, "primary", "events")
	dr, dcl := kafkatest.NewCluster(t, "dr", "primary.events", "events")
	for p := range int32(2) {
		for i := range 3 {
			kafkatest.Produce(t, dcl, &kgo.Record{Topic: "primary.events", Partition: p, Value: fmt.Appendf(nil, "mirrored-%d", i)})
		}
	}
	fc, url := newConnectREST(t, forwardConnectors)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary.ListenAddrs()}, "dr": {Bootstrap: dr.ListenAddrs()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "default", OffsetSyncsLocation: "target",
			Topics: config.Topics{Include: []string{"events"}}, ConnectURL: url,
			Connectors: []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}}},
		Failover: config.Failover{ApprovalsRequired: 1},
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	rb := &runbook.Runbook{Store: store, Config: cfg, Log: log, Connect: func(string) *connect.Client { return connect.New(url) },
		ReverseCatchUp: time.Hour}
	failover.Equip(rb, failover.Env{Monitor: mon})
	fo := runbooktest.CompleteRun(t, store, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}}, time.Now().UnixMilli())
	var cut []model.CutPosition
	for p := range int32(2) {
		cut = append(cut, model.CutPosition{Topic: "events", Partition: p, RemoteTopic: "primary.events", DREnd: runbooktest.I64(3)})
	}
	if err := store.SaveFailoverCut(ctx, fo, cut); err != nil {
		t.Fatal(err)
	}
	r := &runbook.Run{Plan: runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanFailback, FailbackOf: fo}}
	r.Flow = "primary->dr"
	scope, err := book(rb).reverseScope(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if rule := book(rb).copiesUnchangedRule(ctx, r, scope); !rule.OK {
		t.Fatalf("nothing written into primary.events yet: %+v", rule)
	}
	// DR's producers write to DR's own events (copied back) and, wrongly,
	// into primary.events-1.
	kafkatest.Produce(t, dcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte("dr-0")},
		&kgo.Record{Topic: "primary.events", Partition: 1, Value: []byte("written in DR")})
	rule := book(rb).copiesUnchangedRule(ctx, r, scope)
	if rule.OK || !strings.Contains(rule.Evidence, "primary.events-1 (DR end 4, 3 at the cut: 1 offset(s) written in DR into the copy of the primary's events") ||
		strings.Contains(rule.Evidence, "primary.events-0") {
		t.Fatalf("rule after a write into primary.events-1: %+v", rule)
	}
	// The reverse connectors run and have copied DR's own events: the
	// wait still fails, at once, naming what is never copied back.
	rev, err := forwardFlow(cfg.Flows[0], cfg).ReverseConfigs()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rev.Names() {
		fc.conn[n] = &fakeConnector{config: rev.Configs[n], state: "RUNNING"}
	}
	fc.copied(rev.Source, "dr", map[model.TP]int64{{Topic: "events", Partition: 0}: 1})
	// The reverse flow's sync for the record it copied, as the monitor
	// ingests it.
	if err := store.Apply(ctx, storage.Batch{Flow: ReverseFlowName("primary->dr"), Topic: "mm2-offset-syncs.dr.internal", NextOffset: 1,
		Syncs: []model.OffsetSync{{Topic: "events", Upstream: 0, Downstream: 0, RecordMs: time.Now().UnixMilli()}}}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = book(rb).waitReverse(ctx, r, nil)
	if err == nil || !strings.Contains(err.Error(), "never copies them: primary.events-1") || time.Since(began) > 30*time.Second {
		t.Fatalf("wait with a write into primary.events-1: %v (after %s)", err, time.Since(began))
	}
	p, err := book(rb).reverseProgress(ctx, r, true)
	if err != nil || len(p.Behind) != 0 || len(p.Uncopyable) != 1 || p.CaughtUp() {
		t.Fatalf("progress %+v %v: want DR's own events copied, primary.events-1 uncopyable, not caught up", p, err)
	}
}
