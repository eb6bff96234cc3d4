package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
)

// Six simultaneous "execute step 1" requests, from two operators and three
// sessions: exactly one starts the step (303 to the run page), the others get 409 and a
// refusal on record; the step's outcome is recorded once and the DR group
// is committed once.
func TestFailoverStepExecutesExactlyOnceOverHTTP(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindTranslateGroup, Group: "billing", AllowPartial: true}}}
	id, err := c.Runbook.Create(ctx, runbook.Actor{Name: "test-admin", Role: "admin"}, plan, "exactly-once drill")
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runbook.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Runbook.Approve(ctx, runbook.Actor{Name: "test-operator", Role: "operator"}, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	// Two sessions of test-operator and one of test-admin.
	cookies := []*http.Cookie{sessionCookie(t, c, "operator"), sessionCookie(t, c, "operator"), sessionCookie(t, c, "admin")}
	path := fmt.Sprintf("%s/failover/%d/steps/1/execute", c.URL, id)
	codes := make([]int, 6)
	errs := make([]error, 6)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, path, strings.NewReader(url.Values{"confirmation": {"primary->dr"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(cookies[i%len(cookies)])
			<-start
			resp, err := noRedirect.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	close(start)
	wg.Wait()
	accepted, conflicts := 0, 0
	for i, code := range codes {
		switch {
		case errs[i] != nil:
			t.Fatal(errs[i])
		case code == http.StatusSeeOther: // started: back to the run page at the step
			accepted++
		case code == http.StatusConflict:
			conflicts++
		}
	}
	if accepted != 1 || conflicts != 5 {
		t.Fatalf("responses %v: want exactly one 303 and five 409", codes)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		run, err = c.Runbook.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st := run.Steps[0]; st.Status == "done" || st.Status == "failed" {
			if st.Status != "done" || st.Attempts != 1 {
				t.Fatalf("step 1 is %s after %d attempt(s): %s", st.Status, st.Attempts, st.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("step 1 still %s after 60 s", run.Steps[0].Status)
		}
	}
	subject := fmt.Sprintf("failover-run:%d", id)
	for action, want := range map[string]int{"failover.step-start": 1, "failover.step-done": 1, "failover.step-start-refused": 5} {
		if n := auditCount(t, c.Store, action, subject); n != want {
			t.Errorf("%d %s records for %s, want %d", n, action, subject, want)
		}
	}
	changes, err := c.Store.GroupChanges(ctx, "primary->dr", "billing")
	if err != nil {
		t.Fatal(err)
	}
	committed := 0
	for _, ch := range changes {
		if ch.Reason == fmt.Sprintf("failover run %d step 1", id) {
			committed++
		}
	}
	if committed != 1 {
		t.Fatalf("the DR group was committed %d times by the step, want once", committed)
	}
}

// auditCount counts action records about exactly subject.
func auditCount(t *testing.T, st *storage.Store, action, subject string) int {
	t.Helper()
	es, err := st.AuditEntries(context.Background(), storage.AuditFilter{Action: action, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Subject == subject {
			n++
		}
	}
	return n
}
