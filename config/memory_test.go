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

func TestMemoryLimitSetting(t *testing.T) {
	base := `
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
`
	for _, tc := range []struct {
		line, want string
		limit      ByteSize
	}{
		{"", "", 0},
		{"memory_limit: 512MiB\n", "", 512 << 20},
		{"memory_limit: 1GiB\n", "", 1 << 30},
		{"memory_limit: 32MiB\n", "memory_limit: 32MiB is too small: at least 96MiB", 0},
		{"memory_limit: plenty\n", `"plenty" is not a size`, 0},
	} {
		c, err := Parse("m.yaml", strings.NewReader(base+tc.line))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.line, err)
		case tc.want == "" && c.MemoryLimit != tc.limit:
			t.Errorf("%q: memory_limit %d, want %d", tc.line, c.MemoryLimit, tc.limit)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: err %v, want %q", tc.line, err, tc.want)
		}
	}
}
