package flink

// The rewriter's plan: the new `_metadata` as the source's bytes with a few
// spans replaced, and the files the new savepoint needs. Nothing is
// written here; every refusal happens before the first byte reaches Dest.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// splice replaces raw[pos:end] of the source `_metadata` with with.
type splice struct {
	pos, end int
	with     []byte
}

// planFile is a file of the new savepoint: new bytes (a rewritten reader
// state) or a copy of the source's file at the same relative path.
type planFile struct {
	rel  string // path relative to the savepoint directory, slash-separated
	data []byte // new bytes; nil: copied
	size int64  // copies: the largest size a handle declares for it
	pos  int    // copies: where the first handle naming it is in _metadata
}

type rewritePlan struct {
	opID    string
	meta    []byte
	files   []planFile
	hasEnum bool
	result  *RewriteResult
}

// planRewrite checks the targets against the source's splits and builds
// the new `_metadata` and the list of files.
func planRewrite(ctx context.Context, sp *Savepoint, uid string, targets map[string]SplitTarget) (*rewritePlan, error) {
	if sp.raw == nil {
		return nil, refused("the savepoint was not read from its bytes")
	}
	if sp.TrailingBytes > 0 {
		return nil, refused("the version %d _metadata has %d bytes after its body that this rewriter cannot vouch for", sp.Version, sp.TrailingBytes)
	}
	op, err := sp.FindSourceOperator(uid)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
	}
	if op.HasState(LegacyKafkaStateName) {
		return nil, refused("operator %s holds legacy FlinkKafkaConsumer state (%s, union list state): only KafkaSource (FLIP-27) state is rewritten", op.Label(), LegacyKafkaStateName)
	}
	for i := range op.Subtasks {
		if op.Subtasks[i].RawOperator.State(SourceReaderStateName) != nil {
			return nil, refused("operator %s subtask %d keeps %s in raw operator state, which KafkaSource never does", op.Label(), op.Subtasks[i].Index, SourceReaderStateName)
		}
	}
	offs, err := sp.KafkaSourceOffsets(op.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
	}
	if len(offs.Partitions) == 0 {
		return nil, refused("operator %s holds no Kafka split: nothing to rewrite", op.Label())
	}
	topics, err := checkTargets(offs, targets)
	if err != nil {
		return nil, err
	}
	plan := &rewritePlan{opID: op.ID, result: &RewriteResult{RenamedTopics: map[string]string{}}}
	for from, to := range topics {
		if from != to {
			plan.result.RenamedTopics[from] = to
		}
	}
	for _, p := range offs.Sorted() {
		plan.result.Splits = append(plan.result.Splits, RewrittenSplit{From: p, To: targets[p.Key()]})
	}

	var splices []splice
	newNames := map[string]bool{}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		h := st.ManagedOperator
		if h == nil || h.State(SourceReaderStateName) == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, f, err := rewriteSubtask(sp, op, st, h, targets, newNames)
		if err != nil {
			return nil, err
		}
		if s != nil {
			splices = append(splices, *s)
		}
		if f != nil {
			plan.files = append(plan.files, *f)
		}
	}
	if c := op.Coordinator; c != nil {
		plan.hasEnum = true
		enc, err := rewriteEnumerator(c.Data, offs, targets, topics)
		if err != nil {
			return nil, err
		}
		with, err := encodeInlineHandle(c.Name, enc)
		if err != nil {
			return nil, refused("coordinator state of %s: %v", op.Label(), err)
		}
		splices = append(splices, splice{pos: c.Pos, end: c.End, with: with})
	}

	// Every other state file: copied, absolute ones inside the source
	// made relative; anything outside refused.
	copies := map[string]int{}
	for _, fh := range sp.fileHandles {
		if inSplices(splices, fh.Pos) {
			continue
		}
		rel, absolute, err := sp.relativeInside(fh)
		if err != nil {
			return nil, err
		}
		if absolute {
			with, err := encodeRelativeHandle(rel, fh.Size)
			if err != nil {
				return nil, refused("state handle at byte %d: %v", fh.Pos, err)
			}
			splices = append(splices, splice{pos: fh.Pos, end: fh.End, with: with})
		}
		if newNames[rel] {
			return nil, refused("state file %s is named twice", rel)
		}
		if i, ok := copies[rel]; ok {
			plan.files[i].size = max(plan.files[i].size, fh.Size)
			continue
		}
		copies[rel] = len(plan.files)
		plan.files = append(plan.files, planFile{rel: rel, size: fh.Size, pos: fh.Pos})
	}

	meta, err := applySplices(sp.raw, splices)
	if err != nil {
		return nil, err
	}
	if len(meta) > maxMetadataSize {
		return nil, refused("the new _metadata would have %d bytes, more than a reader loads (%d)", len(meta), maxMetadataSize)
	}
	// The new bytes must parse before anything is written.
	if _, err := ParseMetadata(meta); err != nil {
		return nil, refused("the rewritten _metadata does not parse: %v", err)
	}
	plan.meta = meta
	return plan, nil
}

