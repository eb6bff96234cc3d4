package demo

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumerGroups are the primary's consumer groups whose offsets MM2
// checkpoints: group -> topic.
var consumerGroups = map[string]string{"flink-events": "events", "billing": "orders"}

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
				// committing is what the console observes.
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
