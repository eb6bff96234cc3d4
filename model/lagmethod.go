package model

// LagMethod says how a partition's replicated position was obtained. A
// code, not a string: a million-row partition table must hold no pointer
// for the garbage collector to follow (see PartitionLag).
type LagMethod uint8

// How a partition's replicated position was obtained.
const (
	// PositionUnknown: no position; Replicated is unknown.
	PositionUnknown LagMethod = iota
	// PositionConnect: MirrorSourceConnector's committed offset (+1), from
	// the Connect offsets topic. Exact, but only as fresh as the last
	// offset flush.
	PositionConnect
	// PositionEstimate: the newest offset sync plus the records the target
	// partition holds past it, as a read_committed reader sees them (no
	// transaction markers, nothing of an aborted or open transaction). A
	// lower bound: each such record stands for at least one source offset.
	PositionEstimate
	// PositionEmptyLog: MM2 has no position, but the source log never held
	// a record (its end offset is 0): nothing to copy, nothing at risk. A
	// log whose records were all deleted is not this: end > 0, MM2's
	// position unknown, so its age stays unknown.
	PositionEmptyLog
	// PositionRestarted: the source log restarted and MM2's position on the
	// new log is not known yet, so everything from its start counts as behind.
	PositionRestarted
	// PositionEmptyDRCopy: DR's copy of the partition holds no record (just
	// created, or not there) and the source log still starts at 0: nothing of
	// it is in DR, whatever MM2's positions say, so all of it counts as behind.
	PositionEmptyDRCopy
	// PositionRestartCopied: the source log restarted and MM2's position was
	// cut down to what the DR records copied since then account for.
	PositionRestartCopied
	// PositionClusterLink: the link's last_source_fetch_offset (everything
	// before it was replicated; Confluent's FAQ) from the DR cluster's REST API.
	PositionClusterLink
	// PositionSaved: figures saved before the console restarted.
	PositionSaved

	// positionMarkers marks a position moved to the source end because
	// only transaction markers lay past it: markers are never copied.
	positionMarkers LagMethod = 0x80
)

var lagMethodText = [...]string{
	PositionUnknown:       "",
	PositionConnect:       "connect offsets",
	PositionEstimate:      "sync + DR end offset",
	PositionEmptyLog:      "empty log (end offset 0)",
	PositionRestarted:     "source log restarted: counted from its start",
	PositionEmptyDRCopy:   "DR copy empty: counted from the source log start",
	PositionRestartCopied: "source log restarted: counted as far as DR received records since",
	PositionClusterLink:   "cluster link REST",
	PositionSaved:         "saved before restart",
}

// WithMarkers is m for a position moved past trailing transaction markers.
func (m LagMethod) WithMarkers() LagMethod { return m | positionMarkers }

// Base is m without the markers mark.
func (m LagMethod) Base() LagMethod { return m &^ positionMarkers }

// String is how the pages and messages say m; "" for an unknown position.
func (m LagMethod) String() string {
	s := "unknown method"
	if b := m.Base(); int(b) < len(lagMethodText) {
		s = lagMethodText[b]
	}
	if m&positionMarkers != 0 {
		s += " + markers"
	}
	return s
}
