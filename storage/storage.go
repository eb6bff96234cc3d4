// Package storage keeps drconsole's history in SQLite: offset syncs,
// checkpoints, heartbeats, Connect positions and lag samples.
//
// One writer connection (BEGIN IMMEDIATE, so lock waits happen at BEGIN
// where busy_timeout applies) and a pool of read-only connections, both in
// WAL mode. Schema changes are numbered SQL files embedded in the binary and
// applied in order, each in its own transaction with PRAGMA user_version.
package storage

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the database. Safe for concurrent use.
type Store struct {
	w *sql.DB // exactly one connection: SQLite has one writer anyway
	r *sql.DB

	mu      sync.Mutex
	flowIDs map[string]int64

	// groupRows counts the writes to MM2's checkpoints and the recorded
	// primary group offsets (GroupRowsVersion).
	groupRows atomic.Uint64

	sessions sessionCache // sessions read in the last second (sessioncache.go)
}

// GroupRowsVersion changes after every write this Store makes to the
// consumer groups' stored offsets (MM2's checkpoints, the primary's
// recorded group offsets): a caller that read them at one version and
// sees it again knows they are the same, as far as this process wrote.
// Read it before reading the rows, so a write racing the read shows as a
// new version next time.
func (s *Store) GroupRowsVersion() uint64 { return s.groupRows.Load() }

// SQLite's page cache per connection, in KiB (negative, SQLite's unit): the
// sync index lives in memory, so the caches only serve the writer's inserts
// and retention's deletes and the readers' page queries. At 2 M stored syncs
// on a 2-core machine, 16 MiB for the writer and 8 MiB per reader (40 MiB in
// all, was 5 x 64 MiB) showed no difference beyond noise in loading every
// sync (~1.8-2.8 s either way) and ~10 % slower deletes of 500k syncs
// (1.1-1.4 s vs 1.0-1.2 s, once an hour). The caches are C memory, outside
// Go's soft limit, so they count whole against the console's memory_limit:
// 8 MiB for the writer and 4 MiB per reader (24 MiB in all) keep the 200 MiB
// default at 100k partitions (docs/development.md, the scale rig).
const (
	writerCache = "-8192"
	readerCache = "-4096"
)

func dsn(path string, extra map[string]string) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "5000")
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "NORMAL")
	q.Set("_cache_size", readerCache)
	for k, v := range extra {
		q.Set(k, v)
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file at path and migrates it.
func Open(path string) (*Store, error) {
	return openUpTo(path, math.MaxInt)
}

// openUpTo is Open applying migrations only up to version upTo (upgrade
// tests build an older schema with it).
func openUpTo(path string, upTo int) (*Store, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite3", dsn(path, map[string]string{"_txlock": "immediate", "_cache_size": writerCache}))
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	s := &Store{w: w, flowIDs: map[string]int64{}}
	if err := s.migrate(context.Background(), upTo); err != nil {
		w.Close()
		return nil, fmt.Errorf("storage: %s: %w", path, err)
	}
	r, err := sql.Open("sqlite3", dsn(path, map[string]string{"_query_only": "1"}))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("storage: open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s.r = r
	if err := tightenFiles(path); err != nil { // the WAL and SHM exist now
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes both pools.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// Ping checks the database answers (readiness).
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// SchemaVersion is the number of the last applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// beforeMigration holds checks that must pass before a migration runs,
// for data an SQL file cannot judge or explain.
var beforeMigration = map[int]func(context.Context, *sql.DB) error{
	8: checkUserTwins,
}

func migrationNumber(name string) (int, error) {
	n, err := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0])
	if err != nil {
		return 0, fmt.Errorf("migration %s: name must start with a number", name)
	}
	return n, nil
}

// LatestSchema is the number of this build's newest migration.
func LatestSchema() int {
	entries, _ := fs.Glob(migrations, "migrations/*.sql")
	latest := 0
	for _, name := range entries {
		if n, err := migrationNumber(name); err == nil {
			latest = max(latest, n)
		}
	}
	return latest
}

func (s *Store) migrate(ctx context.Context, upTo int) error {
	entries, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(entries)
	var current int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	for _, name := range entries {
		n, err := migrationNumber(name)
		if err != nil {
			return err
		}
		if n <= current || n > upTo {
			continue
		}
		if check := beforeMigration[n]; check != nil {
			if err := check(ctx, s.w); err != nil {
				return fmt.Errorf("before migration %s: %w", name, err)
			}
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			// PRAGMA takes no bind parameters; n is an int we parsed.
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", n))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
		current = n
	}
	return nil
}

// tx runs fn in a write transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// flowID returns the id of a flow, creating the row on first use.
func (s *Store) flowID(ctx context.Context, name string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.flowIDs[name]; ok {
		return id, nil
	}
	if _, err := s.w.ExecContext(ctx, "INSERT OR IGNORE INTO flows(name) VALUES (?)", name); err != nil {
		return 0, fmt.Errorf("storage: registering flow %q: %w", name, err)
	}
	var id int64
	if err := s.w.QueryRowContext(ctx, "SELECT id FROM flows WHERE name = ?", name).Scan(&id); err != nil {
		return 0, fmt.Errorf("storage: flow %q: %w", name, err)
	}
	s.flowIDs[name] = id
	return id, nil
}
