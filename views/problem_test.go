package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// A cluster error shows its sentence; the client's own words are folded
// in a <details> (issue 28 item 7).
func TestProblemFoldsTheClientsWords(t *testing.T) {
	var b bytes.Buffer
	text := "the primary is unreachable since 2026-12-04T21:00:00Z: no broker takes a connection" + model.RawErrSep + "dial tcp: connection refused"
	if err := Problem(text).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(b.String(), "<details")
	if !strings.Contains(head, "unreachable since 2026-12-04T21:00:00Z") || strings.Contains(head, "connection refused") ||
		!strings.Contains(rest, "<summary>client error</summary><code>dial tcp: connection refused</code>") {
		t.Fatalf("rendered %s", b.String())
	}
	b.Reset()
	if err := Problem("plain error").Render(context.Background(), &b); err != nil || b.String() != "plain error" {
		t.Fatalf("plain: %q %v", b.String(), err)
	}
}
