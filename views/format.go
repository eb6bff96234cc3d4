// Package views renders drconsole's pages and fragments (templ).
//
// Every number on screen goes through these helpers so that unknown values
// read "unknown" (never 0) and every figure can say how old it is.
package views

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Unknown is how a missing value reads.
const Unknown = "unknown"

// Int formats a count with thousands separators; nil is unknown.
func Int(v *int64) string {
	if v == nil {
		return Unknown
	}
	return Count(*v)
}

// Count formats n with thousands separators.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Millis formats a lag in milliseconds; nil is unknown.
func Millis(v *int64) string {
	if v == nil {
		return Unknown
	}
	return Duration(time.Duration(*v) * time.Millisecond)
}

// Duration formats d compactly: "0 s", "850 ms", "42 s", "3 m 05 s", "2 h 10 m", "3 d 4 h".
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0 s"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d m %02d s", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %02d m", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%d d %d h", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// Ago says how long before now t was: "12 s ago"; the zero time is "never".
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return Duration(now.Sub(t)) + " ago"
}

// Clock is t as an ISO-like UTC timestamp for titles and tables.
func Clock(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// FlowPath is the URL of a flow page; flow names may contain ">".
func FlowPath(flow string) string { return "/flows/" + url.PathEscape(flow) }

// TopicPath is the URL of a topic's partitions within a flow.
func TopicPath(flow, topic string) string {
	return FlowPath(flow) + "/topics/" + url.PathEscape(topic)
}

// PartitionPath is the URL of a partition drill-down.
func PartitionPath(flow, topic string, partition int32) string {
	return TopicPath(flow, topic) + "/partitions/" + strconv.Itoa(int(partition))
}

// listReasonChars is how much of a run's reason the runs list shows; the
// run page shows all of it (runs planned before reasons were capped may
// hold far more than a list cell can).
const listReasonChars = 300

// listReason is reason as the runs list shows it: at most listReasonChars
// characters, "…" marking the cut.
func listReason(reason string) string {
	if utf8.RuneCountInString(reason) <= listReasonChars {
		return reason
	}
	return string([]rune(reason)[:listReasonChars]) + "…"
}
