package failover

import (
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

func TestReachedDRFromWhatTheCutRecorded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		cut        model.CutPosition
		known      bool
		from       int64
		inDRAtMost int64
	}{
		{"DR's end unread", model.CutPosition{SyncUp: runbooktest.I64(5), SyncDown: runbooktest.I64(5)}, false, 0, 0},
		{"DR empty", model.CutPosition{DREnd: runbooktest.I64(0)}, true, 0, 0},
		{"sync at DR's last record", model.CutPosition{DREnd: runbooktest.I64(8), SyncUp: runbooktest.I64(20), SyncDown: runbooktest.I64(7)}, true, 21, 0},
		{"sync below DR's last record", model.CutPosition{DREnd: runbooktest.I64(8), SyncUp: runbooktest.I64(20), SyncDown: runbooktest.I64(4)}, true, 21, 3},
		// Connect's commit narrows the start; the sync still bounds how
		// many of the counted records DR may hold.
		{"sync and a later connect offset", model.CutPosition{DREnd: runbooktest.I64(8), SyncUp: runbooktest.I64(20), SyncDown: runbooktest.I64(4), ConnectLast: runbooktest.I64(22)}, true, 23, 3},
		// An exact sync outranks a connect offset (perhaps an older log's).
		{"exact sync, connect offset past it", model.CutPosition{DREnd: runbooktest.I64(8), SyncUp: runbooktest.I64(20), SyncDown: runbooktest.I64(7), ConnectLast: runbooktest.I64(900)}, true, 21, 0},
		{"connect offset alone", model.CutPosition{DREnd: runbooktest.I64(8), ConnectLast: runbooktest.I64(22)}, true, 23, -1},
		{"nothing", model.CutPosition{DREnd: runbooktest.I64(8)}, false, 0, -1},
		// Exactly-once MM2 killed inside a transaction: DR's records 5..7
		// never committed. The sync at 4 is DR's last committed record, so
		// nothing counted is in DR; and a sync naming an uncommitted record
		// (at 6) proves nothing copied.
		{"open transaction after the sync", model.CutPosition{DREnd: runbooktest.I64(8), DRStableEnd: runbooktest.I64(5), SyncUp: runbooktest.I64(20), SyncDown: runbooktest.I64(4)}, true, 21, 0},
		{"sync inside an open transaction", model.CutPosition{DREnd: runbooktest.I64(8), DRStableEnd: runbooktest.I64(5), SyncUp: runbooktest.I64(22), SyncDown: runbooktest.I64(6)}, false, 0, -1},
		{"stable end at the high watermark", model.CutPosition{DREnd: runbooktest.I64(8), DRStableEnd: runbooktest.I64(8), SyncUp: runbooktest.I64(20), SyncDown: runbooktest.I64(4)}, true, 21, 3},
	} {
		r := reachedDR(c.cut)
		if r.Known != c.known || r.Known && (r.From != c.from || r.InDRAtMost != c.inDRAtMost) || r.How == "" {
			t.Errorf("%s: %+v, want known %v from %d in DR at most %d", c.name, r, c.known, c.from, c.inDRAtMost)
		}
	}
}
