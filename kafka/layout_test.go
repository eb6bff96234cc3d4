package kafka

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// randomMetadata is a Metadata answer of version v with what a cluster
// sends and what it rarely does: partitions out of order, a gap, a
// duplicate, a negative number, partition and topic errors, null names
// (v12+), replica lists of every length and, in flexible versions, tagged
// fields at every level the console must skip.
func randomMetadata(r *rand.Rand, v int16) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = v
	resp.ThrottleMillis = r.Int32N(100)
	tag := func(t *kmsg.Tags) {
		if v >= 9 && r.IntN(3) == 0 {
			t.Set(uint32(r.IntN(5)), make([]byte, r.IntN(200))) // over 127 bytes: a two-byte size
		}
	}
	for i := range r.IntN(4) {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), "broker-host", 9092
		if r.IntN(2) == 0 {
			b.Rack = kmsg.StringPtr("rack-a")
		}
		tag(&b.UnknownTags)
		resp.Brokers = append(resp.Brokers, b)
	}
	resp.ClusterID = kmsg.StringPtr("cluster")
	for i := range r.IntN(6) {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(string(rune('a'+i)) + "-topic")
		if v >= 12 && r.IntN(8) == 0 {
			t.Topic = nil
		}
		if r.IntN(8) == 0 {
			t.ErrorCode = 3 // UNKNOWN_TOPIC_OR_PARTITION
		}
		t.TopicID = [16]byte{byte(i + 1), byte(r.IntN(256))}
		t.IsInternal = r.IntN(5) == 0
		n := r.IntN(300) // past 127 partitions: a two-byte compact length
		order := r.Perm(n)
		if n > 3 && r.IntN(3) == 0 {
			order = order[:n-1] // a gap, maybe at the end
		}
		if n > 3 && r.IntN(4) == 0 {
			order = append(order, order[0]) // a duplicate
		}
		if r.IntN(6) == 0 {
			order = append(order, -1)
		}
		for _, p := range order {
			tp := kmsg.NewMetadataResponseTopicPartition()
			tp.Partition, tp.Leader, tp.LeaderEpoch = int32(p), r.Int32N(4), r.Int32N(9)
			if r.IntN(10) == 0 {
				tp.ErrorCode, tp.Leader = 5, -1 // LEADER_NOT_AVAILABLE
			}
			for range r.IntN(4) {
				tp.Replicas = append(tp.Replicas, r.Int32N(4))
			}
			tp.ISR = tp.Replicas[:len(tp.Replicas)/2]
			if r.IntN(5) == 0 {
				tp.OfflineReplicas = []int32{r.Int32N(4)}
			}
			tag(&tp.UnknownTags)
			t.Partitions = append(t.Partitions, tp)
		}
		tag(&t.UnknownTags)
		resp.Topics = append(resp.Topics, t)
	}
	tag(&resp.UnknownTags)
	return resp
}

// wantLayout is what the console keeps of a Metadata answer, from
// franz-go's own decoding of it.
func wantLayout(resp *kmsg.MetadataResponse) []TopicMeta {
	var out []TopicMeta
	for _, t := range resp.Topics {
		m := TopicMeta{ID: t.TopicID, Internal: t.IsInternal, Err: t.ErrorCode, Leaders: []int32{}}
		if t.Topic != nil {
			m.Name = *t.Topic
		}
		for _, p := range t.Partitions {
			for int(p.Partition) >= len(m.Leaders) {
				m.Leaders = append(m.Leaders, -1)
			}
			if p.Partition >= 0 && p.ErrorCode == 0 {
				m.Leaders[p.Partition] = p.Leader
			}
		}
		out = append(out, m)
	}
	return out
}

