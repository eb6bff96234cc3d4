package flink

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
)

// Stream state handle type codes (MetadataV2V3SerializerBase). The same
// byte space is shared with keyed and operator state handles.
const (
	handleNull                 = 0
	handleByteStream           = 1 // inline bytes in _metadata
	handleFile                 = 2 // absolute path / URI
	handleKeyGroups            = 3
	handlePartitionableOpState = 4
	handleIncremental          = 5
	handleRelativeFile         = 6 // relative to the _metadata directory
	handleSavepointKeyGroups   = 7
	handleChangelog            = 8
	handleChangelogBytes       = 9
	handleChangelogFile        = 10
	handleIncrementalV2        = 11
	handleKeyGroupsV2          = 12
	handleChangelogFileV2      = 13
	handleChangelogV2          = 14
)

// maxHandleDepth bounds nested handles (key-groups inside key-groups,
// changelog handles holding keyed handles).
const maxHandleDepth = 16

// maxStateFileSize bounds a state file read into memory.
const maxStateFileSize = 512 << 20

// HandleKind says where a stream state handle's bytes live.
type HandleKind string

const (
	HandleInline    HandleKind = "inline"     // ByteStreamStateHandle (1)
	HandleFile      HandleKind = "file"       // FileStateHandle (2)
	HandleRelative  HandleKind = "relative"   // RelativeFileStateHandle (6)
	HandleKeyGroups HandleKind = "key-groups" // KeyGroupsStateHandle used as a stream handle (3)
)

// StreamHandle is a StreamStateHandle: where a state stream's bytes are.
type StreamHandle struct {
	Kind HandleKind
	Name string // inline: handle name (Flink writes the file it would have been)
	Data []byte `json:"-"` // inline: the bytes
	Path string // file: absolute path or URI as written; relative: the relative path
	Size int64  // file / relative: declared size; inline: len(Data)
	Pos  int    // byte position of the handle's type code in _metadata
	End  int    // byte position just after the handle in _metadata
	// Inner is the delegate of a key-groups handle used as a stream handle.
	Inner *StreamHandle `json:",omitempty"`
}

func (h *StreamHandle) String() string {
	switch h.Kind {
	case HandleInline:
		return fmt.Sprintf("inline %d bytes", len(h.Data))
	case HandleFile:
		return fmt.Sprintf("file %s (%d bytes)", h.Path, h.Size)
	case HandleRelative:
		return fmt.Sprintf("relative %s (%d bytes)", h.Path, h.Size)
	default:
		return string(h.Kind)
	}
}

// ErrStateFileMissing is wrapped by errors about a state file that is not
// where the handle says.
var ErrStateFileMissing = errors.New("state file missing")

// ErrUnsupportedLocation is wrapped by errors about state on a file system
// this reader cannot open (s3://, hdfs://, ...).
var ErrUnsupportedLocation = errors.New("state location not readable here")

// HandleBytes returns the bytes of a stream state handle: inline bytes
// directly, file and relative handles (relative to the directory holding
// _metadata) from the local file system, or for a savepoint read through
// ReadSavepointFrom, from its storage.
func (s *Savepoint) HandleBytes(h *StreamHandle) ([]byte, error) {
	if h == nil {
		return nil, errors.New("flink: no state handle")
	}
	if s.inlineOnly && h.Kind != HandleInline && h.Kind != HandleKeyGroups {
		return nil, fmt.Errorf("flink: %s state handle not read (inline only)", h.Kind)
	}
	if s.files != nil && (h.Kind == HandleRelative || h.Kind == HandleFile) {
		return s.remoteHandleBytes(h)
	}
	switch h.Kind {
	case HandleInline:
		return h.Data, nil
	case HandleRelative:
		rel := filepath.FromSlash(h.Path)
		if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("flink: relative state handle %q (byte %d of _metadata) escapes the savepoint directory", h.Path, h.Pos)
		}
		return s.readStateFile(filepath.Join(s.Dir, rel), h)
	case HandleFile:
		p, err := localPath(h.Path)
		if err != nil {
			return nil, fmt.Errorf("flink: state handle at byte %d of _metadata: %w", h.Pos, err)
		}
		return s.readStateFile(p, h)
	case HandleKeyGroups:
		return s.HandleBytes(h.Inner)
	}
	return nil, fmt.Errorf("flink: cannot read a %s state handle", h.Kind)
}

