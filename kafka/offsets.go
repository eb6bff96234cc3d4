package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The refresh reads the log start and end of every mirrored partition each
// cycle. kadm's ListStartOffsets/ListEndOffsets first look the leaders up in
// kgo's metadata cache and answer with maps of the whole estate: at 100,000
// partitions the cached Metadata answers alone held ~50 MB and kadm's
// copies of them ~60 MB more, live during every refresh. These reads ask the
// leaders the caller already knows (its own Metadata request), one request
// per leader broker sent to that broker alone, and answer compactly.

// Leaders is, per topic, each partition's leader broker id (index:
// partition; -1: no leader known).
type Leaders map[string][]int32

// Offsets is, per topic, each partition's offset (index: partition; -1:
// unknown: no leader, no answer, or an error for that partition).
type Offsets map[string][]int64

// Get is partition p of topic's offset, when known.
func (o Offsets) Get(topic string, p int32) (int64, bool) { return o.Topic(topic).Get(p) }

// Topic is one topic's offsets: for a caller that reads every partition
// of a topic, one map lookup instead of one a partition.
func (o Offsets) Topic(topic string) TopicOffsets { return o[topic] }

// TopicOffsets is a topic's offsets by partition, as in Offsets.
type TopicOffsets []int64

// Get is partition p's offset, when known.
func (t TopicOffsets) Get(p int32) (int64, bool) {
	if p < 0 || int(p) >= len(t) || t[p] < 0 {
		return 0, false
	}
	return t[p], true
}

// The special timestamps of ListOffsets: the log start and the high
// watermark (read_uncommitted: what MM2's consumer can reach). StableEnd is
// no timestamp of Kafka's: it asks for the end (-1) under read_committed,
// the last stable offset, below which every transaction is decided. What a
// transactional writer (MirrorMaker 2 with exactly-once support) has not
// committed lies at or past it.
const (
	StartOffset int64 = -2
	EndOffset   int64 = -1
	StableEnd   int64 = -1 << 40
)

// Metadata answers a Metadata request for topics (nil: all) freshly, and
// without kgo's cache keeping the answer (through the client, every
// Metadata answer is cached: ~40 MB at 100k partitions). The client's own
// request asks for no topic, which refreshes the broker list kgo routes
// by; the full request then goes to one of those brokers directly, the
// next one if it fails.
func Metadata(ctx context.Context, cl *Client, topics []string) (*kmsg.MetadataResponse, error) {
	probe := kmsg.NewPtrMetadataRequest()
	probe.Topics = []kmsg.MetadataRequestTopic{} // empty, not nil: brokers only
	brokers, err := probe.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false // a read: never create a topic it names
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	var errs []error
	for _, b := range brokers.Brokers {
		resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err == nil {
			return resp, nil
		}
		errs = append(errs, fmt.Errorf("broker %d: %w", b.NodeID, err))
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, errors.New("the cluster named no broker")
	}
	return nil, errors.Join(errs...)
}

// TopicLeaders is the leaders of topics' partitions, from a Metadata
// request of its own (not kgo's cache, which may hold a recreated topic's
// old layout). A topic the cluster does not have is left out.
func TopicLeaders(ctx context.Context, cl *Client, topics []string) (Leaders, error) {
	out, _, err := TopicLayout(ctx, cl, topics)
	return out, err
}

// TopicLayout is TopicLeaders with the topics' ids (Fetch v13+ names
// topics by id).
func TopicLayout(ctx context.Context, cl *Client, topics []string) (Leaders, map[string][16]byte, error) {
	out, ids := Leaders{}, map[string][16]byte{}
	if len(topics) == 0 {
		return out, ids, nil
	}
	resp, err := Metadata(ctx, cl, topics)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 {
			continue
		}
		out[*t.Topic] = PartitionLeaders(t.Partitions)
		ids[*t.Topic] = t.TopicID
	}
	return out, ids, nil
}

// PartitionLeaders is a Metadata answer's partitions as leader ids by
// partition (a partition with an error has no usable leader).
func PartitionLeaders(ps []kmsg.MetadataResponseTopicPartition) []int32 {
	n := int32(0)
	for _, p := range ps {
		n = max(n, p.Partition+1)
	}
	leaders := make([]int32, n)
	for i := range leaders {
		leaders[i] = -1
	}
	for _, p := range ps {
		if p.Partition >= 0 && p.ErrorCode == 0 {
			leaders[p.Partition] = p.Leader
		}
	}
	return leaders
}

// brokerCount is how many of a topic's partitions one broker leads.
type brokerCount struct {
	broker int32
	n      int
}

// ListOffsets asks every partition's leader for its offset at ts
// (StartOffset, EndOffset or StableEnd), all brokers at once. A partition whose
// leader is unknown or did not answer is -1; err is set only when there
// was something to ask and no broker answered (the cluster is unreachable),
// not for a partial answer.
func ListOffsets(ctx context.Context, cl *Client, leaders Leaders, ts int64) (Offsets, error) {
	out := make(Offsets, len(leaders))
	isolation := int8(0) // read_uncommitted
	if ts == StableEnd {
		ts, isolation = EndOffset, 1 // read_committed: the last stable offset
	}
	// Each topic's partitions are counted per leader first, so every slice
	// is made at its size: at 100k partitions a refresh asks three times,
	// and slices grown by append left ~2.5 times their size as garbage.
	byBroker := map[int32]*kmsg.ListOffsetsRequest{}
	var count []brokerCount // per topic: the leaders and their partitions
	for topic, ls := range leaders {
		offs := make([]int64, len(ls))
		out[topic] = offs
		count = count[:0]
		for p, leader := range ls {
			offs[p] = -1
			if leader < 0 {
				continue
			}
			i := slices.IndexFunc(count, func(c brokerCount) bool { return c.broker == leader })
			if i < 0 {
				count = append(count, brokerCount{broker: leader})
				i = len(count) - 1
			}
			count[i].n++
		}
		for _, c := range count {
			req := byBroker[c.broker]
			if req == nil {
				req = kmsg.NewPtrListOffsetsRequest() // ReplicaID -1: a client
				req.IsolationLevel = isolation
				byBroker[c.broker] = req
			}
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			rt.Partitions = make([]kmsg.ListOffsetsRequestTopicPartition, 0, c.n)
			for p, leader := range ls {
				if leader == c.broker {
					rp := kmsg.NewListOffsetsRequestTopicPartition() // CurrentLeaderEpoch -1: any
					rp.Partition, rp.Timestamp = int32(p), ts
					rt.Partitions = append(rt.Partitions, rp)
				}
			}
			req.Topics = append(req.Topics, rt)
		}
	}
	if len(byBroker) == 0 {
		return out, nil
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	answered := 0
	for broker, req := range byBroker {
		wg.Go(func() {
			resp, err := req.RequestWith(ctx, cl.Broker(int(broker)))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("broker %d: %w", broker, err))
				return
			}
			answered++
			for _, t := range resp.Topics {
				offs := out[t.Topic]
				for _, p := range t.Partitions {
					if p.Partition >= 0 && int(p.Partition) < len(offs) && p.ErrorCode == 0 && p.Offset >= 0 {
						offs[p.Partition] = p.Offset
					}
				}
			}
		})
	}
	wg.Wait()
	if answered == 0 {
		return out, fmt.Errorf("no broker answered: %w", errors.Join(errs...))
	}
	return out, nil
}
