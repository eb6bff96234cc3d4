package model

import "time"

// ReportWindow is one period's account, in whole minutes.
type ReportWindow struct {
	Length       time.Duration
	FromMs, ToMs int64 // [from, to): complete minutes only
	Minutes      int64
	Within       int64
	Over         int64
	Unknown      int64
	// FailedOver counts the minutes DR was active (failedOver): neither
	// within nor over.
	FailedOver int64
	// NoData counts minutes without a record; BeforeHistory is the part of
	// it before the flow's first recorded minute (a console younger than
	// the window).
	NoData        int64
	BeforeHistory int64
}

// Days is the window's length in days.
func (w ReportWindow) Days() int { return int(w.Length / (24 * time.Hour)) }

// Share is n as a fraction of the window's minutes.
func (w ReportWindow) Share(n int64) float64 {
	if w.Minutes == 0 {
		return 0
	}
	return float64(n) / float64(w.Minutes)
}

// Recorded is the minutes the console recorded and judged: within, over
// or unknown. Minutes without data and failed-over minutes are not in it.
func (w ReportWindow) Recorded() int64 { return w.Within + w.Over + w.Unknown }

// OfRecorded is n as a fraction of the recorded minutes; ok is false when
// nothing was recorded (a share of nothing is no figure, not 0 or 100 %).
func (w ReportWindow) OfRecorded(n int64) (share float64, ok bool) {
	if w.Recorded() == 0 {
		return 0, false
	}
	return float64(n) / float64(w.Recorded()), true
}

// ReportEpisode is a run of consecutive recorded minutes that were not
// within the objective, at least one of them over it (a breach). A minute
// without data ends it. A run with the RPO only unknown (no minute over,
// such as the console's start-up before its first complete refresh) is no
// episode but an unknown stretch (FlowReport.Unknown).
type ReportEpisode struct {
	StartMs, EndMs int64 // EndMs: the end of its last minute
	Minutes        int
	// PeakMs is the largest RPO seen (nil: none known); PeakAtLeast says
	// some minute of it held only a lower bound or an unknown, so the true
	// peak may be higher.
	PeakMs      *int64
	PeakAtLeast bool
	// Over: some minute was above the objective; false for an unknown
	// stretch (the RPO may have been within).
	Over    bool
	Ongoing bool // it reaches the report's last complete minute
}

// Duration is the episode's length.
func (e ReportEpisode) Duration() time.Duration { return time.Duration(e.Minutes) * time.Minute }

// FlowReport is one flow's RPO report (package report computes it).
type FlowReport struct {
	Flow      string
	Objective time.Duration
	At        time.Time
	Windows   []ReportWindow
	// Episodes are the worst of the longest window (longest first, then
	// highest peak), at most MaxEpisodes of EpisodeCount.
	Episodes     []ReportEpisode
	EpisodeCount int
	// Unknown are the longest stretches with the RPO unknown and no minute
	// over (longest first, at most MaxEpisodes of UnknownCount): not
	// breaches, not within either.
	Unknown      []ReportEpisode
	UnknownCount int
	// HistoryFromMs is the flow's first recorded minute; 0 when none.
	HistoryFromMs int64
	// Losses are the data-loss incidents detected in the longest window,
	// newest first; LostOffsets adds up their offsets.
	Losses        []LossIncident
	LostOffsets   int64
	LossesAtLeast bool  // more incidents than MaxLosses were stored
	LossErr       error // the incidents could not be read: unknown, not none
	// FailedOver are the times DR was active that reach into the longest
	// window, oldest first (UntilMs 0: still failed over).
	FailedOver []FailedOverSpan
	// Minutes are the recorded minutes of the last PlotWindow (oldest
	// first) from PlotFromMs to the windows' end, for the RPO plot; Days
	// the UTC days reaching into the longest window, for the per-day plot.
	Minutes    []ReportMinute
	PlotFromMs int64
	Days       []ReportDay
}

// ReportMinute is one recorded minute as the report's RPO plot draws it.
type ReportMinute struct {
	MinuteMs int64
	// RPOMs is the minute's largest figure, lower bounds included; nil
	// when no sample had one (the RPO unknown).
	RPOMs *int64
	// AtLeast: some sample was unknown or only a lower bound, so the RPO
	// was at least RPOMs, maybe more.
	AtLeast    bool
	FailedOver bool
}

// ReportDay is one UTC day's account, in whole minutes, for the report's
// per-day plot; the current day counts its complete minutes only.
type ReportDay struct {
	StartMs, EndMs                            int64
	Within, Over, Unknown, FailedOver, NoData int64
}

// Recorded is the day's within, over and unknown minutes.
func (d ReportDay) Recorded() int64 { return d.Within + d.Over + d.Unknown }
