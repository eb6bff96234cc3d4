package translation

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

// Issue 28 item 7: with the primary down, the group list spoke of TLS. A
// primary that refuses connections is unreachable; only one that takes
// connections and closes them at the first bytes gets the TLS hint. The
// client's own words follow model.RawErrSep (folded on the page).
func TestKnownGroupsErrorsInWords(t *testing.T) {
	gone := kfake.MustCluster(kfake.NumBrokers(1))
	goneAddr := gone.ListenAddrs()
	gone.Close()
	tls := kafkatest.ClosingListener(t, 0)
	for _, tc := range []struct {
		name, seed, want string
	}{
		{"closed cluster", goneAddr[0], "the primary is unreachable: no broker takes a connection"},
		{"accepts then closes", tls.Addr().String(), "its listener likely requires TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := kgo.NewClient(kgo.SeedBrokers(tc.seed), kgo.RetryTimeout(2*time.Second), kgo.DialTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			_, dst := kafkatest.NewCluster(t, "dr", "events")
			tr, _ := translator(t, src, dst)
			_, err = tr.KnownGroups(context.Background(), 5*time.Second)
			if err == nil {
				t.Fatal("the primary's groups were listed")
			}
			head, raw, folded := strings.Cut(err.Error(), model.RawErrSep)
			if !folded || !strings.Contains(head, tc.want) || (tc.name == "closed cluster" && strings.Contains(head, "TLS")) {
				t.Fatalf("group list error %q, want %q with the client's words after the separator", err, tc.want)
			}
			t.Logf("sentence %q; the client said %q", head, raw)
		})
	}
}
