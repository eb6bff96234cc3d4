package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/model"
)

// Range is the offsets [From, To) of one partition to read.
type Range struct {
	TP       model.TP
	From, To int64
}

// ReadLimits bound ReadRecords.
type ReadLimits struct {
	// MaxRecords and MaxBytes (keys, values and headers) cap what is
	// handed on; 0 is no cap.
	MaxRecords, MaxBytes int64
	// Idle is how long the cluster may send nothing while ranges are
	// unfinished before the read fails: a cluster gone mid-read ends it
	// with an error, not a silently short result. Default 30 s.
	Idle time.Duration
}

// CapError says a read stopped at its cap; everything before was handed on.
type CapError struct {
	Records, Bytes int64 // handed on before the cap
	Limits         ReadLimits
}

func (e *CapError) Error() string {
	return fmt.Sprintf("stopped at the cap after %d records (%d bytes; caps: %d records, %d bytes)", e.Records, e.Bytes, e.Limits.MaxRecords, e.Limits.MaxBytes)
}

// readFetchBytes is the fetch budget of ReadRecords.
const readFetchBytes = 1 << 20

// RecordSize is what a record counts against ReadLimits.MaxBytes.
func RecordSize(r *Record) int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// ReadRecords hands each data record of ranges to fn, in offset order
// within a partition (partitions interleave), and returns nil once every
// range is read to its end. It reads with a client of its own (opts), so
// it commits nothing and joins no group; records of aborted transactions
// are handed on (they hold offsets, and MM2 copies them), transaction
// markers are not. It fails when fn does, when ctx ends, when a cap is
// reached (*CapError) or when the cluster stays silent for Idle. done,
// when set, hears of each range read to its end.
func ReadRecords(ctx context.Context, opts Options, ranges []Range, lim ReadLimits, fn func(*Record) error, done func(model.TP)) error {
	if lim.Idle <= 0 {
		lim.Idle = 30 * time.Second
	}
	end := map[model.TP]int64{}
	start := map[string]map[int32]kgo.Offset{}
	for _, r := range ranges {
		if r.From >= r.To {
			continue
		}
		end[r.TP] = r.To
		if start[r.TP.Topic] == nil {
			start[r.TP.Topic] = map[int32]kgo.Offset{}
		}
		start[r.TP.Topic][r.TP.Partition] = kgo.NewOffset().At(r.From)
	}
	if len(end) == 0 {
		return nil
	}
	// Control records are kept so a range ending in a transaction marker
	// is seen to end; they are not handed on. Small fetches bound what a
	// read holds in memory (one fetch being handed on, one buffered). No
	// reset: records deleted under the read end it with an error instead
	// of a silent jump to the new log start.
	cl, err := kgo.NewClient(append(opts[:len(opts):len(opts)], kgo.ConsumePartitions(start), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxBytes(readFetchBytes), kgo.FetchMaxPartitionBytes(readFetchBytes))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	var records, bytes int64
	lastProgress := time.Now()
	var lastErr error
	for len(end) > 0 {
		pctx, cancel := context.WithTimeout(ctx, lim.Idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		progressed := false
		var gone error
		fs.EachError(func(t string, p int32, err error) {
			switch {
			case errors.Is(err, kerr.OffsetOutOfRange):
				gone = fmt.Errorf("%s/%d: records in the range were deleted (retention) before they were read: %w", t, p, err)
			case !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
				lastErr = fmt.Errorf("%s/%d: %w", t, p, err)
			}
		})
		if gone != nil {
			return gone
		}
		var ferr error
		fs.EachRecord(func(r *kgo.Record) {
			tp := model.TP{Topic: r.Topic, Partition: r.Partition}
			to, open := end[tp]
			if !open || ferr != nil || r.Offset >= to {
				return
			}
			progressed = true
			if !r.Attrs.IsControl() {
				size := RecordSize(r)
				if lim.MaxRecords > 0 && records+1 > lim.MaxRecords || lim.MaxBytes > 0 && bytes+size > lim.MaxBytes {
					ferr = &CapError{Records: records, Bytes: bytes, Limits: lim}
					return
				}
				if ferr = fn(r); ferr != nil {
					return
				}
				records, bytes = records+1, bytes+size
			}
			if r.Offset >= to-1 {
				delete(end, tp)
				if done != nil {
					done(tp)
				}
			}
		})
		if ferr != nil {
			return ferr
		}
		if progressed {
			lastProgress, lastErr = time.Now(), nil
		} else if time.Since(lastProgress) >= lim.Idle {
			return fmt.Errorf("the cluster sent nothing for %s with %d partition(s) unfinished (%d records read): %w",
				lim.Idle, len(end), records, cmp.Or(lastErr, errors.New("no answer")))
		}
	}
	return nil
}

// StableEnds reads the last stable offset of every partition of topics
// (what a read_committed reader can reach; the high watermark unless a
// transaction is open). A partition whose offset could not be read is
// missing.
func StableEnds(ctx context.Context, cl *Client, topics ...string) (map[model.TP]int64, error) {
	leaders, err := TopicLeaders(ctx, cl, topics)
	if err != nil {
		return nil, fmt.Errorf("reading the partitions' leaders: %w", err)
	}
	ends, err := ListOffsets(ctx, cl, leaders, StableEnd)
	out := map[model.TP]int64{}
	for topic, ls := range leaders {
		for p := range ls {
			if e, ok := ends.Get(topic, int32(p)); ok {
				out[model.TP{Topic: topic, Partition: int32(p)}] = e
			}
		}
	}
	return out, err
}

// LogBounds are a partition's log start and end (high watermark).
type LogBounds struct{ Start, End int64 }

// ListBounds reads the log start and end of every partition of topics
// from their leaders (TopicLeaders, ListOffsets). A partition whose
// offsets could not be read is missing, and the error says how many are.
func ListBounds(ctx context.Context, cl *Client, topics ...string) (map[model.TP]LogBounds, error) {
	listed, err := listAt(ctx, cl, topics, StartOffset, EndOffset)
	if listed == nil {
		return nil, err
	}
	out := make(map[model.TP]LogBounds, len(listed))
	for tp, o := range listed {
		out[tp] = LogBounds{Start: o[0], End: o[1]}
	}
	return out, err
}

// ListAt reads one offset (at: StartOffset, EndOffset or StableEnd) of
// every partition of topics from their leaders, as ListBounds does.
func ListAt(ctx context.Context, cl *Client, at int64, topics ...string) (map[model.TP]int64, error) {
	listed, err := listAt(ctx, cl, topics, at)
	if listed == nil {
		return nil, err
	}
	out := make(map[model.TP]int64, len(listed))
	for tp, o := range listed {
		out[tp] = o[0]
	}
	return out, err
}

// listAt reads the offsets at each of ats of every partition of topics:
// a partition is left out unless all of them were read, and the error
// names the topics the cluster does not have and counts those left out.
func listAt(ctx context.Context, cl *Client, topics []string, ats ...int64) (map[model.TP][]int64, error) {
	leaders, err := TopicLeaders(ctx, cl, topics)
	if err != nil {
		return nil, fmt.Errorf("reading the partitions' leaders: %w", err)
	}
	lists := make([]Offsets, len(ats))
	errs := make([]error, 1, 1+len(ats))
	for i, at := range ats {
		var lerr error
		lists[i], lerr = ListOffsets(ctx, cl, leaders, at)
		errs = append(errs, lerr)
	}
	out := map[model.TP][]int64{}
	missing := 0
	for topic, ls := range leaders {
	partitions:
		for p := range ls {
			vs := make([]int64, len(ats))
			for i := range lists {
				v, ok := lists[i].Get(topic, int32(p))
				if !ok {
					missing++
					continue partitions
				}
				vs[i] = v
			}
			out[model.TP{Topic: topic, Partition: int32(p)}] = vs
		}
	}
	for _, t := range topics {
		if _, ok := leaders[t]; !ok {
			errs[0] = errors.Join(errs[0], fmt.Errorf("topic %s is not in the cluster", t))
		}
	}
	if missing > 0 {
		errs[0] = errors.Join(errs[0], fmt.Errorf("the offsets of %d partition(s) could not be read", missing))
	}
	return out, errors.Join(errs...)
}
