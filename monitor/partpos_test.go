package monitor

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/drconsole/drconsole/model"
)

// fixedPositions answers one partition's positions.
type fixedPositions struct {
	s      model.OffsetSync
	c      model.ConnectOffset
	hs, hc bool
}

func (f fixedPositions) newestSync(model.TP) (model.OffsetSync, bool)       { return f.s, f.hs }
func (f fixedPositions) connectOffset(model.TP) (model.ConnectOffset, bool) { return f.c, f.hc }

// oldUsable is usable over the whole model records the refresh table held
// before it was compacted: the reference the compact one must agree with.
func oldUsable(m *restartMark, c model.ConnectOffset, hasC bool, s model.OffsetSync, hasS bool) (model.ConnectOffset, bool, model.OffsetSync, bool) {
	if m != nil {
		hasC = hasC && !(m.connect && m.connectRec == [2]int64{c.LogOffset, c.RecordMs})
		hasS = hasS && !(m.sync && m.syncRec == [2]int64{s.LogOffset, s.RecordMs})
	}
	return c, hasC, s, hasS
}

// The compact position gives the refresh the same answers as the model
// records did: which positions are usable after a restart mark, and every
// figure the refresh reads from them.
func TestPartPosSameAnswers(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 1))
	small := func() int64 { return rng.Int64N(4) } // collisions with the mark are common
	for range 20000 {
		f := fixedPositions{
			s: model.OffsetSync{Topic: "t", Partition: 3, Upstream: rng.Int64N(1 << 40), Downstream: rng.Int64N(1 << 40),
				LogOffset: small(), RecordMs: small(), Incarnation: small()},
			c: model.ConnectOffset{Connector: "mm2", Cluster: "a", Topic: "t", Partition: 3, LastOffset: rng.Int64N(1 << 40),
				LogOffset: small(), RecordMs: small(), Incarnation: small()},
			hs: rng.IntN(4) > 0, hc: rng.IntN(4) > 0,
		}
		var m *restartMark
		if rng.IntN(3) > 0 {
			m = &restartMark{connect: rng.IntN(2) == 0, sync: rng.IntN(2) == 0,
				connectRec: [2]int64{small(), small()}, syncRec: [2]int64{small(), small()}}
		}
		pos := takePosition(f, model.TP{Topic: "t", Partition: 3})
		c, hasC, s, hasS := m.usable(pos)
		oc, ohasC, os, ohasS := oldUsable(m, f.c, f.hc, f.s, f.hs)
		if hasC != ohasC || hasS != ohasS {
			t.Fatalf("%+v mark %+v: usable %v %v, was %v %v", f, m, hasC, hasS, ohasC, ohasS)
		}
		if hasC && (c != connectPos{oc.LastOffset, oc.LogOffset, oc.RecordMs}) {
			t.Fatalf("%+v: connect %+v, was %+v", f, c, oc)
		}
		if hasS && (s != syncPos{os.Upstream, os.Downstream, os.LogOffset, os.RecordMs}) {
			t.Fatalf("%+v: sync %+v, was %+v", f, s, os)
		}
	}
}

// The refresh's table of positions is 64 bytes a partition and holds no
// pointer (nothing for the collector to scan): at a million partitions it
// is 64 MB for the refresh's length, was 160 MB.
func TestPartPosCompact(t *testing.T) {
	if n := unsafe.Sizeof(partPos{}); n > 64 {
		t.Errorf("partPos is %d bytes, want at most 64", n)
	}
	var pointers func(reflect.Type) bool
	pointers = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				if pointers(ty.Field(i).Type) {
					return true
				}
			}
			return false
		case reflect.Array:
			return pointers(ty.Elem())
		case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Float64:
			return false
		}
		return true
	}
	if pointers(reflect.TypeFor[partPos]()) {
		t.Error("partPos holds a pointer or string")
	}
}

// watchTable holds what the map of pointers it replaced held: the same
// watch for every partition seen in the latest read, none for one it did
// not see, and a partition seen again after being forgotten starts anew.
func TestWatchTableAsTheMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 2))
	var tab watchTable
	ref := map[model.TP]*partWatch{}
	for read := int64(1); read <= 200; read++ {
		for range rng.IntN(60) {
			tp := model.TP{Topic: string(rune('a' + rng.IntN(6))), Partition: rng.Int32N(40)}
			w, rw := tab.get(tp), ref[tp]
			if (w == nil) != (rw == nil) {
				t.Fatalf("read %d: %v held %v, the map %v", read, tp, w != nil, rw != nil)
			}
			if w == nil {
				w, rw = tab.add(tp), &partWatch{lastEnd: -1}
				ref[tp] = rw
			}
			if w.lastEnd != rw.lastEnd || w.readIn != rw.readIn || len(w.seen) != len(rw.seen) {
				t.Fatalf("read %d: %v is %+v, the map's %+v", read, tp, *w, *rw)
			}
			end := rng.Int64N(1000)
			w.readIn, rw.readIn = read, read
			w.lastEnd, rw.lastEnd = end, end
			w.seen, rw.seen = append(w.seen, endSeen{read, end}), append(rw.seen, endSeen{read, end})
		}
		tab.forgetUnread(read)
		for tp, w := range ref {
			if w.readIn != read {
				delete(ref, tp)
			}
		}
		n := 0
		for topic, ps := range tab.topics {
			for p := range ps {
				if ps[p].held {
					n++
					if ref[model.TP{Topic: topic, Partition: int32(p)}] == nil {
						t.Fatalf("read %d: %s-%d kept, the map forgot it", read, topic, p)
					}
				}
			}
		}
		if n != len(ref) {
			t.Fatalf("read %d: %d watched, the map %d", read, n, len(ref))
		}
	}
}

// markLost writes loss marks in place into a table no snapshot holds, and
// copies a shared one before changing a row, leaving the published copy
// as its readers saw it; with nothing to change it copies nothing.
func TestMarkLostCopiesASharedTable(t *testing.T) {
	table := func() []model.PartitionLag {
		return []model.PartitionLag{{Topic: model.Intern("a"), Partition: 0}, {Topic: model.Intern("a"), Partition: 1, DataLost: true}}
	}
	same := map[model.TP]bool{{Topic: "a", Partition: 1}: true}
	changed := map[model.TP]bool{{Topic: "a", Partition: 0}: true}

	ps := table()
	if got, copied := markLost(ps, same, true); copied || &got[0] != &ps[0] {
		t.Error("shared, nothing to change: want the same table")
	}
	published := table()
	got, copied := markLost(published, changed, true)
	if !copied || &got[0] == &published[0] || !got[0].DataLost || got[1].DataLost {
		t.Errorf("shared, a change: copied %v, marks %v %v", copied, got[0].DataLost, got[1].DataLost)
	}
	if published[0].DataLost || !published[1].DataLost {
		t.Error("the published table was written")
	}
	own := table()
	if got, copied := markLost(own, changed, false); copied || &got[0] != &own[0] || !own[0].DataLost || own[1].DataLost {
		t.Errorf("own table: copied %v, marks %v %v", copied, own[0].DataLost, own[1].DataLost)
	}
}
