package model

// SeekResult is the offset of the first record at or after a timestamp in one
// partition (Kafka's ListOffsets by time).
type SeekResult struct {
	Offset int64
	// Timestamp of the record at Offset; -1 when the timestamp is past the
	// partition's last record (Offset is then its end).
	Timestamp int64
}
