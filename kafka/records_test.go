package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/model"
)

// A range that ends in a transaction marker ends there: the read does not
// wait for a data record that never comes. Records of an aborted
// transaction hold offsets and are handed on.
func TestReadRecordsEndsAtATransactionMarker(t *testing.T) {
	c, _ := newCluster(t, "p", "events")
	ctx := context.Background()
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 0, Value: []byte("v")}, &kgo.Record{Topic: "events", Partition: 0, Value: []byte("w")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}
	cl, _ := kgo.NewClient(opts...)
	defer cl.Close()
	bounds, err := ListBounds(ctx, cl, "events")
	tp := model.TP{Topic: "events", Partition: 0}
	if err != nil || bounds[tp].End != 6 { // 2 + marker, 2 + marker
		t.Fatalf("bounds %+v %v", bounds, err)
	}
	var offsets []int64
	done := false
	err = ReadRecords(ctx, opts, []Range{{TP: tp, From: 0, To: bounds[tp].End}}, ReadLimits{Idle: 3 * time.Second},
		func(r *kgo.Record) error { offsets = append(offsets, r.Offset); return nil }, func(model.TP) { done = true })
	if err != nil || !done || len(offsets) != 4 || offsets[3] != 4 {
		t.Fatalf("err %v, done %v, offsets %v", err, done, offsets)
	}
	// A cap stops the read with what it handed on.
	offsets = nil
	err = ReadRecords(ctx, opts, []Range{{TP: tp, From: 0, To: 6}}, ReadLimits{MaxRecords: 3, Idle: 3 * time.Second},
		func(r *kgo.Record) error { offsets = append(offsets, r.Offset); return nil }, nil)
	var capped *CapError
	if !errors.As(err, &capped) || capped.Records != 3 || len(offsets) != 3 {
		t.Fatalf("cap: %v, %v", err, offsets)
	}
}

// Records deleted under a read end it with an error, not with a silent
// jump to the new log start.
func TestReadRecordsFailsWhenItsRangeIsDeleted(t *testing.T) {
	c, cl := newCluster(t, "p", "events")
	ctx := context.Background()
	for i := range 10 {
		produce(t, cl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{byte(i)}})
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "events", Partition: 0, At: 5})
	if _, err := kadm.NewClient(cl).DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := ReadRecords(ctx, []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, []Range{{TP: model.TP{Topic: "events", Partition: 0}, From: 0, To: 10}},
		ReadLimits{Idle: 3 * time.Second}, func(*kgo.Record) error { n++; return nil }, nil)
	if err == nil || !strings.Contains(err.Error(), "deleted") || n != 0 {
		t.Fatalf("err %v after %d records", err, n)
	}
}

// ListBounds says which topics it could not read, and reads the others.
func TestListBoundsNamesAMissingTopic(t *testing.T) {
	_, cl := newCluster(t, "p", "events")
	produce(t, cl, &kgo.Record{Topic: "events", Partition: 1, Value: []byte("v")})
	bounds, err := ListBounds(context.Background(), cl, "events", "gone")
	if err == nil || !strings.Contains(err.Error(), "topic gone is not in the cluster") ||
		bounds[model.TP{Topic: "events", Partition: 1}] != (LogBounds{Start: 0, End: 1}) || len(bounds) != 2 {
		t.Fatalf("%v %v", bounds, err)
	}
}
