package runbook

import "time"

// LostLimits bound the reads of the old primary's records lost to DR;
// zero fields take the defaults below.
type LostLimits struct {
	// CountRecords caps the records the lost-records page reads to count
	// (the partitions it could not finish show an upper bound).
	CountRecords int64
	// ExportRecords and ExportBytes cap one export.
	ExportRecords, ExportBytes int64
	// Idle is how long the primary may stay silent during a read.
	Idle time.Duration
}

// The defaults of LostLimits.
const (
	DefaultLostCountRecords  = 200_000
	DefaultLostExportRecords = 1_000_000
	DefaultLostExportBytes   = 512 << 20
)

func (l LostLimits) WithDefaults() LostLimits {
	if l.CountRecords <= 0 {
		l.CountRecords = DefaultLostCountRecords
	}
	if l.ExportRecords <= 0 {
		l.ExportRecords = DefaultLostExportRecords
	}
	if l.ExportBytes <= 0 {
		l.ExportBytes = DefaultLostExportBytes
	}
	return l
}
