package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A refresh asks the source for the Metadata of every topic and DR for its
// mirrors'. franz-go decodes such an answer into a struct a partition with
// three slices each (replicas, ISR, offline replicas): at a million
// partitions three million small objects an answer, twice a refresh, and
// 18 % of the console's CPU decoding them. The console keeps only each
// partition's leader, so the answer is decoded straight into that.

// TopicMeta is one topic of a Metadata answer, as far as the console reads it.
type TopicMeta struct {
	Name     string // "" when the broker named none (a null name, v12+)
	ID       [16]byte
	Internal bool
	Err      int16
	// Leaders is each partition's leader broker id, indexed by partition,
	// 0 to the highest partition answered; -1 where no leader is known (the
	// partition had an error, or was not in the answer).
	Leaders []int32
}

// maxPartitions bounds a partition number from an answer: Kafka has no
// topic near it, and a larger number would make the leaders array huge.
const maxPartitions = 1 << 24

// Layout answers a Metadata request for topics (nil: all) freshly, and
// without kgo's cache keeping the answer (through the client, every
// Metadata answer is cached: ~40 MB at 100k partitions). The client's own
// request asks for no topic, which refreshes the broker list kgo routes
// by; the full request then goes to one of those brokers directly, the
// next one if it fails.
func Layout(ctx context.Context, cl *Client, topics []string) ([]TopicMeta, error) {
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
		resp, err := cl.Broker(int(b.NodeID)).Request(ctx, layoutRequest{req})
		if err == nil {
			l := resp.(*layoutResponse)
			if l.ErrorCode != 0 { // v13+: the whole request failed
				err = kerr.ErrorForCode(l.ErrorCode)
			} else {
				return l.topics, nil
			}
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

// layoutRequest is a Metadata request answered by a layoutResponse.
type layoutRequest struct{ *kmsg.MetadataRequest }

func (r layoutRequest) ResponseKind() kmsg.Response {
	resp := &layoutResponse{}
	resp.Default()
	resp.Version = r.Version
	return resp
}

// layoutResponse decodes a Metadata answer into TopicMeta. The embedded
// response gives the key, the version and the throttle (ThrottleMillis and
// ErrorCode are filled); its Topics stay empty.
type layoutResponse struct {
	kmsg.MetadataResponse
	topics []TopicMeta
}

// ReadFrom decodes a MetadataResponse body of r.Version (0 to 13; 9 on
// are flexible), keeping what TopicMeta holds and skipping the rest.
func (r *layoutResponse) ReadFrom(src []byte) error {
	v := r.Version
	d := decoder{Reader: kbin.Reader{Src: src}, flexible: v >= 9}
	if v >= 3 {
		r.ThrottleMillis = d.Int32()
	}
	for range d.arrayLen(10) { // brokers
		d.Int32()    // node id
		d.str(false) // host
		d.Int32()    // port
		if v >= 1 {
			d.str(true) // rack
		}
		d.tags()
	}
	if v >= 2 {
		d.str(true) // cluster id
	}
	if v >= 1 {
		d.Int32() // controller id
	}
	n := d.arrayLen(5)
	r.topics = make([]TopicMeta, 0, n)
	for range n {
		t := TopicMeta{Err: d.Int16()}
		name, _ := d.str(v >= 12)
		t.Name = string(name)
		if v >= 10 {
			t.ID = d.Uuid()
		}
		if v >= 1 {
			t.Internal = d.Bool()
		}
		np := d.arrayLen(13)
		t.Leaders = make([]int32, np)
		top := int32(-1)
		for i := range t.Leaders {
			t.Leaders[i] = -1
		}
		for range np {
			perr, p, leader := d.Int16(), d.Int32(), d.Int32()
			if v >= 7 {
				d.Int32() // leader epoch
			}
			d.int32s() // replicas
			d.int32s() // ISR
			if v >= 5 {
				d.int32s() // offline replicas
			}
			d.tags()
			if p < 0 || !d.Ok() {
				continue
			}
			if p >= maxPartitions {
				return fmt.Errorf("metadata of %q: partition %d out of range", t.Name, p)
			}
			for int(p) >= len(t.Leaders) {
				t.Leaders = append(t.Leaders, -1)
			}
			top = max(top, p)
			if perr == 0 {
				t.Leaders[p] = leader
			}
		}
		t.Leaders = t.Leaders[:top+1] // duplicates or negatives answered: no phantom partitions
		if v >= 8 {
			d.Int32() // authorized operations
		}
		d.tags()
		if !d.Ok() {
			break
		}
		r.topics = append(r.topics, t)
	}
	if v >= 8 && v <= 10 {
		d.Int32() // cluster authorized operations
	}
	if v >= 13 {
		r.ErrorCode = d.Int16()
	}
	d.tags()
	return d.done()
}

// UnsafeReadFrom is ReadFrom: the embedded response's would decode into
// its own structs instead.
func (r *layoutResponse) UnsafeReadFrom(src []byte) error { return r.ReadFrom(src) }

// decoder reads the Kafka protocol's compound types, compact (KIP-482)
// when flexible, and skips what it is not asked to keep.
type decoder struct {
	kbin.Reader
	flexible bool
}

// arrayLen is an array's length, 0 for a null one; an array of more
// elements of at least minSize bytes each than the bytes left is bad.
func (d *decoder) arrayLen(minSize int) int {
	var n int32
	if d.flexible {
		n = int32(d.Uvarint()) - 1
	} else {
		n = d.Int32()
	}
	if n <= 0 {
		return 0
	}
	if int64(n)*int64(minSize) > int64(len(d.Src)) {
		d.Span(-1) // marks the reader bad
		return 0
	}
	return int(n)
}

// str is a string's bytes (aliasing the answer), and whether it was null,
// which only a nullable string may be.
func (d *decoder) str(nullable bool) ([]byte, bool) {
	var n int
	if d.flexible {
		n = int(d.Uvarint()) - 1
	} else {
		n = int(d.Int16())
	}
	if n < 0 && nullable {
		return nil, true
	}
	return d.Span(n), false // a negative length marks the reader bad
}

// int32s skips an array of int32.
func (d *decoder) int32s() {
	if n := d.arrayLen(4); n > 0 {
		d.Span(4 * n)
	}
}

// done is nil when the answer was read to its last byte: bytes left over
// mean it was not read as the version it claims.
func (d *decoder) done() error {
	if err := d.Complete(); err != nil {
		return err
	}
	if len(d.Src) > 0 {
		return fmt.Errorf("%d bytes left over at the end of the answer", len(d.Src))
	}
	return nil
}

// tags skips a flexible structure's tagged fields.
func (d *decoder) tags() {
	if !d.flexible {
		return
	}
	for n := d.Uvarint(); n > 0 && d.Ok(); n-- {
		d.Uvarint() // tag
		d.Span(int(d.Uvarint()))
	}
}
