package model

import (
	"fmt"
	"time"
)

// A flow's replication state as the monitor reads it and the pages show
// it: plain values, so views need not import the monitor.

// FlowStatus is a flow's health as the thresholds judge it.
type FlowStatus string

const (
	FlowStatusUnknown  FlowStatus = "UNKNOWN"  // not enough data yet
	FlowStatusOK       FlowStatus = "OK"       //
	FlowStatusWarning  FlowStatus = "WARNING"  // lag above the warning lag for the warning duration
	FlowStatusCritical FlowStatus = "CRITICAL" // RPO at risk
	FlowStatusBroken   FlowStatus = "BROKEN"   // no replicated heartbeat within the timeout
	// FlowStatusFailedOver is a flow whose failover completed: DR is active.
	FlowStatusFailedOver FlowStatus = "FAILED_OVER"
)

// PartitionLag is one source partition's replication state. Figures not
// Known are unknown and must be shown as unknown, never as 0.
//
// A row holds no pointer (names are interned, the method a code, the
// time a stamp): a refresh's table has a row per partition, a million at
// the largest estates, and the garbage collector never looks into a
// pointer-free table. TestPartitionLagHoldsNoPointer keeps it so.
type PartitionLag struct {
	Topic       Name // source topic
	RemoteTopic Name // its name in the target
	Partition   int32
	// Restarted, when set, says why the source log is a new one (topic
	// recreated, end offset went backwards, MM2's position past the end)
	// and since when: MM2's old position no longer counts.
	Restarted Name
	// DataLost: retention deleted source records MM2 never copied. Read
	// sets it when the source log start passed the replicated position;
	// the loss judge (loss.go) then keeps it only for a confirmed loss
	// and marks an undecided gap LossSuspected instead.
	DataLost      bool
	LossSuspected bool
	Method        LagMethod
	SourceStart   Figure // log-start offset in the source
	SourceEnd     Figure // high watermark in the source
	// TargetEnd is the remote partition's last stable offset: its end as
	// a read_committed reader sees it. Under MirrorMaker 2 with
	// exactly-once support what lies past it is not in DR yet; without,
	// it equals the high watermark unless another writer's transaction is
	// open there.
	TargetEnd Figure
	// Replicated is the next source offset MM2 has yet to copy.
	Replicated Figure
	// LagMessages is SourceEnd - Replicated.
	LagMessages Figure
	// LagMs is the age of the oldest source record not yet replicated; 0
	// when caught up.
	LagMs Figure
	// LagMsAtLeast is a lower bound on the age when LagMs is unknown for a
	// partition that is behind: how long ago the console first saw its first
	// unreplicated record exist. Never a substitute shown as exact.
	LagMsAtLeast Figure
	// AbortedInDR is how many records of aborted transactions MM2 has
	// copied to DR, as far as the console saw them (a lower bound).
	AbortedInDR int64
	// AsOf is when the source offsets were read. Whether that read was the
	// latest refresh is the snapshot's (FiguresStale): a table is stale as
	// a whole, and a flag there spares copying it to mark each row.
	AsOf Stamp
}

// TopicLag aggregates a topic's partitions for the flow page.
type TopicLag struct {
	Topic       string
	RemoteTopic string
	Partitions  int
	// LagMessages sums the known partition lags; Unknown counts partitions
	// whose lag is unknown (so the sum is a lower bound when > 0).
	LagMessages int64
	MaxLagMs    *int64
	// MaxLagAtLeast: some partition's age is only a lower bound (or
	// unknown), so MaxLagMs is one too.
	MaxLagAtLeast bool
	Unknown       int
	DataLost      int
	Stale         bool
}

// LateRefresh describes a refresh whose Kafka reads did not finish within
// refresh_read_timeout although the cluster answered other requests
// meanwhile (a slow cluster or a starved console): late, not unreachable.
type LateRefresh struct {
	Side    string        // "source" or "target": whose reads ran out of time
	Timeout time.Duration // the reads' deadline
	Since   time.Time     // the first late refresh in a row
	// FiguresAt is the refresh the figures shown come from; zero when no
	// refresh finished its reads since the start (figures saved before it).
	FiguresAt time.Time
	Err       string
}

// Text says how old the figures shown are, e.g. "refresh late (12 s)".
func (l *LateRefresh) Text(now time.Time) string {
	if l.FiguresAt.IsZero() {
		return "refresh late: no refresh has finished its Kafka reads since the start"
	}
	return fmt.Sprintf("refresh late (%d s)", max(now.Sub(l.FiguresAt), 0).Round(time.Second)/time.Second)
}

// FailedOver is what the runbook recorded of a flow's completed failover.
type FailedOver struct {
	// Run is the completed failover run, SinceMs when it completed.
	Run     int64
	SinceMs int64
	// What was not replicated when the mirror stopped, as the console last
	// read it before the stop (the stop step's evidence): CutAtMs is that
	// read's time (0: not recorded). The console cannot see records
	// acknowledged after its last read, so these are lower bounds.
	CutAtMs       int64
	CutRPOMs      *int64
	CutLagOffsets *int64
	// Held is the status the thresholds give the old direction meanwhile
	// (for the record; it pages nobody), HeldReason its reason.
	Held       FlowStatus
	HeldReason string
	HeldSince  time.Time
}

// Reason is the failed-over state in one sentence.
func (f FailedOver) Reason() string {
	return fmt.Sprintf("failed over by run %d at %s: DR is active; the old direction is no longer judged",
		f.Run, time.UnixMilli(f.SinceMs).UTC().Format("2006-01-02 15:04:05 UTC"))
}

// IngestStats describes ingestion of one internal topic.
type IngestStats struct {
	Topic        string
	Records      int64
	DecodeErrors int64
	LastError    string
	LastRecordAt time.Time // record timestamp of the newest record read
	LastReadAt   time.Time // when we last stored something
}

// OldestAsOf is the oldest AsOf of ps; zero when ps has none.
func OldestAsOf(ps []PartitionLag) time.Time {
	var t Stamp
	for _, p := range ps {
		if p.AsOf != 0 && (t == 0 || p.AsOf < t) {
			t = p.AsOf
		}
	}
	return t.Time()
}
