package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/model"
)

// ScanDepth is how deep below a savepoint directory a `_metadata` is
// looked for: dir/savepoint-x/_metadata is depth 1, Flink's checkpoint
// layout dir/<job id>/chk-N/_metadata depth 2.
const ScanDepth = 3

// settle: a `_metadata` younger than this may still be being written; the
// next scan picks it up.
const settle = 2 * time.Second

var (
	chkDirRE = regexp.MustCompile(`^chk-(\d+)$`)
	jobIDRE  = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// scanDirs records every `*/_metadata` found in the configured savepoint
// directories (origin scan).
func (c *Catalog) scanDirs(ctx context.Context) error {
	var errs []error
	var entries []model.Savepoint
	seen := map[string]bool{}
	now := c.now()
	for _, root := range c.Config.SavepointDirs {
		var found []model.Savepoint
		var err error
		if config.IsS3URI(root) {
			found, err = c.scanS3(ctx, root, now)
		} else {
			found, err = scanDir(ctx, root, now)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("savepoint dir %s: %w", root, err))
		}
		for _, sp := range found {
			if !seen[sp.Path] {
				seen[sp.Path] = true
				entries = append(entries, sp)
			}
		}
	}
	if len(entries) > 0 {
		if _, err := c.Store.UpsertSavepoints(ctx, entries, now.UnixMilli()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// scanDir walks root down to ScanDepth directory levels. Symbolic links to
// directories are followed only when they lead to a place inside root (so a
// scan, like a registration, never reads outside the configured
// directories), and a directory already visited (a link loop) is skipped.
// It stops when ctx is done.
func scanDir(ctx context.Context, root string, now time.Time) ([]model.Savepoint, error) {
	root = filepath.Clean(root)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	var visited []os.FileInfo
	var out []model.Savepoint
	var errs []error
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if ctx.Err() != nil {
			return
		}
		st, err := os.Stat(dir)
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, v := range visited {
			if os.SameFile(v, st) {
				return // a link loop, or a second way to the same place
			}
		}
		visited = append(visited, st)
		if depth > 0 {
			if sp, ok := scannedEntry(dir, now); ok {
				out = append(out, sp)
			}
		}
		if depth >= ScanDepth {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			return
		}
		// Real directories first: a place reachable both ways is recorded
		// under its own path, not a link's.
		var links []string
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case hiddenDir(e.Name()):
			case e.IsDir():
				walk(p, depth+1)
			case e.Type()&fs.ModeSymlink != 0:
				links = append(links, p)
			}
		}
		for _, p := range links {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || !flink.Within(realRoot, real) {
				continue
			}
			if st, err := os.Stat(real); err == nil && st.IsDir() {
				walk(p, depth+1)
			}
		}
	}
	walk(root, 0)
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("scan stopped: %w", ctx.Err()))
	}
	return out, errors.Join(errs...)
}

// hiddenDir: Flink never names a savepoint or checkpoint directory with a
// leading dot; tools building one there (the rewriter's work directory)
// do, and a half-built savepoint is not a savepoint.
func hiddenDir(name string) bool { return strings.HasPrefix(name, ".") }

// scanS3 is scanDir for a directory on S3: the same depth, the same
// reading of Flink's directory names, one listing request per directory.
func (c *Catalog) scanS3(ctx context.Context, root string, now time.Time) ([]model.Savepoint, error) {
	if c.S3 == nil {
		return nil, errors.New("on S3, but no s3 endpoint is configured")
	}
	var out []model.Savepoint
	var errs []error
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		files, subdirs, err := c.S3.List(ctx, dir)
		if err != nil {
			errs = append(errs, err) // the other directories are still scanned
			return
		}
		if depth > 0 {
			var meta *s3.Object
			var size int64
			for i, f := range files {
				size += f.Size
				if path.Base(f.URI) == flink.MetadataFileName {
					meta = &files[i]
				}
			}
			if meta != nil && now.Sub(meta.ModTime) >= settle {
				sp := model.Savepoint{Path: flink.CanonicalPath(dir), Origin: model.OriginScan, Status: model.SavepointCompleted,
					CompletedMs: ptr(meta.ModTime.UnixMilli()), SizeBytes: ptr(size)}
				describeByName(&sp, dir)
				out = append(out, sp)
			}
		}
		if depth >= ScanDepth {
			return
		}
		for _, d := range subdirs {
			if b := path.Base(d); b == "shared" || b == "taskowned" || hiddenDir(b) {
				continue // Flink's state files of incremental checkpoints: many objects, no _metadata
			}
			walk(d, depth+1)
		}
	}
	walk(strings.TrimRight(root, "/"), 0)
	return out, errors.Join(errs...)
}