// checkTargets: one target per split, none extra, each resumable in DR,
// topics renamed one to one. It returns the topic renames.
func checkTargets(offs *KafkaOffsets, targets map[string]SplitTarget) (map[string]string, error) {
	var missing, bad []string
	topics := map[string]string{}
	back := map[string]string{}
	for _, p := range offs.Sorted() {
		t, ok := targets[p.Key()]
		if !ok {
			missing = append(missing, p.Key())
			continue
		}
		switch {
		case t.Topic == "":
			bad = append(bad, p.Key()+": no DR topic")
		case len(encodeModifiedUTF8(t.Topic)) > 0xffff:
			bad = append(bad, p.Key()+": DR topic name too long")
		case t.Offset == OffsetCommitted:
			bad = append(bad, p.Key()+": the committed-offset marker (the restored job's group may not exist in DR)")
		case t.Offset < 0 && t.Offset != OffsetEarliest && t.Offset != OffsetLatest:
			bad = append(bad, fmt.Sprintf("%s: offset %d is neither an offset nor the earliest/latest marker", p.Key(), t.Offset))
		case p.Stopping != nil && *p.Stopping >= 0 && t.Offset != p.Next:
			// The stopping offset is carried over as it is; an offset of
			// the primary's log means another record in DR.
			bad = append(bad, fmt.Sprintf("%s: a bounded split stopping at offset %d, which would not stop at the same record once its start moves", p.Key(), *p.Stopping))
		}
		if to, ok := topics[p.Topic]; ok && to != t.Topic {
			bad = append(bad, fmt.Sprintf("%s: topic %s goes to both %s and %s", p.Key(), p.Topic, to, t.Topic))
		}
		if from, ok := back[t.Topic]; ok && from != p.Topic {
			bad = append(bad, fmt.Sprintf("%s: topics %s and %s both go to %s", p.Key(), from, p.Topic, t.Topic))
		}
		topics[p.Topic], back[t.Topic] = t.Topic, p.Topic
	}
	if len(missing) > 0 {
		return nil, refused("no target for %d split(s): %s", len(missing), strings.Join(missing, ", "))
	}
	var extra []string
	for k := range targets {
		if _, ok := offs.Partitions[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		bad = append(bad, "targets for partitions the savepoint has no split of: "+strings.Join(extra, ", "))
	}
	if len(bad) > 0 {
		return nil, refused("%s", strings.Join(bad, "; "))
	}
	return topics, nil
}

// rewriteSubtask rewrites one subtask's managed operator state handle: the
// splice of the handle (nil when its bytes do not change) and, for a
// file-backed state, the new state file.
func rewriteSubtask(sp *Savepoint, op *OperatorState, st *SubtaskState, h *OperatorStateHandle, targets map[string]SplitTarget, names map[string]bool) (*splice, *planFile, error) {
	where := fmt.Sprintf("%s of operator %s subtask %d", SourceReaderStateName, op.ID, st.Index)
	data, err := sp.HandleBytes(h.Delegate)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
	}
	newData, states, err := rewriteReaderState(data, h, targets, where)
	if err != nil {
		return nil, nil, err
	}
	var delegate []byte
	var file *planFile
	switch h.Delegate.Kind {
	case HandleInline:
		delegate, err = encodeInlineHandle(h.Delegate.Name, newData)
	case HandleRelative, HandleFile:
		if bytes.Equal(newData, data) && sameOffsets(states, h.States) {
			return nil, nil, nil // unchanged: copied like any other state file
		}
		name := newStateFileName(names)
		file = &planFile{rel: name, data: newData}
		delegate, err = encodeRelativeHandle(name, int64(len(newData)))
	default:
		return nil, nil, refused("%s is held in a %s handle, which this rewriter does not write", where, h.Delegate.Kind)
	}
	if err != nil {
		return nil, nil, refused("%s: %v", where, err)
	}
	with, err := encodeOperatorStateHandle(states, delegate)
	if err != nil {
		return nil, nil, refused("%s: %v", where, err)
	}
	if bytes.Equal(with, sp.raw[h.Pos:h.End]) {
		return nil, file, nil
	}
	return &splice{pos: h.Pos, end: h.End, with: with}, file, nil
}

