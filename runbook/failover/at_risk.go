package failover

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// AtRisk is what a failover of an MM2 flow would lose if it cut now: the
// offsets the primary holds that DR does not, and the age of the oldest
// of them, as the monitor last read them. It is the one place the runbook
// reads the monitor's lag figures (pre-flight, the approval box, the
// stop-mirror step, the audit records, the run's summary all use it), so
// a change in how the monitor states a bound or an age is read here once.
type AtRisk struct {
	// Offsets sums the offsets behind over the partitions of known lag;
	// LagMs is the flow's RPO. Nil when unknown.
	Offsets *int64 `json:"offsets"`
	LagMs   *int64 `json:"lag_ms"`
	// AtLeast: the figures are lower bounds (Why says why): the loss may
	// be larger, never smaller.
	AtLeast bool     `json:"at_least"`
	Why     []string `json:"why,omitempty"`
	// Unknown counts partitions whose lag is unknown (any amount).
	Unknown int `json:"unknown_partitions"`
	// AsOf is when the read the figures rest on was made (the oldest
	// partition read); zero when nothing was ever read.
	AsOf time.Time `json:"as_of"`
}

// AtRiskOf reads the data at risk from a flow snapshot. Figures resting on
// a read of a cluster that does not answer now, a late refresh or
// partitions of unknown lag or age are lower bounds: the primary may have
// taken records since that the console never saw.
func AtRiskOf(s *flowstate.FlowSnapshot) AtRisk {
	var a AtRisk
	if s == nil {
		a.AtLeast, a.Why = true, []string{"the flow was never read"}
		return a
	}
	a.Offsets, a.LagMs, a.Unknown = s.TotalLagMessages, s.RPOMs, s.Unknown
	a.AsOf = s.At
	if !s.FiguresAt.IsZero() { // the read the figures rest on, not the refresh that held them
		a.AsOf = s.FiguresAt
	}
	if t := model.OldestAsOf(s.Partitions); !t.IsZero() && (a.AsOf.IsZero() || t.Before(a.AsOf)) {
		a.AsOf = t
	}
	if s.Late != nil && !s.Late.FiguresAt.IsZero() && s.Late.FiguresAt.Before(a.AsOf) {
		a.AsOf = s.Late.FiguresAt
	}
	why := func(format string, args ...any) { a.AtLeast, a.Why = true, append(a.Why, fmt.Sprintf(format, args...)) }
	if s.Source.Checked && !s.Source.OK {
		why("the primary is unreachable since %s: records it took after the last read are not counted", s.Source.Since.UTC().Format(time.RFC3339))
	}
	if s.Target.Checked && !s.Target.OK {
		why("DR is unreachable since %s: what it holds was last read before", s.Target.Since.UTC().Format(time.RFC3339))
	}
	if s.Late != nil {
		why("the last refresh was late (%s reads)", s.Late.Side)
	}
	if s.Bound != "" {
		why("%s", s.Bound)
	}
	if s.FiguresStale && len(s.Partitions) > 0 {
		why("%d partition(s) show figures of an earlier read", len(s.Partitions))
	}
	if s.Unknown > 0 {
		why("%d partition(s) of unknown lag, which may hold any number", s.Unknown)
	}
	if s.RPOAtLeast && s.Unknown == 0 && len(s.UnknownAge) > 0 {
		why("the age of %d partition(s) is only a lower bound", len(s.UnknownAge))
	}
	if a.Offsets == nil || a.LagMs == nil {
		why("no lag figure yet")
	}
	if s.RPOAtLeast && !a.AtLeast { // the monitor's own word, whatever its reason
		why("the monitor states the RPO as a lower bound")
	}
	return a
}

