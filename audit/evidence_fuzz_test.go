package audit_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/drconsole/drconsole/audit"
)

// A pack is untrusted input: whatever the bytes, ParseEvidence answers
// with a pack or an error, never a panic, and a pack it accepts encodes
// to canonical JSON that reads back as the same pack.
func FuzzParseEvidence(f *testing.F) {
	fx := newDrillFixture(f)
	p, body := fx.export(f)
	f.Add(body)
	f.Add(packHTML(f, p, body))
	f.Add([]byte(`{"version":1,"kind":"drconsole-drill-evidence","audit_records":[{}]}`))
	f.Add([]byte(audit.EvidenceScript + `{"version":1}`))
	f.Add([]byte("<html>" + audit.EvidenceScript + "{}</script>"))
	f.Add([]byte(`{"version":1}{}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := audit.ParseEvidence(b)
		if err != nil {
			if p != nil {
				t.Fatal("a pack with an error")
			}
			return
		}
		if len(p.Records) == 0 {
			t.Fatal("a pack without records accepted")
		}
		out, err := audit.EvidenceJSON(*p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := audit.ParseEvidence(out)
		if err != nil {
			t.Fatalf("the canonical JSON of an accepted pack does not read back: %v", err)
		}
		a, _ := audit.EvidenceJSON(*again)
		if !bytes.Equal(a, out) || !reflect.DeepEqual(len(again.Records), len(p.Records)) {
			t.Fatal("a pack changed through its canonical JSON")
		}
	})
}
