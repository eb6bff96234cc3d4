package storage

// The console's own disaster recovery: a consistent online copy of the
// database (SQLite's backup API, safe while a console serves it) and its
// checks. Where copies are kept and how they are named is the caller's.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// Snapshot describes a database copy: what a restore can promise about it.
type Snapshot struct {
	Bytes         int64  `json:"bytes"`
	SHA256        string `json:"sha256"`
	SchemaVersion int    `json:"schema_version"`
	AuditRecords  int    `json:"audit_records"`
	AuditHeadID   int64  `json:"audit_head_id"`
	AuditHeadHash string `json:"audit_head_hash"`
}

// BackupDatabase copies the database at src to the new file dst in one
// read transaction of the SQLite backup API: a consistent snapshot even
// while a console writes (WAL readers do not block the writer, nor it
// them). src is opened read-only and never changed; dst must not exist.
// The copy is synced to disk and checked (CheckCopy) before it returns.
func BackupDatabase(ctx context.Context, src, dst string) (Snapshot, error) {
	if _, err := os.Stat(src); err != nil {
		return Snapshot{}, fmt.Errorf("storage: backup: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return Snapshot{}, fmt.Errorf("storage: backup: %s already exists", dst)
	}
	if err := createPrivate(dst); err != nil {
		return Snapshot{}, err
	}
	if err := copyPages(ctx, src, dst); err != nil {
		os.Remove(dst)
		return Snapshot{}, err
	}
	if err := syncFile(dst); err != nil {
		os.Remove(dst)
		return Snapshot{}, err
	}
	snap, err := CheckCopy(ctx, dst)
	if err != nil {
		os.Remove(dst)
		return Snapshot{}, err
	}
	return snap, nil
}

// copyPages runs the backup API from a read-only connection to src into
// a fresh connection to dst.
func copyPages(ctx context.Context, src, dst string) error {
	from, err := sql.Open("sqlite3", "file:"+src+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return fmt.Errorf("storage: backup: open %s: %w", src, err)
	}
	defer from.Close()
	to, err := sql.Open("sqlite3", "file:"+dst+"?mode=rwc")
	if err != nil {
		return fmt.Errorf("storage: backup: create %s: %w", dst, err)
	}
	defer to.Close()
	fromConn, err := from.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storage: backup: open %s: %w", src, err)
	}
	defer fromConn.Close()
	toConn, err := to.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storage: backup: create %s: %w", dst, err)
	}
	defer toConn.Close()
	return toConn.Raw(func(d any) error {
		return fromConn.Raw(func(s any) error {
			bk, err := d.(*sqlite3.SQLiteConn).Backup("main", s.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return fmt.Errorf("storage: backup of %s: %w", src, err)
			}
			// One step of all pages holds one read transaction: the copy
			// is a single point in time, whatever the console commits.
			done, err := bk.Step(-1)
			if ferr := bk.Finish(); err == nil {
				err = ferr
			}
			if err == nil && !done {
				err = errors.New("the backup did not reach the last page")
			}
			if err != nil {
				return fmt.Errorf("storage: backup of %s: %w", src, err)
			}
			return ctx.Err()
		})
	})
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("storage: sync %s: %w", p, err)
	}
	return nil
}

// CheckCopy opens a database copy read-only and vouches for it: SQLite's
// integrity check passes, the audit chain verifies from its first record
// to its head, and its schema is one this build knows. It returns what
// the copy holds and its checksum.
func CheckCopy(ctx context.Context, p string) (Snapshot, error) {
	var snap Snapshot
	sum, n, err := fileSHA256(p)
	if err != nil {
		return snap, err
	}
	snap.SHA256, snap.Bytes = sum, n
	s, err := OpenReadOnly(p)
	if err != nil {
		return snap, err
	}
	defer s.Close()
	var integrity string
	if err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil {
		return snap, fmt.Errorf("storage: %s: integrity check: %w", p, err)
	}
	if integrity != "ok" {
		return snap, fmt.Errorf("storage: %s fails SQLite's integrity check: %s", p, integrity)
	}
	if snap.SchemaVersion, err = s.SchemaVersion(ctx); err != nil {
		return snap, fmt.Errorf("storage: %s: %w", p, err)
	}
	if latest := LatestSchema(); snap.SchemaVersion > latest {
		return snap, fmt.Errorf("storage: %s has schema %d, newer than this build's %d: restore it with the drconsole that wrote it", p, snap.SchemaVersion, latest)
	}
	checked, bad, err := s.VerifyAudit(ctx)
	if err != nil {
		return snap, fmt.Errorf("storage: %s: %w", p, err)
	}
	if bad != nil {
		return snap, fmt.Errorf("storage: %s: audit chain broken at %w (the %d records before it are intact)", p, bad, checked)
	}
	snap.AuditRecords = checked
	snap.AuditHeadID, snap.AuditHeadHash, err = s.AuditHead(ctx)
	return snap, err
}

func fileSHA256(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("storage: reading %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
