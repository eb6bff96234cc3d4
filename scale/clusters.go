package scale

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// Aliases and the replication policy of the one flow the rig watches:
// identity names, internal topics as MM2 derives them.
const (
	sourceAlias = "primary"
	targetAlias = "dr"
	topicPrefix = "scale-"
)

var policy = mm2.ReplicationPolicy{Identity: true}

// Shape is the estate the clusters hold.
type Shape struct {
	Partitions   int // N, over ceil(N/PerTopic) topics
	PerTopic     int // partitions per topic (the last topic may hold fewer)
	SyncsPerPart int // offset syncs per partition
	// Checkpoints: one consumer group per topic with a checkpoint for each
	// of its partitions (N checkpoints).
	Checkpoints bool
}

func (s Shape) topics() []string {
	n := (s.Partitions + s.PerTopic - 1) / s.PerTopic
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", topicPrefix, i)
	}
	return out
}

// partitions of topic i.
func (s Shape) partitionsOf(i int) int32 {
	return int32(min(s.PerTopic, s.Partitions-i*s.PerTopic))
}

// lagging is the number of records partition (i, p) has on the primary
// that DR has not: one partition in ten lags by 1 to 5 records, the rest
// are caught up. The lag reader then reads the first unreplicated
// record's timestamp for a tenth of the estate every refresh.
func lagging(i int, p int32) int {
	if (i+int(p))%10 != 0 {
		return 0
	}
	return 1 + (i+int(p))%5
}

// Clusters are the primary and DR clusters with a heartbeat emitter.
type Clusters struct {
	Primary, DR *kfake.Cluster
	Shape       Shape
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	hbClient    *kgo.Client
}

// brokersPerCluster: leaders spread over nodes, so the console's reads fan
// out per broker as they do against a real cluster.
const brokersPerCluster = 3

