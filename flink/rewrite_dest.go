package flink

// Where a rewritten savepoint is written, and the read-back check before it
// counts as written. A local Dest is built in a hidden sibling directory
// (".NAME.rewrite-XXXX") and renamed into place only after the check: a
// crash leaves at most that hidden directory, never a half savepoint at
// Dest. A remote Dest (S3) has no rename: state objects are written first,
// checked through the store against the new `_metadata` held in memory,
// and `_metadata` is written last (a prefix without `_metadata` is not a
// savepoint); on failure `_metadata` is deleted first.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WritableFiles is remote storage a rewrite can write its Dest to.
type WritableFiles interface {
	Files
	// WriteFile stores data as the object at uri.
	WriteFile(ctx context.Context, uri string, data []byte) error
	// Remove deletes the object at uri; a missing one is no error.
	Remove(ctx context.Context, uri string) error
	// Empty reports whether no object lies at or below the directory dir.
	Empty(ctx context.Context, dir string) (bool, error)
}

// cleanupTimeout bounds removing a failed rewrite's remote objects, which
// runs even when the rewrite's context has ended.
const cleanupTimeout = time.Minute

type rewriteDest interface {
	// create writes the file at rel (slash-separated, relative to Dest).
	create(ctx context.Context, rel string, r io.Reader) (int64, error)
	// finish writes `_metadata` (calling wrote after it), has check read
	// the new savepoint back, and makes it appear at Dest, in the order
	// that never shows an unchecked savepoint at Dest.
	finish(ctx context.Context, meta []byte, wrote func(string) error, check func(*Savepoint) error) error
	// size is the written size of rel.
	size(rel string) (int64, bool)
	abort()
	path() string
}

func openRewriteSource(req RewriteRequest) (*Savepoint, error) {
	var sp *Savepoint
	var err error
	if req.Files != nil && req.Files.Serves(req.Source) {
		sp, err = ReadSavepointFrom(req.Files, req.Source, req.Roots...)
	} else {
		sp, err = ReadSavepoint(req.Source, req.Roots...)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
	}
	return sp, nil
}

