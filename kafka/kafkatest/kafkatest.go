// Package kafkatest holds what tests of Kafka code share across packages:
// an in-process cluster (kfake) with a client, producing to it, and polling
// for a condition.
package kafkatest

import (
	"context"
	"io"
	"net"
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

// ClosingListener takes TCP connections on 127.0.0.1 and closes each after
// reading the first request's bytes, as a TLS listener does with plaintext
// and a broker going down does for a moment. With last > 0 the listener
// itself closes after that many connections (the broker is gone: refused
// from then on); else when the test ends.
func ClosingListener(t testing.TB, last int) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			io.Copy(io.Discard, io.LimitReader(c, 17)) // the whole first request: a close, not a reset
			if n == last {
				ln.Close()
			}
			c.Close()
		}
	}()
	return ln
}
