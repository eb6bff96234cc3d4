package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// AuditField is one member of an audit record's details: a key with a
// value as written, or with the members of an object or a list.
type AuditField struct {
	Key   string
	Value string // a string, number, true, false or null as written
	// Members is an object's or list's members (List: keyed 1, 2, ...);
	// Nested says the value was one, even an empty one.
	Members []AuditField
	Nested  bool
	// More is how many list members are not shown (the raw JSON has them).
	More int
	list bool
}

// auditFoldOver: an object or list with more members than this is folded
// (a <details> naming how many), so a record's row stays a few lines tall.
const auditFoldOver = 6

// members names what f holds: "items" of a list, "fields" of an object.
func (f AuditField) members() string {
	if f.list {
		return "items"
	}
	return "fields"
}

// auditListShown is how many members of a list a record's details show.
const auditListShown = 20

// auditDepth bounds nesting: the records are the console's own, but a
// page must render whatever a database holds.
const auditDepth = 16

var errTooDeep = errors.New("nested too deep")

// AuditDetails reads a record's details into fields, in the order the
// record wrote them. A value that is no object is one field, "value".
// ok false: the details are not JSON (the page shows them raw).
func AuditDetails(raw json.RawMessage) (fields []AuditField, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	f, err := readAuditField(dec, "value", 0)
	if err != nil || dec.More() {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // trailing data
	}
	if f.Nested && (len(raw) > 0 && bytes.TrimSpace(raw)[0] == '{') {
		return f.Members, true
	}
	return []AuditField{f}, true
}

func readAuditField(dec *json.Decoder, key string, depth int) (AuditField, error) {
	f := AuditField{Key: key}
	if depth > auditDepth {
		return f, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return f, err
	}
	switch t := tok.(type) {
	case json.Delim:
		f.Nested, f.list = true, t == '['
		for i := 1; dec.More(); i++ {
			k := strconv.Itoa(i)
			if t == '{' {
				kt, err := dec.Token()
				if err != nil {
					return f, err
				}
				k, _ = kt.(string)
			}
			m, err := readAuditField(dec, k, depth+1)
			if err != nil {
				return f, err
			}
			if t == '[' && len(f.Members) >= auditListShown {
				f.More++
				continue
			}
			f.Members = append(f.Members, m)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return f, err
		}
	case string:
		f.Value = t
	case json.Number:
		f.Value = t.String()
	case bool:
		f.Value = strconv.FormatBool(t)
	case nil:
		f.Value = "null"
	}
	return f, nil
}
