package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// The domain defaults: warning above 30 s for 5 min, critical above 2 min
// for 2 min, broken after 30 s without a replicated heartbeat.
var defaultThresholds = config.Thresholds{
	Warning:          config.LagThreshold{Lag: config.Duration(30 * time.Second), For: config.Duration(5 * time.Minute)},
	Critical:         config.LagThreshold{Lag: config.Duration(2 * time.Minute), For: config.Duration(2 * time.Minute)},
	HeartbeatTimeout: config.Duration(30 * time.Second),
}

func TestStatusThresholds(t *testing.T) {
	lag := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	hb := func(d time.Duration) *time.Duration { return &d }
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	type reading struct {
		at     time.Duration // since t0
		rpo    *int64
		hbAge  *time.Duration
		broken string
		want   model.FlowStatus
		why    string // part of the reason
		since  time.Duration
	}
	for _, tc := range []struct {
		name     string
		readings []reading
	}{
		{"warning only after the lag stayed above 30 s for 5 min", []reading{
			{0, lag(10 * time.Second), hb(time.Second), "", model.FlowStatusOK, "within thresholds", 0},
			{time.Minute, lag(45 * time.Second), hb(time.Second), "", model.FlowStatusOK, "warning after 5m0s", 0},
			{5*time.Minute + 59*time.Second, lag(50 * time.Second), hb(time.Second), "", model.FlowStatusOK, "for 4m59s", 0},
			{6 * time.Minute, lag(50 * time.Second), hb(time.Second), "", model.FlowStatusWarning, "lag above 30s for 5m0s", 6 * time.Minute},
			{7 * time.Minute, lag(55 * time.Second), hb(time.Second), "", model.FlowStatusWarning, "for 6m0s", 6 * time.Minute},
			{8 * time.Minute, lag(5 * time.Second), hb(time.Second), "", model.FlowStatusOK, "within thresholds", 8 * time.Minute},
			// Back above: the streak starts again from zero.
			{9 * time.Minute, lag(40 * time.Second), hb(time.Second), "", model.FlowStatusOK, "for 0s", 8 * time.Minute},
		}},
		{"critical above 2 min for 2 min, and it outranks warning", []reading{
			{0, lag(3 * time.Minute), hb(time.Second), "", model.FlowStatusOK, "warning after", 0},
			{time.Minute, lag(3 * time.Minute), hb(time.Second), "", model.FlowStatusOK, "", 0},
			{2 * time.Minute, lag(3 * time.Minute), hb(time.Second), "", model.FlowStatusCritical, "lag above 2m0s for 2m0s", 2 * time.Minute},
			{5 * time.Minute, lag(4 * time.Minute), hb(time.Second), "", model.FlowStatusCritical, "for 5m0s", 2 * time.Minute},
			// Down to 1 min: critical clears, the warning streak (above 30 s since 0) holds.
			{6 * time.Minute, lag(time.Minute), hb(time.Second), "", model.FlowStatusWarning, "lag above 30s for 6m0s", 6 * time.Minute},
		}},
		{"an unknown lag neither resets nor extends the judgement", []reading{
			{0, lag(time.Minute), hb(time.Second), "", model.FlowStatusOK, "", 0},
			{3 * time.Minute, nil, hb(time.Second), "", model.FlowStatusUnknown, "lag unknown", 3 * time.Minute},
			{5 * time.Minute, lag(time.Minute), hb(time.Second), "", model.FlowStatusWarning, "for 5m0s", 5 * time.Minute},
		}},
		{"broken: no heartbeat, a stale one, or a reason from the mirror", []reading{
			{0, lag(0), nil, "", model.FlowStatusBroken, "no replicated heartbeat seen", 0},
			{time.Minute, lag(0), hb(10 * time.Second), "", model.FlowStatusOK, "within thresholds", time.Minute},
			{2 * time.Minute, lag(0), hb(31 * time.Second), "", model.FlowStatusBroken, "last replicated heartbeat 31s ago (timeout 30s)", 2 * time.Minute},
			{3 * time.Minute, lag(0), hb(time.Second), "mirror orders is FAILED", model.FlowStatusBroken, "mirror orders is FAILED", 2 * time.Minute},
			// Broken outranks critical: a stale heartbeat with a huge lag is BROKEN.
			{10 * time.Minute, lag(time.Hour), hb(time.Hour), "", model.FlowStatusBroken, "timeout", 2 * time.Minute},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr statusTracker
			for i, r := range tc.readings {
				s, why := tr.update(t0.Add(r.at), flowstate.RPO{Ms: r.rpo}, r.hbAge, r.broken, defaultThresholds)
				if s != r.want || !strings.Contains(why, r.why) || !tr.since.Equal(t0.Add(r.since)) {
					t.Fatalf("reading %d at +%s: %s %q since +%s; want %s containing %q since +%s",
						i, r.at, s, why, tr.since.Sub(t0), r.want, r.why, r.since)
				}
			}
		})
	}
}