// scannedEntry describes the savepoint or checkpoint in dir, if dir holds a
// settled `_metadata`. The kind comes from Flink's directory names: chk-N
// is a checkpoint (its parent, when 32 hex digits, the job id), anything
// else a savepoint.
func scannedEntry(dir string, now time.Time) (model.Savepoint, bool) {
	st, err := os.Stat(filepath.Join(dir, flink.MetadataFileName))
	if err != nil || !st.Mode().IsRegular() || now.Sub(st.ModTime()) < settle {
		return model.Savepoint{}, false
	}
	sp := model.Savepoint{Path: flink.CanonicalPath(dir), Origin: model.OriginScan, Status: model.SavepointCompleted,
		CompletedMs: ptr(st.ModTime().UnixMilli()), SizeBytes: ptr(dirSize(dir))}
	describeByName(&sp, dir)
	return sp, true
}

// describeByName reads Flink's directory names; dir is a local path or a
// URI (both use "/" here).
func describeByName(sp *model.Savepoint, dir string) {
	sp.Kind = model.KindSavepoint
	if m := chkDirRE.FindStringSubmatch(path.Base(dir)); m != nil {
		sp.Kind = model.KindCheckpoint
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			sp.CheckpointID = ptr(n)
		}
		if job := path.Base(path.Dir(dir)); jobIDRE.MatchString(job) {
			sp.JobID = job
		}
	}
}

// dirSize sums the regular files directly in dir (a canonical savepoint is
// flat; shared state of incremental checkpoints lives elsewhere).
func dirSize(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
	}
	return n
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// ErrOutsideDirs is wrapped by Register for a path outside every
// configured savepoint directory.
var ErrOutsideDirs = errors.New("not inside a configured savepoint directory")

// Register adds a savepoint by hand: path is its directory or `_metadata`,
// as an absolute path or a file: URI, and must lie inside one of the
// configured savepoint directories (after cleaning, and after resolving
// symbolic links). Its offsets are read at once, replacing any earlier
// result or error. When it was registered but its offsets could not be
// read, the id comes back with an error wrapping model.ErrOffsetsUnreadable.
func (c *Catalog) Register(ctx context.Context, p string) (int64, error) {
	return c.register(ctx, p, nil)
}

// register is Register, with mark (when not nil) completing the entry
// before it is stored.
func (c *Catalog) register(ctx context.Context, p string, mark func(*model.Savepoint)) (int64, error) {
	var sp model.Savepoint
	var err error
	if config.IsS3URI(strings.TrimSpace(p)) {
		sp, err = c.registerS3(ctx, strings.TrimSpace(p))
	} else {
		sp, err = c.registerLocal(p)
	}
	if err != nil {
		return 0, err
	}
	if mark != nil {
		mark(&sp)
	}
	id, err := c.Store.UpsertSavepoint(ctx, sp, c.now().UnixMilli())
	if err != nil {
		return 0, err
	}
	r := c.readOffsets(ctx, sp.Path)
	if err := c.Store.SetSavepointOffsets(ctx, id, r.OffsetsJSON, r.SourceUID, r.CheckpointID, r.Err); err != nil {
		return id, err
	}
	if r.OffsetsJSON == "" {
		return id, fmt.Errorf("catalog: %s registered as #%d, but its %w: %s", sp.Path, id, model.ErrOffsetsUnreadable, r.Err)
	}
	return id, nil
}

