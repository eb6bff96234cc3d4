package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Share of TrafficRate per topic; orders is the transactional one.
var topicShare = map[string]float64{"events": 0.6, "orders": 0.25, "users": 0.15}

const (
	trafficTick     = 100 * time.Millisecond
	abortEvery      = 8 // about one orders transaction in abortEvery aborts
	ordersTxnID     = "drconsole-demo-orders"
	heartbeatPeriod = time.Second
)

// rng returns a generator derived from the seed, distinct per stream so
// goroutine scheduling never changes what a stream produces.
func (s *Sandbox) rng(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(s.opts.Seed), stream))
}

// perTick spreads a per-second rate over ticks, carrying the fraction.
type perTick struct{ rate, carry float64 }

func (p *perTick) next() int {
	p.carry += p.rate * trafficTick.Seconds()
	n := int(p.carry)
	p.carry -= float64(n)
	return n
}

// startPlainTraffic writes events and users with a plain (idempotent)
// producer. Each tick is produced synchronously: while the primary is down
// the generator stalls and retries instead of piling up records.
func (s *Sandbox) startPlainTraffic(ctx context.Context) error {
	cl, err := s.newClient("traffic", s.PrimaryBootstrap(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	rng := s.rng(1)
	rates := map[string]*perTick{}
	for _, t := range []string{"events", "users"} {
		rates[t] = &perTick{rate: float64(s.opts.TrafficRate) * topicShare[t]}
	}
	s.goRun(func() {
		tick := time.NewTicker(trafficTick)
		defer tick.Stop()
		seq := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var recs []*kgo.Record
			for _, t := range []string{"events", "users"} {
				for range rates[t].next() {
					seq++
					recs = append(recs, s.record(rng, t, seq))
				}
			}
			res := cl.ProduceSync(ctx, recs...)
			s.produced.Add(int64(countOK(res)))
			if err := res.FirstErr(); err != nil && ctx.Err() == nil {
				s.log.Debug("demo traffic: produce failed", "err", err)
			}
		}
	})
	return nil
}

// startOrdersTraffic writes orders in transactions of a few records each,
// committing most and aborting some, so the commit/abort markers leave real
// gaps in the upstream offsets.
func (s *Sandbox) startOrdersTraffic(ctx context.Context) error {
	newTxnClient := func() (*kgo.Client, error) {
		return s.newClient("orders", s.PrimaryBootstrap(),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.TransactionalID(ordersTxnID),
			kgo.TransactionTimeout(10*time.Second),
		)
	}
	cl, err := newTxnClient()
	if err != nil {
		return err
	}
	rng := s.rng(2)
	rate := &perTick{rate: float64(s.opts.TrafficRate) * topicShare["orders"]}
	s.goRun(func() {
		tick := time.NewTicker(trafficTick)
		defer tick.Stop()
		seq := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			n := rate.next()
			if n == 0 {
				continue
			}
			recs := make([]*kgo.Record, n)
			for i := range recs {
				seq++
				recs[i] = s.record(rng, "orders", seq)
			}
			commit := rng.IntN(abortEvery) != 0
			acked, err := s.transaction(ctx, cl, recs, commit)
			s.produced.Add(int64(acked))
			if err == nil || ctx.Err() != nil {
				continue
			}
			// A failed transaction (primary down, fenced, unknown outcome):
			// start over with a fresh producer, which aborts whatever the
			// old one left open when it initialises the same transactional ID.
			s.log.Debug("demo orders: transaction failed, recreating producer", "err", err)
			if next, err := newTxnClient(); err == nil {
				s.closeClient(cl)
				cl = next
			}
		}
	})
	return nil
}

// transaction writes recs in one transaction and ends it; it returns how
// many records the primary acknowledged.
func (s *Sandbox) transaction(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, commit bool) (int, error) {
	if err := cl.BeginTransaction(); err != nil {
		return 0, fmt.Errorf("begin transaction: %w", err)
	}
	res := cl.ProduceSync(ctx, recs...)
	acked := countOK(res)
	end := kgo.TransactionEndTry(commit)
	if err := res.FirstErr(); err != nil {
		end = kgo.TryAbort
		_ = cl.AbortBufferedRecords(ctx)
		endErr := cl.EndTransaction(ctx, end)
		return acked, errors.Join(fmt.Errorf("produce in transaction: %w", err), endErr)
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		return acked, fmt.Errorf("end transaction: %w", err)
	}
	return acked, nil
}

// record builds one synthetic record for topic, on a random partition.
func (s *Sandbox) record(rng *rand.Rand, topic string, seq int) *kgo.Record {
	id := rng.IntN(10_000)
	now := time.Now()
	return &kgo.Record{
		Topic:     topic,
		Partition: rng.Int32N(topicPartitions[topic]),
		Key:       []byte(topic[:len(topic)-1] + "-" + strconv.Itoa(id)),
		Value:     fmt.Appendf(nil, `{"seq":%d,"id":%d,"amount":%d,"at":%q}`, seq, id, rng.IntN(100_000), now.Format(time.RFC3339Nano)),
		Headers:   []kgo.RecordHeader{{Key: "source", Value: []byte("drconsole-demo")}},
		Timestamp: now,
	}
}

func countOK(res kgo.ProduceResults) int {
	n := 0
	for _, r := range res {
		if r.Err == nil {
			n++
		}
	}
	return n
}

// startHeartbeats emits what MM2's dr->primary MirrorHeartbeatTask emits:
// key (dr, primary), the emission time as value and record timestamp, once
// a second, into the primary's heartbeats topic.
func (s *Sandbox) startHeartbeats(ctx context.Context) error {
	cl, err := s.newClient("heartbeats", s.PrimaryBootstrap(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	s.goRun(func() {
		every(ctx, heartbeatPeriod, func() {
			now := time.UnixMilli(time.Now().UnixMilli())
			hb := model.Heartbeat{SourceAlias: TargetAlias, TargetAlias: SourceAlias, EmittedMs: now.UnixMilli()}
			// Bounded: a heartbeat that cannot be written within a period is
			// simply missed, as with a real herder.
			pctx, cancel := context.WithTimeout(ctx, heartbeatPeriod)
			err := cl.ProduceSync(pctx, &kgo.Record{
				Topic: heartbeatsTopic, Partition: 0, Key: mm2.EncodeKey(hb), Value: mm2.EncodeValue(hb), Timestamp: now,
			}).FirstErr()
			cancel()
			if err == nil {
				s.heartbeats.Add(1)
			} else if ctx.Err() == nil {
				s.log.Debug("demo heartbeat: emit failed", "err", err)
			}
		})
	})
	return nil
}
