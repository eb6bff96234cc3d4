package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/model"
)

// A tail starts where it is told (FromStart: the log start) and answers by
// partition, with the topic's id.
func TestTailReadsFromItsPositions(t *testing.T) {
	c, cl := newCluster(t, "p", "syncs")
	for i := range 3 {
		produce(t, cl, &kgo.Record{Topic: "syncs", Partition: 0, Value: []byte{byte(i)}}, &kgo.Record{Topic: "syncs", Partition: 1, Value: []byte{byte(i)}})
	}
	_, ids, err := TopicLayout(context.Background(), cl, []string{"syncs"})
	if err != nil {
		t.Fatal(err)
	}
	tail, err := NewTail(Options{kgo.SeedBrokers(c.ListenAddrs()...)}, map[string]map[int32]int64{"syncs": {0: FromStart, 1: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Close()
	got := map[int32][]int64{}
	waitFor(t, "the tail's records", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		batches, err := tail.Poll(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			if b.Topic != "syncs" || b.TopicID != ids["syncs"] && b.TopicID != ([16]byte{}) {
				t.Fatalf("batch of %s id %x, want syncs %x", b.Topic, b.TopicID, ids["syncs"])
			}
			for _, r := range b.Records {
				got[b.Partition] = append(got[b.Partition], r.Offset)
			}
		}
		return len(got[0]) == 3 && len(got[1]) == 1
	})
	if got[0][0] != 0 || got[1][0] != 2 {
		t.Fatalf("offsets read %v", got)
	}
}

// ListAt reads one offset per partition and names a topic it could not.
func TestListAtNamesAMissingTopic(t *testing.T) {
	_, cl := newCluster(t, "p", "events")
	produce(t, cl, &kgo.Record{Topic: "events", Partition: 1, Value: []byte("v")})
	ends, err := ListAt(context.Background(), cl, EndOffset, "events", "gone")
	if err == nil || !strings.Contains(err.Error(), "topic gone is not in the cluster") ||
		ends[model.TP{Topic: "events", Partition: 1}] != 1 || ends[model.TP{Topic: "events", Partition: 0}] != 0 || len(ends) != 2 {
		t.Fatalf("%v %v", ends, err)
	}
}

// The group reads answer in model types; a group that does not exist has
// no offsets and is Dead, which is no error.
func TestGroupReads(t *testing.T) {
	c, cl := newCluster(t, "p", "events")
	ctx := context.Background()
	produce(t, cl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte("v")})
	if offs, err := GroupCommitted(ctx, cl, "nobody"); err != nil || len(offs) != 0 {
		t.Fatalf("absent group: %v %v", offs, err)
	}
	if state, members, err := GroupStateOn(ctx, cl, "nobody"); err != nil || state != "Dead" || members != 0 {
		t.Fatalf("absent group: %s %d %v", state, members, err)
	}
	g, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitFor(t, "the group's record", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return g.PollFetches(pctx).NumRecords() > 0
	})
	if err := g.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	tp := model.TP{Topic: "events", Partition: 0}
	if offs, err := GroupCommitted(ctx, cl, "billing"); err != nil || offs[tp] != 1 || len(offs) != 1 {
		t.Fatalf("billing: %v %v", offs, err)
	}
	if all, err := AllGroupsCommitted(ctx, cl); err != nil || all["billing"][tp] != 1 {
		t.Fatalf("all groups: %v %v", all, err)
	}
	if groups, err := Groups(ctx, cl); err != nil || len(groups) != 1 || groups[0] != "billing" {
		t.Fatalf("groups: %v %v", groups, err)
	}
}
