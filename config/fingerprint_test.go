package config

import (
	"strings"
	"testing"
)

// fingerprintOf parses a small config (sasl holds the cluster's SASL
// settings, extra is appended) and fingerprints it.
func fingerprintOf(t *testing.T, sasl, extra string) map[string]string {
	t.Helper()
	c, err := Parse("f.yaml", strings.NewReader(`
clusters:
  a: {bootstrap: ["a:9092"], sasl: {mechanism: PLAIN, username: u, `+sasl+`}}
  b: {bootstrap: ["b:9092"]}
flows:
  - {source: a, target: b}
`+extra))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := Fingerprint(c)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func TestFingerprint(t *testing.T) {
	load := func(extra string) map[string]string { return fingerprintOf(t, "password: hunter2", extra) }
	base := load("")
	if base["clusters"] == "" || base["flows"] == "" || base["thresholds"] == "" || base["failover"] == "" {
		t.Fatalf("sections %v", base)
	}
	if again := load(""); again["clusters"] != base["clusters"] || again["flows"] != base["flows"] {
		t.Fatal("the same file fingerprints differently")
	}
	changed := load("thresholds: {warning: {lag: 45s}}\n")
	if changed["thresholds"] == base["thresholds"] || changed["clusters"] != base["clusters"] || changed["flows"] != base["flows"] {
		t.Fatalf("only thresholds should differ:\n%v\n%v", base, changed)
	}
	for _, h := range base {
		if strings.Contains(h, "hunter2") {
			t.Fatal("a secret in a fingerprint")
		}
	}
	// A password change is not visible (set stays set).
	if fingerprintOf(t, "password: one", "")["clusters"] != fingerprintOf(t, "password: two", "")["clusters"] {
		t.Error("a password's value shows in the fingerprint")
	}
}
