package model

// MirrorMaker 2's bookkeeping records. Each is one type for both lives of
// the record: decoded from MM2's internal topics (package mm2 fills the wire
// fields) and stored by ingestion (which adds where the record was read:
// LogOffset, RecordMs, Incarnation). One flat struct rather than a wire type
// embedded in a stored one keeps composite literals and == comparisons
// working everywhere and needs no converters; the stored fields are zero in
// a freshly decoded record.

// TP names a topic partition.
type TP struct {
	Topic     string
	Partition int32
}

// OffsetSync pairs an upstream (source) offset with the offset of the same
// record downstream (target), for one source topic-partition. Topic is the
// upstream name, never renamed.
type OffsetSync struct {
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64

	// Where the sync was read; zero until stored.
	LogOffset int64 // offset in the offset-syncs topic: MM2's write order
	RecordMs  int64
	// Incarnation of the offset-syncs topic LogOffset is in: a recreated or
	// relocated topic restarts at 0, so (Incarnation, LogOffset) is the order.
	Incarnation int64
}

// SyncKey names a stored sync.
type SyncKey struct{ Incarnation, LogOffset int64 }

// Key returns the sync's identity.
func (x OffsetSync) Key() SyncKey { return SyncKey{x.Incarnation, x.LogOffset} }

// Before reports whether a was written before b: incarnation first, then
// the position in that incarnation's log.
func (a SyncKey) Before(b SyncKey) bool {
	return a.Incarnation < b.Incarnation || a.Incarnation == b.Incarnation && a.LogOffset < b.LogOffset
}

// Checkpoint is a consumer group's committed source offset and its
// translation. Topic is the target-side (renamed) topic.
type Checkpoint struct {
	Group      string
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string

	// Where the checkpoint was read; zero until stored.
	LogOffset int64
	RecordMs  int64
}

// Heartbeat is emitted by MirrorHeartbeatConnector about once a second; the
// stored one is the newest replicated heartbeat of an alias pair.
type Heartbeat struct {
	SourceAlias string
	TargetAlias string
	EmittedMs   int64 // epoch milliseconds at emission

	// Where the heartbeat was read; zero until stored.
	LogOffset int64
	Count     int64 // heartbeats seen in total (in a batch: how many it adds)
}

// ConnectOffset is MirrorSourceConnector's committed position for one source
// partition, as Connect stores it in its offsets topic
// (mm2-offsets.<source>.internal in dedicated mode). LastOffset is the last
// replicated upstream offset: replication resumes at LastOffset+1.
type ConnectOffset struct {
	Connector  string // on the wire only; not stored
	Cluster    string // on the wire only; not stored
	Topic      string
	Partition  int32
	LastOffset int64

	// Where the position was read; zero until stored.
	LogOffset   int64
	RecordMs    int64
	Incarnation int64 // of the Connect offsets topic LogOffset is in
}
