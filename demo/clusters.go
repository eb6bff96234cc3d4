package demo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	// kfake keeps every record in memory. Its log cleaner compacts the
	// internal topics every log.cleaner.backoff.ms (an hour by default);
	// retention is applied more often by the sandbox itself (runRetention).
	cleaner := kfake.BrokerConfigs(map[string]string{
		"log.cleaner.backoff.ms": strconv.FormatInt(compactInterval.Milliseconds(), 10),
	})
	var err error
	s.primary, err = kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(brokersPerCluster), kfake.ClusterID(SourceAlias), cleaner},
		primaryACLs()...)...)
	if err != nil {
		return fmt.Errorf("demo: start primary cluster: %w", err)
	}
	s.dr, err = kfake.NewCluster(kfake.NumBrokers(brokersPerCluster), kfake.ClusterID(TargetAlias), cleaner)
	if err != nil {
		s.primary.Close()
		return fmt.Errorf("demo: start dr cluster: %w", err)
	}
	return nil
}

// WriterPrincipal is who every sandbox client is to the primary: its
// clients do not authenticate, so Kafka names them User:ANONYMOUS. A
// switchover's fence denies it Write on the mirrored topics.
const WriterPrincipal = "User:ANONYMOUS"

// primaryACLs make the primary enforce ACLs as a real secured cluster
// does, so a switchover's fence (DENY WRITE for WriterPrincipal) is
// enforced by the broker: the sandbox's clients are allowed everything
// until then. They all share the one principal, so the fence stops every
// sandbox writer to those topics (the traffic, and a failback's reverse
// copy until the fence is rolled back); MirrorMaker's own topics and
// the consumers' offset commits are not fenced.
func primaryACLs() []kfake.Opt {
	var acls []kfake.ACL
	for _, r := range []kmsg.ACLResourceType{kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeTransactionalId} {
		acls = append(acls, kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll, Allow: true})
	}
	acls = append(acls, kfake.ACL{Resource: kmsg.ACLResourceTypeCluster, Name: "kafka-cluster", Pattern: kmsg.ACLResourcePatternTypeLiteral,
		Operation: kmsg.ACLOperationAll, Allow: true})
	// kfake seeds a user's ACLs under User:<name>; without EnableSASL
	// nobody signs in as it, and every connection is ANONYMOUS.
	return []kfake.Opt{kfake.EnableACLs(), kfake.User("PLAIN", "ANONYMOUS", "unused", acls...)}
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
		if err := createTopic(ctx, adm, t, topicPartitions[t], s.retention()); err != nil {
			return fmt.Errorf("demo: primary: %w", err)
		}
	}
	if err := createTopic(ctx, adm, heartbeatsTopic, 1, compacted()); err != nil {
		return fmt.Errorf("demo: primary: %w", err)
	}
	return nil
}

// compactInterval is how often kfake compacts the compacted topics (and
// applies retention too). Not faster: the console should read every offset
// sync before compaction keeps only the newest per partition.
const compactInterval = time.Minute

// retention is the config of every data topic, in both clusters (MM2
// copies topic configs to the remote topic). kfake holds a segment until
// every batch in it has expired, so segments are small enough for deleting
// to free memory.
func (s *Sandbox) retention() map[string]*string {
	return map[string]*string{
		"retention.ms":    kadm.StringPtr(strconv.FormatInt(s.opts.Retention.Milliseconds(), 10)),
		"retention.bytes": kadm.StringPtr(strconv.FormatInt(s.opts.RetentionBytes, 10)),
		"segment.bytes":   kadm.StringPtr(strconv.FormatInt(max(s.opts.RetentionBytes/8, 16<<10), 10)),
	}
}

// runRetention applies retention in both clusters every CleanerInterval.
func (s *Sandbox) runRetention(ctx context.Context) {
	every(ctx, s.opts.CleanerInterval, func() {
		s.primary.ApplyRetention()
		s.dr.ApplyRetention()
	})
}

// every runs fn every d until ctx is done.
func every(ctx context.Context, d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		fn()
	}
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
