package flink

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Files reads the files of a savepoint kept on remote storage (S3 and
// the like): `_metadata` and the state files its handles name. Local
// savepoints need none: ReadSavepoint reads the local file system.
type Files interface {
	// Serves reports whether uri is on this storage (by its scheme).
	Serves(uri string) bool
	// ReadFile returns the whole object at uri. More than limit bytes is
	// an error; a missing object is an error wrapping fs.ErrNotExist.
	ReadFile(uri string, limit int64) ([]byte, error)
}

// ReadSavepointFrom reads a savepoint or retained checkpoint on remote
// storage: uri is its directory or its `_metadata` object. State handles
// naming other objects on the same storage are read through files too,
// when they lie below the savepoint's own directory or one of roots
// (configured savepoint directories; those not on this storage are
// ignored).
func ReadSavepointFrom(files Files, uri string, roots ...string) (*Savepoint, error) {
	uri = strings.TrimRight(uri, "/")
	if !files.Serves(uri) {
		return nil, fmt.Errorf("flink: %w: %q", ErrUnsupportedLocation, uri)
	}
	dir, meta := uri, uri+"/"+MetadataFileName
	if path.Base(uri) == MetadataFileName {
		dir, meta = strings.TrimSuffix(uri, "/"+MetadataFileName), uri
	}
	own, ok := remoteKey(dir)
	if !ok {
		return nil, fmt.Errorf("flink: %q has an empty, \".\" or \"..\" path segment: object keys are literal, name the savepoint by its plain path", uri)
	}
	b, err := files.ReadFile(meta, maxMetadataSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("flink: %s has no %s: not a savepoint or checkpoint directory (%w)", dir, MetadataFileName, err)
		}
		return nil, fmt.Errorf("flink: %w", err)
	}
	sp, err := ParseMetadata(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", meta, err)
	}
	sp.Dir, sp.files = dir, files
	sp.remote = append([]string{own}, remoteRoots(files, roots)...)
	return sp, nil
}

// remoteHandleBytes reads a relative or file state handle of a savepoint
// read through ReadSavepointFrom.
func (s *Savepoint) remoteHandleBytes(h *StreamHandle) ([]byte, error) {
	uri := h.Path
	if h.Kind == HandleRelative {
		rel := path.Clean(h.Path)
		if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(h.Path, `\`) {
			return nil, fmt.Errorf("flink: relative state handle %q (byte %d of _metadata) escapes the savepoint directory", h.Path, h.Pos)
		}
		uri = s.Dir + "/" + rel
	}
	if !s.files.Serves(uri) {
		return nil, fmt.Errorf("flink: state handle at byte %d of _metadata: %w: %q is not on the savepoint's storage", h.Pos, ErrUnsupportedLocation, uri)
	}
	if !remoteWithin(uri, s.remote) {
		return nil, fmt.Errorf("flink: state handle at byte %d of _metadata names %s, %w", h.Pos, uri, ErrOutsideRoots)
	}
	b, err := s.files.ReadFile(uri, maxStateFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("flink: %w: %s (referenced at byte %d of _metadata)", ErrStateFileMissing, uri, h.Pos)
		}
		return nil, fmt.Errorf("flink: state file %s: %w", uri, err)
	}
	if h.Size >= 0 && int64(len(b)) < h.Size {
		return nil, fmt.Errorf("flink: state file %s has %d bytes, _metadata says %d (truncated copy?)", uri, len(b), h.Size)
	}
	return b, nil
}
