package kafka

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/model"
)

// A cluster that is gone must read as gone. franz-go words a connection
// the broker closed at its first bytes as a TLS (or SASL) misconfiguration,
// and a broker going down closes connections just so: with the primary
// down, every page said "is TLS missing?". Explain is the one place a
// cluster error is put into words: unreachable when no broker takes a TCP
// connection (refused, timed out, no route), a TLS or SASL hint only when
// a broker does take connections and closes every one of them at the
// first bytes.

// ClusterError is a cluster error in words an on-call engineer can act on;
// Raw is the client's own error, for those who want it.
type ClusterError struct {
	Kind    model.ProblemKind
	Cluster string    // its name in the config, when known
	Since   time.Time // when it became unreachable, when known
	Raw     error
}

// RawSep separates a ClusterError's sentence from the client's own error
// in its text, so a page can show the sentence and fold the rest away.
const RawSep = model.RawErrSep

func (e *ClusterError) Error() string {
	if s := model.ProblemSentence(e.Kind, e.Cluster, e.Since); s != "" {
		return s + RawSep + e.Raw.Error()
	}
	return e.Raw.Error()
}

func (e *ClusterError) Unwrap() error { return e.Raw }

// probeWait bounds each step of the TCP probe Explain runs on a
// connection closed at its first bytes, probeTotal the whole probe.
const (
	probeWait  = 2 * time.Second
	probeTotal = 4 * time.Second
)

// Explain classifies err from a request to the cluster named cluster,
// whose seed brokers are seeds. A connection closed at its first bytes is
// checked on the spot: plain TCP connections to the seeds, each sent the
// first bytes of a Kafka request; a TLS or SASL hint only when one is
// taken and both probes are closed unanswered, unreachable when none is
// taken. nil stays nil; an error Explain has nothing to say about is
// returned as it is. since, when not zero, is when the cluster was last
// seen unreachable.
func Explain(ctx context.Context, cluster string, seeds []string, since time.Time, err error) error {
	if err == nil {
		return nil
	}
	if ce, ok := errors.AsType[*ClusterError](err); ok {
		return ce
	}
	ce := &ClusterError{Kind: model.ProblemOther, Cluster: cluster, Raw: err}
	// A read that ran out of time still gets its probe, bounded as a whole.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTotal)
	defer cancel()
	var first *kgo.ErrFirstReadEOF
	switch {
	case errors.As(err, &first) || errors.Is(err, syscall.ECONNRESET):
		ce.Kind = probeFirstBytes(ctx, seeds)
		switch {
		case ce.Kind != model.ProblemTLS || first == nil:
		case strings.Contains(first.Error(), "SASL"):
			ce.Kind = model.ProblemSASL
		case strings.Contains(first.Error(), "after a dial"):
			ce.Kind = model.ProblemOther // the client speaks TLS already: said as the client said it
		}
	case unreachable(err):
		ce.Kind = model.ProblemUnreachable
	}
	if ce.Kind == model.ProblemUnreachable {
		ce.Since = since
	}
	if ce.Kind == model.ProblemOther {
		return err
	}
	return ce
}

// unreachable: the error says no connection could be made or answered.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &op) && op.Op == "dial", errors.As(err, &dns),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return true
	}
	return false
}

// probeFirstBytes tells a broker that refuses plaintext Kafka (TLS or SASL
// listener) from one that is gone: model.ProblemTLS when a seed takes a TCP
// connection and closes it, twice, after the first bytes of an ApiVersions
// request without answering; model.ProblemUnreachable when no seed takes one;
// model.ProblemOther otherwise (it answers now: the close was passing).
func probeFirstBytes(ctx context.Context, seeds []string) model.ProblemKind {
	taken := false
	for _, addr := range seeds {
		closed := 0
		for range 2 {
			switch firstBytes(ctx, addr) {
			case probeRefused:
				continue
			case probeClosed:
				closed++
			}
			taken = true
		}
		if closed == 2 {
			return model.ProblemTLS
		}
	}
	if !taken {
		return model.ProblemUnreachable
	}
	return model.ProblemOther
}

type probeResult int

const (
	probeRefused  probeResult = iota // no TCP connection
	probeClosed                      // connection closed with no answer
	probeAnswered                    // bytes came back, or still open at the deadline
)

// apiVersionsV0 is a plaintext ApiVersions v0 request: length 14, api key
// 18, version 0, correlation id 1, client id "drc".
var apiVersionsV0 = []byte{0, 0, 0, 13, 0, 18, 0, 0, 0, 0, 0, 1, 0, 3, 'd', 'r', 'c'}

func firstBytes(ctx context.Context, addr string) probeResult {
	d := net.Dialer{Timeout: probeWait}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return probeRefused
	}
	defer c.Close()
	deadline := time.Now().Add(probeWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	if _, err := c.Write(apiVersionsV0); err != nil {
		return probeClosed
	}
	var b [4]byte
	_, err = io.ReadFull(c, b[:])
	var ne net.Error
	switch {
	case err == nil, errors.As(err, &ne) && ne.Timeout():
		return probeAnswered
	}
	return probeClosed
}

// Seeds is the seed brokers of cl (for Explain).
func Seeds(cl *Client) []string {
	if cl == nil {
		return nil
	}
	s, _ := cl.OptValue(kgo.SeedBrokers).([]string)
	return s
}

// Explained is Explain for the cluster of cl.
func Explained(ctx context.Context, cl *Client, cluster string, since time.Time, err error) error {
	if err == nil {
		return nil
	}
	return Explain(ctx, cluster, Seeds(cl), since, err)
}
