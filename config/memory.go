package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ByteSize is a number of bytes, written with a unit: 200MiB, 1GiB,
// 512MB, or plain bytes.
type ByteSize int64

// MinMemoryLimit is the smallest memory_limit accepted: below it SQLite's
// caches and the runtime leave the heap nothing to work with.
const MinMemoryLimit ByteSize = 96 << 20

// DefaultMemoryLimit is the console's memory budget when memory_limit is
// unset and the container sets no limit: at 100,000 partitions with 90
// days of history the median RSS stays within it (docs/development.md,
// the scale rig).
const DefaultMemoryLimit ByteSize = 200 << 20

var byteUnits = []struct {
	suffix string
	mult   int64
}{ // longest suffixes first: "MiB" before "B"
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// ParseByteSize reads a size such as 200MiB, 1.5GiB, 512MB or 1048576.
func ParseByteSize(s string) (ByteSize, error) {
	v := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f*float64(mult) >= 1<<62 {
		return 0, fmt.Errorf("%q is not a size (use e.g. 200MiB, 1GiB)", s)
	}
	return ByteSize(f * float64(mult)), nil
}

// UnmarshalYAML parses ParseByteSize's syntax.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = v
	return nil
}

// MarshalYAML writes the size in the largest binary unit that divides it.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

func (b ByteSize) String() string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.mult, u.suffix)
		}
	}
	if b >= 1<<20 {
		return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + "MiB"
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}
