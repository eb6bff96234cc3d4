package flink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadMetadata: any bytes give a Savepoint or an error, never a panic
// or a runaway allocation. Seeded with the real Flink fixtures and the
// synthetic shapes; state handles naming files are not opened.
func FuzzReadMetadata(f *testing.F) {
	addFixtureSeeds(f)
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

// FuzzRewrite: rewriting any `_metadata` never panics and, when it fails,
// leaves nothing at Dest. The targets rename every split the bytes hold
// (when they parse) to "dr.<topic>", offset 5.
func FuzzRewrite(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		src := filepath.Join(t.TempDir(), "src")
		writeTestFile(t, src, MetadataFileName, b)
		targets := map[string]SplitTarget{}
		if sp, err := ParseMetadata(b); err == nil {
			sp.inlineOnly = true
			if k, err := sp.KafkaSourceOffsets(""); err == nil {
				for key, p := range k.Partitions {
					targets[key] = SplitTarget{Topic: "dr." + p.Topic, Offset: 5}
				}
			}
		}
		dest := filepath.Join(t.TempDir(), "sp")
		if _, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets}); err != nil {
			if _, serr := os.Lstat(dest); serr == nil {
				t.Fatalf("Dest written on error %v", err)
			}
		}
	})
}

// addFixtureSeeds seeds f with the `_metadata` of every real fixture.
func addFixtureSeeds(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "savepoints", "*", MetadataFileName))
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
