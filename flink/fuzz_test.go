package flink

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadMetadata: any bytes give a Savepoint or an error, never a panic
// or a runaway allocation. Seeded with the real Flink fixtures and the
// synthetic shapes; state handles naming files are not opened.
func FuzzReadMetadata(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "savepoints", "*", MetadataFileName))
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, v := range []int{3, 5, 7} {
		meta, _ := buildSynthetic(f, v, f.TempDir())
		f.Add(meta)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sp, err := ParseMetadata(b)
		if err != nil {
			return
		}
		sp.inlineOnly = true
		for i := range sp.Operators {
			op := &sp.Operators[i]
			_ = op.StateNames()
			if op.isKafkaCandidate() {
				if k, err := sp.KafkaSourceOffsets(op.ID); err == nil {
					_ = k.Sorted()
				}
			}
			if op.Coordinator != nil {
				_, _ = DecodeKafkaEnumerator(op.Coordinator.Data)
			}
		}
		_, _ = sp.KafkaSourceOffsets("")
	})
}
