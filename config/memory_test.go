package config

import (
	"strings"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{
		"200MiB": 200 << 20, "1GiB": 1 << 30, "1.5GiB": 3 << 29, "512MB": 512e6, "64 KiB": 64 << 10,
		"1048576": 1 << 20, "2G": 2 << 30, "100B": 100,
	} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-5MiB", "MiB", "1PiB?"} {
		if got, err := ParseByteSize(in); err == nil {
			t.Errorf("%q: %d, want an error", in, got)
		}
	}
}

// memory_limit reads a size, is unset (0) by default, and refuses one
// too small to run in or not a size at all.
func TestMemoryLimitSetting(t *testing.T) {
	const flows = "clusters: {a: {bootstrap: [\"127.0.0.1:9092\"]}, b: {bootstrap: [\"127.0.0.1:9093\"]}}\nflows: [{source: a, target: b}]\n"
	for line, want := range map[string]ByteSize{"": 0, "memory_limit: 512MiB\n": 512 << 20, "memory_limit: 1GiB\n": 1 << 30} {
		c, err := Parse("m.yaml", strings.NewReader(flows+line))
		if err != nil {
			t.Errorf("%q: %v", line, err)
		} else if c.MemoryLimit != want {
			t.Errorf("%q: %d, want %d", line, c.MemoryLimit, want)
		}
	}
	for line, want := range map[string]string{
		"memory_limit: 32MiB\n":  "memory_limit: 32MiB is too small: at least 96MiB",
		"memory_limit: plenty\n": `"plenty" is not a size`,
	} {
		if _, err := Parse("m.yaml", strings.NewReader(flows+line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}
