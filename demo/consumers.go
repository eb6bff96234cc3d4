package demo

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumerGroups are the primary's consumer groups whose offsets MM2
// checkpoints: group -> topic.
var consumerGroups = map[string]string{FlinkJobGroup: "events", "billing": "orders"}

// FlinkJobGroup is the group of the primary's Flink job the Flink
// stand-in stands for: its savepoints hold this consumer's positions.
const FlinkJobGroup = "flink-events"

const (
	consumerPause       = 300 * time.Millisecond // consume a little behind the head
	consumerCommitEvery = time.Second
)

// startConsumers runs one real group consumer per group; each commits its
// position every second (kgo autocommit), so checkpoints have something to
// translate and lag is visible. SetConsumersRunning stops and restarts
// them.
func (s *Sandbox) startConsumers(ctx context.Context) error {
	s.consumersMu.Lock()
	defer s.consumersMu.Unlock()
	if s.consumers != nil {
		return nil
	}
	cctx, cancel := context.WithCancel(ctx)
	set := &consumerSet{cancel: cancel}
	s.consumers = set
	for group, topic := range consumerGroups {
		cl, err := s.newClient("group-"+group, s.PrimaryBootstrap(),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.AutoCommitInterval(consumerCommitEvery),
			kgo.SessionTimeout(6*time.Second),
			kgo.HeartbeatInterval(500*time.Millisecond),
		)
		if err != nil {
			return err
		}
		set.clients = append(set.clients, cl)
		set.wg.Add(1)
		s.goRun(func() {
			defer set.wg.Done()
			s.consume(cctx, cl, group)
		})
	}
	return nil
}

// consumerSet is the running group consumers.
type consumerSet struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	clients []*kgo.Client
}

// consume polls as group until ctx is done.
func (s *Sandbox) consume(ctx context.Context, cl *kgo.Client, group string) {
	for {
		fetches := cl.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			s.log.Debug("demo consumer: fetch failed", "group", group, "topic", t, "partition", p, "err", err)
		})
		// The records themselves are not needed: consuming and
		// committing is what the console observes; the job's
		// group's positions are what its savepoints hold.
		if group == FlinkJobGroup {
			s.notePositions(fetches)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(consumerPause):
		}
	}
}

// SetConsumersRunning stops the primary's group consumers (false: they
// commit, leave their groups and the groups are empty, as when the
// applications moved to DR in a failover) or starts them again from
// their groups' committed offsets (true). It returns once they have.
func (s *Sandbox) SetConsumersRunning(running bool) error {
	if running {
		return s.startConsumers(s.runCtx)
	}
	s.consumersMu.Lock()
	defer s.consumersMu.Unlock()
	set := s.consumers
	if set == nil {
		return nil
	}
	s.consumers = nil
	set.cancel()
	set.wg.Wait()
	for _, cl := range set.clients {
		s.closeClient(cl) // commits and leaves the group
	}
	return nil
}

// ConsumersRunning reports whether the primary's group consumers run.
func (s *Sandbox) ConsumersRunning() bool {
	s.consumersMu.Lock()
	defer s.consumersMu.Unlock()
	return s.consumers != nil
}

// notePositions records, per partition, the next offset the job's group
// reads: past the last record it was given.
func (s *Sandbox) notePositions(fetches kgo.Fetches) {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if n := len(p.Records); n > 0 {
			if s.jobPos == nil {
				s.jobPos = map[int32]int64{}
			}
			s.jobPos[p.Partition] = p.Records[n-1].Offset + 1
		}
	})
}

// JobPositions are the next offsets the primary's Flink job (the group
// FlinkJobGroup on topic events) reads, per partition it has read from.
func (s *Sandbox) JobPositions() map[int32]int64 {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	return maps.Clone(s.jobPos)
}
