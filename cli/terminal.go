package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text read from files (a savepoint's operator names and uids, topic
// names, keys of an offsets file) reaches the terminal through the CLI's
// messages and reports. A terminal obeys what it is sent: ESC starts a
// sequence that moves the cursor, recolours or retitles the window, BEL
// rings, CR overwrites a line, bidirectional overrides reorder what is
// read. So every character that is not printable is shown as a Go escape
// (\x1b, \a, \r, \u202e) instead: the human-facing writers (stderr of
// every command, the reports of savepoint inspect and rewrite) go through
// a terminalWriter. Machine output (JSON, CSV exports) is left as it is:
// it is escaped by its own format.

// terminalSafe is s with every rune that is not printable escaped; line
// feeds and tabs are kept, as is every printable character.
func terminalSafe(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[0]) // not UTF-8
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// unsafeRune: what a terminal might act on rather than show.
func unsafeRune(r rune) bool {
	return r != '\n' && r != '\t' && r != ' ' && !unicode.IsPrint(r)
}

// terminalWriter escapes what it is given with terminalSafe. A rune cut
// between two writes is held until the next one completes it.
type terminalWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

func newTerminalWriter(w io.Writer) io.Writer {
	if tw, ok := w.(*terminalWriter); ok {
		return tw
	}
	return &terminalWriter{w: w}
}

func (t *terminalWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := append(t.pending, p...)
	t.pending = nil
	// Hold back an incomplete rune at the end (at most 3 bytes).
	for cut := len(data) - 1; cut >= 0 && cut >= len(data)-3; cut-- {
		if utf8.RuneStart(data[cut]) {
			if !utf8.FullRune(data[cut:]) {
				t.pending = append([]byte(nil), data[cut:]...)
				data = data[:cut]
			}
			break
		}
	}
	if _, err := io.WriteString(t.w, terminalSafe(string(data))); err != nil {
		return 0, err
	}
	return len(p), nil
}
