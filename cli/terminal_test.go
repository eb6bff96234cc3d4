package cli

import (
	"bytes"
	"testing"
)

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"events-0 αβ\tok\n":         "events-0 αβ\tok\n",
		"\x1b[2J\a\r\x7f":           `\x1b[2J\a\r\x7f`,
		"evil\u202egnp.exe":         `evil\u202egnp.exe`,
		"\x9b31m":                   `\x9b31m`, // C1 CSI as a raw byte: not UTF-8
		"\u009b31m":                 `\u009b31m`,
		"bad \xff byte":             `bad \xff byte`,
		"zero\u200bwidth\ufeffmark": `zero\u200bwidth\ufeffmark`,
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
	// A rune split between two writes is kept whole.
	var b bytes.Buffer
	w := newTerminalWriter(&b)
	ae := []byte("é\x1b")
	w.Write(ae[:1])
	w.Write(ae[1:])
	if b.String() != `é\x1b` {
		t.Errorf("split rune: %q", b.String())
	}
}
