package kafka

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Answers remembers when a cluster last answered: a client hook
// (kgo.WithHooks) that notes every response read from a broker without a
// connection error, whatever the response says. A read that ran out of
// time against a cluster that answered other requests meanwhile is late,
// not a sign the cluster is unreachable.
type Answers struct {
	last atomic.Int64 // unix nanoseconds of the newest response read; 0: none
}

var _ kgo.HookBrokerRead = (*Answers)(nil)

// OnBrokerRead implements kgo.HookBrokerRead.
func (a *Answers) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		a.last.Store(time.Now().UnixNano())
	}
}

// Since reports whether a response was read at or after t (wall clock).
func (a *Answers) Since(t time.Time) bool {
	return a != nil && a.last.Load() >= t.UnixNano()
}

// Probe asks a cluster for its API versions over a new connection of a
// client of its own (opts as for the console's client), so an answer is
// not held up behind slow requests queued on the console's connections:
// nil when a broker answered within ctx.
func Probe(ctx context.Context, opts Options) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl); err != nil {
		return fmt.Errorf("probing the cluster: %w", err)
	}
	return nil
}