// Text states the data at risk for people: "≥ 11,829 offsets / ≥ 53 s not
// in DR (read 2026-12-04T10:00:00Z, 21 s before now; lower bound: …)".
func (a AtRisk) Text(now time.Time) string {
	ge := ""
	if a.AtLeast {
		ge = "≥ "
	}
	offs, lag := "unknown", "unknown"
	if a.Offsets != nil {
		offs = ge + thousands(*a.Offsets)
	}
	if a.LagMs != nil {
		lag = ge + (time.Duration(*a.LagMs) * time.Millisecond).Round(100*time.Millisecond).String()
	}
	s := fmt.Sprintf("%s offsets / %s not in DR", offs, lag)
	if !a.AsOf.IsZero() {
		s += fmt.Sprintf(" (read %s, %s before %s)", a.AsOf.UTC().Format(time.RFC3339), max(now.Sub(a.AsOf), 0).Round(time.Second), now.UTC().Format(time.RFC3339))
	}
	if len(a.Why) > 0 {
		s += "; a lower bound: " + strings.Join(a.Why, "; ")
	}
	return s
}

// Record is the data at risk for the audit log, with its age at now.
func (a AtRisk) Record(now time.Time) *LossRecord {
	m := &LossRecord{Offsets: a.Offsets, LagMs: a.LagMs, AtLeast: a.AtLeast, Unknown: a.Unknown, Text: a.Text(now), Why: a.Why}
	if !a.AsOf.IsZero() {
		asOf, age := a.AsOf.UTC(), max(now.Sub(a.AsOf), 0).Milliseconds()
		m.AsOf, m.AgeMs = &asOf, &age
	}
	return m
}

// LossRecord is data at risk as a record states it (the stop step's
// result, the rules' evidence). Its fields are in the order the map it
// replaced was written, so the stored bytes are the same.
type LossRecord struct {
	AgeMs   *int64     `json:"age_ms,omitempty"`
	AsOf    *time.Time `json:"as_of,omitempty"`
	AtLeast bool       `json:"at_least"`
	LagMs   *int64     `json:"lag_ms"`
	Offsets *int64     `json:"offsets"`
	Text    string     `json:"text"`
	Unknown int        `json:"unknown_partitions"`
	Why     []string   `json:"why_lower_bound,omitempty"`
}

// AtRisk is flow's data at risk now; ok is false for a Cluster Linking
// flow (its steps state their own: the link's mirrors).
func (rb Book) AtRisk(flow string) (AtRisk, bool) {
	if f := rb.Config.Flow(flow); f == nil || f.IsClusterLink() {
		return AtRisk{}, false
	}
	return AtRiskOf(rb.Monitor.Snapshot(flow)), true
}

// thousands formats n with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ReachText states a side's reachability as the monitor last read it.
func ReachText(r model.Reachability, name string) string {
	switch {
	case !r.Checked:
		return "not checked yet"
	case r.OK:
		return "reachable"
	}
	return r.Words(name)
}

// flows is the engine's reader of flow state (runbook.Flows) over the
// monitor this package's environment holds.
type flows struct{ rb Book }

// Evidence is the flow's state at a decision, for the audit log.
func (f flows) Evidence(flow string) map[string]any {
	rb := f.rb
	s := rb.Monitor.Snapshot(flow)
	if s == nil {
		return nil
	}
	// as_of: the read the figures rest on (flowstate.FlowSnapshot.FiguresAt),
	// not the last refresh attempt; rpo_at_least: they are lower bounds.
	ev := map[string]any{"as_of": s.FiguresAt.UTC(), "status": s.Status, "reason": s.Reason, "rpo_ms": s.RPOMs,
		"rpo_at_least": s.RPOAtLeast, "lag_messages": s.TotalLagMessages, "source_reachable": s.Source.OK, "target_reachable": s.Target.OK,
		"unknown_partitions": s.Unknown, "data_lost_partitions": s.DataLost}
	if s.Bound != "" {
		ev["figures_bound"] = s.Bound
	}
	if s.HeartbeatAge != nil {
		ev["heartbeat_age_ms"] = s.HeartbeatAge.Milliseconds()
	}
	if a, ok := rb.AtRisk(flow); ok {
		ev["at_risk"] = a.Record(rb.Now())
	}
	return ev
}

// Reach is side of flow as the monitor last read it.
func (f flows) Reach(flow string, side model.Side) runbook.Reach {
	s := f.rb.Monitor.Snapshot(flow)
	if s == nil {
		return runbook.Reach{}
	}
	r, name := s.Target, "DR"
	if side == model.SidePrimary {
		r, name = s.Source, "primary"
	}
	return runbook.Reach{Read: true, OK: r.OK, Text: ReachText(r, name)}
}