func openRewriteDest(ctx context.Context, req RewriteRequest, sp *Savepoint) (rewriteDest, error) {
	if req.Files != nil && req.Files.Serves(req.Dest) {
		w, ok := req.Files.(WritableFiles)
		if !ok {
			return nil, refused("%s: this storage is read-only here", req.Dest)
		}
		return newRemoteDest(ctx, w, req.Dest, sp)
	}
	return newLocalDest(req.Dest, sp)
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

type localDest struct {
	dest, tmp string
	lock      *os.File    // flock on tmp while the rewrite runs
	removed   []string    // earlier attempts' build directories removed
	dirs      []string    // made in tmp, to sync
	perm      fs.FileMode // the new directory's, taken from the source's
	moved     bool        // renamed to Dest
}

func newLocalDest(dest string, sp *Savepoint) (*localDest, error) {
	p, err := localPath(dest)
	if err != nil {
		return nil, refused("destination %s: %v", dest, err)
	}
	if p, err = filepath.Abs(p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
	}
	if sp.files == nil && (Within(sp.Dir, p) || Within(p, sp.Dir)) {
		return nil, refused("destination %s overlaps the source savepoint %s, which is never modified", p, sp.Dir)
	}
	if st, err := os.Lstat(p); err == nil {
		if advice, ok := Leftover(nil, p); ok && st.IsDir() {
			return nil, refused("destination %s exists and a rewrite never writes over anything; %s", p, advice)
		}
		return nil, refused("destination %s exists: a rewrite never writes over anything", p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
	}
	parent := filepath.Dir(p)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return nil, refused("the directory %s, to hold %s, does not exist", parent, filepath.Base(p))
	}
	// The same through symbolic links: Dest's parent may be a link into
	// the source.
	if sp.files == nil {
		realParent, err1 := filepath.EvalSymlinks(parent)
		realSrc, err2 := filepath.EvalSymlinks(sp.Dir)
		if err1 != nil || err2 != nil {
			return nil, refused("destination %s: cannot resolve it against the source %s", p, sp.Dir)
		}
		if real := filepath.Join(realParent, filepath.Base(p)); Within(realSrc, real) || Within(real, realSrc) {
			return nil, refused("destination %s overlaps the source savepoint %s (through a symbolic link), which is never modified", p, sp.Dir)
		}
	}
	removed, err := removeLeftoverBuilds(parent, filepath.Base(p))
	if err != nil {
		return nil, fmt.Errorf("flink: rewrite: removing what an earlier attempt left: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, buildPrefix(filepath.Base(p)))
	if err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	lock, err := lockBuild(tmp)
	if errors.Is(err, errNoLocks) {
		err = nil // no flock here: earlier attempts' directories are never removed
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("flink: rewrite: locking %s: %w", tmp, err)
	}
	// MkdirTemp makes it 0700: the new savepoint gets the source
	// directory's permissions (0755 for a remote source) when it is
	// renamed into place, so the Flink user can read it as it could the
	// source.
	perm := fs.FileMode(0o755)
	if st, err := os.Stat(sp.Dir); err == nil && sp.files == nil {
		perm = st.Mode().Perm()
	}
	return &localDest{dest: p, tmp: tmp, lock: lock, removed: removed, dirs: []string{tmp}, perm: perm}, nil
}

// Leftover reports whether the rewrite destination dir, which holds
// something, lacks a `_metadata` (on files when it serves dir, else on the
// local file system), and then what to delete (LeftoverAdvice).
func Leftover(files Files, dir string) (advice string, ok bool) {
	var err error
	if files != nil && files.Serves(dir) {
		_, err = files.ReadFile(strings.TrimRight(dir, "/")+"/"+MetadataFileName, maxMetadataSize)
	} else {
		var p string
		if p, err = localPath(dir); err == nil {
			_, err = os.Lstat(filepath.Join(p, MetadataFileName))
		}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return LeftoverAdvice(dir), true
}

// LeftoverAdvice says what to do about a rewrite destination dir (local
// or remote) that holds something but no `_metadata`, so is no savepoint:
// most likely what a rewrite stopped midway left there. It names exactly
// what to delete.
func LeftoverAdvice(dir string) string {
	dir = strings.TrimRight(dir, "/")
	if k, ok := remoteKey(dir); ok {
		return fmt.Sprintf("it holds objects but no %s, so it is not a savepoint: most likely a rewrite stopped midway left them "+
			"(state objects are written first, %s last). If nothing else uses that prefix, delete every object under %s/ "+
			"(for example: aws s3 rm --recursive s3://%s/) and run the rewrite again, or choose another destination",
			MetadataFileName, MetadataFileName, dir, k)
	}
	return fmt.Sprintf("it is a directory without %s, so it is not a savepoint: most likely a rewrite stopped between moving its "+
		"build directory there and naming its %s. If nothing else uses it, remove the directory %s (rm -r %s) and run the rewrite "+
		"again, or choose another destination", MetadataFileName, MetadataFileName, dir, dir)
}

// errBuildBusy: a build directory's lock is held (its rewrite runs).
var errBuildBusy = errors.New("a rewrite holds it")

// errNoLocks: the platform has no flock (rewrite_lock_other.go).
var errNoLocks = errors.New("no advisory locks on this platform")

// buildPrefix is the name prefix of the hidden build directories of
// rewrites to Dest name.
func buildPrefix(name string) string { return "." + name + ".rewrite-" }

// removeLeftoverBuilds removes the build directories in parent of earlier
// rewrites to name whose lock nobody holds (their rewrite died), and
// returns them. A running rewrite's (locked) is left alone; so is anything
// that is not a plain directory.
func removeLeftoverBuilds(parent, name string) ([]string, error) {
	es, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range es {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), buildPrefix(name)) {
			continue // IsDir is false for a symbolic link
		}
		dir := filepath.Join(parent, e.Name())
		lock, err := lockBuild(dir)
		if errors.Is(err, errBuildBusy) || errors.Is(err, errNoLocks) || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		err = os.RemoveAll(dir)
		lock.Close()
		if err != nil {
			return removed, err
		}
		removed = append(removed, dir)
	}
	return removed, nil
}

func (d *localDest) create(ctx context.Context, rel string, r io.Reader) (int64, error) {
	full := filepath.Join(d.tmp, filepath.FromSlash(rel))
	if dir := filepath.Dir(full); dir != d.tmp {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		d.dirs = append(d.dirs, dir)
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// pendingMetadata is the new `_metadata`'s name until the rewrite is
// checked and in place: no directory but Dest ever holds a `_metadata` a
// catalog scan could take for a savepoint, not even after a crash.
const pendingMetadata = MetadataFileName + ".rewrite"

func (d *localDest) finish(ctx context.Context, meta []byte, wrote func(string) error, check func(*Savepoint) error) error {
	if _, err := d.create(ctx, pendingMetadata, bytes.NewReader(meta)); err != nil {
		return fmt.Errorf("flink: rewrite: writing %s: %w", MetadataFileName, err)
	}
	if err := wrote(MetadataFileName); err != nil {
		return err
	}
	sp2, err := ReadSavepoint(filepath.Join(d.tmp, pendingMetadata))
	if err != nil {
		return refused("reading the new savepoint back: %v", err)
	}
	if err := check(sp2); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.commit()
}

func (d *localDest) size(rel string) (int64, bool) {
	st, err := os.Lstat(filepath.Join(d.tmp, filepath.FromSlash(rel)))
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	return st.Size(), true
}

// commit syncs the new directories, renames the built directory to Dest
// (rename(2) does not replace a non-empty directory or a file), then names
// its `_metadata`: a crash in between leaves Dest without one, which is
// not a savepoint.
func (d *localDest) commit() error {
	for _, dir := range d.dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	if err := os.Chmod(d.tmp, d.perm); err != nil {
		return fmt.Errorf("flink: rewrite: %w", err)
	}
	if _, err := os.Lstat(d.dest); err == nil {
		return refused("destination %s appeared while the rewrite ran", d.dest)
	}
	if err := os.Rename(d.tmp, d.dest); err != nil {
		return fmt.Errorf("flink: rewrite: %w", err)
	}
	d.moved = true
	if err := os.Rename(filepath.Join(d.dest, pendingMetadata), filepath.Join(d.dest, MetadataFileName)); err != nil {
		return fmt.Errorf("flink: rewrite: %w", err)
	}
	d.unlock()
	if err := syncDir(d.dest); err != nil {
		return err
	}
	return syncDir(filepath.Dir(d.dest))
}

// abort removes the built directory, at Dest when it got there (without
// its `_metadata`: commit failed before naming it).
func (d *localDest) abort() {
	defer d.unlock()
	if !d.moved {
		_ = os.RemoveAll(d.tmp)
		return
	}
	if _, err := os.Lstat(filepath.Join(d.dest, MetadataFileName)); errors.Is(err, fs.ErrNotExist) {
		_ = os.RemoveAll(d.dest)
	}
}

func (d *localDest) path() string { return d.dest }

func (d *localDest) unlock() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

type remoteDest struct {
	files   WritableFiles
	dir     string
	written []string
	sizes   map[string]int64
}

func newRemoteDest(ctx context.Context, files WritableFiles, dest string, sp *Savepoint) (*remoteDest, error) {
	dir := strings.TrimRight(dest, "/")
	k, ok := remoteKey(dir)
	if !ok || !strings.Contains(k, "/") {
		return nil, refused("destination %q must name a directory below a bucket, by a plain path", dest)
	}
	if sp.files != nil {
		if own, ok := remoteKey(sp.Dir); ok && (k == own || strings.HasPrefix(k, own+"/") || strings.HasPrefix(own, k+"/")) {
			return nil, refused("destination %s overlaps the source savepoint %s, which is never modified", dir, sp.Dir)
		}
	}
	empty, err := files.Empty(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("flink: rewrite: %w", err)
	}
	if !empty {
		if advice, ok := Leftover(files, dir); ok {
			return nil, refused("destination %s exists (objects lie below it) and a rewrite never writes over anything; %s", dir, advice)
		}
		return nil, refused("destination %s exists (objects lie below it): a rewrite never writes over anything", dir)
	}
	return &remoteDest{files: files, dir: dir, sizes: map[string]int64{}}, nil
}

func (d *remoteDest) create(ctx context.Context, rel string, r io.Reader) (int64, error) {
	b, err := io.ReadAll(io.LimitReader(ctxReader{ctx, r}, maxStateFileSize+1))
	if err != nil {
		return 0, err
	}
	if len(b) > maxStateFileSize {
		return 0, fmt.Errorf("flink: %s: %w (%d)", rel, ErrTooLarge, maxStateFileSize)
	}
	uri := d.dir + "/" + rel
	// Recorded before the write: a write that fails half-way is removed.
	d.written = append(d.written, uri)
	if err := d.files.WriteFile(ctx, uri, b); err != nil {
		return 0, err
	}
	d.sizes[rel] = int64(len(b))
	return int64(len(b)), nil
}

func (d *remoteDest) finish(ctx context.Context, meta []byte, wrote func(string) error, check func(*Savepoint) error) error {
	// The state objects are read back through the store before
	// `_metadata` exists: what appears at Dest was checked.
	sp2, err := ParseMetadata(meta)
	if err != nil {
		return refused("the new _metadata: %v", err)
	}
	own, _ := remoteKey(d.dir)
	sp2.Dir, sp2.files, sp2.remote = d.dir, d.files, []string{own}
	if err := check(sp2); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := d.create(ctx, MetadataFileName, bytes.NewReader(meta)); err != nil {
		return fmt.Errorf("flink: rewrite: writing %s: %w", MetadataFileName, err)
	}
	if err := wrote(MetadataFileName); err != nil {
		return err
	}
	got, err := d.files.ReadFile(d.dir+"/"+MetadataFileName, maxMetadataSize)
	if err != nil {
		return fmt.Errorf("flink: rewrite: reading %s back: %w", MetadataFileName, err)
	}
	if !bytes.Equal(got, meta) {
		return refused("%s/%s reads back other bytes than were written", d.dir, MetadataFileName)
	}
	return nil
}

func (d *remoteDest) size(rel string) (int64, bool) {
	n, ok := d.sizes[rel]
	return n, ok
}

func (d *remoteDest) path() string { return d.dir }

// abort removes what was written, `_metadata` first: without it the rest
// is not a savepoint to anyone.
func (d *remoteDest) abort() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	meta := d.dir + "/" + MetadataFileName
	for i := len(d.written) - 1; i >= 0; i-- {
		if d.written[i] == meta {
			_ = d.files.Remove(ctx, meta)
		}
	}
	for _, uri := range d.written {
		if uri != meta {
			_ = d.files.Remove(ctx, uri)
		}
	}
}

// openCopy opens the source's state file rel for copying.
func (s *Savepoint) openCopy(f planFile) (io.ReadCloser, error) {
	if s.files != nil {
		b, err := s.remoteHandleBytes(&StreamHandle{Kind: HandleRelative, Path: f.rel, Size: f.size, Pos: f.pos})
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	p := filepath.Join(s.Dir, filepath.FromSlash(f.rel))
	file, _, err := openLocal(p, s.roots, maxStateFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("flink: %w: %s (referenced at byte %d of _metadata)", ErrStateFileMissing, p, f.pos)
		}
		return nil, fmt.Errorf("flink: state file %s (referenced at byte %d of _metadata): %w", p, f.pos, err)
	}
	return file, nil
}

// writeRewrite writes the plan to dest, reads it back, checks it and
// commits it.
func writeRewrite(ctx context.Context, req RewriteRequest, sp *Savepoint, plan *rewritePlan, dest rewriteDest) (*RewriteResult, error) {
	res := plan.result
	wrote := func(rel string) error {
		if req.OnWrite != nil {
			if err := req.OnWrite(rel); err != nil {
				return fmt.Errorf("flink: rewrite stopped after writing %s: %w", rel, err)
			}
		}
		return ctx.Err()
	}
	for _, f := range plan.files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f.data != nil {
			if _, err := dest.create(ctx, f.rel, bytes.NewReader(f.data)); err != nil {
				return nil, fmt.Errorf("flink: rewrite: writing %s: %w", f.rel, err)
			}
		} else {
			r, err := sp.openCopy(f)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
			}
			n, err := dest.create(ctx, f.rel, r)
			r.Close()
			if err != nil {
				return nil, fmt.Errorf("flink: rewrite: copying %s: %w", f.rel, err)
			}
			if f.size >= 0 && n < f.size {
				return nil, refused("state file %s has %d bytes, _metadata says %d (truncated copy?)", f.rel, n, f.size)
			}
			res.CopiedFiles++
			res.CopiedBytes += n
		}
		if err := wrote(f.rel); err != nil {
			return nil, err
		}
	}
	check := func(sp2 *Savepoint) error { return verifyRewritten(sp, sp2, plan, dest) }
	if err := dest.finish(ctx, plan.meta, wrote, check); err != nil {
		return nil, err
	}
	res.Path = dest.path()
	if l, ok := dest.(*localDest); ok {
		res.RemovedLeftovers = l.removed
	}
	return res, nil
}

// verifyRewritten checks the written savepoint: same checkpoint and
// operators, every split at its target (subtask and stopping offset kept),
// the enumerator decodable and naming DR topics only, and every state file
// it names relative and present.
func verifyRewritten(sp, sp2 *Savepoint, plan *rewritePlan, dest rewriteDest) error {
	fail := func(format string, args ...any) error {
		return refused("read-back check of the new savepoint failed: "+format, args...)
	}
	if sp2.Version != sp.Version || sp2.CheckpointID != sp.CheckpointID || len(sp2.Operators) != len(sp.Operators) {
		return fail("its version, checkpoint id or operator count changed")
	}
	for i := range sp.Operators {
		if sp2.Operators[i].ID != sp.Operators[i].ID {
			return fail("operator %s is not where it was", sp.Operators[i].ID)
		}
	}
	offs, err := sp2.KafkaSourceOffsets(plan.opID)
	if err != nil {
		return fail("%v", err)
	}
	if len(offs.Partitions) != len(plan.result.Splits) {
		return fail("%d splits, want %d", len(offs.Partitions), len(plan.result.Splits))
	}
	dr := map[string]bool{}
	for _, s := range plan.result.Splits {
		key := s.To.Topic + "-" + strconv.Itoa(int(s.From.Partition))
		p, ok := offs.Partitions[key]
		if !ok || p.Next != s.To.Offset || p.Subtask != s.From.Subtask || rawStopping(p) != rawStopping(s.From) {
			return fail("split %s is not at its target %s offset %d", s.From.Key(), key, s.To.Offset)
		}
		dr[s.To.Topic] = true
	}
	if plan.hasEnum {
		if offs.Enumerator == nil {
			return fail("the enumerator state does not decode: %s", offs.EnumeratorErr)
		}
		for _, e := range offs.Enumerator.Splits {
			if !dr[e.Topic] {
				return fail("the enumerator still names topic %s", e.Topic)
			}
		}
	}
	for _, h := range sp2.fileHandles {
		if h.Kind != HandleRelative {
			return fail("it names a %s state handle at byte %d", h.Kind, h.Pos)
		}
		if n, ok := dest.size(h.Path); !ok || (h.Size >= 0 && n < h.Size) {
			return fail("state file %s is missing or shorter than declared", h.Path)
		}
	}
	return nil
}