// A lower-bound RPO (some partition's age unknown) is never OK: it counts
// when above a threshold and otherwise neither starts nor resets a streak.
func TestStatusLowerBoundRPO(t *testing.T) {
	lag := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	hb := time.Second
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	unknown := []model.TP{{Topic: "events", Partition: 3}, {Topic: "events", Partition: 4}, {Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "a", Partition: 2}, {Topic: "a", Partition: 3}}
	var tr statusTracker
	for i, r := range []struct {
		at      time.Duration
		rpo     *int64
		atLeast bool
		want    model.FlowStatus
		why     string
	}{
		{0, lag(0), true, model.FlowStatusUnknown, "RPO at least 0s; age unknown for events-3, events-4, a-0, a-1, a-2 and 1 more"},
		{time.Minute, lag(40 * time.Second), true, model.FlowStatusUnknown, "at least 40s"},
		{5 * time.Minute, lag(10 * time.Second), true, model.FlowStatusUnknown, "at least 10s"},
		// The bound went above 30 s at +1m and was never seen below: warning.
		{6 * time.Minute, lag(35 * time.Second), true, model.FlowStatusWarning, "lag above 30s for 5m0s"},
		{7 * time.Minute, nil, true, model.FlowStatusUnknown, "RPO unknown; age unknown for events-3"},
		{8 * time.Minute, lag(time.Second), false, model.FlowStatusOK, "within thresholds"},
	} {
		s, why := tr.update(t0.Add(r.at), flowstate.RPO{Ms: r.rpo, AtLeast: r.atLeast, Unknown: unknown}, &hb, "", defaultThresholds)
		if s != r.want || !strings.Contains(why, r.why) {
			t.Fatalf("reading %d: %s %q, want %s containing %q", i, s, why, r.want, r.why)
		}
	}
}

// Stale figures (a late refresh, an unreachable cluster) never make a flow
// OK: WARNING or CRITICAL stands, anything else is UNKNOWN, the heartbeat
// still counts, and the streaks carry on once fresh figures return.
func TestStatusHeldOnStaleFigures(t *testing.T) {
	lag := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	hb := func(d time.Duration) *time.Duration { return &d }
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var tr statusTracker
	check := func(i int, s model.FlowStatus, why string, want model.FlowStatus, wantWhy string) {
		t.Helper()
		if s != want || !strings.Contains(why, wantWhy) {
			t.Fatalf("step %d: %s %q, want %s containing %q", i, s, why, want, wantWhy)
		}
	}
	s, why := tr.update(t0, flowstate.RPO{Ms: lag(time.Second)}, hb(time.Second), "", defaultThresholds)
	check(0, s, why, model.FlowStatusOK, "within thresholds")
	s, why = tr.hold(t0.Add(5*time.Second), hb(time.Second), "", defaultThresholds, "refresh late (5s)")
	check(1, s, why, model.FlowStatusUnknown, "refresh late (5s)")
	s, why = tr.hold(t0.Add(time.Minute), hb(40*time.Second), "", defaultThresholds, "refresh late (1m0s)")
	check(2, s, why, model.FlowStatusBroken, "last replicated heartbeat 40s ago")
	// Critical for 2 minutes, then late: the judgement stands, said held.
	tr = statusTracker{}
	tr.update(t0, flowstate.RPO{Ms: lag(3 * time.Minute)}, hb(time.Second), "", defaultThresholds)
	s, why = tr.update(t0.Add(2*time.Minute), flowstate.RPO{Ms: lag(3 * time.Minute)}, hb(time.Second), "", defaultThresholds)
	check(3, s, why, model.FlowStatusCritical, "lag above 2m0s for 2m0s")
	s, why = tr.hold(t0.Add(3*time.Minute), hb(time.Second), "", defaultThresholds, "refresh late (1m0s)")
	check(4, s, why, model.FlowStatusCritical, "refresh late (1m0s); held: lag above 2m0s for 2m0s")
	if !tr.since.Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("held critical since %s, want since it began", tr.since)
	}
	s, why = tr.hold(t0.Add(4*time.Minute), hb(time.Second), "", defaultThresholds, "refresh late (2m0s)")
	check(5, s, why, model.FlowStatusCritical, "refresh late (2m0s); held: lag above 2m0s for 2m0s")
	// Fresh again and still above: the streak that began at t0 goes on.
	s, why = tr.update(t0.Add(5*time.Minute), flowstate.RPO{Ms: lag(3 * time.Minute)}, hb(time.Second), "", defaultThresholds)
	check(6, s, why, model.FlowStatusCritical, "for 5m0s")
}
