package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/plugin/kslog"

	"github.com/drconsole/drconsole/config"
)

// Client, Options and Record are franz-go's client, client options and
// record under this package's names: the rooms that hold a client or read
// records (monitor, translation, catalog, cli) pass them on without
// importing franz-go, and every request is made by a function of this
// package (or, for writes, of runbook/internal/effect).
type (
	Client  = kgo.Client
	Options = []kgo.Opt
	Record  = kgo.Record
)

// NewClient makes a client from opts (ClientOptions); answers, when not
// nil, hears of every response the client reads (Answers).
func NewClient(opts Options, answers *Answers) (*Client, error) {
	if answers != nil {
		opts = append(slices.Clip(opts), kgo.WithHooks(answers))
	}
	return kgo.NewClient(opts...)
}

// ClientOptions turns a cluster's config into franz-go options: seeds, TLS,
// SASL, a client id naming the cluster, and timeouts short enough that an
// unreachable cluster is reported within seconds, not minutes.
func ClientOptions(name string, c *config.Cluster, log *slog.Logger) (Options, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap...),
		kgo.ClientID("drconsole-" + name),
		kgo.DialTimeout(5 * time.Second),
		kgo.RequestTimeoutOverhead(5 * time.Second),
		kgo.RetryTimeout(10 * time.Second),
		kgo.MetadataMinAge(2 * time.Second),
	}
	if log != nil {
		// franz-go is chatty at info (assignments, telemetry); keep warnings.
		kl := slog.New(minLevel{log.Handler(), slog.LevelWarn}).With("cluster", name)
		opts = append(opts, kgo.WithLogger(kslog.New(kl)))
	}
	if c.TLS != nil {
		cfg, err := c.TLS.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", name, err)
		}
		opts = append(opts, kgo.Dialer((&tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}).DialContext))
	}
	if s := c.SASL; s != nil {
		switch s.Mechanism {
		case config.SASLPlain:
			opts = append(opts, kgo.SASL(plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()))
		case config.SASLScramSHA256:
			opts = append(opts, kgo.SASL(scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()))
		case config.SASLScramSHA512:
			opts = append(opts, kgo.SASL(scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()))
		default:
			return nil, fmt.Errorf("cluster %s: unsupported SASL mechanism %q", name, s.Mechanism)
		}
	}
	return opts, nil
}

// minLevel drops records below a level before the wrapped handler sees them.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}
func (h minLevel) WithGroup(g string) slog.Handler { return minLevel{h.Handler.WithGroup(g), h.min} }

// Partial reports a kadm error that still came with usable per-shard data.
func Partial(err error) bool {
	var se *kadm.ShardErrors
	return errors.As(err, &se) && !se.AllFailed
}
