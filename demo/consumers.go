package demo

import (
	"context"
	"maps"
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
// translate and lag is visible.
func (s *Sandbox) startConsumers(ctx context.Context) error {
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
		s.goRun(func() {
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
		})
	}
	return nil
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
