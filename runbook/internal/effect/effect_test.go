package effect

import (
	"path/filepath"
	"testing"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/storage"
)

// writtenT is a record on a fresh store's chain, for tests that need the
// proof and not the store.
func writtenT(t testing.TB) audit.Written {
	t.Helper()
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return written(t, store)
}
