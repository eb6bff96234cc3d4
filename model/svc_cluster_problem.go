package model

import "time"

// ProblemKind is what a cluster error most likely means: kafka.Explain
// decides it, the monitor keeps it with a cluster's reachability, and the
// pages say it (ProblemSentence).
type ProblemKind int

const (
	// ProblemOther: an error of another kind, said as the client said it.
	ProblemOther ProblemKind = iota
	// ProblemUnreachable: no broker takes a connection.
	ProblemUnreachable
	// ProblemTLS: brokers take connections and close them at the first
	// bytes of a plaintext request, every time.
	ProblemTLS
	// ProblemSASL: brokers close the connection after the first request.
	ProblemSASL
)

// ProblemSentence is a cluster problem of kind in words an on-call
// engineer can act on; cluster is its name in the config ("" says "the
// cluster"), since when it became unreachable (zero: unknown). It is ""
// for ProblemOther, which is said as the client said it.
func ProblemSentence(kind ProblemKind, cluster string, since time.Time) string {
	name := "the cluster"
	if cluster != "" {
		name = cluster
	}
	switch kind {
	case ProblemUnreachable:
		s := name + " is unreachable"
		if !since.IsZero() {
			s += " since " + since.UTC().Format(time.RFC3339)
		}
		return s + ": no broker takes a connection"
	case ProblemTLS:
		return name + " takes connections but closes each at the first bytes of a plaintext request: its listener likely requires TLS, which the console does not use for it, or its brokers are failing"
	case ProblemSASL:
		return name + " closes the connection after the first request: its listener likely requires SASL, which the console does not use for it"
	}
	return ""
}
