package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Tail reads assigned partitions onward from given positions, with a
// client of its own: no group, nothing committed, read_committed (MM2 with
// exactly-once support writes its internal topics in transactions: a
// position of a transaction not committed, or aborted, is not MM2's).
// Records that compaction or retention removed before they were read are
// skipped: it goes on from the earliest that remains.
type Tail struct{ cl *kgo.Client }

// FromStart, as a Tail position, is the partition's log start.
const FromStart int64 = -1

// NewTail tails from[topic][partition], the offset of the next record to
// read (FromStart: the log start), on the cluster of opts.
func NewTail(opts Options, from map[string]map[int32]int64) (*Tail, error) {
	assign := make(map[string]map[int32]kgo.Offset, len(from))
	for topic, ps := range from {
		assign[topic] = make(map[int32]kgo.Offset, len(ps))
		for p, next := range ps {
			off := kgo.NewOffset().AtStart()
			if next != FromStart {
				off = kgo.NewOffset().At(next)
			}
			assign[topic][p] = off
		}
	}
	cl, err := kgo.NewClient(append(slices.Clone(opts),
		kgo.ConsumePartitions(assign),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)...)
	if err != nil {
		return nil, err
	}
	return &Tail{cl: cl}, nil
}

// Close ends the tail's client.
func (t *Tail) Close() { t.cl.Close() }

// TailBatch is what one poll read of one partition, with the id of the
// topic the broker answered for (zero when it answered by name).
type TailBatch struct {
	Topic     string
	TopicID   [16]byte
	Partition int32
	Records   []*Record
}

// Poll waits until ctx ends for at most max records, and answers them by
// partition, in the order fetched. A fetch error other than ctx's end
// fails the poll.
func (t *Tail) Poll(ctx context.Context, max int) ([]TailBatch, error) {
	fetches := t.cl.PollRecords(ctx, max)
	var fetchErr error
	fetches.EachError(func(topic string, p int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			fetchErr = fmt.Errorf("fetching %s/%d: %w", topic, p, err)
		}
	})
	if fetchErr != nil {
		return nil, fetchErr
	}
	var out []TailBatch
	fetches.EachTopic(func(ft kgo.FetchTopic) {
		for _, p := range ft.Partitions {
			out = append(out, TailBatch{Topic: ft.Topic, TopicID: ft.TopicID, Partition: p.Partition, Records: p.Records})
		}
	})
	return out, nil
}
