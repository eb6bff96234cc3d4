// Package safefile opens the files the console and its CLI read from
// paths someone gave them (a config file, a secret file, an offsets or
// syncs file, an audit anchor, a backup and its manifest, a savepoint's
// files) so that a hostile path cannot hang or exhaust them: only a
// regular file no larger than the reader's limit is read. The file is
// checked before it is opened (a FIFO or a device is never opened), opened
// non-blocking (should a FIFO be swapped in after the check, the open
// still returns at once) and checked again on the opened file, then read
// no further than the limit. It imports nothing of ours, so every room may
// use it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

var (
	// ErrNotRegular is wrapped by errors about a FIFO, device, socket or
	// directory where a file was expected; it is never opened.
	ErrNotRegular = errors.New("not a regular file: not opened")
	// ErrTooLarge is wrapped by errors about a file larger than the reader
	// loads; it is refused before it is read.
	ErrTooLarge = errors.New("larger than this reader loads")
)

// Common limits.
const (
	// SecretLimit bounds a secret file (a password, a token, a URL).
	SecretLimit = 64 << 10
	// SmallLimit bounds a small structured file (a manifest, a PEM bundle,
	// a config file).
	SmallLimit = 16 << 20
)

// Kind names a non-regular file's type for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// Check refuses what is not a regular file of at most limit bytes.
func Check(st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s, %w", Kind(st.Mode()), ErrNotRegular)
	}
	if st.Size() > limit {
		return fmt.Errorf("%d bytes, %w (%d)", st.Size(), ErrTooLarge, limit)
	}
	return nil
}

// Open opens the file at p (symbolic links followed) for reading when it
// is a regular file of at most limit bytes, checked before and after the
// open, and returns it with what the opened file's fstat says. The caller
// closes it and reads at most limit bytes of it (ReadAll). Errors from the
// checks do not name p (the caller names the file as its user knows it);
// ReadFile's do.
func Open(p string, limit int64) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	if err := Check(st, limit); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fst, err := f.Stat()
	if err == nil {
		err = Check(fst, limit)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fst, nil
}

// ReadAll reads r to its end, refusing more than limit bytes.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("grew while being read: %w (%d)", ErrTooLarge, limit)
	}
	return b, nil
}

// ReadFile is os.ReadFile under the rules above.
func ReadFile(p string, limit int64) ([]byte, error) {
	f, _, err := Open(p, limit)
	if err != nil {
		return nil, Named(p, err)
	}
	defer f.Close()
	b, err := ReadAll(f, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b, nil
}

// Named prefixes p to err unless err names it already (an *fs.PathError):
// for errors from Open, which leaves naming the file to its caller.
func Named(p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", p, err)
}

// OpenAppend opens the file at p for appending, creating it with perm if
// it does not exist; an existing file must be a regular one. It opens
// non-blocking, so a FIFO without a reader fails at once instead of
// hanging, and refuses whatever the opened file turns out not to be.
func OpenAppend(p string, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s, %w", p, Kind(st.Mode()), ErrNotRegular)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s, %w", Kind(st.Mode()), ErrNotRegular)
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return f, nil
}
