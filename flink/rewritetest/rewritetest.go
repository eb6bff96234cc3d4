// Package rewritetest makes source savepoints for tests of what is built
// on the savepoint rewriter (the runbook's rewrite step, the plan form):
// real Flink savepoints copied with their Kafka topics renamed. Apart from
// flinktest because it uses package flink, whose own tests use flinktest.
package rewritetest

import (
	"context"
	"testing"

	"github.com/drconsole/drconsole/flink"
)

// RenamedCopy writes a copy of the real savepoint src at dest (through
// flink.Rewrite) with the topics of its Kafka source uid renamed as
// rename says (a topic not in it keeps its name), offsets unchanged: a
// source savepoint over topics a test chooses, for instance ones no
// mirror copies, so that they never translate.
func RenamedCopy(t testing.TB, src, dest, uid string, rename map[string]string) {
	t.Helper()
	sp, err := flink.ReadSavepoint(src)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets(uid)
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]flink.SplitTarget{}
	for key, p := range k.Partitions {
		topic := p.Topic
		if to, ok := rename[topic]; ok {
			topic = to
		}
		targets[key] = flink.SplitTarget{Topic: topic, Offset: p.Next, Why: "test source"}
	}
	if _, err := flink.Rewrite(context.Background(), flink.RewriteRequest{Source: src, Dest: dest, SourceUID: uid, Targets: targets}); err != nil {
		t.Fatal(err)
	}
}
