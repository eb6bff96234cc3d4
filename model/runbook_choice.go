package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Choice kinds: what an operator may pick for a partition without a
// translation.
const (
	ChoiceEarliest  = "earliest"
	ChoiceLatest    = "latest"
	ChoiceTimestamp = "timestamp"
)

// Choice is an operator's decision for one partition the sync index cannot
// translate. It is a plan parameter: approved with the plan, on record in
// its audit entries.
type Choice struct {
	Kind string `json:"kind"`
	// AtMs is the timestamp (epoch ms) for ChoiceTimestamp: the split
	// resumes at DR's first record at or after it, looked up when the step
	// runs.
	AtMs int64 `json:"at_ms,omitempty"`
	// By is who made the choice (the operator who submitted the plan).
	By string `json:"by,omitempty"`
}

// ParseChoice reads a choice as the plan form writes it: "earliest",
// "latest", or "timestamp " + an RFC 3339 time (or epoch milliseconds).
// "" is no choice (ok false).
func ParseChoice(s string) (c Choice, ok bool, err error) {
	s = strings.TrimSpace(s)
	kind, at, _ := strings.Cut(s, " ")
	switch kind {
	case "":
		return Choice{}, false, nil
	case ChoiceEarliest, ChoiceLatest:
		if strings.TrimSpace(at) != "" {
			return Choice{}, false, fmt.Errorf("choice %q: %s takes no time", s, kind)
		}
		return Choice{Kind: kind}, true, nil
	case ChoiceTimestamp:
		at = strings.TrimSpace(at)
		if ms, err := strconv.ParseInt(at, 10, 64); err == nil {
			c = Choice{Kind: kind, AtMs: ms}
		} else if t, err := time.Parse(time.RFC3339, at); err == nil {
			c = Choice{Kind: kind, AtMs: t.UnixMilli()}
		} else {
			return Choice{}, false, fmt.Errorf("choice %q: the time must be RFC 3339 (2026-12-01T07:00:00Z) or epoch milliseconds", s)
		}
		return c, true, c.Validate()
	}
	return Choice{}, false, fmt.Errorf("choice %q: want earliest, latest or timestamp <time>", s)
}

// Validate checks a choice's kind and time.
func (c Choice) Validate() error {
	switch c.Kind {
	case ChoiceEarliest, ChoiceLatest:
		if c.AtMs != 0 {
			return fmt.Errorf("choice %s takes no time", c.Kind)
		}
	case ChoiceTimestamp:
		if c.AtMs <= 0 {
			return fmt.Errorf("choice timestamp needs a time after 1970 (got %d)", c.AtMs)
		}
	default:
		return fmt.Errorf("choice %q: want earliest, latest or timestamp", c.Kind)
	}
	return nil
}

// String is the choice as ParseChoice reads it.
func (c Choice) String() string {
	if c.Kind == ChoiceTimestamp {
		return c.Kind + " " + time.UnixMilli(c.AtMs).UTC().Format(time.RFC3339)
	}
	return c.Kind
}
