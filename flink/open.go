package flink

// Opening the files a savepoint names. Everything in a savepoint directory
// is untrusted: `_metadata` may name any path or URI, and any file in the
// directory may be a symbolic link, a FIFO or a device. A local file is
// read only when
//   - its path as written and its real location (symbolic links resolved,
//     checked again on the opened file) lie inside the savepoint's own
//     directory or a configured savepoint directory (a "root");
//   - it is a regular file no larger than the reader's limit, checked
//     before it is opened (a FIFO or a device is never opened, so nothing
//     can block) and again on the opened file.
// Objects on remote storage must lie below the savepoint's own directory or
// a configured root on that storage, compared by bucket and key.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/safefile"
)

var (
	// ErrOutsideRoots is wrapped by errors about a file or object a
	// savepoint names that lies (or leads, through a symbolic link) outside
	// its own directory and the configured savepoint directories.
	ErrOutsideRoots = errors.New("outside the savepoint's directory and the configured savepoint directories: not read")
	// ErrNotRegular is wrapped by errors about a FIFO, device, socket or
	// directory where a file was expected; it is never opened
	// (safefile's, which every reader of a named file shares).
	ErrNotRegular = safefile.ErrNotRegular
	// ErrTooLarge is wrapped by errors about a file larger than the reader
	// loads; it is refused before it is read.
	ErrTooLarge = safefile.ErrTooLarge
)

// localRoots are the directories local files may be read from: each as
// given (cleaned, absolute) and as its real location.
type localRoots struct{ given, real []string }

// newLocalRoots makes the roots of a savepoint whose own directory is own
// (absolute). extra are configured savepoint directories: local paths and
// file: URIs count, others (s3://...) are for remote storage.
func newLocalRoots(own string, extra []string) localRoots {
	var r localRoots
	for _, d := range append([]string{own}, extra...) {
		p, err := localPath(strings.TrimSpace(d))
		if err != nil || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		r.given = append(r.given, p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			r.real = append(r.real, real)
		}
	}
	return r
}

func (r localRoots) hold(p string, real bool) bool {
	dirs := r.real
	if !real {
		dirs = slices.Concat(r.given, r.real)
	}
	for _, d := range dirs {
		if Within(d, p) {
			return true
		}
	}
	return false
}

// Within reports whether p is dir or below it; both clean and absolute.
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

// readLocal reads the local file at p (absolute) under the rules above.
// A missing file gives an error wrapping fs.ErrNotExist. Errors never hold
// the file's bytes; the caller names p.
func readLocal(p string, roots localRoots, limit int64) ([]byte, error) {
	f, _, err := openLocal(p, roots, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return safefile.ReadAll(f, limit)
}

// openLocal opens the local file at p (absolute) under the rules above
// and returns it with its size; the caller closes it and reads at most
// limit bytes of it.
func openLocal(p string, roots localRoots, limit int64) (*os.File, int64, error) {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) || !roots.hold(p, false) {
		return nil, 0, ErrOutsideRoots
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, 0, err
	}
	if !roots.hold(real, true) {
		return nil, 0, fmt.Errorf("a symbolic link leads %w", ErrOutsideRoots)
	}
	// Regular, within limit, opened non-blocking: a FIFO swapped in after
	// the check still returns at once, and is refused.
	f, fst, err := safefile.Open(real, limit)
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		return nil, 0, err
	}
	// The opened file must be, now, the one at a real location inside the
	// roots: a directory swapped for a link between the checks above and
	// the open is caught here.
	real2, err := filepath.EvalSymlinks(real)
	if err != nil || !roots.hold(real2, true) {
		return fail(fmt.Errorf("changed while being opened: %w", ErrOutsideRoots))
	}
	if st2, err := os.Stat(real2); err != nil || !os.SameFile(st2, fst) {
		return fail(fmt.Errorf("changed while being opened: %w", ErrOutsideRoots))
	}
	return f, fst.Size(), nil
}

// remoteKey is a remote URI without its scheme ("bucket/key"), the form
// containment is judged in (s3://, s3a:// and s3p:// name the same
// object). false when uri has no scheme, or an empty, "." or ".." segment:
// object keys are literal, so such a key is refused rather than resolved.
func remoteKey(uri string) (string, bool) {
	i := strings.Index(uri, "://")
	if i <= 0 {
		return "", false
	}
	k := strings.TrimRight(uri[i+3:], "/")
	for _, seg := range strings.Split(k, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return k, k != ""
}

// remoteRoots keeps the roots among dirs that files serves, as remoteKeys.
func remoteRoots(files Files, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		d = strings.TrimSpace(d)
		if !files.Serves(d) {
			continue
		}
		if k, ok := remoteKey(d); ok {
			out = append(out, k)
		}
	}
	return out
}

// remoteWithin reports whether uri lies inside one of roots (remoteKeys).
func remoteWithin(uri string, roots []string) bool {
	k, ok := remoteKey(uri)
	if !ok {
		return false
	}
	for _, r := range roots {
		if k == r || strings.HasPrefix(k, r+"/") {
			return true
		}
	}
	return false
}
