package model

import "time"

// Stamp is a wall-clock time as Unix nanoseconds, 0 for none: a time
// without time.Time's location pointer, for rows kept by the million (see
// PartitionLag). It keeps no monotonic reading; figures' ages are wall
// clock differences anyway, as they are between processes.
type Stamp int64

// StampOf is t as a Stamp; the zero time is 0.
func StampOf(t time.Time) Stamp {
	if t.IsZero() {
		return 0
	}
	return Stamp(t.UnixNano())
}

// Time is s as a time in UTC; 0 is the zero time.
func (s Stamp) Time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s)).UTC()
}