// The layout decoder reads every version of the Metadata answer (0-13,
// compact from 9) exactly as franz-go's decoder reads the same bytes,
// keeping each partition's leader and the topic's name, id, internal flag
// and error, and the throttle kgo honours.
func TestLayoutDecodesEveryVersionAsFranzGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for v := int16(0); v <= kmsg.NewPtrMetadataResponse().MaxVersion(); v++ {
		for i := range 200 {
			src := randomMetadata(r, v)
			if v < 12 {
				for j := range src.Topics {
					if src.Topics[j].Topic == nil {
						src.Topics[j].Topic = kmsg.StringPtr("")
					}
				}
			}
			raw := src.AppendTo(nil)
			ref := kmsg.NewPtrMetadataResponse()
			ref.Version = v
			if err := ref.ReadFrom(raw); err != nil {
				t.Fatalf("v%d #%d: franz-go does not read its own encoding: %v", v, i, err)
			}
			got := (layoutRequest{&kmsg.MetadataRequest{Version: v}}).ResponseKind().(*layoutResponse)
			if err := got.ReadFrom(raw); err != nil {
				t.Fatalf("v%d #%d: %v", v, i, err)
			}
			want := wantLayout(ref)
			if !slices.EqualFunc(got.topics, want, func(a, b TopicMeta) bool {
				return a.Name == b.Name && a.ID == b.ID && a.Internal == b.Internal && a.Err == b.Err && slices.Equal(a.Leaders, b.Leaders)
			}) {
				t.Fatalf("v%d #%d:\n got %+v\nwant %+v", v, i, got.topics, want)
			}
			if got.ThrottleMillis != ref.ThrottleMillis || got.Key() != ref.Key() || got.GetVersion() != v {
				t.Fatalf("v%d: throttle %d key %d version %d, want %d %d %d", v, got.ThrottleMillis, got.Key(), got.GetVersion(), ref.ThrottleMillis, ref.Key(), v)
			}
		}
	}
}

// A v13 answer's top-level error reaches the caller.
func TestLayoutReadsTheTopLevelError(t *testing.T) {
	src := kmsg.NewPtrMetadataResponse()
	src.Version, src.ErrorCode = 13, 29 // TOPIC_AUTHORIZATION_FAILED
	got := (layoutRequest{&kmsg.MetadataRequest{Version: 13}}).ResponseKind().(*layoutResponse)
	if err := got.ReadFrom(src.AppendTo(nil)); err != nil || got.ErrorCode != 29 {
		t.Fatalf("error code %d, err %v", got.ErrorCode, err)
	}
}

// Every cut-short answer is an error, never a partial layout taken as
// whole; a partition number past any real topic's is refused rather than
// sized into an array.
func TestLayoutRefusesABrokenAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, v := range []int16{1, 8, 9, 12, 13} {
		raw := randomMetadata(r, v).AppendTo(nil)
		for n := range len(raw) {
			got := (layoutRequest{&kmsg.MetadataRequest{Version: v}}).ResponseKind().(*layoutResponse)
			if got.ReadFrom(raw[:n]) == nil {
				t.Fatalf("v%d: %d of %d bytes read as a whole answer", v, n, len(raw))
			}
		}
	}
	src := kmsg.NewPtrMetadataResponse()
	src.Version = 12
	tp := kmsg.NewMetadataResponseTopic()
	tp.Topic = kmsg.StringPtr("huge")
	p := kmsg.NewMetadataResponseTopicPartition()
	p.Partition = 1 << 30
	tp.Partitions = append(tp.Partitions, p)
	src.Topics = append(src.Topics, tp)
	got := (layoutRequest{&kmsg.MetadataRequest{Version: 12}}).ResponseKind().(*layoutResponse)
	if err := got.ReadFrom(src.AppendTo(nil)); err == nil {
		t.Fatalf("partition 2^30 read as %+v", got.topics)
	}
}