// checkOperatorStream refuses an operator state stream whose header this
// rewriter cannot vouch for: OperatorBackendSerializationProxy versions
// 1-6, and in version 6 the compression flag (byte 4) must be off (a
// snappy-compressed stream's element offsets are not byte positions of
// the stored bytes).
func checkOperatorStream(data []byte, where string) error {
	r := newBinReader(data, where)
	v, err := r.i32("operator state backend version")
	if err != nil {
		return refused("%v", err)
	}
	switch {
	case v < 1 || v > 6:
		return refused("%s: operator state backend version %s is not known (1-6)", where, fileInt(int64(v)))
	case v == 6 && len(data) > 4 && data[4] != 0:
		return refused("%s is written with snapshot compression, which this rewriter does not rewrite (take the savepoint with execution.checkpointing.snapshot-compression off)", where)
	case v == 6 && len(data) <= 4:
		return refused("%s: truncated operator state header", where)
	}
	return nil
}

// elementSpan is one SourceReaderState element and its replacement.
type elementSpan struct {
	start, end int
	with       []byte
}

// rewriteReaderState re-encodes every split of the handle's
// SourceReaderState in the delegate stream data, splices the new elements
// in and moves every offset of every named state by the shift. An offset
// of another state inside a replaced element is refused.
func rewriteReaderState(data []byte, h *OperatorStateHandle, targets map[string]SplitTarget, where string) ([]byte, []NamedOperatorState, error) {
	if err := checkOperatorStream(data, where); err != nil {
		return nil, nil, err
	}
	ns := h.State(SourceReaderStateName)
	if ns.Mode != SplitDistribute {
		return nil, nil, refused("%s has distribution mode %s, KafkaSource writes SPLIT_DISTRIBUTE", where, ns.Mode)
	}
	spans := make([]elementSpan, 0, len(ns.Offsets))
	for _, off := range ns.Offsets {
		p, end, err := readerElement(data, off, where)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrRewriteRefused, err)
		}
		t, ok := targets[p.Key()]
		if !ok {
			return nil, nil, refused("no target for split %s", p.Key())
		}
		split, err := encodeKafkaSplit(t.Topic, p.Partition, t.Offset, rawStopping(p))
		if err != nil {
			return nil, nil, refused("%s: %v", p.Key(), err)
		}
		elem := appendI32(make([]byte, 0, 12+len(split)), int32(8+len(split)))
		elem = appendI32(appendI32(elem, 0), int32(len(split)))
		spans = append(spans, elementSpan{start: int(off), end: end, with: append(elem, split...)})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := make([]byte, 0, len(data)+64*len(spans))
	at := 0
	for i, s := range spans {
		if i > 0 && s.start < spans[i-1].end {
			return nil, nil, refused("%s: elements at %d and %d overlap", where, spans[i-1].start, s.start)
		}
		out = append(append(out, data[at:s.start]...), s.with...)
		at = s.end
	}
	out = append(out, data[at:]...)

	// shift maps an old offset to the new stream; ok is false inside a
	// replaced element (its start excepted). delta[i]: the growth of the
	// stream by the first i elements.
	delta := make([]int64, len(spans)+1)
	for i, s := range spans {
		delta[i+1] = delta[i] + int64(len(s.with)-(s.end-s.start))
	}
	shift := func(x int64, own bool) (int64, bool) {
		i := sort.Search(len(spans), func(i int) bool { return int64(spans[i].end) > x })
		if i < len(spans) && x >= int64(spans[i].start) && (!own || x != int64(spans[i].start)) {
			return 0, false
		}
		return x + delta[i], true
	}
	states := make([]NamedOperatorState, len(h.States))
	for i, s := range h.States {
		own := s.Name == SourceReaderStateName
		states[i] = NamedOperatorState{Name: s.Name, Mode: s.Mode, Offsets: make([]int64, len(s.Offsets))}
		for j, x := range s.Offsets {
			y, ok := shift(x, own)
			if !ok {
				return nil, nil, refused("%s: state %q has an element at byte %d, inside a Kafka split element", where, s.Name, x)
			}
			states[i].Offsets[j] = y
		}
	}
	return out, states, nil
}

func sameOffsets(a, b []NamedOperatorState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i].Offsets, b[i].Offsets) {
			return false
		}
	}
	return true
}

