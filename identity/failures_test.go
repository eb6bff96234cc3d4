package identity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/storage"
)

func failedRecords(t *testing.T, st *storage.Store) []map[string]any {
	t.Helper()
	es, err := st.AuditEntries(context.Background(), storage.AuditFilter{Action: "login.failed", Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range es {
		var d map[string]any
		json.Unmarshal(e.Details, &d)
		d["_ip"], d["_subject"] = e.ClientIP, e.Subject
		out = append(out, d)
	}
	return out
}

// A flood of failures from one source is one record at once and one
// summary with the count when its window closes; another source is
// counted on its own; an IPv6 /64 is one source.
func TestSignInFailuresCounted(t *testing.T) {
	st, _ := openStore(t)
	f := identity.NewSignInFailures(st, nil)
	from := func(ip string) context.Context {
		return audit.WithClient(context.Background(), audit.Client{IP: ip, UserAgent: "test"})
	}
	for i := range 300 {
		written, err := f.Record(from("192.0.2.1"), identity.Failure{Name: fmt.Sprintf("u%d", i%3), Reason: "wrong password",
			Details: map[string]any{"reason": "wrong password"}})
		if err != nil || written != (i == 0) {
			t.Fatalf("failure %d: written %v, %v", i, written, err)
		}
	}
	f.Record(from("2001:db8::1"), identity.Failure{Reason: "r"})
	f.Record(from("2001:db8::2"), identity.Failure{Reason: "r"})
	if got := failedRecords(t, st); len(got) != 2 {
		t.Fatalf("%d records before the windows closed, want 2 (one per source)", len(got))
	}
	f.Flush()
	got := failedRecords(t, st)
	if len(got) != 4 {
		t.Fatalf("%d records after the windows closed, want 4: %v", len(got), got)
	}
	sum := got[2]
	if sum["repeated"] != 299.0 || sum["_ip"] != "192.0.2.1" || sum["_subject"] != "source:192.0.2.1" ||
		sum["usernames"].(map[string]any)["u1"] != 100.0 || sum["reasons"].(map[string]any)["wrong password"] != 299.0 {
		t.Fatalf("summary = %v", sum)
	}
	if v6 := got[3]; v6["repeated"] != 1.0 || v6["_subject"] != "source:2001:db8::/64" {
		t.Fatalf("IPv6 summary = %v", v6)
	}
}

// The window closes by itself (a timer), and a late failure opens a new
// one with its own first record.
func TestSignInFailuresWindowCloses(t *testing.T) {
	st, _ := openStore(t)
	f := identity.NewSignInFailures(st, nil)
	f.Window = 50 * time.Millisecond
	ctx := audit.WithClient(context.Background(), audit.Client{IP: "192.0.2.1"})
	for range 3 {
		f.Record(ctx, identity.Failure{Reason: "x"})
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(failedRecords(t, st)) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := failedRecords(t, st); len(got) != 2 || got[1]["repeated"] != 2.0 {
		t.Fatalf("records = %v, want the first and a summary of 2", got)
	}
	if written, _ := f.Record(ctx, identity.Failure{Reason: "x"}); !written {
		t.Fatal("a failure after the window closed was not written")
	}
}
