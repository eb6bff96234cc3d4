package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes via a temporary file and a rename, so a crash
// never leaves half a result behind.
func writeFileAtomic(name string, data []byte) error {
	return writeAtomic(name, bytes.NewReader(data), nil)
}

// writeAtomic copies r to a synced temporary file beside name, runs
// beforeRename (if any), renames it over name and syncs the directory.
func writeAtomic(name string, r io.Reader, beforeRename func() error) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
