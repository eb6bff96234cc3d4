package mm2

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// partIndex answers as the map keyed by model.TP it replaced: the same
// index for every partition held, none for any other, and each lists
// exactly those held, dense numbers, gaps, negative and huge ones alike.
func TestPartIndexAsTheMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 3))
	x, ref := newPartIndex(), map[model.TP]int32{}
	pick := func() model.TP {
		p := rng.Int32N(300)
		switch rng.IntN(20) {
		case 0:
			p = -1 - rng.Int32N(5)
		case 1:
			p = denseLimit + rng.Int32N(1<<30)
		}
		return model.TP{Topic: fmt.Sprintf("t%d", rng.IntN(30)), Partition: p}
	}
	for i := range int32(5000) {
		tp := pick()
		if _, ok := ref[tp]; !ok {
			ref[tp] = i
			x.put(tp, i)
		}
		q := pick()
		got, ok := x.get(q)
		want, wok := ref[q]
		if ok != wok || got != want {
			t.Fatalf("get %v: %d %v, want %d %v", q, got, ok, want, wok)
		}
	}
	if x.len() != len(ref) {
		t.Errorf("len %d, want %d", x.len(), len(ref))
	}
	seen := map[model.TP]int32{}
	x.each(func(tp model.TP, i int32) {
		if _, dup := seen[tp]; dup {
			t.Errorf("%v listed twice", tp)
		}
		seen[tp] = i
	})
	if len(seen) != len(ref) {
		t.Fatalf("each listed %d, want %d", len(seen), len(ref))
	}
	for tp, i := range ref {
		if seen[tp] != i {
			t.Errorf("each: %v at %d, want %d", tp, seen[tp], i)
		}
	}
}
