package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// A Cluster Linking flow that renames topics gets the translated-offsets
// restore recommended, not "the same savepoint, unchanged".
func TestRestoreStrategiesForRenamedMirrors(t *testing.T) {
	same := &model.Usability{Partitions: []model.PartitionUsability{
		{Source: model.TP{Topic: "orders", Partition: 0}, DR: model.TP{Topic: "orders", Partition: 0}}}}
	s, rec := restoreStrategies(views.SavepointDetailPage{Flow: "primary->dr", ClusterLink: true, Usability: same})
	if rec != 1 || !s[0].Recommended || !s[0].Fits {
		t.Fatalf("same names: rec %d %+v", rec, s)
	}
	renamed := &model.Usability{Partitions: []model.PartitionUsability{
		{Source: model.TP{Topic: "orders", Partition: 0}, DR: model.TP{Topic: "primary.orders", Partition: 0}},
		{Source: model.TP{Topic: "orders", Partition: 1}, DR: model.TP{Topic: "primary.orders", Partition: 1}}}}
	s, rec = restoreStrategies(views.SavepointDetailPage{Flow: "primary->dr", ClusterLink: true, Usability: renamed})
	if rec != 2 || s[0].Fits || s[0].Recommended || !s[1].Recommended || !strings.Contains(s[0].FitsWhy, "orders → primary.orders") ||
		strings.Count(s[0].FitsWhy, "→") != 1 {
		t.Fatalf("renamed: rec %d %+v", rec, s)
	}
}

// A savepoint's age against the flow's RPO: younger than the RPO warns that
// DR may not hold its records yet; unknown RPO and unknown age say so.
func TestAgeVsRPO(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	done := now.Add(-90 * time.Second).UnixMilli()
	sp := model.Savepoint{CompletedMs: &done}
	ms := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	for _, tc := range []struct {
		rpo     *int64
		atLeast bool
		want    string
		warn    bool
	}{
		{ms(10 * time.Second), false, "older than the RPO", false},
		{ms(5 * time.Minute), false, "newer than the RPO", true},
		{nil, false, "RPO is unknown", false},
		// Only a lower bound: the true RPO may exceed the savepoint's age.
		{ms(10 * time.Second), true, "RPO is at least 10 s", true},
	} {
		got, warn := ageVsRPO(sp, tc.rpo, tc.atLeast, now)
		if warn != tc.warn || !strings.Contains(got, tc.want) || !strings.Contains(got, "old") {
			t.Errorf("rpo %v: %q warn %v; want %q warn %v", tc.rpo, got, warn, tc.want, tc.warn)
		}
	}
	if got, warn := ageVsRPO(model.Savepoint{}, ms(time.Second), false, now); got != "" || warn {
		t.Errorf("no age: %q %v", got, warn)
	}
}
