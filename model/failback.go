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
	// SyncUp and SyncDown are the newest offset sync whose downstream
	// offset is below DREnd: the primary record at SyncUp is DR's record at
	// SyncDown.
	SyncUp, SyncDown *int64
	// ConnectLast is MirrorSourceConnector's last committed upstream offset
	// (Connect commits only records DR acknowledged).
	ConnectLast *int64
	AtMs        int64
}
