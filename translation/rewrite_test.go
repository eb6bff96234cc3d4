package translation

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

func split(topic string, part int32, next int64, subtask int) flink.PartitionOffset {
	return flink.PartitionOffset{Topic: topic, Partition: part, Next: next, Subtask: subtask}
}

// Under the default policy each translated split moves to the remote topic
// at the sync index's offset (exact, or MM2's conservative +1 with its
// re-read bound); a partition without syncs is not guessed: the targets
// are incomplete and say which partition needs a choice.
func TestRewriteTargetsTranslateAndRename(t *testing.T) {
	g, _ := translator(t, nil, nil) // syncs events-0 100->90, events-1 40->40
	tg, err := g.RewriteTargets(context.Background(), []flink.PartitionOffset{
		split("events", 0, 100, 0), split("events", 1, 45, 1), split("events", 2, 7, 1),
	}, TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Complete() || tg.Targets() != nil {
		t.Fatalf("targets complete without a translation of events-2: %+v", tg)
	}
	if len(tg.NeedChoice) != 1 || !strings.HasPrefix(tg.NeedChoice[0], "events-2 (no offset sync known") {
		t.Fatalf("need choice %q", tg.NeedChoice)
	}
	if err := tg.Err(); err == nil || !strings.Contains(err.Error(), "events-2") {
		t.Fatalf("Err() = %v", err)
	}
	r0, r1 := tg.Rows[0], tg.Rows[1]
	if r0.Target == nil || *r0.Target != (flink.SplitTarget{Topic: "primary.events", Offset: 90, Why: "translated (exact)"}) {
		t.Fatalf("events-0 target %+v", r0.Target)
	}
	if r1.Target == nil || r1.Target.Topic != "primary.events" || r1.Target.Offset != 41 || r1.Translation.Method != mm2.MethodConservative {
		t.Fatalf("events-1 target %+v (%+v)", r1.Target, r1.Translation)
	}
	if r1.Subtask != 1 || tg.RereadMax != r1.Translation.RereadMax || tg.RereadMax <= 0 {
		t.Fatalf("subtask %d, re-read bound %d (row %d)", r1.Subtask, tg.RereadMax, r1.Translation.RereadMax)
	}
	if tg.Renamed["events"] != "primary.events" || len(tg.Renamed) != 1 {
		t.Fatalf("renamed %v", tg.Renamed)
	}
}

// Every offset sync newer than the savepoint (too old) and a start marker
// need a choice just as an unknown partition does; a choice fills each in
// with who made it, earliest and latest as the split markers Flink reads.
func TestRewriteTargetsChoices(t *testing.T) {
	g, _ := translator(t, nil, nil)
	g.Policy = mm2.ReplicationPolicy{Identity: true}
	splits := []flink.PartitionOffset{
		split("events", 0, 50, 0), // syncs start at 100: too old
		{Topic: "events", Partition: 1, Next: flink.OffsetEarliest, Marker: "earliest"},
	}
	tg, err := g.RewriteTargets(context.Background(), splits, TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.NeedChoice) != 2 || !strings.Contains(tg.NeedChoice[0], "too old") || !strings.Contains(tg.NeedChoice[1], "start marker earliest") {
		t.Fatalf("need choice %q", tg.NeedChoice)
	}
	if tg.Renamed != nil {
		t.Fatalf("identity renamed %v", tg.Renamed)
	}
	tg, err = g.RewriteTargets(context.Background(), splits, TargetOptions{Choices: map[string]model.Choice{
		"events-0": {Kind: model.ChoiceEarliest, By: "alice"}, "events-1": {Kind: model.ChoiceLatest, By: "alice"}}})
	if err != nil || !tg.Complete() {
		t.Fatalf("%v %v", tg.Err(), err)
	}
	got := tg.Targets()
	if e := got["events-0"]; e.Topic != "events" || e.Offset != flink.OffsetEarliest || !strings.Contains(e.Why, "earliest (chosen by alice: too old") {
		t.Fatalf("events-0 %+v", e)
	}
	if l := got["events-1"]; l.Offset != flink.OffsetLatest || !strings.Contains(l.Why, "chosen by alice") {
		t.Fatalf("events-1 %+v", l)
	}
	// A choice for a partition the savepoint does not hold is a mistake.
	if _, err := g.RewriteTargets(context.Background(), splits, TargetOptions{Choices: map[string]model.Choice{"events-9": {Kind: model.ChoiceLatest}}}); err == nil {
		t.Fatal("a choice for a partition not in the savepoint was accepted")
	}
	if _, err := g.RewriteTargets(context.Background(), splits, TargetOptions{Choices: map[string]model.Choice{"events-0": {Kind: "guess"}}}); err == nil {
		t.Fatal("an unknown choice was accepted")
	}
}

// A timestamp choice is looked up in DR only when asked (the step, not
// the plan): unresolved it leaves the targets incomplete.
func TestRewriteTargetsTimestampResolvedInDR(t *testing.T) {
	ctx := context.Background()
	_, dcl := kafkatest.NewCluster(t, "dr", "primary.events")
	g, _ := translator(t, nil, dcl)
	base := time.UnixMilli(1_700_000_000_000)
	for i := range 3 {
		kafkatest.Produce(t, dcl, &kgo.Record{Topic: "primary.events", Partition: 1, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	splits := []flink.PartitionOffset{split("events", 1, 10, 0)} // syncs start at 40: too old
	at := model.Choice{Kind: model.ChoiceTimestamp, AtMs: base.Add(1500 * time.Millisecond).UnixMilli(), By: "bob"}
	tg, err := g.RewriteTargets(ctx, splits, TargetOptions{Choices: map[string]model.Choice{"events-1": at}})
	if err != nil || tg.Complete() || !strings.Contains(tg.NeedChoice[0], "not looked up") {
		t.Fatalf("unresolved timestamp: %+v %v", tg, err)
	}
	tg, err = g.RewriteTargets(ctx, splits, TargetOptions{Choices: map[string]model.Choice{"events-1": at}, Resolve: true})
	if err != nil || !tg.Complete() {
		t.Fatalf("%v %v", tg.Err(), err)
	}
	if x := tg.Targets()["events-1"]; x.Topic != "primary.events" || x.Offset != 2 || !strings.Contains(x.Why, "timestamp 2023-11-14T22:13:21Z (chosen by bob") {
		t.Fatalf("timestamp target %+v", x)
	}
}

// Cluster Linking keeps offsets: only names change. A bounded split's
// stopping offset is refused under MirrorMaker 2 whatever is chosen.
func TestRewriteTargetsPreservedAndStopping(t *testing.T) {
	g, _ := translator(t, nil, nil)
	tg, err := g.RewriteTargets(context.Background(), []flink.PartitionOffset{split("events", 3, 1234, 0)}, TargetOptions{Preserved: true})
	if err != nil || !tg.Complete() {
		t.Fatal(tg.Err(), err)
	}
	if x := tg.Targets()["events-3"]; x.Topic != "primary.events" || x.Offset != 1234 {
		t.Fatalf("preserved %+v", x)
	}
	stop := int64(2000)
	bounded := []flink.PartitionOffset{{Topic: "events", Partition: 0, Next: 100, Stopping: &stop}}
	tg, err = g.RewriteTargets(context.Background(), bounded, TargetOptions{Choices: map[string]model.Choice{"events-0": {Kind: model.ChoiceLatest}}})
	if err != nil || tg.Complete() || len(tg.Problems) != 1 || !strings.Contains(tg.Err().Error(), "stopping offset (2000)") {
		t.Fatalf("bounded split: %+v %v", tg, err)
	}
}

func TestParseChoice(t *testing.T) {
	for in, want := range map[string]model.Choice{
		"earliest":                       {Kind: model.ChoiceEarliest},
		" latest ":                       {Kind: model.ChoiceLatest},
		"timestamp 2026-12-01T07:00:00Z": {Kind: model.ChoiceTimestamp, AtMs: time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC).UnixMilli()},
		"timestamp 1700000000000":        {Kind: model.ChoiceTimestamp, AtMs: 1_700_000_000_000},
	} {
		c, ok, err := model.ParseChoice(in)
		if err != nil || !ok || c != want {
			t.Errorf("model.ParseChoice(%q) = %+v %v %v", in, c, ok, err)
		}
		if back, _, _ := model.ParseChoice(c.String()); back != c {
			t.Errorf("%q does not read back: %+v", c.String(), back)
		}
	}
	if _, ok, err := model.ParseChoice(""); ok || err != nil {
		t.Errorf("empty: %v %v", ok, err)
	}
	for _, bad := range []string{"guess", "earliest now", "timestamp", "timestamp yesterday", "timestamp -5"} {
		if _, _, err := model.ParseChoice(bad); err == nil {
			t.Errorf("model.ParseChoice(%q) accepted", bad)
		}
	}
}
