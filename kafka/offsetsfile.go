package kafka

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The file formats of `drconsole translate`: an offsets object
// {"events-0": 1234567, ...} (topic-partition keys, next-to-read offsets)
// and offset syncs as JSON Lines
// {"topic":"events","partition":7,"upstream":12345,"downstream":12340}.

// PartitionOffset is one entry of an offsets file.
type PartitionOffset struct {
	Key    string // as written, e.g. "events-0"
	TP     TP
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
func ParseTPKey(key string) (TP, error) {
	i := strings.LastIndexByte(key, '-')
	if i <= 0 || i == len(key)-1 {
		return TP{}, fmt.Errorf("key %q is not topic-partition (e.g. events-0)", key)
	}
	p, err := strconv.ParseInt(key[i+1:], 10, 32)
	if err != nil || p < 0 {
		return TP{}, fmt.Errorf("key %q: partition %q is not a non-negative number", key, key[i+1:])
	}
	return TP{Topic: key[:i], Partition: int32(p)}, nil
}

// TPKey is the inverse of ParseTPKey.
func TPKey(tp TP) string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// ParseOffsetsJSON reads an offsets object. Errors name the file and line.
func ParseOffsetsJSON(name string, r io.Reader) ([]PartitionOffset, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &InputError{File: name, Why: err.Error()}
	}
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte{'\n'}) }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	fail := func(why string) error { return &InputError{File: name, Line: lineAt(dec.InputOffset()), Why: why} }
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &InputError{File: name, Why: "empty file: want a JSON object like {\"events-0\": 1234}"}
		}
		return nil, fail(err.Error())
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fail("want a JSON object like {\"events-0\": 1234}")
	}
	var out []PartitionOffset
	seen := map[TP]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err.Error())
		}
		key := tok.(string) // object keys are always strings
		line := lineAt(dec.InputOffset())
		tp, err := ParseTPKey(key)
		if err != nil {
			return nil, &InputError{File: name, Line: line, Why: err.Error()}
		}
		if seen[tp] {
			return nil, &InputError{File: name, Line: line, Why: fmt.Sprintf("%q appears twice", key)}
		}
		seen[tp] = true
		tok, err = dec.Token()
		if err != nil {
			return nil, fail(err.Error())
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, &InputError{File: name, Line: line, Why: fmt.Sprintf("%q: offset must be a number, got %v", key, tok)}
		}
		off, err := num.Int64()
		if err != nil || off < 0 {
			return nil, &InputError{File: name, Line: line, Why: fmt.Sprintf("%q: offset %s is not a non-negative whole number", key, num)}
		}
		out = append(out, PartitionOffset{Key: key, TP: tp, Offset: off})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fail("unexpected data after the object")
	}
	return out, nil
}

// SyncLine is one line of a syncs file.
type SyncLine struct {
	Topic      string `json:"topic"`
	Partition  *int32 `json:"partition"`
	Upstream   *int64 `json:"upstream"`
	Downstream *int64 `json:"downstream"`
}

// ParseSyncsJSONL reads offset syncs, one JSON object per line, in the order
// MM2 wrote them; blank lines are skipped.
func ParseSyncsJSONL(name string, r io.Reader, fn func(OffsetSync) error) error {
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
		switch {
		case l.Topic == "":
			return &InputError{File: name, Line: line, Why: `missing "topic"`}
		case l.Partition == nil || *l.Partition < 0:
			return &InputError{File: name, Line: line, Why: `missing or negative "partition"`}
		case l.Upstream == nil || *l.Upstream < 0:
			return &InputError{File: name, Line: line, Why: `missing or negative "upstream"`}
		case l.Downstream == nil || *l.Downstream < 0:
			return &InputError{File: name, Line: line, Why: `missing or negative "downstream"`}
		}
		if err := fn(OffsetSync{Topic: l.Topic, Partition: *l.Partition, Upstream: *l.Upstream, Downstream: *l.Downstream}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &InputError{File: name, Line: line + 1, Why: err.Error()}
	}
	return nil
}

// WriteSyncJSONL writes one sync as a line of the syncs format.
func WriteSyncJSONL(w io.Writer, s OffsetSync) error {
	_, err := fmt.Fprintf(w, "{\"topic\":%s,\"partition\":%d,\"upstream\":%d,\"downstream\":%d}\n", quote(s.Topic), s.Partition, s.Upstream, s.Downstream)
	return err
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// SortTPs orders partitions by topic, then partition number.
func SortTPs(tps []TP) {
	slices.SortFunc(tps, func(a, b TP) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// WriteOffsetsJSON writes {"topic-p": offset, ...} ordered by topic and
// partition number, one entry per line.
func WriteOffsetsJSON(w io.Writer, offsets map[TP]int64) error {
	tps := make([]TP, 0, len(offsets))
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