// rewriteEnumerator renames the enumerator's topics and moves its v3
// split offsets (>= 0) to the target of the reader split of the same
// partition; markers stay. A partition no reader split holds keeps its
// marker under the renamed topic, and is refused when it holds an offset
// or its topic has no target.
func rewriteEnumerator(b []byte, offs *KafkaOffsets, targets map[string]SplitTarget, topics map[string]string) ([]byte, error) {
	l, err := parseEnumLayout(b)
	if err != nil {
		return nil, fmt.Errorf("%w: enumerator state: %w", ErrRewriteRefused, err)
	}
	for i := range l.splits {
		e := &l.splits[i]
		key := e.topic + "-" + strconv.Itoa(int(e.partition))
		if _, ok := offs.Partitions[key]; ok {
			t := targets[key]
			e.topic = t.Topic
			if l.enumVersion == 3 && e.start >= 0 {
				e.start = t.Offset
			}
			continue
		}
		to, ok := topics[e.topic]
		if !ok {
			return nil, refused("the enumerator knows partition %s, whose topic no reader split holds: no DR name for it", key)
		}
		if l.enumVersion == 3 && e.start >= 0 {
			return nil, refused("the enumerator holds an offset for partition %s, which no reader split holds", key)
		}
		e.topic = to
	}
	return l.encode()
}

func encodeInlineHandle(name string, data []byte) ([]byte, error) {
	b, err := appendUTF(append(make([]byte, 0, len(name)+len(data)+8), handleByteStream), name)
	if err != nil {
		return nil, err
	}
	return append(appendI32(b, int32(len(data))), data...), nil
}

func encodeRelativeHandle(rel string, size int64) ([]byte, error) {
	b, err := appendUTF([]byte{handleRelativeFile}, rel)
	if err != nil {
		return nil, err
	}
	return appendI64(b, size), nil
}

// encodeOperatorStateHandle writes an OperatorStreamStateHandle (type 4)
// around an encoded delegate stream handle.
func encodeOperatorStateHandle(states []NamedOperatorState, delegate []byte) ([]byte, error) {
	b := appendI32([]byte{handlePartitionableOpState}, int32(len(states)))
	var err error
	for _, s := range states {
		if b, err = appendUTF(b, s.Name); err != nil {
			return nil, err
		}
		b = appendI32(append(b, byte(s.Mode)), int32(len(s.Offsets)))
		for _, o := range s.Offsets {
			b = appendI64(b, o)
		}
	}
	return append(b, delegate...), nil
}

// newStateFileName is a fresh random name (a UUID, as Flink names state
// files) not in names; it is added.
func newStateFileName(names map[string]bool) string {
	for {
		var u [16]byte
		_, _ = rand.Read(u[:])
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		h := hex.EncodeToString(u[:])
		name := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		if !names[name] {
			names[name] = true
			return name
		}
	}
}

func inSplices(splices []splice, pos int) bool {
	for _, s := range splices {
		if pos >= s.pos && pos < s.end {
			return true
		}
	}
	return false
}

// applySplices returns raw with the (non-overlapping) spans replaced.
func applySplices(raw []byte, splices []splice) ([]byte, error) {
	splices = slices.Clone(splices)
	sort.Slice(splices, func(i, j int) bool { return splices[i].pos < splices[j].pos })
	n := len(raw)
	for _, s := range splices {
		n += len(s.with) - (s.end - s.pos)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, s := range splices {
		if s.pos < at || s.end < s.pos || s.end > len(raw) {
			return nil, refused("internal: overlapping spans at byte %d", s.pos)
		}
		out = append(append(out, raw[at:s.pos]...), s.with...)
		at = s.end
	}
	return append(out, raw[at:]...), nil
}

// relativeInside returns the path, relative to the savepoint directory, of
// a file or relative state handle, and whether the handle was absolute. A
// file outside the savepoint directory is refused, naming it: a rewritten
// savepoint must not depend on files it did not copy.
func (s *Savepoint) relativeInside(h *StreamHandle) (string, bool, error) {
	if h.Kind == HandleRelative {
		rel := path.Clean(h.Path)
		if h.Path == "" || strings.Contains(h.Path, `\`) || path.IsAbs(rel) || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || rel != h.Path {
			return "", false, refused("relative state handle %q (byte %d of _metadata) is not a plain path inside the savepoint directory", h.Path, h.Pos)
		}
		return rel, false, nil
	}
	outside := refused("state file %s (byte %d of _metadata) lies outside the savepoint directory %s: copy the savepoint with its state files into one directory first", h.Path, h.Pos, s.Dir)
	if s.files != nil {
		own, ok1 := remoteKey(s.Dir)
		k, ok2 := remoteKey(h.Path)
		if !ok1 || !ok2 || !s.files.Serves(h.Path) || !strings.HasPrefix(k, own+"/") {
			return "", false, outside
		}
		return strings.TrimPrefix(k, own+"/"), true, nil
	}
	p, err := localPath(h.Path)
	if err != nil || !filepath.IsAbs(p) {
		return "", false, outside
	}
	rel, err := filepath.Rel(s.Dir, filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return "", false, outside
	}
	return filepath.ToSlash(rel), true, nil
}
