package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kbin"
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
	meta, err := Layout(ctx, cl, topics)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range meta {
		if t.Name == "" || t.Err != 0 {
			continue
		}
		out[t.Name] = t.Leaders
		ids[t.Name] = t.ID
	}
	return out, ids, nil
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
	// Each broker's request names the topics it leads partitions of and how
	// many; its partitions are encoded from leaders when it is sent, not
	// built as a struct each (32 MB a request at a million partitions).
	names, index := make([]string, 0, len(leaders)), make(map[string]int32, len(leaders))
	byBroker := map[int32]*offsetsRequest{}
	var count []brokerCount // per topic: the leaders and their partitions
	for topic, ls := range leaders {
		ti := int32(len(names))
		index[topic] = ti
		names = append(names, topic)
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
				req = &offsetsRequest{ListOffsetsRequest: kmsg.NewPtrListOffsetsRequest(), // ReplicaID -1: a client
					broker: c.broker, ts: ts, leaders: leaders, index: index}
				req.IsolationLevel = isolation
				byBroker[c.broker] = req
			}
			req.topics = append(req.topics, askedTopic{name: topic, n: int32(c.n)})
			req.asked += c.n
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
			resp, err := cl.Broker(int(broker)).Request(ctx, req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("broker %d: %w", broker, err))
				return
			}
			answered++
			// Written here, under the lock, not while decoding: kgo may decode
			// an answer after a cancelled request has returned.
			for _, o := range resp.(*offsetsResponse).got {
				offs := out[names[o.topic]]
				if o.partition >= 0 && int(o.partition) < len(offs) {
					offs[o.partition] = o.offset
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

// offsetsRequest is a ListOffsets request to one broker, for every
// partition it leads of topics, at ts; answered by an offsetsResponse. At a
// million partitions franz-go's own request and answer are a struct a
// partition each (32 and 64 bytes), three of each a refresh. The embedded
// request gives the key, the versions and the request-wide fields; its
// Topics stay empty.
type offsetsRequest struct {
	*kmsg.ListOffsetsRequest
	broker  int32
	ts      int64
	topics  []askedTopic
	leaders Leaders          // read only
	index   map[string]int32 // the topics asked, by name: read only
	asked   int              // partitions asked: the answer's size, near enough
}

// askedTopic is a topic of an offsetsRequest and how many of its
// partitions the broker leads.
type askedTopic struct {
	name string
	n    int32
}

// AppendTo encodes the request as ListOffsetsRequest of r.Version does
// (0 to 11; 6 on are flexible), one partition for each the broker leads.
func (r *offsetsRequest) AppendTo(dst []byte) []byte {
	v, flexible := r.Version, r.IsFlexible()
	arrayLen := func(dst []byte, n int) []byte {
		if flexible {
			return kbin.AppendCompactArrayLen(dst, n)
		}
		return kbin.AppendArrayLen(dst, n)
	}
	noTags := func(dst []byte) []byte {
		if flexible {
			return append(dst, 0)
		}
		return dst
	}
	// Sized once: grown by appends, a million partitions' request (17 MB)
	// was copied over and over, 7 % of the start-up's CPU.
	size := 16 + r.asked*(4+4+8+1)
	for _, t := range r.topics {
		size += len(t.name) + 8
	}
	dst = slices.Grow(dst, size)
	dst = kbin.AppendInt32(dst, r.ReplicaID)
	if v >= 2 {
		dst = kbin.AppendInt8(dst, r.IsolationLevel)
	}
	dst = arrayLen(dst, len(r.topics))
	for _, t := range r.topics {
		if flexible {
			dst = kbin.AppendCompactString(dst, t.name)
		} else {
			dst = kbin.AppendString(dst, t.name)
		}
		dst = arrayLen(dst, int(t.n))
		for p, leader := range r.leaders[t.name] {
			if leader != r.broker {
				continue
			}
			dst = kbin.AppendInt32(dst, int32(p))
			if v >= 4 {
				dst = kbin.AppendInt32(dst, -1) // current leader epoch: any
			}
			dst = kbin.AppendInt64(dst, r.ts)
			if v == 0 {
				dst = kbin.AppendInt32(dst, 1) // max number of offsets
			}
			dst = noTags(dst)
		}
		dst = noTags(dst)
	}
	if v >= 10 {
		dst = kbin.AppendInt32(dst, r.TimeoutMillis)
	}
	return noTags(dst)
}

func (r *offsetsRequest) ResponseKind() kmsg.Response {
	resp := &offsetsResponse{index: r.index, got: make([]topicOffset, 0, r.asked)}
	resp.Default()
	resp.Version = r.Version
	return resp
}

// topicOffset is one partition's offset in an answer; topic indexes the
// topics asked.
type topicOffset struct {
	topic, partition int32
	offset           int64
}

// offsetsResponse decodes a ListOffsets answer into the offsets of the
// topics asked that the broker answered without an error. The embedded
// response gives the key, the version and the throttle.
type offsetsResponse struct {
	kmsg.ListOffsetsResponse
	index map[string]int32
	got   []topicOffset
}

// ReadFrom decodes a ListOffsetsResponse body of r.Version (0 to 11; 6 on
// are flexible). Version 0's list of old-style offsets is not read: its
// partitions stay unknown, as they were through franz-go's Offset.
func (r *offsetsResponse) ReadFrom(src []byte) error {
	v := r.Version
	d := decoder{Reader: kbin.Reader{Src: src}, flexible: v >= 6}
	if v >= 2 {
		r.ThrottleMillis = d.Int32()
	}
	for range d.arrayLen(3) {
		name, _ := d.str(false)
		topic, asked := r.index[string(name)] // no copy of the name: a lookup
		for range d.arrayLen(6) {
			p, code, offset := d.Int32(), d.Int16(), int64(-1)
			if v == 0 {
				if n := d.arrayLen(8); n > 0 {
					d.Span(8 * n)
				}
			} else {
				d.Int64() // timestamp
				offset = d.Int64()
			}
			if v >= 4 {
				d.Int32() // leader epoch
			}
			d.tags()
			if asked && code == 0 && offset >= 0 && d.Ok() {
				r.got = append(r.got, topicOffset{topic: topic, partition: p, offset: offset})
			}
		}
		d.tags()
	}
	d.tags()
	return d.done()
}

// UnsafeReadFrom is ReadFrom: the embedded response's would decode into
// its own structs instead.
func (r *offsetsResponse) UnsafeReadFrom(src []byte) error { return r.ReadFrom(src) }
