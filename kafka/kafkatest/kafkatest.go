// Package kafkatest holds what tests of Kafka code share across packages:
// an in-process cluster (kfake) with a client, producing to it, and polling
// for a condition.
package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// NewCluster starts a one-broker cluster with id and two partitions of each
// topic, and a client of it with manual partitioning; both close when the
// test ends.
func NewCluster(t testing.TB, id string, topics ...string) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c := kfake.MustCluster(kfake.NumBrokers(1), kfake.ClusterID(id), kfake.SeedTopics(2, topics...))
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

// Produce writes recs synchronously, failing the test on error.
func Produce(t testing.TB, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// WaitFor polls cond until it holds, failing the test after 15 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
