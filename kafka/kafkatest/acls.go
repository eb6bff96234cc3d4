package kafkatest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// ACLCluster is a one-broker cluster that authenticates with SASL/PLAIN
// and enforces ACLs: Admin is a superuser's client (the console's), App
// and Other are clients of User:app and User:other, each allowed
// everything on every topic and group (a fence then denies them Write).
type ACLCluster struct {
	Cluster           *kfake.Cluster
	Admin, App, Other *kgo.Client
}

// NewACLCluster starts an ACLCluster with two partitions of each topic;
// it and its clients close when the test ends.
func NewACLCluster(t testing.TB, id string, topics ...string) *ACLCluster {
	t.Helper()
	var opts []kfake.Opt
	opts = append(opts, kfake.NumBrokers(1), kfake.ClusterID(id), kfake.SeedTopics(2, topics...),
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin"))
	for _, u := range []string{"app", "other"} {
		opts = append(opts, kfake.User("PLAIN", u, u, AllowAll()...))
	}
	c := kfake.MustCluster(opts...)
	t.Cleanup(c.Close)
	out := &ACLCluster{Cluster: c}
	for _, u := range []struct {
		cl   **kgo.Client
		name string
	}{{&out.Admin, "admin"}, {&out.App, "app"}, {&out.Other, "other"}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.SASL(plain.Auth{User: u.name, Pass: u.name}.AsMechanism()), kgo.RecordRetries(1),
			kgo.UnknownTopicRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		*u.cl = cl
	}
	return out
}

// AllowAll are the ACLs of a user allowed every operation on every topic,
// group and transactional id, and on the cluster (idempotent writes).
func AllowAll() []kfake.ACL {
	var out []kfake.ACL
	for _, r := range []kmsg.ACLResourceType{kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeTransactionalId} {
		out = append(out, kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll, Allow: true})
	}
	return append(out, kfake.ACL{Resource: kmsg.ACLResourceTypeCluster, Name: "kafka-cluster", Pattern: kmsg.ACLResourcePatternTypeLiteral,
		Operation: kmsg.ACLOperationAll, Allow: true})
}
