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
