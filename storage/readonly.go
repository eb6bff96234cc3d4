package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
)

// OpenReadOnly opens an existing database without migrating or writing it:
// for `drconsole audit verify --db` on a copy kept as evidence, which must
// not be changed by checking it. Every write through the Store fails.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	// No _journal_mode here: setting it is a write.
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000&_query_only=1")
	if err != nil {
		return nil, fmt.Errorf("storage: open %s read-only: %w", path, err)
	}
	// Both pools are the same read-only handle; Close closes it twice,
	// which database/sql allows.
	s := &Store{w: db, r: db, flowIDs: map[string]int64{}}
	if err := db.PingContext(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s read-only: %w", path, err)
	}
	return s, nil
}
