package monitor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/model"
)

// Issue 28 item 7: pre-flight's evidence for a primary that is gone says
// "unreachable since T", not the client's TLS question; a listener that
// takes connections and closes them at the first bytes gets the TLS hint.
func TestReachabilityWords(t *testing.T) {
	gone := kfake.MustCluster(kfake.NumBrokers(1))
	goneAddr := gone.ListenAddrs()[0]
	gone.Close()
	tls := kafkatest.ClosingListener(t, 0).Addr().String()
	_, dcl := newCluster(t, "dr", "events")
	since := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ seed, want string }{
		{goneAddr, "primary is unreachable since 2026-12-04T21:00:00Z: no broker takes a connection"},
		{tls, "its listener likely requires TLS"},
	} {
		src, err := kgo.NewClient(kgo.SeedBrokers(tc.seed), kgo.RetryTimeout(2*time.Second), kgo.DialTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		r := churnReader(t, src, dcl)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rd := r.Read(ctx, mapPositions{latestSync: map[model.TP]model.OffsetSync{}}, since)
		cancel()
		var reach model.Reachability
		noteReach(&reach, since, rd.SourceErr)
		words := reach.Words("primary")
		head, _, folded := strings.Cut(words, "— the client said:")
		if !folded || !strings.Contains(head, tc.want) {
			t.Errorf("%s: %q, want %q", tc.seed, words, tc.want)
		}
	}
}
