package kafka

import (
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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
