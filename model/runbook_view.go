package model

import "time"

// What the runbook's plan kinds compute for the pages (runbook/failover,
// runbook/failback), as handlers fill the pages' view models from it.

// ActiveSide is which side of a flow is active, and the run that made it so.
type ActiveSide struct {
	Flow string
	Side Side
	// Run is the completed run that moved the flow to Side, and SinceMs
	// when it completed; zero while the flow never failed over.
	Run     int64
	SinceMs int64
}

// ReverseView is the reverse flow DR -> primary as a failback's run page
// shows it while its connectors exist (after set-up-reverse, until
// restart-forward): their states, how far each partition written in DR
// since the failover is copied, and the newest heartbeat it carried to
// the primary. Every figure says what it is read from; a figure that
// cannot be read is unknown, never caught up.
type ReverseView struct {
	At     time.Time
	States map[string]string
	// Rows are the partitions written in DR since the failover, behind
	// first, then by name.
	Rows []ReverseRow
	// Behind sums the rows' Behind: the offsets of DR not yet committed
	// by the reverse source (a tail of transaction markers only excepted).
	// Connect commits every offset.flush.interval.ms, so it overstates,
	// never understates.
	Behind int64
	// Unknown counts rows without a committed reverse position (all of
	// their records since the cut are counted as behind).
	Unknown int
	// Heartbeat is when the newest heartbeat the reverse flow copied to
	// the primary was emitted in DR; nil with HeartbeatErr when none was
	// read.
	Heartbeat    *time.Time
	HeartbeatErr string
	Err          string
}

// ReverseRow is one DR partition of the reverse flow.
type ReverseRow struct {
	Partition string
	Cut       int64  // where the reverse source started
	DREnd     int64  // DR's log end now
	Next      *int64 // the reverse source's committed next offset; nil unknown
	Behind    int64  // DREnd - Next, or DREnd - Cut when Next is unknown
	// MarkersOnly: Next is short of DREnd only by transaction markers
	// (read from DR), which MM2 never copies: Behind is 0.
	MarkersOnly bool
}
