package effect

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

func TestGroupPlanApplyUndo(t *testing.T) {
	ctx := context.Background()
	primary, pcl := kafkatest.NewCluster(t, "primary", "events")
	_, dcl := kafkatest.NewCluster(t, "dr", "events")
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	index := mm2.NewSyncIndex()
	index.Add([]model.OffsetSync{
		{Topic: "events", Partition: 0, Upstream: 0, Downstream: 0, LogOffset: 0},
		{Topic: "events", Partition: 0, Upstream: 100, Downstream: 90, LogOffset: 1},
		{Topic: "events", Partition: 1, Upstream: 50, Downstream: 50, LogOffset: 2},
	})
	commit := func(cl *kgo.Client, group string, offs map[model.TP]int64) {
		t.Helper()
		o := kadm.Offsets{}
		for tp, at := range offs {
			o.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: at, LeaderEpoch: -1})
		}
		if err := kadm.NewClient(cl).CommitAllOffsets(ctx, group, o); err != nil {
			t.Fatal(err)
		}
	}
	commit(pcl, "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 120, {Topic: "events", Partition: 1}: 10})
	commit(dcl, "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 3})

	g := translation.NewGroupTranslator(translation.GroupTranslator{Flow: "primary->dr", Alias: "primary", Policy: mm2.ReplicationPolicy{Identity: true}, Index: index, Store: store}, pcl, dcl)

	if n, err := monitor.RecordPrimaryGroups(ctx, store, g.Flow, pcl, func(topic string) bool { return topic == "events" }, time.UnixMilli(1)); err != nil || n != 2 {
		t.Fatalf("recorded %d primary group offsets: %v", n, err)
	}
	if got, _ := store.PrimaryGroupOffsets(ctx, "primary->dr", "billing"); len(got) != 2 || got[0].Offset != 120 {
		t.Fatalf("recorded %+v", got)
	}
	plan, err := g.Plan(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if plan.From != translation.FromPrimary || len(plan.Rows) != 2 || plan.Untranslatable() != 1 || plan.DRState != "Empty" {
		t.Fatalf("plan = %+v", plan)
	}
	r0, r1 := plan.Rows[0], plan.Rows[1]
	if r0.Translation.Offset != 91 || r0.Translation.RereadMax != 19 || r0.Current == nil || *r0.Current != 3 {
		t.Fatalf("events-0 row = %+v", r0)
	}
	if r1.Translation.Method != mm2.MethodTooOld || r1.Current != nil {
		t.Fatalf("events-1 row = %+v", r1)
	}

	change, err := ApplyOffsets(ctx, written(t, store), store, dcl, plan.Flow, plan.Group, plan.Proposed(), "alice", "failover drill")
	if err != nil {
		t.Fatal(err)
	}
	got, err := kadm.NewClient(dcl).FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := got.Lookup("events", 0); o.At != 91 {
		t.Fatalf("DR group at %d after apply, want 91", o.At)
	}
	recorded, err := store.GroupChanges(ctx, "primary->dr", "billing")
	if err != nil || len(recorded) != 1 || recorded[0].Status != "applied" || recorded[0].ID != change.ID ||
		len(recorded[0].Changes) != 1 || *recorded[0].Changes[0].Previous != 3 || recorded[0].Changes[0].Applied != 91 || recorded[0].Actor != "alice" {
		t.Fatalf("recorded = %+v, %v", recorded, err)
	}
	restore, none := translation.UndoOffsets(recorded[0])
	if len(none) != 0 || restore[model.TP{Topic: "events", Partition: 0}] != 3 {
		t.Fatalf("undo = %v %v", restore, none)
	}
	if _, err := ApplyOffsets(ctx, written(t, store), store, dcl, plan.Flow, plan.Group, restore, "alice", "undo"); err != nil {
		t.Fatal(err)
	}
	got, _ = kadm.NewClient(dcl).FetchOffsets(ctx, "billing")
	if o, _ := got.Lookup("events", 0); o.At != 3 {
		t.Fatalf("DR group at %d after undo, want 3", o.At)
	}

	// A group DR has never seen is "Dead": it can be given offsets.
	if c, err := ApplyOffsets(ctx, written(t, store), store, dcl, "primary->dr", "brand-new", map[model.TP]int64{{Topic: "events", Partition: 1}: 7}, "alice", "new"); err != nil || c.Changes[0].Previous != nil {
		t.Fatalf("apply to a new group: %+v, %v", c, err)
	}

	// A DR group with running consumers is refused, and nothing is recorded.
	member, err := kgo.NewClient(kgo.SeedBrokers(dcl.OptValue(kgo.SeedBrokers).([]string)...),
		kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	kafkatest.WaitFor(t, "the DR consumer to join", func() bool {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		member.PollFetches(pctx)
		cancel()
		d, _ := kadm.NewClient(dcl).DescribeGroups(ctx, "billing")
		return d["billing"].State == "Stable"
	})
	_, err = ApplyOffsets(ctx, written(t, store), store, dcl, plan.Flow, plan.Group, plan.Proposed(), "alice", "again")
	if !errors.Is(err, kafka.ErrGroupActive) {
		t.Fatalf("apply to an active group: %v", err)
	}
	if recorded, _ := store.GroupChanges(ctx, "primary->dr", "billing"); len(recorded) != 2 {
		t.Fatalf("a refused apply was recorded: %d changes", len(recorded))
	}
	member.Close()

	// The primary is gone: the group's offsets come from MM2's checkpoints.
	err = store.Apply(ctx, storage.Batch{Flow: "primary->dr", Topic: "cp", NextOffset: 1, Checkpoints: []model.Checkpoint{
		{Group: "billing", Topic: "events", Partition: 0, Upstream: 100, Downstream: 90, LogOffset: 0, RecordMs: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	primary.Close()
	plan, err = g.Plan(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	// events-0: MM2's checkpoint (newer than the recording); events-1: only recorded.
	if len(plan.Rows) != 2 || plan.Rows[0].Offset != 100 || plan.Rows[0].Translation.Offset != 90 ||
		plan.Rows[0].Translation.Method != mm2.MethodExact || *plan.Rows[0].Checkpoint != 90 || plan.Rows[1].Offset != 10 {
		t.Fatalf("plan without the primary = %+v", plan)
	}
	// Offsets the console recorded while the primary answered are newer
	// than that checkpoint, and cover a partition MM2 never checkpointed.
	if err := store.RecordPrimaryGroupOffsets(ctx, "primary->dr", []storage.GroupOffset{
		{Group: "billing", Topic: "events", Partition: 0, Offset: 120, AtMs: 5},
		{Group: "billing", Topic: "events", Partition: 1, Offset: 50, AtMs: 5},
	}); err != nil {
		t.Fatal(err)
	}
	plan, err = g.Plan(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if plan.From != translation.FromRecorded || len(plan.Rows) != 2 || plan.Rows[0].Offset != 120 || plan.Rows[0].Translation.Offset != 91 ||
		plan.Rows[1].Translation.Offset != 50 || plan.Rows[1].Translation.Method != mm2.MethodExact {
		t.Fatalf("plan from recorded offsets = %+v", plan)
	}
}

// A DR broker that just started answers FindCoordinator with
// COORDINATOR_NOT_AVAILABLE until its __consumer_offsets is ready; the
// client returns that at once, so reading and applying offsets must wait.
func TestApplyOffsetsWaitsForCoordinator(t *testing.T) {
	ctx := context.Background()
	dr, dcl := kafkatest.NewCluster(t, "dr", "events")
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var refusals atomic.Int32 // the control function runs on the cluster's goroutine
	dr.ControlKey(int16(kmsg.FindCoordinator), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		if refusals.Load() == 4 {
			return nil, nil, false
		}
		dr.KeepControl()
		refusals.Add(1)
		return findCoordinatorError(kreq, kerr.CoordinatorNotAvailable), nil, true
	})
	change, err := ApplyOffsets(ctx, written(t, store), store, dcl, "primary->dr", "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 42}, "alice", "drill")
	if err != nil || change.Status != "applied" {
		t.Fatalf("ApplyOffsets after %d refusals: %+v, %v", refusals.Load(), change, err)
	}
	if n := refusals.Load(); n != 4 {
		t.Fatalf("FindCoordinator refused %d times, want 4", n)
	}
	got, err := kadm.NewClient(dcl).FetchOffsets(ctx, "billing")
	if o, ok := got.Lookup("events", 0); err != nil || !ok || o.At != 42 {
		t.Fatalf("DR group offsets %+v, %v", got, err)
	}

	// Not retriable: fails at once (another group: the client caches billing's coordinator).
	dr.ControlKey(int16(kmsg.FindCoordinator), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		dr.KeepControl()
		return findCoordinatorError(kreq, kerr.GroupAuthorizationFailed), nil, true
	})
	start := time.Now()
	if _, err := ApplyOffsets(ctx, written(t, store), store, dcl, "primary->dr", "payments", map[model.TP]int64{{Topic: "events", Partition: 0}: 7}, "alice", "drill"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("ApplyOffsets with authorization refused: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second /* half of kafka.coordinatorPatience */ {
		t.Fatalf("a non-retriable error was retried for %s", d)
	}
}

// findCoordinatorError answers a FindCoordinator request with e for every key.
func findCoordinatorError(kreq kmsg.Request, e *kerr.Error) kmsg.Response {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	for _, key := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.ErrorCode = key, -1, e.Code
		resp.Coordinators = append(resp.Coordinators, c)
	}
	resp.ErrorCode, resp.NodeID = e.Code, -1
	return resp
}

// A change recorded as applying by a process that died before the commit's
// outcome was known is committed again with the same offsets and keeps the
// previous offsets it recorded.
func TestFinishInterruptedChange(t *testing.T) {
	ctx := context.Background()
	_, dcl := kafkatest.NewCluster(t, "dr", "events")
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	prev := int64(3)
	c := storage.GroupChange{Flow: "primary->dr", Group: "billing", AtMs: 1, Actor: "alice", Reason: "failover run 1 step 3",
		Changes: []storage.OffsetChange{{Topic: "events", Partition: 0, Previous: &prev, Applied: 91}, {Topic: "events", Partition: 1, Applied: 50}}}
	if c.ID, err = store.BeginGroupChange(ctx, c); err != nil {
		t.Fatal(err)
	}
	recorded, _ := store.GroupChanges(ctx, "primary->dr", "billing")
	if len(recorded) != 1 || recorded[0].Status != "applying" {
		t.Fatalf("recorded %+v", recorded)
	}
	done, err := FinishInterruptedChange(ctx, written(t, store), store, dcl, recorded[0])
	if err != nil || done.Status != "applied" {
		t.Fatalf("FinishInterruptedChange: %+v %v", done, err)
	}
	got, err := kadm.NewClient(dcl).FetchOffsets(ctx, "billing")
	o0, _ := got.Lookup("events", 0)
	o1, _ := got.Lookup("events", 1)
	if err != nil || o0.At != 91 || o1.At != 50 {
		t.Fatalf("DR offsets %+v %+v %v", o0, o1, err)
	}
	after, _ := store.GroupChanges(ctx, "primary->dr", "billing")
	if len(after) != 1 || after[0].Status != "applied" || *after[0].Changes[0].Previous != 3 {
		t.Fatalf("after: %+v", after)
	}
	if _, err := FinishInterruptedChange(ctx, written(t, store), store, dcl, after[0]); err == nil {
		t.Fatal("an applied change was committed again")
	}
	// A failed commit (it may have reached Kafka) is finished the same way.
	f := storage.GroupChange{Flow: "primary->dr", Group: "billing", AtMs: 2, Actor: "alice", Reason: "failover run 2 step 1",
		Changes: []storage.OffsetChange{{Topic: "events", Partition: 0, Previous: &prev, Applied: 95}}}
	if f.ID, err = store.BeginGroupChange(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := store.FinishGroupChange(ctx, f.ID, errors.New("request timed out")); err != nil {
		t.Fatal(err)
	}
	f.Status = "failed"
	if done, err := FinishInterruptedChange(ctx, written(t, store), store, dcl, f); err != nil || done.Status != "applied" {
		t.Fatalf("finishing a failed change: %+v %v", done, err)
	}
	got, _ = kadm.NewClient(dcl).FetchOffsets(ctx, "billing")
	if o, _ := got.Lookup("events", 0); o.At != 95 {
		t.Fatalf("after finishing the failed change: %+v", o)
	}
}

// written is a record on store's chain: the proof an effect demands.
func written(t testing.TB, store *storage.Store) audit.Written {
	t.Helper()
	w, err := audit.New(store).Record(context.Background(), "test", "test.effect", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
