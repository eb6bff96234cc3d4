package mm2

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/model"
)

// The file formats of `drconsole translate`: an offsets object
// {"events-0": 1234567, ...} (topic-partition keys, next-to-read offsets)
// and offset syncs as JSON Lines
// {"topic":"events","partition":7,"upstream":12345,"downstream":12340}.

// PartitionOffset is one entry of an offsets file.
type PartitionOffset struct {
	Key    string // as written, e.g. "events-0"
	TP     model.TP
	Offset int64
}

// InputError is a problem at a place in an input file.
type InputError struct {
	File string
	Line int
	Why  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Why)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Why)
}

// ParseTPKey splits "topic-partition" at the last dash: topics may contain
// dashes themselves.
func ParseTPKey(key string) (model.TP, error) {
	i := strings.LastIndexByte(key, '-')
	if i <= 0 || i == len(key)-1 {
		return model.TP{}, fmt.Errorf("key %q is not topic-partition (e.g. events-0)", key)
	}
	p, err := strconv.ParseInt(key[i+1:], 10, 32)
	if err != nil || p < 0 {
		return model.TP{}, fmt.Errorf("key %q: partition %q is not a non-negative number", key, key[i+1:])
	}
	return model.TP{Topic: key[:i], Partition: int32(p)}, nil
}

// TPKey is the inverse of ParseTPKey.
func TPKey(tp model.TP) string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// ParseOffsetsJSON reads an offsets object. Errors name the file and line.
func ParseOffsetsJSON(name string, r io.Reader) ([]PartitionOffset, error) {
	return ReadOffsetsJSON(context.Background(), name, r, 0)
}

// ErrTooManyOffsets: an offsets object with more entries than the caller
// allows (ReadOffsetsJSON's maxKeys).
var ErrTooManyOffsets = errors.New("too many partitions")

// ReadOffsetsJSON reads an offsets object in one pass (time linear in its
// size: a million partitions in about a second), stopping when ctx is done
// (the error wraps ctx.Err()) and at the first entry past maxKeys (0: no
// limit; the error wraps ErrTooManyOffsets). Errors name the file and line.
//
// It scans by hand rather than with json.Decoder tokens, which cost
// several allocations per entry and made big files take ten times longer;
// keys with escapes or non-ASCII bytes still go through encoding/json.
func ReadOffsetsJSON(ctx context.Context, name string, r io.Reader, maxKeys int) ([]PartitionOffset, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &InputError{File: name, Why: err.Error()}
	}
	sc := &offsetsScanner{data: data, line: 1, name: name}
	sc.space()
	if sc.pos == len(data) {
		return nil, &InputError{File: name, Why: "empty file: want a JSON object like {\"events-0\": 1234}"}
	}
	if data[sc.pos] != '{' {
		return nil, sc.fail("want a JSON object like {\"events-0\": 1234}")
	}
	sc.pos++
	// Sized up front from the colons (an upper bound on the entries):
	// growing a million-entry map step by step rehashes it many times.
	guess := bytes.Count(data, []byte{':'})
	if maxKeys > 0 {
		guess = min(guess, maxKeys+1)
	}
	out := make([]PartitionOffset, 0, guess)
	seen := make(map[model.TP]struct{}, guess)
	sc.space()
	if sc.peek() == '}' {
		sc.pos++
	} else {
		for {
			if len(out)%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("%s: reading offsets stopped after %d partitions: %w", name, len(out), err)
				}
			}
			if maxKeys > 0 && len(out) == maxKeys {
				return nil, fmt.Errorf("%s: more than %d partitions: %w; split the file", name, maxKeys, ErrTooManyOffsets)
			}
			po, err := sc.entry()
			if err != nil {
				return nil, err
			}
			// One map operation per entry: a repeat leaves the size as it was.
			n := len(seen)
			if seen[po.TP] = struct{}{}; len(seen) == n {
				return nil, sc.fail(fmt.Sprintf("%q appears twice", po.Key))
			}
			out = append(out, po)
			sc.space()
			if c := sc.peek(); c == ',' {
				sc.pos++
				sc.space()
				continue
			} else if c == '}' {
				sc.pos++
				break
			}
			return nil, sc.fail(fmt.Sprintf("after the offset of %q: want , or } but found %s", po.Key, sc.found()))
		}
	}
	sc.space()
	if sc.pos != len(data) {
		return nil, sc.fail("unexpected data after the object")
	}
	return out, nil
}