// The offsets decoder reads every version of the ListOffsets answer (0-11,
// compact from 6) as franz-go's decoder reads the same bytes: the offset
// of each partition of a topic asked, answered without an error; nothing
// of a topic not asked, of an error, or of version 0's old-style list.
func TestOffsetsDecodeEveryVersionAsFranzGo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	index := map[string]int32{"a": 0, "b": 1}
	for v := int16(0); v <= kmsg.NewPtrListOffsetsResponse().MaxVersion(); v++ {
		for i := range 200 {
			src := kmsg.NewPtrListOffsetsResponse()
			src.Version, src.ThrottleMillis = v, r.Int32N(100)
			for _, name := range []string{"a", "b", "not-asked"}[:r.IntN(4)] {
				rt := kmsg.NewListOffsetsResponseTopic()
				rt.Topic = name
				for p := range r.IntN(300) {
					rp := kmsg.NewListOffsetsResponseTopicPartition()
					rp.Partition, rp.Offset, rp.Timestamp, rp.LeaderEpoch = int32(p), r.Int64N(1<<40), -1, 3
					rp.OldStyleOffsets = []int64{rp.Offset}
					if r.IntN(10) == 0 {
						rp.ErrorCode, rp.Offset = 6, -1 // NOT_LEADER_OR_FOLLOWER
					}
					if v >= 6 && r.IntN(5) == 0 {
						rp.UnknownTags.Set(1, make([]byte, r.IntN(200)))
					}
					rt.Partitions = append(rt.Partitions, rp)
				}
				src.Topics = append(src.Topics, rt)
			}
			raw := src.AppendTo(nil)
			ref := kmsg.NewPtrListOffsetsResponse()
			ref.Version = v
			if err := ref.ReadFrom(raw); err != nil {
				t.Fatalf("v%d: franz-go does not read its own encoding: %v", v, err)
			}
			var want []topicOffset
			for _, rt := range ref.Topics {
				ti, ok := index[rt.Topic]
				for _, rp := range rt.Partitions {
					if ok && rp.ErrorCode == 0 && rp.Offset >= 0 {
						want = append(want, topicOffset{topic: ti, partition: rp.Partition, offset: rp.Offset})
					}
				}
			}
			got := (&offsetsRequest{ListOffsetsRequest: &kmsg.ListOffsetsRequest{Version: v}, index: index}).ResponseKind().(*offsetsResponse)
			if err := got.ReadFrom(raw); err != nil {
				t.Fatalf("v%d #%d: %v", v, i, err)
			}
			if !slices.Equal(got.got, want) || got.ThrottleMillis != ref.ThrottleMillis || got.Key() != ref.Key() {
				t.Fatalf("v%d #%d: got %d offsets (throttle %d), want %d (%d)", v, i, len(got.got), got.ThrottleMillis, len(want), ref.ThrottleMillis)
			}
			if v >= 1 && i < 3 {
				for n := range len(raw) {
					cut := (&offsetsRequest{ListOffsetsRequest: &kmsg.ListOffsetsRequest{Version: v}, index: index}).ResponseKind()
					if cut.ReadFrom(raw[:n]) == nil {
						t.Fatalf("v%d: %d of %d bytes read as a whole answer", v, n, len(raw))
					}
				}
			}
		}
	}
}

// The offsets request encodes, at every version (0-11, compact from 6),
// the same bytes as franz-go's ListOffsetsRequest holding a struct for
// each partition the broker leads, in the leaders' order: the broker reads
// the request the console always sent.
func TestOffsetsRequestEncodesAsFranzGo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for v := int16(0); v <= kmsg.NewPtrListOffsetsRequest().MaxVersion(); v++ {
		for range 50 {
			leaders := Leaders{}
			for i := range r.IntN(5) {
				ls := make([]int32, r.IntN(300))
				for p := range ls {
					ls[p] = r.Int32N(4) - 1 // -1: no leader
				}
				leaders[string(rune('a'+i))+"-topic"] = ls
			}
			broker, ts, iso := r.Int32N(3), []int64{StartOffset, EndOffset}[r.IntN(2)], int8(r.IntN(2))
			ref := kmsg.NewPtrListOffsetsRequest()
			ref.Version, ref.IsolationLevel = v, iso
			ours := &offsetsRequest{ListOffsetsRequest: kmsg.NewPtrListOffsetsRequest(), broker: broker, ts: ts, leaders: leaders}
			ours.Version, ours.IsolationLevel = v, iso
			for _, name := range slices.Sorted(maps.Keys(leaders)) {
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = name
				for p, l := range leaders[name] {
					if l == broker {
						rp := kmsg.NewListOffsetsRequestTopicPartition()
						rp.Partition, rp.Timestamp = int32(p), ts
						rt.Partitions = append(rt.Partitions, rp)
					}
				}
				if len(rt.Partitions) > 0 {
					ref.Topics = append(ref.Topics, rt)
					ours.topics = append(ours.topics, askedTopic{name: name, n: int32(len(rt.Partitions))})
				}
			}
			if got, want := ours.AppendTo(nil), ref.AppendTo(nil); !bytes.Equal(got, want) {
				t.Fatalf("v%d: %d bytes, franz-go's %d:\n%x\n%x", v, len(got), len(want), got, want)
			}
		}
	}
}
