package effect

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/kafka/kafkatest"
)

func produce(cl *kgo.Client, topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr()
}

// The fence denies exactly the named principals Write on exactly the
// named topics, and its removal gives their writes back, leaving an
// operator's own entry on another topic alone.
func TestFenceWritesAndUnfence(t *testing.T) {
	ctx := context.Background()
	c := kafkatest.NewACLCluster(t, "primary", "orders", "payments", "audit")
	for _, cl := range []*kgo.Client{c.App, c.Other} {
		if err := produce(cl, "orders"); err != nil {
			t.Fatalf("before the fence: %v", err)
		}
	}
	// An operator's own DENY on a topic outside the fence.
	own, err := FenceWrites(ctx, writtenT(t), c.Admin, []string{"audit"}, []string{"User:app"})
	if err != nil || len(own) != 1 {
		t.Fatalf("operator's entry: %v %v", own, err)
	}
	added, err := FenceWrites(ctx, writtenT(t), c.Admin, []string{"orders", "payments"}, []string{"User:app"})
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 {
		t.Fatalf("added %+v, want orders and payments for User:app", added)
	}
	for _, topic := range []string{"orders", "payments"} {
		if err := produce(c.App, topic); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("app writing %s behind the fence: %v, want TOPIC_AUTHORIZATION_FAILED", topic, err)
		}
	}
	if err := produce(c.Other, "orders"); err != nil {
		t.Errorf("a principal not fenced: %v", err)
	}
	got, err := kafka.DenyWriteACLs(ctx, c.Admin, []string{"orders", "payments", "audit"}, []string{"User:app"})
	if err != nil || len(got) != 3 {
		t.Fatalf("described %+v %v, want the 2 fence entries and the operator's", got, err)
	}
	removed, err := UnfenceWrites(ctx, writtenT(t), c.Admin, added)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sorted(removed), sorted(added)) {
		t.Errorf("removed %+v, want exactly %+v", removed, added)
	}
	if err := produce(c.App, "orders"); err != nil {
		t.Errorf("after the fence is removed: %v", err)
	}
	if err := produce(c.App, "audit"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("the operator's own entry was removed too: %v", err)
	}
	// Removing it again removes nothing and is no error.
	if again, err := UnfenceWrites(ctx, writtenT(t), c.Admin, added); err != nil || len(again) != 0 {
		t.Errorf("second removal: %v %v", again, err)
	}
}

func sorted(a []kafka.TopicACL) []kafka.TopicACL {
	out := slices.Clone(a)
	slices.SortFunc(out, func(x, y kafka.TopicACL) int { return strings.Compare(x.Topic+x.Principal, y.Topic+y.Principal) })
	return out
}

// Without its audit record nothing is fenced or unfenced, and no command runs.
func TestFenceNeedsAuditRecord(t *testing.T) {
	ctx := context.Background()
	c := kafkatest.NewACLCluster(t, "primary", "orders")
	if _, err := FenceWrites(ctx, audit.Written{}, c.Admin, []string{"orders"}, []string{"User:app"}); !errors.Is(err, ErrNotAudited) {
		t.Fatalf("fence without record: %v", err)
	}
	if err := produce(c.App, "orders"); err != nil {
		t.Fatalf("fenced without a record: %v", err)
	}
	marker := t.TempDir() + "/ran"
	if _, err := RunCommand(ctx, audit.Written{}, []string{"touch", marker}, time.Second); !errors.Is(err, ErrNotAudited) {
		t.Fatalf("command without record: %v", err)
	}
	if _, err := UnfenceWrites(ctx, audit.Written{}, c.Admin, nil); !errors.Is(err, ErrNotAudited) {
		t.Fatalf("unfence without record: %v", err)
	}
}

func TestRunCommand(t *testing.T) {
	ctx := context.Background()
	run, err := RunCommand(ctx, writtenT(t), []string{"sh", "-c", "echo fenced; echo warn >&2"}, 10*time.Second)
	if err != nil || run.ExitCode != 0 || run.Stdout != "fenced\n" || run.Stderr != "warn\n" {
		t.Fatalf("%+v %v", run, err)
	}
	run, err = RunCommand(ctx, writtenT(t), []string{"sh", "-c", "echo nope; exit 3"}, 10*time.Second)
	if err == nil || run.ExitCode != 3 || run.Stdout != "nope\n" {
		t.Fatalf("failing command: %+v %v", run, err)
	}
	if _, err := RunCommand(ctx, writtenT(t), []string{"sleep", "10"}, 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "within") {
		t.Fatalf("slow command: %v", err)
	}
	run, err = RunCommand(ctx, writtenT(t), []string{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a"}, 10*time.Second)
	if err != nil || len(run.Stdout) != MaxCommandOutput || !run.Truncated {
		t.Fatalf("long output: %d bytes, truncated %v, %v", len(run.Stdout), run.Truncated, err)
	}
}
