//go:build e2e

package testenv_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/testenv"
)

// TestKafkaLifecycle checks the harness itself: graceful Stop, Kill (SIGKILL) and Restart keep
// the data and the address of a broker.
func TestKafkaLifecycle(t *testing.T) {
	k := testenv.StartKafka(t, "lifecycle")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if r, err := k.Admin(t).CreateTopics(ctx, 1, 1, nil, "life"); err != nil || r.Error() != nil {
		t.Fatalf("create topic: %v %v", err, r.Error())
	}
	produce := func(from, n int) {
		t.Helper()
		cl := k.Client(t)
		defer cl.Close()
		for i := from; i < from+n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "life", Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	count := func(want int) {
		t.Helper()
		end := endOffsets(t, k.Admin(t), "life")[tp{"life", 0}]
		recs := readTopic(t, k, "life")
		if end != int64(want) || len(recs) != want {
			t.Fatalf("end offset %d, %d records; want %d", end, len(recs), want)
		}
		for i, r := range recs {
			if string(r.Value) != fmt.Sprintf("v%d", i) {
				t.Fatalf("record %d = %q", i, r.Value)
			}
		}
	}

	produce(0, 10)
	k.Stop()
	if exited, _ := k.Proc.Exited(); !exited {
		t.Fatal("Stop returned but the JVM still runs")
	}
	if !k.Proc.LogContains("Kafka Server shutdown") && !k.Proc.LogContains("shut down completed") {
		t.Logf("no shutdown message found in the log; tail:\n%s", k.Proc.LogTail(10))
	}
	k.Restart()
	count(10)

	produce(10, 5)
	k.Kill()
	if exited, _ := k.Proc.Exited(); !exited {
		t.Fatal("Kill returned but the JVM still runs")
	}
	cl := k.Client(t, kgo.RetryTimeout(2*time.Second), kgo.RequestTimeoutOverhead(time.Second))
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	err := cl.ProduceSync(pctx, &kgo.Record{Topic: "life", Value: []byte("lost")}).FirstErr()
	pcancel()
	cl.Close()
	if err == nil {
		t.Fatal("produce to a killed broker succeeded")
	}
	k.Restart()
	count(15)
}
