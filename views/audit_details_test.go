package views

import (
	"context"
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

// A long list or object is folded under a summary that counts it, so a
// record's row stays a few lines tall; a short one shows inline.
func TestAuditFieldsFoldLongMembers(t *testing.T) {
	long := "[" + strings.TrimSuffix(strings.Repeat(`"p",`, 25), ",") + "]"
	fs, ok := AuditDetails(json.RawMessage(`{"short":{"a":1,"b":2},"long":` + long + `}`))
	if !ok {
		t.Fatal("not read")
	}
	var b strings.Builder
	if err := auditFields(fs).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<dt>short</dt><dd><dl class="kv"><dt>a</dt><dd>1</dd>`,
		`<dt>long</dt><dd><details class="fold"><summary>25 items</summary>`, `… and 5 more (in the JSON)</span></details>`} {
		if !strings.Contains(html, want) {
			t.Errorf("lacks %s:\n%s", want, html)
		}
	}
}
