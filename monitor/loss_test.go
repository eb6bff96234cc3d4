package monitor

import (
	"testing"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// lossCase drives the loss judge over hand-built refreshes of events-0.
type lossCase struct {
	t     *testing.T
	j     lossJudge
	idx   *mm2.SyncIndex
	now   time.Time
	log   int64
	found []model.LossIncident
}

func newLossCase(t *testing.T, syncs ...[2]int64) *lossCase {
	c := &lossCase{t: t, idx: mm2.NewSyncIndex(), now: time.Unix(1_700_000_000, 0)}
	c.sync(syncs...)
	return c
}

func (c *lossCase) sync(syncs ...[2]int64) {
	for _, s := range syncs {
		c.idx.Add([]model.OffsetSync{{Topic: "events", Upstream: s[0], Downstream: s[1], LogOffset: c.log}})
		c.log++
	}
}

// refresh judges one reading; it returns whether the gap is still undecided.
func (c *lossCase) refresh(start, replicated, targetEnd, connectLast int64) bool {
	c.t.Helper()
	end := max(replicated, start) + 10
	parts := []model.PartitionLag{{Topic: model.Intern("events"), SourceStart: model.Known(start), SourceEnd: model.Known(end), Replicated: model.Known(replicated), TargetEnd: model.Known(targetEnd)}}
	co := map[model.TP]model.ConnectOffset{{Topic: "events", Partition: 0}: {Topic: "events", LastOffset: connectLast}}
	c.found = append(c.found, c.j.judge(parts, c.idx, func(tp model.TP) (model.ConnectOffset, bool) { x, ok := co[tp]; return x, ok }, c.now)...)
	c.now = c.now.Add(5 * time.Second)
	return parts[0].LossSuspected
}

// Records 80..119 deleted before MM2 copied them; MM2 resumes at 120 and
// writes a sync 120→80: a loss of exactly 80..119, recorded once.
func TestLossConfirmedBySkipSync(t *testing.T) {
	c := newLossCase(t, [2]int64{0, 0}, [2]int64{50, 50})
	if !c.refresh(120, 80, 80, 79) || len(c.found) != 0 {
		t.Fatalf("gap not suspected, or confirmed too early: %+v", c.found)
	}
	c.sync([2]int64{120, 80})
	if c.refresh(120, 130, 90, 79) {
		t.Fatal("still undecided after MM2 wrote the skip sync")
	}
	if len(c.found) != 1 {
		t.Fatalf("incidents %+v", c.found)
	}
	if inc := c.found[0]; inc.FirstOffset != 80 || inc.LastOffset != 119 || inc.Lost != 40 || inc.How == "" {
		t.Fatalf("incident %+v, want 80..119, 40 lost", inc)
	}
	c.refresh(120, 140, 100, 139)
	if len(c.found) != 1 {
		t.Fatalf("recorded twice: %+v", c.found)
	}
}

// Records 80..119 deleted after MM2 read them; they reach DR (no skip in
// the syncs): no loss.
func TestNoLossWhenDeletedRecordsArrive(t *testing.T) {
	c := newLossCase(t, [2]int64{0, 0}, [2]int64{50, 50})
	c.refresh(120, 80, 80, 79)
	c.sync([2]int64{100, 100}, [2]int64{150, 150})
	if c.refresh(120, 160, 160, 159) || len(c.found) != 0 {
		t.Fatalf("loss recorded although every record arrived: %+v", c.found)
	}
}

// No sync past the gap (it ran to the source end): the newest sync plus
// the DR records after it cover the gap for a while: no loss.
func TestNoLossWithoutSyncPastGap(t *testing.T) {
	c := newLossCase(t, [2]int64{0, 0}, [2]int64{50, 50})
	c.refresh(120, 80, 80, 79)
	undecided := 0
	for range 5 {
		if c.refresh(120, 120, 120, 119) {
			undecided++
		}
	}
	if len(c.found) != 0 || undecided == 0 || undecided == 5 {
		t.Fatalf("found %+v, undecided %d of 5 (must wait, then clear)", c.found, undecided)
	}
}

// The skip sync never arrives (say offset-syncs ingestion is broken), but
// Connect's committed position is past the gap while DR holds too few
// records: a loss of at least the shortfall, after it persists.
func TestLossConfirmedFromConnectShortfall(t *testing.T) {
	c := newLossCase(t, [2]int64{0, 0}, [2]int64{50, 50})
	c.refresh(120, 80, 80, 79)
	for range lossConfirmRefreshes - 1 {
		if !c.refresh(120, 130, 90, 129) {
			t.Fatal("decided before the shortfall persisted")
		}
	}
	c.refresh(120, 130, 90, 129)
	if len(c.found) != 1 || c.found[0].Lost != 40 || c.found[0].LastOffset != 119 || c.found[0].FirstOffset != 80 {
		t.Fatalf("incidents %+v", c.found)
	}
}

// MM2 restarts from a committed position behind what it had copied (70,
// DR already holds up to 79), copies 70..79 again, then skips 80..119: the
// duplicates must not hide the loss.
func TestLossCountedDespiteRecopiedRecords(t *testing.T) {
	c := newLossCase(t, [2]int64{0, 0}, [2]int64{50, 50})
	c.refresh(120, 80, 80, 69)
	c.sync([2]int64{70, 80}, [2]int64{120, 90})
	c.refresh(120, 121, 91, 120)
	if len(c.found) != 1 || c.found[0].Lost != 40 || c.found[0].FirstOffset != 80 || c.found[0].LastOffset != 119 {
		t.Fatalf("incidents %+v, want 80..119, 40 lost", c.found)
	}
}

// At start-up the gap can be seen before the syncs below it are ingested:
// they are looked for again, and the loss is still judged.
func TestLossJudgedWhenSyncsArriveLate(t *testing.T) {
	c := newLossCase(t)
	c.refresh(120, 80, 80, 79)
	c.sync([2]int64{0, 0}, [2]int64{50, 50}, [2]int64{120, 80})
	c.refresh(120, 130, 90, 79)
	if len(c.found) != 1 || c.found[0].Lost != 40 {
		t.Fatalf("incidents %+v", c.found)
	}
}

// Retention running while a gap is undecided keeps the syncs its judge
// reads: the re-copy sync 70→80 is older than the newest syncs the bound
// keeps, and thinning it would merge the re-copy with the skip (30 lost
// instead of 40).
func TestRetentionKeepsAnUndecidedGapsSyncs(t *testing.T) {
	c := newLossCase(t)
	for u := int64(0); u <= 50; u += 2 {
		c.sync([2]int64{u, u})
	}
	c.refresh(120, 80, 80, 69)
	c.sync([2]int64{70, 80}, [2]int64{120, 90})
	for u := int64(130); u < 130+10*20; u += 10 {
		c.sync([2]int64{u, u - 30})
	}
	c.idx.Remove(c.idx.ThinBounded(0, 0, 1, c.j.keepFrom()))
	if _, n := c.idx.History(model.TP{Topic: "events"}, 0); n >= 26+22 {
		t.Fatalf("retention deleted nothing (%d syncs): the test does not exercise the bound", n)
	}
	c.refresh(120, 400, 400, 399)
	if len(c.found) != 1 || c.found[0].Lost != 40 || c.found[0].FirstOffset != 80 {
		t.Fatalf("incidents %+v, want 80..119, 40 lost", c.found)
	}
}

// A gap's partition that a reading no longer has (its topic no longer
// mirrored) is forgotten; one that stays, even unread, is kept.
func TestLossSuspectForgottenWhenNoLongerRead(t *testing.T) {
	c := newLossCase(t, [2]int64{0, 0}, [2]int64{50, 50})
	if !c.refresh(120, 80, 80, 79) {
		t.Fatal("gap not suspected")
	}
	other := int64(5)
	stale := []model.PartitionLag{{Topic: model.Intern("events")}, {Topic: model.Intern("audit"), SourceStart: model.Known(other), SourceEnd: model.Known(other), Replicated: model.Known(other)}}
	c.j.judge(stale, c.idx, func(model.TP) (model.ConnectOffset, bool) { return model.ConnectOffset{}, false }, c.now)
	if c.j.suspects[model.TP{Topic: "events"}] == nil || !stale[0].LossSuspected {
		t.Fatal("a reading that could not read the partition dropped its gap")
	}
	c.j.judge(stale[1:], c.idx, func(model.TP) (model.ConnectOffset, bool) { return model.ConnectOffset{}, false }, c.now)
	if len(c.j.suspects) != 0 || c.j.keepFrom() != nil {
		t.Fatalf("gap of a partition no longer read kept: %+v, keep %v", c.j.suspects, c.j.keepFrom())
	}
}