// StartClusters brings up both clusters and writes the estate: per
// partition SyncsPerPart replicated records on both sides (plus the
// lagging ones on the primary), one offset sync per replicated record,
// checkpoints, and a heartbeat every second until Close.
func StartClusters(ctx context.Context, sh Shape) (*Clusters, error) {
	topics := sh.topics()
	c := &Clusters{Shape: sh}
	var err error
	// Topics with PerTopic partitions each; the last one is created
	// separately when N is not a multiple.
	full, last := topics, []string(nil)
	if sh.Partitions%sh.PerTopic != 0 {
		full, last = topics[:len(topics)-1], topics[len(topics)-1:]
	}
	seed := func(id string, extra ...string) (*kfake.Cluster, error) {
		opts := []kfake.Opt{kfake.NumBrokers(brokersPerCluster), kfake.ClusterID(id)}
		if len(full) > 0 {
			opts = append(opts, kfake.SeedTopics(int32(sh.PerTopic), full...))
		}
		if len(last) > 0 {
			opts = append(opts, kfake.SeedTopics(sh.partitionsOf(len(topics)-1), last...))
		}
		if len(extra) > 0 {
			opts = append(opts, kfake.SeedTopics(1, extra...))
		}
		return kfake.NewCluster(opts...)
	}
	if c.Primary, err = seed(sourceAlias); err != nil {
		return nil, fmt.Errorf("scale: primary cluster: %w", err)
	}
	if c.DR, err = seed(targetAlias, policy.OffsetSyncsTopic(sourceAlias), policy.CheckpointsTopic(sourceAlias),
		policy.HeartbeatsTopic(sourceAlias)); err != nil {
		c.Primary.Close()
		return nil, fmt.Errorf("scale: dr cluster: %w", err)
	}
	if err := c.fill(ctx, topics); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.startHeartbeats(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func newClient(cl *kfake.Cluster) (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(cl.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1<<20))
}

// chunk bounds the records held in memory before they are produced.
const chunk = 200_000

// producer collects records and produces them synchronously a chunk at a time.
type producer struct {
	ctx  context.Context
	cl   *kgo.Client
	recs []*kgo.Record
}

func (p *producer) add(r *kgo.Record) error {
	p.recs = append(p.recs, r)
	if len(p.recs) >= chunk {
		return p.flush()
	}
	return nil
}

func (p *producer) flush() error {
	if len(p.recs) == 0 {
		return nil
	}
	err := p.cl.ProduceSync(p.ctx, p.recs...).FirstErr()
	p.recs = p.recs[:0]
	return err
}

// fill writes the data, syncs and checkpoints. Replicated records carry a
// timestamp an hour old, lagging ones 30 s old: the flow's RPO is about
// 30 s and grows while the rig runs, as with a stalled partition.
func (c *Clusters) fill(ctx context.Context, topics []string) error {
	pcl, err := newClient(c.Primary)
	if err != nil {
		return err
	}
	defer pcl.Close()
	dcl, err := newClient(c.DR)
	if err != nil {
		return err
	}
	defer dcl.Close()
	src, dst := &producer{ctx: ctx, cl: pcl}, &producer{ctx: ctx, cl: dcl}
	meta := &producer{ctx: ctx, cl: dcl}
	now := time.Now()
	old, recent := now.Add(-time.Hour), now.Add(-30*time.Second)
	value := []byte("v")
	syncsTopic, cpTopic := policy.OffsetSyncsTopic(sourceAlias), policy.CheckpointsTopic(sourceAlias)
	for i, t := range topics {
		for p := range c.Shape.partitionsOf(i) {
			for o := range c.Shape.SyncsPerPart {
				if err := src.add(&kgo.Record{Topic: t, Partition: p, Value: value, Timestamp: old}); err != nil {
					return fmt.Errorf("scale: primary: %w", err)
				}
				if err := dst.add(&kgo.Record{Topic: policy.RemoteTopic(sourceAlias, t), Partition: p, Value: value}); err != nil {
					return fmt.Errorf("scale: dr: %w", err)
				}
				s := model.OffsetSync{Topic: t, Partition: p, Upstream: int64(o), Downstream: int64(o)}
				if err := meta.add(&kgo.Record{Topic: syncsTopic, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s), Timestamp: now}); err != nil {
					return fmt.Errorf("scale: offset syncs: %w", err)
				}
			}
			for range lagging(i, p) {
				if err := src.add(&kgo.Record{Topic: t, Partition: p, Value: value, Timestamp: recent}); err != nil {
					return fmt.Errorf("scale: primary: %w", err)
				}
			}
			if c.Shape.Checkpoints && c.Shape.SyncsPerPart > 0 {
				last := int64(c.Shape.SyncsPerPart - 1)
				cp := model.Checkpoint{Group: "app-" + t, Topic: policy.RemoteTopic(sourceAlias, t), Partition: p, Upstream: last, Downstream: last}
				if err := meta.add(&kgo.Record{Topic: cpTopic, Key: mm2.EncodeKey(cp), Value: mm2.EncodeValue(cp), Timestamp: now}); err != nil {
					return fmt.Errorf("scale: checkpoints: %w", err)
				}
			}
		}
	}
	for _, p := range []*producer{src, dst, meta} {
		if err := p.flush(); err != nil {
			return fmt.Errorf("scale: producing the estate: %w", err)
		}
	}
	return nil
}

// startHeartbeats writes what MM2 replicates from the dr->primary
// heartbeat connector into DR's primary.heartbeats, once a second.
func (c *Clusters) startHeartbeats() error {
	cl, err := newClient(c.DR)
	if err != nil {
		return err
	}
	c.hbClient = cl
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	topic := policy.HeartbeatsTopic(sourceAlias)
	beat := func() {
		now := time.UnixMilli(time.Now().UnixMilli())
		hb := model.Heartbeat{SourceAlias: targetAlias, TargetAlias: sourceAlias, EmittedMs: now.UnixMilli()}
		pctx, done := context.WithTimeout(ctx, time.Second)
		defer done()
		// A heartbeat not written within its second is missed, as with MM2.
		_ = cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Key: mm2.EncodeKey(hb), Value: mm2.EncodeValue(hb), Timestamp: now}).FirstErr()
	}
	beat()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return nil
}

// Close stops the heartbeats and both clusters.
func (c *Clusters) Close() {
	if c.cancel != nil {
		c.cancel()
		c.wg.Wait()
	}
	if c.hbClient != nil {
		c.hbClient.Close()
	}
	c.Primary.Close()
	c.DR.Close()
}
