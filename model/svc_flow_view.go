package model

import "time"

// What the monitor hands the pages and /metrics besides the flow
// snapshot's own fields: plain values, so their readers need not import
// the monitor (and through it the Kafka client).

// Reachability is what we know about reaching a cluster.
type Reachability struct {
	Checked bool      // at least one attempt was made
	OK      bool      // the last attempt worked
	Since   time.Time // when OK last changed
	LastOK  time.Time
	Err     string // the client's own error
	// Kind is what Err most likely means (kafka.Explain).
	Kind ProblemKind
}

// DownSince is when the cluster stopped answering; zero while it answers
// or before it was checked.
func (r Reachability) DownSince() time.Time {
	if r.Checked && !r.OK {
		return r.Since
	}
	return time.Time{}
}

// Words says why a cluster that did not answer did not: unreachable since
// when, or the TLS or SASL hint when that is likely, then the client's own
// error after RawErrSep.
func (r Reachability) Words(cluster string) string {
	kind := r.Kind
	if kind == ProblemOther {
		kind = ProblemUnreachable // it did not answer: said as unreachable, the client's words after
	}
	return ProblemSentence(kind, cluster, r.Since) + RawErrSep + r.Err
}

// SampleWriterStats is what the monitor's sample writer has done since the
// start.
type SampleWriterStats struct {
	Queued int // refreshes waiting to be written
	// OverBound: a flow's queued refreshes passed the queue's bound and
	// the queue has not drained since.
	OverBound bool
	Retries   int64 // failed write attempts (each retried)
	// DroppedPartitionSets counts queued refreshes whose per-partition
	// figures were let go at the bound (their flow samples were kept).
	DroppedPartitionSets int64
	// Lost counts refreshes not written when the monitor stopped
	// (its drain timeout passed).
	Lost int64
}
