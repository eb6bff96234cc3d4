// Package form reads the console's HTML forms apart from the handlers that
// act on them: one struct per form, filled from the request by its New
// function (trimming, splitting, parsing), and a Validate that returns the
// field errors the page shows, worded for the operator. Forms decide what
// a request says, never what the console does about it.
package form

import (
	"slices"
	"strings"
)

// Errors maps a form field to what is wrong with it. It is an error: the
// handlers answer a non-empty Errors with 422 Unprocessable Entity.
type Errors map[string]string

// Error lists the messages in field order (one field: just its message).
func (e Errors) Error() string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	msgs := make([]string, len(keys))
	for i, k := range keys {
		msgs[i] = e[k]
	}
	return strings.Join(msgs, "; ")
}

// err is e as an error, nil when there are none.
func (e Errors) err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// lines splits each value at line ends, trimmed, blank lines dropped.
// Never at commas: a consumer group or an argument may contain them.
func lines(values ...string) []string {
	var out []string
	for _, v := range values {
		for l := range strings.Lines(v) {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// firstOf is the first value that is not blank, trimmed.
func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// unique keeps the first of each value, in order.
func unique(values []string) []string {
	var out []string
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
