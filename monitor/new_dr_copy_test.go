package monitor

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/model"
)

// A topic taken up by MM2 while it runs, its DR copy created at that
// moment: until DR holds a record, nothing of the source log is in DR and
// the lag is the whole retained log, whatever MM2's bookkeeping says (a
// Connect position left from an earlier mirroring of the topic, a first
// offset sync past records MM2 skipped). Never 0 while the 252 records
// are not in DR.
func TestLagOfANewDRCopyIsNeverZero(t *testing.T) {
	ctx := context.Background()
	_, pcl := newCluster(t, "primary", "events")
	_, dcl := newCluster(t, "dr") // no DR copy yet
	fill(t, pcl, "events", 0, 252, time.Now().Add(-time.Minute))
	r := churnReader(t, pcl, dcl)
	tp := model.TP{Topic: "events", Partition: 0}
	none := mapPositions{connect: map[model.TP]model.ConnectOffset{}, latestSync: map[model.TP]model.OffsetSync{}}
	oldConnect := mapPositions{connect: map[model.TP]model.ConnectOffset{tp: {Topic: "events", LastOffset: 251, LogOffset: 3, RecordMs: 1}},
		latestSync: map[model.TP]model.OffsetSync{}}
	pastSkipped := mapPositions{connect: map[model.TP]model.ConnectOffset{},
		latestSync: map[model.TP]model.OffsetSync{tp: {Topic: "events", Upstream: 252, Downstream: 0, LogOffset: 4, RecordMs: 1}}}
	check := func(when string, pos mapPositions, unknownOK bool) {
		t.Helper()
		p := lagOf(t, r.Read(ctx, pos, time.Now()), 0)
		switch {
		case !p.LagMessages.Known && unknownOK:
		case !p.LagMessages.Known || p.LagMessages.V != 252 || !p.LagMs.Known || p.LagMs.V < 59_000:
			t.Fatalf("%s: %s, want the whole retained log (252 offsets, a minute old) behind", when, describe(p))
		}
	}
	check("no DR copy, no position", none, true)
	check("no DR copy, an old Connect position", oldConnect, false)
	if _, err := kadm.NewClient(dcl).CreateTopic(ctx, 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		when string
		pos  mapPositions
	}{
		{"DR copy just created, no position", none},
		{"DR copy just created, an old Connect position", oldConnect},
		{"DR copy just created, a first sync past the records", pastSkipped},
	} {
		check(c.when, c.pos, false)
	}
	// Retention removed the log's start: how many records MM2 never copied
	// anywhere is not known, so the lag is unknown, still never 0.
	if _, err := kadm.NewClient(pcl).DeleteRecords(ctx, kadm.Offsets{"events": {0: {Topic: "events", Partition: 0, At: 100}}}); err != nil {
		t.Fatal(err)
	}
	if p := lagOf(t, r.Read(ctx, oldConnect, time.Now()), 0); p.LagMessages.Known {
		t.Fatalf("DR copy empty, log start 100: %s, want unknown", describe(p))
	}
	// Once DR holds records, MM2's positions count again.
	fill(t, dcl, "events", 0, 252, time.Now())
	if p := lagOf(t, r.Read(ctx, oldConnect, time.Now()), 0); !p.LagMessages.Known || p.LagMessages.V != 0 || p.Method != model.PositionConnect {
		t.Fatalf("DR holds the 252 records: %s, want caught up by MM2's position", describe(p))
	}
}
