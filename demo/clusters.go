package demo

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Partition counts of the data topics on the primary.
var topicPartitions = map[string]int32{"events": 6, "orders": 3, "users": 3}

// heartbeatsTopic is MirrorHeartbeatConnector's local topic (on the primary,
// written by the dr->primary herder).
const heartbeatsTopic = "heartbeats"

// Two brokers each: enough to show leaders spread over nodes, light enough
// for unit tests.
const brokersPerCluster = 2

func (s *Sandbox) startClusters() error {
	var err error
	s.primary, err = kfake.NewCluster(kfake.NumBrokers(brokersPerCluster), kfake.ClusterID(SourceAlias))
	if err != nil {
		return fmt.Errorf("demo: start primary cluster: %w", err)
	}
	s.dr, err = kfake.NewCluster(kfake.NumBrokers(brokersPerCluster), kfake.ClusterID(TargetAlias))
	if err != nil {
		s.primary.Close()
		return fmt.Errorf("demo: start dr cluster: %w", err)
	}
	return nil
}

func (s *Sandbox) closeClusters() {
	s.primary.Close()
	s.dr.Close()
}

// createPrimaryTopics creates the data topics and the compacted heartbeats
// topic MM2's heartbeat connector would create.
func (s *Sandbox) createPrimaryTopics(ctx context.Context) error {
	cl, err := s.newClient("setup-primary", s.PrimaryBootstrap())
	if err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	for _, t := range Topics {
		if err := createTopic(ctx, adm, t, topicPartitions[t], nil); err != nil {
			return fmt.Errorf("demo: primary: %w", err)
		}
	}
	if err := createTopic(ctx, adm, heartbeatsTopic, 1, compacted()); err != nil {
		return fmt.Errorf("demo: primary: %w", err)
	}
	return nil
}

func compacted() map[string]*string {
	return map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
}

// createTopic creates topic with replication factor 1 (kfake does not
// replicate anyway).
func createTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) error {
	if _, err := adm.CreateTopic(ctx, partitions, 1, configs, topic); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}