// offsetsScanner walks an offsets object, counting lines as it goes.
type offsetsScanner struct {
	data      []byte
	pos, line int
	name      string
}

func (s *offsetsScanner) fail(why string) error {
	return &InputError{File: s.name, Line: s.line, Why: why}
}

// peek is the next byte, 0 at the end.
func (s *offsetsScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *offsetsScanner) found() string {
	if s.pos >= len(s.data) {
		return "the end of the file"
	}
	return fmt.Sprintf("%q", s.data[s.pos])
}

// space skips JSON whitespace.
func (s *offsetsScanner) space() {
	for ; s.pos < len(s.data); s.pos++ {
		switch s.data[s.pos] {
		case '\n':
			s.line++
		case ' ', '\t', '\r':
		default:
			return
		}
	}
}

// entry reads `"topic-p": offset`.
func (s *offsetsScanner) entry() (PartitionOffset, error) {
	if s.peek() != '"' {
		return PartitionOffset{}, s.fail(fmt.Sprintf("want a \"topic-partition\" key, found %s", s.found()))
	}
	start, plain := s.pos, true
	s.pos++
	for ; s.pos < len(s.data) && s.data[s.pos] != '"'; s.pos++ {
		if c := s.data[s.pos]; c == '\\' {
			plain = false
			s.pos++ // the escaped byte, a quote included
		} else if c < 0x20 || c >= 0x80 {
			plain = false
		}
	}
	if s.pos >= len(s.data) {
		return PartitionOffset{}, s.fail("unexpected end of the file inside a key")
	}
	s.pos++
	var key string
	if plain {
		key = string(s.data[start+1 : s.pos-1])
	} else if err := json.Unmarshal(s.data[start:s.pos], &key); err != nil {
		return PartitionOffset{}, s.fail(fmt.Sprintf("key %s: %v", s.data[start:s.pos], err))
	}
	tp, err := ParseTPKey(key)
	if err != nil {
		return PartitionOffset{}, s.fail(err.Error())
	}
	s.space()
	if s.peek() != ':' {
		return PartitionOffset{}, s.fail(fmt.Sprintf("after %q: want : but found %s", key, s.found()))
	}
	s.pos++
	s.space()
	start = s.pos
	for ; s.pos < len(s.data) && strings.IndexByte("+-0123456789.eE", s.data[s.pos]) >= 0; s.pos++ {
	}
	lit := string(s.data[start:s.pos])
	if lit == "" {
		return PartitionOffset{}, s.fail(fmt.Sprintf("%q: offset must be a number, found %s", key, s.found()))
	}
	off, err := strconv.ParseInt(lit, 10, 64)
	// ParseInt takes "+1" and "007", JSON does not.
	if err != nil || lit[0] == '+' || len(lit) > 1 && lit[0] == '0' {
		if !jsonNumber.MatchString(lit) {
			return PartitionOffset{}, s.fail(fmt.Sprintf("%q: %s is not a JSON number", key, lit))
		}
		err = errors.New("not whole")
	}
	if err != nil || off < 0 {
		return PartitionOffset{}, s.fail(fmt.Sprintf("%q: offset %s is not a non-negative whole number", key, lit))
	}
	if off > MaxOffset {
		return PartitionOffset{}, s.fail(fmt.Sprintf("%q: offset %s is above %d, the greatest Kafka offset", key, lit, int64(MaxOffset)))
	}
	return PartitionOffset{Key: key, TP: tp, Offset: off}, nil
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// SyncLine is one line of a syncs file.
type SyncLine struct {
	Topic      string `json:"topic"`
	Partition  *int32 `json:"partition"`
	Upstream   *int64 `json:"upstream"`
	Downstream *int64 `json:"downstream"`
}

// ParseSyncsJSONL reads offset syncs, one JSON object per line, in the order
// MM2 wrote them; blank lines are skipped.
func ParseSyncsJSONL(name string, r io.Reader, fn func(model.OffsetSync) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var l SyncLine
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return &InputError{File: name, Line: line, Why: err.Error()}
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return &InputError{File: name, Line: line, Why: "unexpected data after the sync object (one object per line)"}
		}
		switch {
		case l.Topic == "":
			return &InputError{File: name, Line: line, Why: `missing "topic"`}
		case l.Partition == nil || *l.Partition < 0:
			return &InputError{File: name, Line: line, Why: `missing or negative "partition"`}
		case l.Upstream == nil || *l.Upstream < 0:
			return &InputError{File: name, Line: line, Why: `missing or negative "upstream"`}
		case l.Downstream == nil || *l.Downstream < 0:
			return &InputError{File: name, Line: line, Why: `missing or negative "downstream"`}
		case *l.Upstream > MaxOffset || *l.Downstream > MaxOffset:
			return &InputError{File: name, Line: line, Why: fmt.Sprintf("offset above %d, the greatest Kafka offset", int64(MaxOffset))}
		}
		if err := fn(model.OffsetSync{Topic: l.Topic, Partition: *l.Partition, Upstream: *l.Upstream, Downstream: *l.Downstream}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &InputError{File: name, Line: line + 1, Why: err.Error()}
	}
	return nil
}

