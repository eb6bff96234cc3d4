package report

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

func ms(v int64) *int64 { return &v }

func TestClassify(t *testing.T) {
	obj := 30 * time.Second
	for _, c := range []struct {
		name string
		m    storage.FlowMinute
		want Class
	}{
		{"nothing recorded", storage.FlowMinute{}, NoData},
		{"all known, within", storage.FlowMinute{Samples: 12, MaxRPOMs: ms(30_000)}, Within},
		{"all known, over", storage.FlowMinute{Samples: 12, MaxRPOMs: ms(30_001)}, Over},
		{"one sample unknown", storage.FlowMinute{Samples: 12, Unknown: 1, MaxRPOMs: ms(1_000)}, Unknown},
		{"a lower bound within: may be over", storage.FlowMinute{Samples: 12, AtLeast: 1, MaxRPOMs: ms(1_000)}, Unknown},
		{"a lower bound over: certainly over", storage.FlowMinute{Samples: 12, AtLeast: 12, MaxRPOMs: ms(60_000)}, Over},
		{"every sample unknown", storage.FlowMinute{Samples: 12, Unknown: 12}, Unknown},
	} {
		if got := Classify(c.m, obj); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// history is one minute each from start, classed by the pattern's letters:
// w within, o over, u unknown, b a lower bound above, '.' nothing recorded.
func history(start int64, pattern string, rpo int64) []storage.FlowMinute {
	var out []storage.FlowMinute
	for i, c := range pattern {
		m := storage.FlowMinute{MinuteMs: start + int64(i)*60000, Samples: 12}
		switch c {
		case 'w':
			m.MaxRPOMs = ms(1000)
		case 'o':
			m.MaxRPOMs = ms(rpo + int64(i))
		case 'u':
			m.Unknown, m.MaxRPOMs = 3, ms(2000)
		case 'b':
			m.AtLeast, m.MaxRPOMs = 1, ms(rpo)
		case '.':
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestComputeCountsEveryMinuteOnce(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC) // half a minute into 12:00
	to := now.UnixMilli() / 60000 * 60000
	// The last 20 minutes before 12:00, then the current minute (12:00,
	// incomplete: not counted).
	pattern := "wwwwoooo..uuwwbbwwwo"
	minutes := history(to-int64(len(pattern))*60000, pattern, 120_000)
	minutes = append(minutes, storage.FlowMinute{MinuteMs: to, Samples: 6, MaxRPOMs: ms(999_999)})
	r := Compute("primary->dr", 30*time.Second, minutes, now)
	if len(r.Windows) != 3 || r.Windows[0].Days() != 7 || r.Windows[2].Days() != 90 {
		t.Fatalf("windows %+v", r.Windows)
	}
	for _, w := range r.Windows {
		if w.ToMs != to || w.Minutes != w.Length.Milliseconds()/60000 {
			t.Errorf("%d d window: to %d minutes %d", w.Days(), w.ToMs, w.Minutes)
		}
		if w.Within != 9 || w.Over != 7 || w.Unknown != 2 {
			t.Errorf("%d d window: within %d over %d unknown %d, want 9 7 2", w.Days(), w.Within, w.Over, w.Unknown)
		}
		// Everything before the history, and the 2-minute gap, is no data.
		if w.NoData != w.Minutes-18 || w.BeforeHistory != w.Minutes-int64(len(pattern)) {
			t.Errorf("%d d window: no data %d before history %d", w.Days(), w.NoData, w.BeforeHistory)
		}
		if w.Within+w.Over+w.Unknown+w.NoData != w.Minutes {
			t.Errorf("%d d window: the classes do not add up", w.Days())
		}
	}
	if r.HistoryFromMs != minutes[0].MinuteMs {
		t.Errorf("history from %d", r.HistoryFromMs)
	}
	// Episodes: oooo (4), bb (2, over: lower bounds at the objective's
	// double), o (1, ongoing: the last complete minute). uu (2) is an
	// unknown stretch, no episode: no minute of it was over.
	if r.EpisodeCount != 3 || r.UnknownCount != 1 {
		t.Fatalf("%d episodes %+v, %d unknown stretches %+v", r.EpisodeCount, r.Episodes, r.UnknownCount, r.Unknown)
	}
	first := r.Episodes[0]
	if first.Minutes != 4 || !first.Over || first.PeakAtLeast || *first.PeakMs != 120_007 || first.Ongoing ||
		first.StartMs != to-16*60000 || first.EndMs != to-12*60000 {
		t.Errorf("worst episode %+v", first)
	}
	var lowerBound, ongoing bool
	for _, e := range r.Episodes {
		switch {
		case e.Minutes == 2:
			lowerBound = e.Over && e.PeakAtLeast
		case e.Minutes == 1:
			ongoing = e.Over && e.Ongoing && e.EndMs == to
		}
	}
	if u := r.Unknown[0]; u.Minutes != 2 || u.Over || !u.PeakAtLeast || u.StartMs != to-10*60000 {
		t.Errorf("unknown stretch %+v", u)
	}
	if !lowerBound || !ongoing {
		t.Errorf("episodes %+v: lower-bound %v ongoing %v", r.Episodes, lowerBound, ongoing)
	}
}

// TestWithinIsAShareOfTheRecordedTime: a console two hours old whose
// flow was within the objective all along reads 100 % within, not the
// 1.19 % its two hours are of 7 days; the time before is no data, apart.
// Hand-computed: 120 minutes recorded, 118 within, 1 over, 1 unknown.
func TestWithinIsAShareOfTheRecordedTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	to := now.UnixMilli()
	all := history(to-120*60000, strings.Repeat("w", 120), 60_000)
	r := Compute("f", 30*time.Second, all, now)
	for _, w := range r.Windows {
		if got, ok := w.OfRecorded(w.Within); !ok || got != 1 || w.Recorded() != 120 || w.NoData != w.Minutes-120 {
			t.Errorf("%d d: within %v (ok %v) of %d recorded, no data %d", w.Days(), got, ok, w.Recorded(), w.NoData)
		}
	}
	// Two hours with a 10-minute hole (the console was down): the hole is
	// no data, in no share.
	pattern := "u" + strings.Repeat("w", 60) + ".........." + strings.Repeat("w", 57) + "o"
	r = Compute("f", 30*time.Second, history(to-int64(len(pattern))*60000, pattern, 60_000), now)
	w := r.Windows[0]
	if w.Recorded() != 119 || w.Within != 117 || w.Over != 1 || w.Unknown != 1 || w.NoData != w.Minutes-119 {
		t.Fatalf("recorded %d within %d over %d unknown %d no data %d", w.Recorded(), w.Within, w.Over, w.Unknown, w.NoData)
	}
	if got, _ := w.OfRecorded(w.Within); got != 117.0/119 {
		t.Errorf("within %v of the recorded time, want 117/119", got)
	}
	if got, _ := w.OfRecorded(w.Unknown); got != 1.0/119 {
		t.Errorf("unknown %v of the recorded time, want 1/119", got)
	}
	// Nothing recorded: no share at all, never 0 % or 100 % within.
	for _, w := range Compute("f", time.Minute, nil, now).Windows {
		if _, ok := w.OfRecorded(w.Within); ok {
			t.Errorf("%d d: a within share of no recorded time", w.Days())
		}
	}
}

// TestStartUpIsNoEpisode: the first minute after the console starts holds
// samples from before its first complete refresh, lower bounds ("≥ 3 ms")
// below the 30 s objective. That is no breach and no within either: the
// minute is unknown, and it is an unknown stretch, not an episode. The
// same start-up with a lower bound above the objective is a breach.
func TestStartUpIsNoEpisode(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	to := now.UnixMilli()
	start := to - 30*60000
	startUp := storage.FlowMinute{MinuteMs: start, Samples: 11, Unknown: 1, AtLeast: 10, MaxRPOMs: ms(3)}
	minutes := append([]storage.FlowMinute{startUp}, history(start+60000, strings.Repeat("w", 29), 0)...)
	r := Compute("f", 30*time.Second, minutes, now)
	if r.EpisodeCount != 0 || len(r.Episodes) != 0 {
		t.Errorf("start-up listed as an episode: %+v", r.Episodes)
	}
	if w := r.Windows[0]; w.Within != 29 || w.Unknown != 1 {
		t.Errorf("within %d unknown %d, want 29 and 1: the start-up minute is not within", w.Within, w.Unknown)
	}
	if r.UnknownCount != 1 || r.Unknown[0].StartMs != start || r.Unknown[0].Minutes != 1 || !r.Unknown[0].PeakAtLeast || *r.Unknown[0].PeakMs != 3 {
		t.Errorf("unknown stretches %d %+v", r.UnknownCount, r.Unknown)
	}
	// Started during an outage: at least 45 s behind is over 30 s.
	minutes[0].MaxRPOMs = ms(45_000)
	r = Compute("f", 30*time.Second, minutes, now)
	if r.EpisodeCount != 1 || !r.Episodes[0].Over || !r.Episodes[0].PeakAtLeast || *r.Episodes[0].PeakMs != 45_000 || r.UnknownCount != 0 {
		t.Errorf("a lower bound over the objective at start-up: episodes %+v unknown %+v", r.Episodes, r.Unknown)
	}
}

func TestEpisodesSplitAtGapsAndAreBounded(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	to := now.UnixMilli()
	// Two over minutes either side of an unrecorded one are two episodes;
	// many short ones are cut to the worst MaxEpisodes, longest first.
	pattern := "oo.oow"
	for i := range MaxEpisodes + 5 {
		if i%3 == 0 {
			pattern += "ooow"
		} else {
			pattern += "ow"
		}
	}
	minutes := history(to-int64(len(pattern))*60000, pattern, 60_000)
	r := Compute("f", 30*time.Second, minutes, now)
	if r.EpisodeCount != 2+MaxEpisodes+5 || len(r.Episodes) != MaxEpisodes {
		t.Fatalf("%d episodes, %d listed", r.EpisodeCount, len(r.Episodes))
	}
	for i := 1; i < len(r.Episodes); i++ {
		if r.Episodes[i].Minutes > r.Episodes[i-1].Minutes {
			t.Fatalf("episodes not worst first: %+v", r.Episodes)
		}
	}
	if r.Episodes[0].Minutes != 3 {
		t.Errorf("worst episode %d minutes, want 3", r.Episodes[0].Minutes)
	}
}

func TestNoHistoryIsNoDataNeverWithin(t *testing.T) {
	r := Compute("f", time.Minute, nil, time.Now())
	for _, w := range r.Windows {
		if w.Within != 0 || w.NoData != w.Minutes || w.BeforeHistory != w.Minutes || w.Share(w.Within) != 0 {
			t.Errorf("%d d window without history: %+v", w.Days(), w)
		}
	}
	if r.EpisodeCount != 0 || r.HistoryFromMs != 0 {
		t.Errorf("%+v", r)
	}
}

type fakeSource struct {
	minutes map[string][]storage.FlowMinute
	losses  []model.LossIncident
	lossErr error
	since   int64
	spans   map[string][]model.FailedOverSpan
}

func (f *fakeSource) FailedOverSpans(_ context.Context, flow string) ([]model.FailedOverSpan, error) {
	return f.spans[flow], nil
}

func (f *fakeSource) FlowMinutes(_ context.Context, flow string, sinceMs int64) ([]storage.FlowMinute, error) {
	f.since = sinceMs
	return f.minutes[flow], nil
}

func (f *fakeSource) LossIncidents(_ context.Context, flow string, unacked bool, limit int) ([]model.LossIncident, error) {
	if unacked || limit != MaxLosses {
		return nil, errors.New("want every incident, acknowledged too, up to MaxLosses")
	}
	return f.losses, f.lossErr
}

func TestBuildObjectivesAndLosses(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	flows := []*config.Flow{{Name: "a"}, {Name: "b", Objectives: config.Objectives{RPO: config.Duration(2 * time.Minute)}}}
	one := history(now.UnixMilli()-60000, "o", 60_000) // 60 s: over 30 s, within 2 min
	src := &fakeSource{minutes: map[string][]storage.FlowMinute{"a": one, "b": one}, losses: []model.LossIncident{
		{Lost: 5, DetectedMs: now.Add(-24 * time.Hour).UnixMilli()},
		{Lost: 7, DetectedMs: now.Add(-100 * 24 * time.Hour).UnixMilli()}, // before the 90 days
	}}
	rs, err := Build(context.Background(), src, flows, 30*time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Objective != 30*time.Second || rs[1].Objective != 2*time.Minute {
		t.Fatalf("objectives %v %v", rs[0].Objective, rs[1].Objective)
	}
	if rs[0].Windows[0].Over != 1 || rs[1].Windows[0].Within != 1 {
		t.Errorf("a: %+v b: %+v", rs[0].Windows[0], rs[1].Windows[0])
	}
	if len(rs[0].Losses) != 1 || rs[0].LostOffsets != 5 || rs[0].LossErr != nil {
		t.Errorf("losses %+v %d %v", rs[0].Losses, rs[0].LostOffsets, rs[0].LossErr)
	}
	if want := now.Add(-90*24*time.Hour).UnixMilli() - 60000; src.since > want {
		t.Errorf("read minutes since %d, after the 90-day window's start %d", src.since, want)
	}
	src.lossErr = errors.New("disk")
	rs, _ = Build(context.Background(), src, flows, 30*time.Second, now)
	if rs[0].LossErr == nil {
		t.Error("an unreadable incident list is not reported")
	}
}

// TestFailedOverTimeApart: after a completed failover the old direction's
// lag grows without end (the mirror is stopped on purpose); those minutes
// are failed over, neither over nor within, and end an episode. The
// minutes holding the failover's and the failback's completions are judged
// as ever; after the failback the flow is judged again.
func TestFailedOverTimeApart(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	to := now.UnixMilli() / 60000 * 60000
	start := to - 20*60000
	// 0-4 within; 5 the failover completes (20 s in); 6-11 DR active; 12
	// the failback completes (10 s in); 13-14 within; 15-19 over again.
	pattern := "wwwww" + "o" + "oooooo" + "o" + "ww" + "ooooo"
	src := &fakeSource{minutes: map[string][]storage.FlowMinute{"f": history(start, pattern, 300_000)},
		spans: map[string][]model.FailedOverSpan{"f": {{Run: 7, FromMs: start + 5*60000 + 20_000, UntilMs: start + 12*60000 + 10_000, UntilRun: 9}}}}
	rs, err := Build(context.Background(), src, []*config.Flow{{Name: "f"}}, 30*time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	w := r.Windows[0]
	if w.Within != 7 || w.Over != 7 || w.Unknown != 0 || w.FailedOver != 6 || w.NoData != w.Minutes-20 {
		t.Errorf("7 days: within %d over %d unknown %d failed over %d no data %d of %d; want 7, 7, 0, 6, %d",
			w.Within, w.Over, w.Unknown, w.FailedOver, w.NoData, w.Minutes, w.Minutes-20)
	}
	var got []int
	for _, e := range r.Episodes {
		got = append(got, e.Minutes)
	}
	if r.EpisodeCount != 3 || len(r.Episodes) != 3 || r.Episodes[0].Minutes != 5 || !r.Episodes[0].Ongoing ||
		r.Episodes[1].Minutes != 1 || r.Episodes[2].Minutes != 1 {
		t.Errorf("episodes (minutes) %v, want [5 (ongoing) 1 1]", got)
	}
	if len(r.FailedOver) != 1 || r.FailedOver[0].Run != 7 {
		t.Errorf("failed-over spans %+v", r.FailedOver)
	}

	// Still failed over: the ongoing time is failed over, no episode.
	src.minutes["f"] = history(start, "wwwwwooooooooooooooo", 300_000)
	src.spans["f"] = []model.FailedOverSpan{{Run: 7, FromMs: start + 5*60000 + 20_000}}
	rs, _ = Build(context.Background(), src, []*config.Flow{{Name: "f"}}, 30*time.Second, now)
	r, w = rs[0], rs[0].Windows[0]
	if w.Over != 1 || w.FailedOver != 14 || r.EpisodeCount != 1 || r.Episodes[0].Ongoing {
		t.Errorf("still failed over: over %d failed over %d, episodes %+v; want 1, 14 and one of 1 minute, not ongoing", w.Over, w.FailedOver, r.Episodes)
	}
}

// TestPlotDaysAndMinutes: the per-day plot's days are UTC days cut to the
// 90-day window (the first and the current one partial), their minutes
// adding up to the window's, each day's classes counted as the window's.
// Hand-computed: at 00:30 on 1 December, 23:50-23:59 of 30 November held
// 6 within, 2 over, 1 unknown and 1 unrecorded minute; 00:00-00:29, 28
// within and 2 unrecorded.
func TestPlotDaysAndMinutes(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	to := now.UnixMilli()
	pattern := "wwwoouw.ww" + "wwwwwwwwwwwwww..wwwwwwwwwwwwww"
	r := Compute("f", 30*time.Second, history(to-40*60000, pattern, 60_000), now)
	if len(r.Days) != 91 {
		t.Fatalf("%d days, want 91 (2 September 00:30 to 1 December 00:30)", len(r.Days))
	}
	var sum int64
	for _, d := range r.Days {
		sum += (d.EndMs - d.StartMs) / 60000
		if d.Recorded()+d.NoData+d.FailedOver != (d.EndMs-d.StartMs)/60000 {
			t.Errorf("day %d: classes do not add up: %+v", d.StartMs, d)
		}
	}
	if longest := r.Windows[2]; sum != longest.Minutes || r.Days[0].StartMs != longest.FromMs || (r.Days[0].EndMs-r.Days[0].StartMs)/60000 != 1410 {
		t.Errorf("days cover %d minutes from %d (first %+v), want %d from %d", sum, r.Days[0].StartMs, r.Days[0], longest.Minutes, longest.FromMs)
	}
	yesterday, today := r.Days[89], r.Days[90]
	if yesterday.StartMs != time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMilli() ||
		yesterday.Within != 6 || yesterday.Over != 2 || yesterday.Unknown != 1 || yesterday.NoData != 1440-9 {
		t.Errorf("30 November %+v", yesterday)
	}
	if today.EndMs != to || today.Within != 28 || today.Recorded() != 28 || today.NoData != 2 {
		t.Errorf("1 December %+v", today)
	}
	// The RPO plot: the 37 recorded minutes, figures as stored; the
	// unknown one is "at least", never exact.
	if len(r.Minutes) != 37 || r.PlotFromMs != to-7*24*3600e3 {
		t.Fatalf("%d plot minutes from %d", len(r.Minutes), r.PlotFromMs)
	}
	if m := r.Minutes[5]; m.MinuteMs != to-35*60000 || !m.AtLeast || *m.RPOMs != 2000 {
		t.Errorf("the unknown minute plots as %+v", m)
	}
	if m := r.Minutes[4]; m.AtLeast || *m.RPOMs != 60_004 {
		t.Errorf("an over minute plots as %+v", m)
	}
}

// TestPlotShowsFailedOverTime: the RPO plot marks every failed-over
// minute as such, recorded or not (the old primary may be down, and the
// console then records nothing for it), never as no data; the recorded
// minutes outside it keep their figures.
func TestPlotShowsFailedOverTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	to := now.UnixMilli()
	start := to - 10*60000
	// 0-2 within; 3-6 unrecorded, failed over from 3 until 7; 7-9 within.
	src := &fakeSource{minutes: map[string][]storage.FlowMinute{"f": history(start, "www....www", 0)},
		spans: map[string][]model.FailedOverSpan{"f": {{Run: 7, FromMs: start + 3*60000, UntilMs: start + 7*60000, UntilRun: 9}}}}
	rs, err := Build(context.Background(), src, []*config.Flow{{Name: "f"}}, 30*time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rs[0].Minutes {
		switch {
		case m.FailedOver:
			got = append(got, "f")
		case m.RPOMs != nil && !m.AtLeast:
			got = append(got, "w")
		default:
			got = append(got, "?")
		}
		if m.MinuteMs != start+int64(len(got)-1)*60000 {
			t.Fatalf("minute %d at %d", len(got)-1, m.MinuteMs)
		}
	}
	if s := strings.Join(got, ""); s != "wwwffffwww" {
		t.Errorf("plot minutes %q, want wwwffffwww", s)
	}
	if w := rs[0].Windows[0]; w.FailedOver != 4 || w.Within != 6 {
		t.Errorf("window %+v", w)
	}
}
