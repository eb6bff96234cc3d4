package views

import (
	"encoding/json"
	"strings"
	"testing"
)

// Details read in the order the record wrote them, lists cut at 20 with
// the rest counted, and what is not JSON (or nested past the bound) is
// left to be shown raw.
func TestAuditDetails(t *testing.T) {
	long := "[" + strings.TrimSuffix(strings.Repeat("1,", 25), ",") + "]"
	fs, ok := AuditDetails(json.RawMessage(`{"z":1,"a":{"list":` + long + `,"none":null,"yes":true},"s":"x"}`))
	if !ok || len(fs) != 3 || fs[0].Key != "z" || fs[0].Value != "1" || fs[1].Key != "a" || fs[2].Value != "x" {
		t.Fatalf("%+v %v", fs, ok)
	}
	list := fs[1].Members[0]
	if !list.Nested || len(list.Members) != auditListShown || list.More != 5 || list.Members[0].Key != "1" ||
		fs[1].Members[1].Value != "null" || fs[1].Members[2].Value != "true" {
		t.Fatalf("%+v", fs[1])
	}
	if fs, ok := AuditDetails(json.RawMessage(`[1]`)); !ok || len(fs) != 1 || fs[0].Key != "value" || !fs[0].Nested {
		t.Fatalf("a list at the top: %+v %v", fs, ok)
	}
	for _, raw := range []string{``, `{"a":`, `{"a":1} {"b":2}`, `not json`, strings.Repeat("[", 40) + strings.Repeat("]", 40)} {
		if fs, ok := AuditDetails(json.RawMessage(raw)); ok {
			t.Errorf("%q read as %+v", raw, fs)
		}
	}
}
