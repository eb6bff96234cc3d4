package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/model"
)

// ask sends one Metadata request through a client of seeds, bounded.
func ask(t *testing.T, seeds ...string) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RetryTimeout(2*time.Second), kgo.DialTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err == nil {
		t.Fatal("the request succeeded")
	}
	return err
}

func explainIn(t *testing.T, seeds []string, err error) *ClusterError {
	t.Helper()
	since := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	var ce *ClusterError
	if !errors.As(Explain(context.Background(), "primary", seeds, since, err), &ce) {
		t.Fatalf("%v: not explained", err)
	}
	return ce
}

// Issue 28 item 7: a cluster that is gone is unreachable, never "is TLS
// missing?"; the TLS hint only for a listener that takes connections and
// closes them at the first bytes.
func TestExplainClusterErrors(t *testing.T) {
	t.Run("closed kfake: unreachable", func(t *testing.T) {
		c := kfake.MustCluster(kfake.NumBrokers(1))
		seeds := c.ListenAddrs()
		c.Close()
		raw := ask(t, seeds...)
		t.Logf("raw: %v", raw)
		ce := explainIn(t, seeds, raw)
		if ce.Kind != model.ProblemUnreachable || !strings.Contains(ce.Error(), "primary is unreachable since 2026-12-04T21:00:00Z") || strings.Contains(ce.Error(), "TLS") {
			t.Fatalf("kind %d: %s", ce.Kind, ce.Error())
		}
	})
	t.Run("accepts then closes: TLS hint", func(t *testing.T) {
		ln := kafkatest.ClosingListener(t, 0)
		seeds := []string{ln.Addr().String()}
		raw := ask(t, seeds...)
		t.Logf("raw: %v", raw)
		ce := explainIn(t, seeds, raw)
		if ce.Kind != model.ProblemTLS || !strings.Contains(ce.Error(), "likely requires TLS") || !strings.Contains(ce.Error(), RawSep+raw.Error()) {
			t.Fatalf("kind %d: %s", ce.Kind, ce.Error())
		}
	})
	// A broker going down closed the connection at the first bytes (the
	// client's words: "is TLS missing?"), and is gone by the time it is
	// explained: unreachable.
	t.Run("closed at first bytes, then gone: unreachable", func(t *testing.T) {
		ln := kafkatest.ClosingListener(t, 0)
		seeds := []string{ln.Addr().String()}
		raw := ask(t, seeds...)
		ln.Close()
		if !strings.Contains(raw.Error(), "TLS") {
			t.Logf("the client's own words: %v", raw)
		}
		t.Logf("raw: %v", raw)
		ce := explainIn(t, seeds, raw)
		if ce.Kind != model.ProblemUnreachable || strings.Contains(strings.Split(ce.Error(), RawSep)[0], "TLS") {
			t.Fatalf("kind %d: %s", ce.Kind, ce.Error())
		}
	})
}
