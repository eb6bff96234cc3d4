package handlers

import "testing"

// Every next= a browser could resolve to another host goes to "/"; paths
// on this origin, query strings included, survive unchanged. The inputs are
// what SafeNext sees: the query parameter after one round of decoding.
func TestSafeNext(t *testing.T) {
	bad := []string{
		"", "audit", "//evil.example/", "///evil.example", "/\\evil.example", "\\\\evil.example",
		"/\t/evil.example/path", "\t//evil.example", "/\n/evil.example", "/\r/evil.example", "/\r\n/evil.example",
		"/%09/evil.example", "/%0a/evil.example", "/%0d/evil.example", "/%5c/evil.example", "/%5C/evil.example",
		"/%2f/evil.example", "/%2F%2Fevil.example", "/%2fevil.example/x", "/x\\y", "/x%5cy",
		"https://evil.example/", "http:/evil.example", "javascript:alert(1)", "//user@evil.example",
		"/ /evil.example", "/\x00", "/\x7f", "/caf\u00e9", "/%zz", "mailto:a@b",
	}
	for _, n := range bad {
		if got := SafeNext(n); got != "/" {
			t.Errorf("SafeNext(%q) = %q, want /", n, got)
		}
	}
	good := []string{
		"/", "/audit", "/audit?actor=x&action=login", "/flows/primary-to-dr/topics/orders?since=1h#lag",
		"/failover/12", "/translate?group=a%2Cb", "/flows/a%20b", "/x?next=//evil.example",
		"/%2509/stays-here", "/a/b/..",
	}
	for _, n := range good {
		if got := SafeNext(n); got != n {
			t.Errorf("SafeNext(%q) = %q, want it unchanged", n, got)
		}
	}
}