// registerLocal describes the local savepoint p names, if it is one inside
// a configured directory.
func (c *Catalog) registerLocal(p string) (model.Savepoint, error) {
	dir, err := c.checkRegisterPath(p)
	if err != nil {
		return model.Savepoint{}, err
	}
	meta := filepath.Join(dir, flink.MetadataFileName)
	st, err := os.Stat(meta)
	if err != nil || !st.Mode().IsRegular() {
		return model.Savepoint{}, fmt.Errorf("catalog: %s has no %s file: not a savepoint or checkpoint directory", dir, flink.MetadataFileName)
	}
	// _metadata itself may be a link: it too must stay inside.
	if real, err := filepath.EvalSymlinks(meta); err != nil || !c.insideRealDirs(real) {
		return model.Savepoint{}, fmt.Errorf("catalog: %s is a link whose target is %w (%s)", meta, ErrOutsideDirs, strings.Join(c.Config.SavepointDirs, ", "))
	}
	sp := model.Savepoint{Path: flink.CanonicalPath(dir), Origin: model.OriginManual, Status: model.SavepointCompleted,
		CompletedMs: ptr(st.ModTime().UnixMilli()), SizeBytes: ptr(dirSize(dir))}
	describeByName(&sp, dir)
	return sp, nil
}

// registerS3 is registerLocal for an s3:// URI: inside a configured S3
// savepoint directory (compared after cleaning "." and ".." away), with a
// `_metadata` object.
func (c *Catalog) registerS3(ctx context.Context, uri string) (model.Savepoint, error) {
	if c.S3 == nil {
		return model.Savepoint{}, fmt.Errorf("catalog: %q is on S3, but no s3 endpoint is configured", uri)
	}
	dir, ok := flink.CleanS3(uri)
	if !ok {
		return model.Savepoint{}, fmt.Errorf("catalog: %q is not an s3://bucket/path URI", uri)
	}
	dir = strings.TrimSuffix(dir, "/"+flink.MetadataFileName)
	if !flink.UnderSavepointDir(c.Config.SavepointDirs, dir) {
		return model.Savepoint{}, fmt.Errorf("catalog: %s is %w (%s)", dir, ErrOutsideDirs, strings.Join(c.Config.SavepointDirs, ", "))
	}
	files, _, err := c.S3.List(ctx, dir)
	if err != nil {
		return model.Savepoint{}, fmt.Errorf("catalog: %w", err)
	}
	sp := model.Savepoint{Path: dir, Origin: model.OriginManual, Status: model.SavepointCompleted}
	var size int64
	for _, f := range files {
		size += f.Size
		if path.Base(f.URI) == flink.MetadataFileName {
			sp.CompletedMs = ptr(f.ModTime.UnixMilli())
		}
	}
	if sp.CompletedMs == nil {
		return model.Savepoint{}, fmt.Errorf("catalog: %s has no %s object: not a savepoint or checkpoint directory", dir, flink.MetadataFileName)
	}
	sp.SizeBytes = ptr(size)
	describeByName(&sp, dir)
	return sp, nil
}

// insideRealDirs reports whether real (a path with links resolved) lies in
// the real location of a configured savepoint directory.
func (c *Catalog) insideRealDirs(real string) bool {
	for _, d := range c.Config.SavepointDirs {
		if rd, err := filepath.EvalSymlinks(filepath.Clean(d)); err == nil && flink.Within(rd, real) {
			return true
		}
	}
	return false
}

// checkRegisterPath returns the local savepoint directory path names, when
// it is inside a configured savepoint directory.
func (c *Catalog) checkRegisterPath(path string) (string, error) {
	if len(c.Config.SavepointDirs) == 0 {
		return "", errors.New("catalog: no savepoint_dirs configured: manual registration is off")
	}
	if strings.ContainsRune(path, 0) {
		return "", errors.New("catalog: path contains a NUL byte")
	}
	local, err := flink.LocalPath(strings.TrimSpace(path))
	if err != nil {
		return "", fmt.Errorf("catalog: %w", err)
	}
	if filepath.Base(local) == flink.MetadataFileName {
		local = filepath.Dir(local)
	}
	for _, d := range c.Config.SavepointDirs {
		d = filepath.Clean(d)
		if !flink.Within(d, local) {
			continue
		}
		// The same check on the real locations: a link inside the
		// directory must not lead out of it.
		realDir, err1 := filepath.EvalSymlinks(d)
		realPath, err2 := filepath.EvalSymlinks(local)
		if err2 != nil {
			if errors.Is(err2, fs.ErrNotExist) {
				return "", fmt.Errorf("catalog: %s does not exist", local)
			}
			return "", fmt.Errorf("catalog: %w", err2)
		}
		if err1 == nil && flink.Within(realDir, realPath) {
			return local, nil
		}
	}
	return "", fmt.Errorf("catalog: %s is %w (%s)", local, ErrOutsideDirs, strings.Join(c.Config.SavepointDirs, ", "))
}
