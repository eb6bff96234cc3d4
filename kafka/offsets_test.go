package kafka

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ListOffsets, asking each leader itself, answers exactly what kadm's
// ListStartOffsets/ListEndOffsets answer (which route through kgo's
// metadata cache) on a three-broker cluster whose partitions have records,
// a moved log start and leaders spread over the brokers; a topic the
// cluster lacks is absent (never created); a partition whose leader left
// reads unknown, not 0; a cluster that is gone is an error, not zeros.
func TestListOffsetsMatchesKadm(t *testing.T) {
	ctx := context.Background()
	c := kfake.MustCluster(kfake.NumBrokers(3), kfake.SeedTopics(7, "a", "b"))
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for i := range 7 * 2 * 5 {
		topic := []string{"a", "b"}[i%2]
		produce(t, cl, &kgo.Record{Topic: topic, Partition: int32(i % 7), Value: []byte(fmt.Sprint(i))})
	}
	// Log start moved on some partitions.
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "a", Partition: 1, At: 3})
	del.Add(kadm.Offset{Topic: "b", Partition: 4, At: 2})
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}

	leaders, err := TopicLeaders(ctx, cl, []string{"a", "b", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaders) != 2 || len(leaders["a"]) != 7 || len(leaders["b"]) != 7 {
		t.Fatalf("leaders %v", leaders)
	}
	brokers := map[int32]bool{}
	for _, l := range leaders["a"] {
		brokers[l] = true
	}
	if len(brokers) < 2 {
		t.Fatalf("the partitions are not spread over brokers (%v): the test would not exercise per-broker requests", leaders["a"])
	}
	for _, ts := range []int64{StartOffset, EndOffset} {
		got, err := ListOffsets(ctx, cl, leaders, ts)
		if err != nil {
			t.Fatal(err)
		}
		list := adm.ListEndOffsets
		if ts == StartOffset {
			list = adm.ListStartOffsets
		}
		want, err := list(ctx, "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		want.Each(func(o kadm.ListedOffset) {
			n++
			if g, ok := got.Get(o.Topic, o.Partition); !ok || g != o.Offset {
				t.Errorf("ts %d %s-%d: %d %v, kadm says %d", ts, o.Topic, o.Partition, g, ok, o.Offset)
			}
		})
		if n != 14 {
			t.Fatalf("kadm listed %d partitions", n)
		}
		if s, _ := got.Get("a", 1); ts == StartOffset && s != 3 {
			t.Fatalf("a-1 log start %d, want 3", s)
		}
	}
	if _, ok := leaders["missing"]; ok {
		t.Fatal("a missing topic has leaders")
	}
	if topics, err := adm.ListTopics(ctx); err != nil || topics.Has("missing") {
		t.Fatalf("the read created the topic it asked about (%v)", err)
	}

	// A partition whose leader is unknown is unknown.
	leaders["a"][2] = -1
	got, err := ListOffsets(ctx, cl, leaders, EndOffset)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := got.Get("a", 2); ok {
		t.Fatalf("a-2 without a leader read %d", o)
	}
	if _, ok := got.Get("a", 3); !ok {
		t.Fatal("a-3 unknown")
	}
	if _, ok := got.Get("a", 7); ok {
		t.Fatal("a partition beyond the topic's is known")
	}

	// The cluster goes away: an error, every partition unknown.
	c.Close()
	got, err = ListOffsets(ctx, cl, leaders, EndOffset)
	if err == nil {
		t.Fatal("a cluster that is gone answered")
	}
	if o, ok := got.Get("a", 3); ok {
		t.Fatalf("a-3 of a gone cluster read %d", o)
	}
}
