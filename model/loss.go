package model

// LossIncident is a confirmed loss: source records deleted (retention,
// DeleteRecords) before MirrorMaker 2 copied them.
type LossIncident struct {
	ID          int64
	Flow        string
	Topic       string // source topic
	Partition   int32
	FirstOffset int64 // first lost source offset
	LastOffset  int64 // last lost source offset
	Lost        int64 // offsets lost; transaction markers among them count too
	DetectedMs  int64 // when the gap was first seen
	ConfirmedMs int64
	How         string // how it was confirmed
	AckedMs     *int64
	AckedBy     string
}

// Incarnation is one life of an MM2 internal topic: the same name on the
// same cluster with another topic id, or another topic altogether (the
// offset-syncs topic moved between clusters), is another incarnation.
type Incarnation struct {
	Cluster     string // "source" or "target"
	Topic       string
	TopicID     string // hex; "" when the broker reports none
	Incarnation int64
	FirstSeenMs int64
	Note        string
}

// IncarnationFirstSeen is the note of a topic no earlier incarnation of
// which was stored: the normal case at first start.
const IncarnationFirstSeen = "first seen"
