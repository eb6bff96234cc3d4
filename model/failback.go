package model

// Side is which cluster of a flow producers and jobs use now.
type Side string

// The sides of a flow.
const (
	SidePrimary Side = "primary"
	SideDR      Side = "dr"
)

// CutPosition is what a failover recorded of one mirrored partition right
// after it stopped the mirror: enough to tell later which of the primary's
// records had reached DR. Nil numbers were not known then.
type CutPosition struct {
	Topic       string // the source (primary) topic
	Partition   int32
	RemoteTopic string // its name in DR
	// DREnd is DR's log end of the remote partition once the mirror had
	// stopped: every record MM2 copied is below it.
	DREnd *int64
	// DRStableEnd is DR's last stable offset then: under exactly-once MM2
	// the records from it to DREnd belong to a transaction still open (or
	// left open by a killed task), which DR's readers never see.
	DRStableEnd *int64
	// SyncUp and SyncDown are the newest offset sync whose downstream
	// offset is below CommittedEnd: the primary record at SyncUp is DR's
	// record at SyncDown.
	SyncUp, SyncDown *int64
	// ConnectLast is MirrorSourceConnector's last committed upstream offset
	// (Connect commits only records DR acknowledged).
	ConnectLast *int64
	AtMs        int64
}

// CommittedEnd is where DR's committed records ended at the cut: the
// stable end when it was read and lies below DREnd, else DREnd (nil when
// neither was read). What MM2 copied is counted below it, so a record of a
// transaction that never committed in DR is never taken as copied.
func (c CutPosition) CommittedEnd() *int64 {
	if c.DRStableEnd != nil && (c.DREnd == nil || *c.DRStableEnd < *c.DREnd) {
		return c.DRStableEnd
	}
	return c.DREnd
}
