package handlers

import (
	"net/url"
	"strings"
)

// SafeNext keeps a post-login redirect on this site: a path on this
// origin (with an optional query), else "/". Browsers drop TAB, LF and CR
// from URLs and read "\\" as "/", so "/\t/host" or "/\\host" would reach
// another host: any control character, space or backslash is refused, raw
// or percent-encoded, and so is a path that starts "//" before or after
// decoding. Fail closed: anything that does not parse as exactly a path
// goes to "/".
func SafeNext(next string) string {
	if !safePath(next, false) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "/"
	}
	// Decoded, the path may hold spaces and UTF-8 (a flow name), but still
	// no control characters or backslashes and no leading "//".
	if !safePath(u.Path, true) {
		return "/"
	}
	return next
}

// safePath: starts with one "/" (not "//") and holds no control character
// or backslash; raw (decoded false) also no space or non-ASCII byte.
func safePath(p string, decoded bool) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < ' ' || c == 0x7f || c == '\\' || !decoded && (c == ' ' || c > 0x7f) {
			return false
		}
	}
	return true
}
