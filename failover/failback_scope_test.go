package failover

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// What the reverse flow copies and where DR's partitions' records lie on
// the primary, under each policy.
func TestReverseScope(t *testing.T) {
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
	rb := &Runbook{}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w, err := audit.New(store).Record(ctx, alice.Name, "test.set-up", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	// An earlier attempt created it and crashed before the reset; Connect
	// kept the offsets of an earlier failback's source of that name.
	cfg := maps.Clone(rev.Configs[rev.Source])
	cfg["name"] = rev.Source
	fc.conn[rev.Source] = &fakeConnector{config: cfg, state: "STOPPED"}
	fc.copied(rev.Source, "dr", map[model.TP]int64{{Topic: "events", Partition: 0}: 40})
	res := map[string]any{}
	if err := rb.setUpReverseFromEarliest(ctx, w, api, rev, res); err != nil {
		t.Fatal(err)
	}
	if n := fc.next(t, rev.Source); len(n) != 0 {
		t.Fatalf("offsets after the set-up: %v, want none", n)
	}
	if !slices.Contains(fc.log, "DELETE "+rev.Source+" offsets") || fc.state(rev.Source) != "STOPPED" {
		t.Fatalf("requests %v, state %s", fc.log, fc.state(rev.Source))
	}
	// Resumed (the step's next effect); retried, nothing is sent.
	fc.conn[rev.Source].state = "RUNNING"
	before := len(fc.log)
	res = map[string]any{}
	if err := rb.setUpReverseFromEarliest(ctx, w, api, rev, res); err != nil || !strings.Contains(res["note"].(string), "earlier attempt") {
		t.Fatalf("retried while running: %v %v", res, err)
	}
	for _, l := range fc.log[before:] {
		if !strings.HasPrefix(l, "GET") {
			t.Fatalf("a retry sent %s", l)
		}
	}
	fc.conn[rev.Source].config["topics"] = "other"
	if err := rb.setUpReverseFromEarliest(ctx, w, api, rev, map[string]any{}); err == nil || !strings.Contains(err.Error(), "another config") {
		t.Fatalf("running with another config: %v", err)
	}
}
