package storage

import "context"

// PLACEHOLDER until branch i17-history (bounded lag history) merges: the
// same declarations as its storage/lag.go. Removed in that merge.

type FlowMinute struct {
	MinuteMs            int64
	Samples             int
	Unknown             int
	AtLeast             int
	MaxRPOMs            *int64
	MaxLagMessages      *int64
	MaxTotalLagMessages *int64
	WorstStatus         string
}

func (s *Store) FlowMinutes(ctx context.Context, flow string, sinceMs int64) ([]FlowMinute, error) {
	return nil, nil
}
