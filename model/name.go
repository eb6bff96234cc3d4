package model

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Name is an interned string: a topic's name or a restart's reason, held
// in a partition row as an index into one table of every name the process
// interned. A string header is a pointer, and a million rows of pointers
// are what the garbage collector spent a million-partition start marking;
// rows of Names it never looks into. Equal Names are equal strings. A
// Name does not order (it is a struct, so < does not compile): compare
// String()s to sort.
//
// The table only grows, by each distinct string once: topic names (the
// estate's, and those of topics since deleted) and one short sentence per
// source log restart the console saw. Both are counted in thousands where
// partitions are counted in millions.
type Name struct{ i uint32 }

var names struct {
	mu    sync.Mutex
	index map[string]Name
	// table is published whole: readers load it without the lock. Intern
	// only appends past every published length, so no element a reader
	// can see ever changes.
	table atomic.Pointer[[]string]
}

func init() {
	t := []string{""}
	names.table.Store(&t)
	names.index = map[string]Name{"": {}}
}

// Intern is s as a Name; the zero Name is "".
func Intern(s string) Name {
	names.mu.Lock()
	defer names.mu.Unlock()
	if n, ok := names.index[s]; ok {
		return n
	}
	t := append(*names.table.Load(), strings.Clone(s))
	n := Name{uint32(len(t) - 1)}
	names.index[t[n.i]] = n
	names.table.Store(&t)
	return n
}

// String is the interned string.
func (n Name) String() string { return (*names.table.Load())[n.i] }

// MarshalText writes the string, so JSON and logs say the name, not {}.
func (n Name) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// Less orders Names by their strings.
func (n Name) Less(m Name) bool { return n != m && n.String() < m.String() }
