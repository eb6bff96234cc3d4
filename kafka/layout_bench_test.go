package kafka

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataAnswer100k is a v12 Metadata answer of 1,000 topics × 100
// partitions on a three-broker cluster (three replicas each).
func metadataAnswer100k() []byte {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	for i := range 1000 {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(fmt.Sprintf("topic-%04d", i))
		for p := range 100 {
			tp := kmsg.NewMetadataResponseTopicPartition()
			tp.Partition, tp.Leader = int32(p), int32(p%3)
			tp.Replicas, tp.ISR = []int32{0, 1, 2}, []int32{0, 1, 2}
			t.Partitions = append(t.Partitions, tp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp.AppendTo(nil)
}

// The Metadata answer of 100k partitions decoded by franz-go and by the
// console's layout decoder: what a refresh pays twice for the leaders.
func BenchmarkDecodeMetadata100k(b *testing.B) {
	raw := metadataAnswer100k()
	b.Run("franz-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := kmsg.NewPtrMetadataResponse()
			r.Version = 12
			if err := r.ReadFrom(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("layout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := layoutRequest{&kmsg.MetadataRequest{Version: 12}}.ResponseKind()
			if err := r.ReadFrom(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A ListOffsets answer of 100k partitions, likewise (three a refresh).
func BenchmarkDecodeListOffsets100k(b *testing.B) {
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.Version = 8
	index := map[string]int32{}
	for i := range 1000 {
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic = fmt.Sprintf("topic-%04d", i)
		index[t.Topic] = int32(i)
		for p := range 100 {
			tp := kmsg.NewListOffsetsResponseTopicPartition()
			tp.Partition, tp.Offset = int32(p), int64(i*p)
			t.Partitions = append(t.Partitions, tp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	raw := resp.AppendTo(nil)
	b.Run("franz-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := kmsg.NewPtrListOffsetsResponse()
			r.Version = 8
			if err := r.ReadFrom(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("offsets", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := (&offsetsRequest{ListOffsetsRequest: &kmsg.ListOffsetsRequest{Version: 8}, index: index, asked: 100_000}).ResponseKind()
			if err := r.ReadFrom(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A ListOffsets request for 100k partitions led by one broker: franz-go's,
// built a struct a partition as the console did, and the console's,
// encoded from the leaders (three a refresh).
func BenchmarkEncodeListOffsets100k(b *testing.B) {
	leaders := Leaders{}
	for i := range 1000 {
		leaders[fmt.Sprintf("topic-%04d", i)] = make([]int32, 100) // broker 0 leads all
	}
	b.Run("franz-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := kmsg.NewPtrListOffsetsRequest()
			req.Version = 8
			for name, ls := range leaders {
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = name
				rt.Partitions = make([]kmsg.ListOffsetsRequestTopicPartition, 0, len(ls))
				for p := range ls {
					rp := kmsg.NewListOffsetsRequestTopicPartition()
					rp.Partition, rp.Timestamp = int32(p), EndOffset
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
			}
			_ = req.AppendTo(nil)
		}
	})
	b.Run("offsets", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := &offsetsRequest{ListOffsetsRequest: kmsg.NewPtrListOffsetsRequest(), ts: EndOffset, leaders: leaders}
			req.Version = 8
			for name, ls := range leaders {
				req.topics = append(req.topics, askedTopic{name: name, n: int32(len(ls))})
				req.asked += len(ls)
			}
			_ = req.AppendTo(nil)
		}
	})
}
