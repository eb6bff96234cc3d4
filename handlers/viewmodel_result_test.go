package handlers

import (
	"strings"
	"testing"
)

// A step's result reads as labelled figures in its own order: nested
// labels joined, a "≥" kept as recorded, null (not established) as
// unknown, lists counted or spelled out; not JSON, no figures.
func TestResultFiguresReadTheResult(t *testing.T) {
	got := resultFigures(`{"v":0,"cut":{"partitions":12,"lost_offsets":"≥ 340"},"stopped":null,"groups":["billing","audit"],"rows":[{"a":1}],"ok":true}`)
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Label+"="+f.Value)
	}
	want := "cut · partitions=12|cut · lost offsets=≥ 340|stopped=unknown|groups=billing, audit|rows=1 item(s), in the raw result|ok=yes"
	if s := strings.Join(lines, "|"); s != want {
		t.Fatalf("figures\n got %s\nwant %s", s, want)
	}
	if f := resultFigures("not json"); f != nil {
		t.Fatalf("figures of a text result: %v", f)
	}
	many := "{"
	for i := range maxFigures + 3 {
		if i > 0 {
			many += ","
		}
		many += `"k` + strings.Repeat("x", i) + `":1`
	}
	if f := resultFigures(many + "}"); len(f) != maxFigures+1 || !strings.Contains(f[maxFigures].Value, "3 more") {
		t.Fatalf("a long result: %d figures, last %v", len(f), f[len(f)-1])
	}
}