// WriteSyncJSONL writes one sync as a line of the syncs format.
func WriteSyncJSONL(w io.Writer, s model.OffsetSync) error {
	_, err := fmt.Fprintf(w, "{\"topic\":%s,\"partition\":%d,\"upstream\":%d,\"downstream\":%d}\n", quote(s.Topic), s.Partition, s.Upstream, s.Downstream)
	return err
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// SortTPs orders partitions by topic, then partition number.
func SortTPs(tps []model.TP) {
	slices.SortFunc(tps, func(a, b model.TP) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// WriteOffsetsJSON writes {"topic-p": offset, ...} ordered by topic and
// partition number, one entry per line.
func WriteOffsetsJSON(w io.Writer, offsets map[model.TP]int64) error {
	tps := make([]model.TP, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	SortTPs(tps)
	var b strings.Builder
	b.WriteString("{")
	for i, tp := range tps {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  %s: %d", quote(TPKey(tp)), offsets[tp])
	}
	if len(tps) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Explained is one entry of `translate --explain`.
type Explained struct {
	Offset    *int64      `json:"offset"`
	Method    Method      `json:"method"`
	Sync      *SyncPair   `json:"sync"`
	RereadMax int64       `json:"reread_max"`
	DRKey     string      `json:"dr_key,omitempty"`
	Input     json.Number `json:"input"`
}

// SyncPair is the sync a translation used.
type SyncPair struct {
	Upstream   int64 `json:"upstream"`
	Downstream int64 `json:"downstream"`
}

// Explain turns a translation into its --explain entry.
func Explain(in PartitionOffset, drKey string, t Translation) Explained {
	e := Explained{Method: t.Method, RereadMax: t.RereadMax, DRKey: drKey, Input: json.Number(strconv.FormatInt(in.Offset, 10))}
	if t.Translated() {
		off := t.Offset
		e.Offset = &off
	}
	if t.Translated() {
		e.Sync = &SyncPair{Upstream: t.Sync.Upstream, Downstream: t.Sync.Downstream}
	}
	return e
}
