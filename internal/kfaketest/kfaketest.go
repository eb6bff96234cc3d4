// Package kfaketest starts in-process Kafka clusters (franz-go's kfake)
// for the tests of packages kafka and monitor, so both share one set of
// helpers.
package kfaketest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// NewCluster starts a one-broker cluster with the given topics (two
// partitions each) and a client with manual partitioning; both end with t.
func NewCluster(t *testing.T, id string, topics ...string) (*kfake.Cluster, *kgo.Client) {
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
func Produce(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// WaitFor polls cond until it holds, failing the test after 15 seconds.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