// localPath maps a Flink path string to a local file path: plain paths and
// file: URIs; other schemes are an error naming them.
func localPath(p string) (string, error) {
	if i := strings.Index(p, ":"); i > 1 && !strings.ContainsAny(p[:i], `/\`) {
		scheme := strings.ToLower(p[:i])
		if scheme != "file" {
			return "", fmt.Errorf("%w: %q is on %s://, which this reader cannot open (it reads local paths, file: URIs and, with an s3 section configured, s3://, s3a:// and s3p://); copy the savepoint to a local directory (relative handles) or mount it", ErrUnsupportedLocation, p, scheme)
		}
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("bad file URI %q: %v", p, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("%w: file URI %q names host %q", ErrUnsupportedLocation, p, u.Host)
		}
		if u.Path == "" {
			return "", fmt.Errorf("file URI %q has no path", p)
		}
		return filepath.FromSlash(u.Path), nil
	}
	return filepath.FromSlash(p), nil
}

// readStateFile reads the local state file at path for handle h, inside
// the savepoint's roots (see readLocal). Errors name the handle and the
// path as written, never what the file holds.
func (s *Savepoint) readStateFile(path string, h *StreamHandle) ([]byte, error) {
	b, err := readLocal(path, s.roots, maxStateFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("flink: %w: %s (referenced at byte %d of _metadata)", ErrStateFileMissing, path, h.Pos)
		}
		return nil, fmt.Errorf("flink: state file %s (referenced at byte %d of _metadata): %w", path, h.Pos, err)
	}
	if h.Size >= 0 && int64(len(b)) < h.Size {
		return nil, fmt.Errorf("flink: state file %s has %d bytes, _metadata says %d (truncated copy?)", path, len(b), h.Size)
	}
	return b, nil
}

// KeyedHandle summarises a keyed state handle. Keyed state is parsed only to
// step over it; its contents are not decoded.
type KeyedHandle struct {
	Type          int // type code (3, 5, 7, 8, 9, 10, 11, 12, 13, 14)
	KeyGroupStart int32
	KeyGroups     int32
	Streams       []*StreamHandle `json:"-"` // stream handles found inside
	Nested        []*KeyedHandle  `json:",omitempty"`
}

// Kind names the handle type.
func (k *KeyedHandle) Kind() string {
	switch k.Type {
	case handleKeyGroups, handleKeyGroupsV2:
		return "key-groups"
	case handleSavepointKeyGroups:
		return "savepoint key-groups"
	case handleIncremental, handleIncrementalV2:
		return "incremental"
	case handleChangelog, handleChangelogV2:
		return "changelog"
	case handleChangelogBytes:
		return "changelog (in-memory)"
	case handleChangelogFile, handleChangelogFileV2:
		return "changelog (file)"
	}
	return fmt.Sprintf("type %d", k.Type)
}

// UnknownHandleError is a handle type code this reader does not know.
type UnknownHandleError struct {
	Code int
	Pos  int
	Of   string // "stream", "keyed", "operator", "channel"
}

func (e *UnknownHandleError) Error() string {
	hint := ""
	if e.Code >= 15 && e.Code <= 20 {
		hint = " (Flink 1.20+ file-merging handles, FLIP-306, are not supported: take a savepoint without file merging)"
	}
	return fmt.Sprintf("flink: unknown %s state handle type %d at byte %d%s", e.Of, e.Code, e.Pos, hint)
}

// streamHandle reads a stream state handle, records where it ends and
// remembers every file and relative handle (the rewriter copies them).
func (p *metaParser) streamHandle(depth int) (*StreamHandle, error) {
	h, err := p.streamHandleBody(depth)
	if err != nil || h == nil {
		return h, err
	}
	h.End = p.r.pos
	if h.Kind == HandleFile || h.Kind == HandleRelative {
		p.fileHandles = append(p.fileHandles, h)
	}
	return h, nil
}

func (p *metaParser) streamHandleBody(depth int) (*StreamHandle, error) {
	if depth > maxHandleDepth {
		return nil, p.r.failAt(p.r.pos, "state handles nested deeper than %d", maxHandleDepth)
	}
	at := p.r.pos
	t, err := p.r.u8("stream state handle type")
	if err != nil {
		return nil, err
	}
	switch t {
	case handleNull:
		return nil, nil
	case handleByteStream:
		name, err := p.r.utf("inline handle name")
		if err != nil {
			return nil, err
		}
		data, err := p.r.lenBytes("inline state")
		if err != nil {
			return nil, err
		}
		return &StreamHandle{Kind: HandleInline, Name: name, Data: data, Size: int64(len(data)), Pos: at}, nil
	case handleFile:
		size, err := p.r.i64("file state size")
		if err != nil {
			return nil, err
		}
		path, err := p.r.utf("file state path")
		if err != nil {
			return nil, err
		}
		return &StreamHandle{Kind: HandleFile, Path: path, Size: size, Pos: at}, nil
	case handleRelativeFile:
		path, err := p.r.utf("relative state path")
		if err != nil {
			return nil, err
		}
		size, err := p.r.i64("relative state size")
		if err != nil {
			return nil, err
		}
		return &StreamHandle{Kind: HandleRelative, Path: path, Size: size, Pos: at}, nil
	case handleKeyGroups:
		if _, _, err := p.keyGroupOffsets(); err != nil {
			return nil, err
		}
		inner, err := p.streamHandle(depth + 1)
		if err != nil {
			return nil, err
		}
		return &StreamHandle{Kind: HandleKeyGroups, Inner: inner, Pos: at}, nil
	}
	return nil, &UnknownHandleError{Code: int(t), Pos: at, Of: "stream"}
}

// keyGroupOffsets reads int32 start; int32 num; num x int64.
func (p *metaParser) keyGroupOffsets() (int32, int32, error) {
	start, err := p.r.i32("key-group start")
	if err != nil {
		return 0, 0, err
	}
	n, err := p.r.count("key-group count", 8)
	if err != nil {
		return 0, 0, err
	}
	if _, err := p.r.bytes(8*n, "key-group offsets"); err != nil {
		return 0, 0, err
	}
	return start, int32(n), nil
}

func (p *metaParser) keyedHandle(depth int) (*KeyedHandle, error) {
	if depth > maxHandleDepth {
		return nil, p.r.failAt(p.r.pos, "state handles nested deeper than %d", maxHandleDepth)
	}
	at := p.r.pos
	t, err := p.r.u8("keyed state handle type")
	if err != nil {
		return nil, err
	}
	k := &KeyedHandle{Type: int(t)}
	addStream := func() error {
		h, err := p.streamHandle(depth + 1)
		if err != nil {
			return err
		}
		if h != nil {
			k.Streams = append(k.Streams, h)
		}
		return nil
	}
	switch t {
	case handleNull:
		return nil, nil
	case handleKeyGroups, handleKeyGroupsV2, handleSavepointKeyGroups:
		if k.KeyGroupStart, k.KeyGroups, err = p.keyGroupOffsets(); err != nil {
			return nil, err
		}
		if err := addStream(); err != nil {
			return nil, err
		}
		if t == handleKeyGroupsV2 {
			if _, err := p.r.utf("state handle id"); err != nil {
				return nil, err
			}
		}
	case handleIncremental, handleIncrementalV2:
		if _, err := p.r.i64("incremental checkpoint id"); err != nil {
			return nil, err
		}
		if _, err := p.r.utf("backend id"); err != nil {
			return nil, err
		}
		if k.KeyGroupStart, err = p.r.i32("key-group start"); err != nil {
			return nil, err
		}
		if k.KeyGroups, err = p.r.i32("key-group count"); err != nil {
			return nil, err
		}
		if t == handleIncrementalV2 {
			if _, err := p.r.i64("checkpointed size"); err != nil {
				return nil, err
			}
		}
		if err := addStream(); err != nil { // meta state
			return nil, err
		}
		for _, list := range []string{"shared", "private"} {
			n, err := p.r.count(list+" state count", 3)
			if err != nil {
				return nil, err
			}
			for range n {
				if _, err := p.r.utf(list + " state local path"); err != nil {
					return nil, err
				}
				if err := addStream(); err != nil {
					return nil, err
				}
			}
		}
		if t == handleIncrementalV2 {
			if _, err := p.r.utf("state handle id"); err != nil {
				return nil, err
			}
		}
	case handleChangelog, handleChangelogV2:
		if k.KeyGroupStart, err = p.r.i32("key-group start"); err != nil {
			return nil, err
		}
		if k.KeyGroups, err = p.r.i32("key-group count"); err != nil {
			return nil, err
		}
		if _, err := p.r.i64("checkpointed size"); err != nil {
			return nil, err
		}
		for _, part := range []string{"materialized", "non-materialized"} {
			n, err := p.r.count(part+" handle count", 1)
			if err != nil {
				return nil, err
			}
			for range n {
				nested, err := p.keyedHandle(depth + 1)
				if err != nil {
					return nil, err
				}
				if nested != nil {
					k.Nested = append(k.Nested, nested)
				}
			}
		}
		if _, err := p.r.i64("materialization id"); err != nil {
			return nil, err
		}
		if t == handleChangelogV2 {
			if _, err := p.r.i64("changelog checkpoint id"); err != nil {
				return nil, err
			}
		}
		if _, err := p.r.utf("state handle id"); err != nil {
			return nil, err
		}
	case handleChangelogBytes:
		if k.KeyGroupStart, err = p.r.i32("key-group start"); err != nil {
			return nil, err
		}
		if k.KeyGroups, err = p.r.i32("key-group count"); err != nil {
			return nil, err
		}
		if _, err := p.r.bytes(16, "changelog sequence range"); err != nil {
			return nil, err
		}
		n, err := p.r.count("state change count", 8)
		if err != nil {
			return nil, err
		}
		for range n {
			if _, err := p.r.i32("state change key group"); err != nil {
				return nil, err
			}
			if _, err := p.r.lenBytes("state change"); err != nil {
				return nil, err
			}
		}
		if _, err := p.r.utf("state handle id"); err != nil {
			return nil, err
		}
	case handleChangelogFile, handleChangelogFileV2:
		if k.KeyGroupStart, err = p.r.i32("key-group start"); err != nil {
			return nil, err
		}
		if k.KeyGroups, err = p.r.i32("key-group count"); err != nil {
			return nil, err
		}
		n, err := p.r.count("changelog handle count", 9)
		if err != nil {
			return nil, err
		}
		for range n {
			if _, err := p.r.i64("changelog handle offset"); err != nil {
				return nil, err
			}
			if err := addStream(); err != nil {
				return nil, err
			}
		}
		if _, err := p.r.bytes(16, "changelog sizes"); err != nil {
			return nil, err
		}
		if _, err := p.r.utf("state handle id"); err != nil {
			return nil, err
		}
		if t == handleChangelogFileV2 {
			if _, err := p.r.utf("changelog storage id"); err != nil {
				return nil, err
			}
		}
	default:
		return nil, &UnknownHandleError{Code: int(t), Pos: at, Of: "keyed"}
	}
	return k, nil
}
