package storage

import (
	"errors"
	"fmt"
	"os"
)

// Files the console creates hold its accounts, sessions and audit log:
// only its own OS user reads them. The database file is created 0600
// before SQLite opens it (SQLite gives the -wal and -shm files the
// database's own mode), and a database, WAL or SHM created looser by an
// older version is tightened at open.
const privateFile = 0o600

// PrivateDir is the mode of directories the console creates (the data
// directory, backup directories).
const PrivateDir = 0o700

// createPrivate creates path empty with mode 0600 unless it exists.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateFile)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: creating %s: %w", path, err)
	}
	return f.Close()
}

// tightenFiles makes the database at path and its -wal and -shm 0600 when
// they are readable by others.
func tightenFiles(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("storage: %w", err)
		}
		if st.Mode().IsRegular() && st.Mode().Perm()&^privateFile != 0 {
			if err := os.Chmod(p, privateFile); err != nil {
				return fmt.Errorf("storage: making %s private: %w", p, err)
			}
		}
	}
	return nil
}
