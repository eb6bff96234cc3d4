package kafka

import "testing"

// Vectors from MM2's OffsetSyncStoreTest (shared/reference/mm2.md §3.2).
func TestTranslateMM2Vectors(t *testing.T) {
	s := func(up, down int64) OffsetSync { return OffsetSync{Topic: "t", Upstream: up, Downstream: down} }
	for _, tc := range []struct {
		name    string
		history []OffsetSync
		up      int64
		want    int64
		method  Method
	}{
		{"after 100->200, 150 is conservative", []OffsetSync{s(100, 200)}, 150, 201, MethodConservative},
		{"after 150->251, 150 is exact", []OffsetSync{s(100, 200), s(150, 251)}, 150, 251, MethodExact},
		{"after 150->251, 5 is too old", []OffsetSync{s(100, 200), s(150, 251)}, 5, 0, MethodTooOld},
		{"downstream reset 200->10", []OffsetSync{s(100, 200), s(150, 251), s(200, 10)}, 200, 10, MethodExact},
		{"upstream reset 20->20", []OffsetSync{s(100, 200), s(150, 251), s(200, 10), s(20, 20)}, 20, 20, MethodExact},
		{"upstream reset retires older syncs", []OffsetSync{s(100, 200), s(20, 20)}, 150, 21, MethodConservative},
		{"no syncs", nil, 5, 0, MethodUnknown},
		{"equal upstream: newest wins", []OffsetSync{s(10, 10), s(10, 12)}, 10, 12, MethodExact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Translate(tc.history, tc.up)
			if got.Method != tc.method || (got.Translated() && got.Offset != tc.want) {
				t.Fatalf("Translate(%d) = %+v; want %d %s", tc.up, got, tc.want, tc.method)
			}
		})
	}
}
