package flink

// A Go-native reader for Flink savepoints and retained checkpoints: parses
// `_metadata` (versions 3-7) and decodes the Kafka source positions in it
// without a JVM. The binary layout follows Flink's MetadataV2V3SerializerBase
// and MetadataV3..V7Serializer; the proof that it reads real bytes is the
// savepoints written by real Flink in testdata/savepoints.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MetadataFileName is the name of a savepoint's metadata file.
const MetadataFileName = "_metadata"

// maxMetadataSize bounds the `_metadata` file read into memory.
const maxMetadataSize = 256 << 20

// Savepoint is a parsed `_metadata` file.
type Savepoint struct {
	Version      int   // _metadata format version (3-7)
	CheckpointID int64 // id of the checkpoint / savepoint
	Operators    []OperatorState
	MasterStates []MasterState
	// Dir is the directory holding _metadata (a local path, or a URI for a
	// savepoint read through ReadSavepointFrom); relative state handles are
	// resolved against it.
	Dir string
	// FormatType is CANONICAL or NATIVE and SnapshotName the snapshot type's
	// name ("Savepoint", "Suspend Savepoint", ...), taken best effort from
	// the CheckpointProperties appended by V4+; empty when not found.
	FormatType, SnapshotName string
	// TrailingBytes is the number of bytes after the body of a V3 file.
	TrailingBytes int

	raw         []byte          // the whole _metadata (the rewriter splices it)
	bodyEnd     int             // where the body ends (V4+: the properties start)
	fileHandles []*StreamHandle // file and relative handles, in file order

	inlineOnly bool       // fuzzing: never open files named by the input
	files      Files      // remote storage the savepoint was read from; nil: local
	roots      localRoots // where local state files may be read from
	remote     []string   // where remote state objects may be read from (remoteKeys)
}

// OperatorState is the state of one operator (by OperatorID).
type OperatorState struct {
	ID             string // 32 hex digits: the OperatorID bytes
	UID, Name      string // V5+ only; empty when the job set none
	Parallelism    int
	MaxParallelism int
	FullyFinished  bool          // every subtask finished: no state at all
	Coordinator    *StreamHandle // operator coordinator state (inline) or nil
	Subtasks       []SubtaskState
	Pos            int // byte position of the operator state in _metadata
}

// HasState reports whether any subtask has a managed or raw operator state
// with that name.
func (o *OperatorState) HasState(name string) bool {
	for i := range o.Subtasks {
		st := &o.Subtasks[i]
		if st.ManagedOperator.State(name) != nil || st.RawOperator.State(name) != nil {
			return true
		}
	}
	return false
}

// StateNames lists the names of the operator (list) states, in order of first
// appearance.
func (o *OperatorState) StateNames() []string {
	var names []string
	seen := map[string]bool{}
	for i := range o.Subtasks {
		for _, h := range []*OperatorStateHandle{o.Subtasks[i].ManagedOperator, o.Subtasks[i].RawOperator} {
			if h == nil {
				continue
			}
			for _, s := range h.States {
				if !seen[s.Name] {
					seen[s.Name] = true
					names = append(names, s.Name)
				}
			}
		}
	}
	return names
}

// HasKeyedState reports whether any subtask holds keyed state.
func (o *OperatorState) HasKeyedState() bool {
	for i := range o.Subtasks {
		if o.Subtasks[i].ManagedKeyed != nil || o.Subtasks[i].RawKeyed != nil {
			return true
		}
	}
	return false
}

// Label is "uid" or "name" or the id, for messages.
func (o *OperatorState) Label() string {
	switch {
	case o.UID != "" && o.Name != "":
		return fmt.Sprintf("uid %q (name %q, id %s)", o.UID, o.Name, o.ID)
	case o.UID != "":
		return fmt.Sprintf("uid %q (id %s)", o.UID, o.ID)
	case o.Name != "":
		return fmt.Sprintf("name %q (id %s)", o.Name, o.ID)
	}
	return "id " + o.ID
}

// ReadSavepoint reads a savepoint or retained checkpoint: path is its
// directory or its `_metadata` file, a local path or a file: URI. Every
// file it reads, `_metadata` included, must lie inside the savepoint's own
// directory or one of roots (configured savepoint directories; others than
// local ones are ignored), symbolic links resolved, and be a regular file
// (see readLocal).
func ReadSavepoint(path string, roots ...string) (*Savepoint, error) {
	local, err := localPath(path)
	if err != nil {
		if _, lerr := os.Lstat(path); lerr != nil { // "a:b" may be a local name
			return nil, fmt.Errorf("flink: %w", err)
		}
		local = path
	}
	meta := local
	st, err := os.Stat(local)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("flink: %s does not exist", path)
		}
		return nil, fmt.Errorf("flink: %w", err)
	}
	if st.IsDir() {
		meta = filepath.Join(local, MetadataFileName)
		if _, err := os.Lstat(meta); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("flink: %s has no %s file: not a savepoint or checkpoint directory", path, MetadataFileName)
		}
	}
	dir, err := filepath.Abs(filepath.Dir(meta))
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	meta = filepath.Join(dir, filepath.Base(meta))
	lr := newLocalRoots(dir, roots)
	b, err := readLocal(meta, lr, maxMetadataSize)
	if err != nil {
		return nil, fmt.Errorf("flink: %s: %w", meta, err)
	}
	sp, err := ParseMetadata(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", meta, err)
	}
	sp.Dir, sp.roots = dir, lr
	return sp, nil
}

// ParseMetadata parses the bytes of a `_metadata` file. Relative state
// handles of the result resolve against Dir, which the caller sets.
func ParseMetadata(b []byte) (*Savepoint, error) {
	return parseMetadata(b)
}

// Operator finds an operator by exact id (32 hex digits) or uid.
func (s *Savepoint) Operator(idOrUID string) *OperatorState {
	for i := range s.Operators {
		if s.Operators[i].ID == idOrUID {
			return &s.Operators[i]
		}
	}
	return nil
}
