package views

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// The lag figures are offsets, not records (transaction markers and
// compacted-away offsets count), and the pages must say so.
func TestLagIsCalledOffsets(t *testing.T) {
	n, rpo := int64(619), int64(4000)
	s := &FlowSnapshot{Flow: &FlowConfig{Name: "primary->dr"}, TotalLagMessages: &n, MaxLagMessages: &n, RPOMs: &rpo, Status: model.FlowStatusOK}
	var b strings.Builder
	if err := flowSummary(s, time.Now()).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if err := offsetsNote().Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	b.WriteString(verdict(s, time.Now()))
	page := b.String()
	for _, want := range []string{"619 offsets</dd>", "619 offsets behind", "transaction", "compaction"} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q in:\n%s", want, page)
		}
	}
	if strings.Contains(page, "messages") {
		t.Errorf("offsets called messages:\n%s", page)
	}
}

// Records of aborted transactions copied to DR are counted and warned about.
func TestAbortedInDRWarning(t *testing.T) {
	s := &FlowSnapshot{Flow: &FlowConfig{Name: "primary->dr"}, AbortedInDR: 13}
	var b strings.Builder
	if err := abortedWarning(s).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "at least 13 record(s) of aborted transactions") {
		t.Errorf("no warning: %s", b.String())
	}
	b.Reset()
	if err := abortedWarning(&FlowSnapshot{}).Render(context.Background(), &b); err != nil || b.Len() != 0 {
		t.Errorf("warning without aborted records: %q %v", b.String(), err)
	}
}

// The translate preview names the partitions whose DR copy holds records of
// aborted transactions after the proposed offset.
func TestTranslateWarnsAboutAbortedRecords(t *testing.T) {
	var b strings.Builder
	rows := []TranslateRow{{DRKey: "orders-0", AbortedAfter: 17}, {DRKey: "orders-1"}}
	if err := abortedAfterWarning(rows).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "orders-0: DR holds at least 17 record(s) of aborted transactions") || strings.Contains(got, "orders-1") {
		t.Errorf("warning: %s", got)
	}
}

// Figures resting on a read of a cluster that no longer answers are said
// as lower bounds with the age of that read, computed when the page is
// drawn: never "nothing would be lost", never an age frozen in the text.
func TestStaleFiguresShownAsLowerBoundsWithTheirAge(t *testing.T) {
	now := time.Now()
	read := now.Add(-22 * time.Second)
	n, rpo, zero := int64(681), int64(14_557), int64(0)
	s := &FlowSnapshot{Flow: &FlowConfig{Name: "primary->dr"}, TotalLagMessages: &n, MaxLagMessages: &n, RPOMs: &rpo,
		RPOAtLeast: true, Bound: "source cluster unreachable", FiguresAt: read, Status: model.FlowStatusUnknown,
		Source: Reachability{Checked: true}}
	var b strings.Builder
	if err := flowSummary(s, now).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	b.WriteString(verdict(s, now))
	page := b.String()
	for _, want := range []string{"lower bound", "from a read 22 s ago", "lose at least 14 s", "at least 681 offsets behind", "≥ 681 offsets</dd>"} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q in:\n%s", want, page)
		}
	}
	s.RPOMs, s.TotalLagMessages = &zero, &zero
	if v := verdict(s, now); strings.Contains(v, "nothing would be lost") {
		t.Errorf("stale zero read as nothing at risk: %s", v)
	}
}

// When the bound on a flow's partitions leaves its per-partition series
// out of /metrics, the flow page says so and why.
func TestFlowPageSaysPerPartitionSeriesOff(t *testing.T) {
	s := &FlowSnapshot{Flow: &FlowConfig{Name: "big"}, Status: model.FlowStatusOK,
		PerPartitionOff: "10001 partitions, above the bound of 10000 (set metrics.per_partition: true to export them anyway)"}
	var b strings.Builder
	if err := FlowLive(FlowPage{Snap: s, Now: time.Now()}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-testid="per-partition-off"`) || !strings.Contains(b.String(), "10001 partitions, above the bound") {
		t.Fatalf("no per-partition note:\n%s", b.String())
	}
}

// A snapshot holding an earlier read's figures marks every partition row,
// the topic's row and the partition page stale; a fresh one marks none.
// The flag is the snapshot's: the rows themselves are the read's, shared.
func TestStaleSnapshotMarksEveryRow(t *testing.T) {
	now := time.Now()
	rows := []model.PartitionLag{{Topic: model.Intern("events"), LagMessages: model.Known(3), AsOf: model.StampOf(now.Add(-time.Minute))},
		{Topic: model.Intern("events"), Partition: 1, LagMessages: model.Known(0), AsOf: model.StampOf(now.Add(-time.Minute))}}
	for _, stale := range []bool{true, false} {
		s := &FlowSnapshot{Flow: &FlowConfig{Name: "primary->dr"}, Partitions: rows, FiguresStale: stale, Status: model.FlowStatusUnknown}
		var topic, part strings.Builder
		if err := Topic(TopicPage{Now: now, Snap: s, Topic: "events", Partitions: rows}).Render(context.Background(), &topic); err != nil {
			t.Fatal(err)
		}
		if err := Partition(PartitionPage{Now: now, Snap: s, P: rows[1]}).Render(context.Background(), &part); err != nil {
			t.Fatal(err)
		}
		want := 0
		if stale {
			want = len(rows)
		}
		if n := strings.Count(topic.String(), `<tr class="stale"`); n != want {
			t.Errorf("stale %v: %d partition rows marked, want %d", stale, n, want)
		}
		if n := strings.Count(part.String(), `<tr class="stale"`); n != min(want, 1) {
			t.Errorf("stale %v: partition page marked %d times", stale, n)
		}
	}
}
