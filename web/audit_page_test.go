package web_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/web"
)

var auditRowID = regexp.MustCompile(`<tr data-action="test.page"><td class="num">(\d+)</td>`)

// rowIDs are the ids of the test.page rows a page shows, in order.
func rowIDs(page string) []string {
	var ids []string
	for _, m := range auditRowID.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// link is the href of the pager link with rel, unescaped, or "".
func link(page, rel string) string {
	m := regexp.MustCompile(`<a href="([^"]+)" rel="` + rel + `"`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return strings.ReplaceAll(m[1], "&amp;", "&")
}

// The audit page pages by record id, newest first, 50 a page, with older
// and newer links, and a page stays the same when records are added.
func TestAuditPagesByRecordID(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	ctx := context.Background()
	add := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := s.store.AppendAudit(ctx, model.AuditEntry{Actor: "alice", Action: "test.page", Subject: "x"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(120)
	viewer := withCookie(s.signedIn(t, "test-viewer"))
	get := func(path string) string {
		t.Helper()
		rec := s.do(http.MethodGet, path, nil, viewer)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	first := get("/audit?action=test.page")
	if ids := rowIDs(first); len(ids) != 50 || link(first, "prev") != "" || link(first, "next") == "" {
		t.Fatalf("first page: %d rows, newer %q, older %q", len(ids), link(first, "prev"), link(first, "next"))
	}
	second := get(link(first, "next"))
	ids2 := rowIDs(second)
	if len(ids2) != 50 || link(second, "prev") == "" || !strings.Contains(link(second, "next"), "action=test.page") {
		t.Fatalf("second page: %d rows, newer %q, older %q", len(ids2), link(second, "prev"), link(second, "next"))
	}
	add(7) // new records do not move the pages already linked
	if again := rowIDs(get(link(first, "next"))); strings.Join(again, ",") != strings.Join(ids2, ",") {
		t.Fatalf("the older page moved with new records: %v, was %v", again, ids2)
	}
	if newer := rowIDs(get(link(second, "prev"))); strings.Join(newer, ",") != strings.Join(rowIDs(first), ",") {
		t.Fatalf("newer than page 2 is %v, want page 1's %v", newer, rowIDs(first))
	}
	third := get(link(second, "next"))
	if ids := rowIDs(third); len(ids) != 20 || link(third, "next") != "" {
		t.Fatalf("last page: %d rows, older %q", len(ids), link(third, "next"))
	}
	if rec := s.do(http.MethodGet, "/audit?before=3&after=5", nil, viewer); rec.Code != http.StatusBadRequest {
		t.Fatalf("before and after = %d", rec.Code)
	}
}

// A record's subject links to its run, savepoint or flow (and for an
// admin to the users page), and its details read as fields, the raw JSON
// folded away.
func TestAuditSubjectsLinkAndDetailsRead(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	ctx := context.Background()
	for _, e := range []model.AuditEntry{
		{Action: "test.link", Subject: "failover-run:7", Details: json.RawMessage(`{"step":3,"groups":["a","b"],"result":{"rpo_ms":1200,"exact":false}}`)},
		{Action: "test.link", Subject: "savepoint:12", Details: json.RawMessage(`{}`)},
		{Action: "test.link", Subject: "flow:primary->dr", Details: json.RawMessage(`{"note":"<script>"}`)},
		{Action: "test.link", Subject: "user:test-viewer", Details: json.RawMessage(`"plain"`)},
		{Action: "test.link", Subject: "source:10.0.0.1", Details: json.RawMessage(`{"n":1}`)},
	} {
		e.Actor = "alice"
		if _, err := s.store.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	page := func(who string) string {
		rec := s.do(http.MethodGet, "/audit?action=test.link", nil, withCookie(s.signedIn(t, who)))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", who, rec.Code)
		}
		return rec.Body.String()
	}
	viewer := page("test-viewer")
	for _, want := range []string{
		`<a href="/failover/7">failover-run:7</a>`,
		`<a href="/savepoints/12">savepoint:12</a>`,
		`<a href="/flows/primary-%3Edr">flow:primary-&gt;dr</a>`,
		`<td>source:10.0.0.1</td>`,
		`<td>user:test-viewer</td>`, // a viewer cannot open the users page
		`<dt>step</dt><dd>3</dd>`,
		`<dt>groups</dt><dd><dl class="kv"><dt>1</dt><dd>a</dd><dt>2</dt><dd>b</dd></dl>`,
		`<dt>result</dt><dd><dl class="kv"><dt>rpo_ms</dt><dd>1200</dd><dt>exact</dt><dd>false</dd></dl>`,
		`<dt>note</dt><dd>&lt;script&gt;</dd>`,
		`<dt>value</dt><dd>plain</dd>`,
		`<details class="raw-json"><summary>JSON</summary><code>{&#34;step&#34;:3,`,
	} {
		if !strings.Contains(viewer, want) {
			t.Errorf("the viewer's page lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(viewer)
	}
	if !strings.Contains(page("test-admin"), `<a href="/admin/users">user:test-viewer</a>`) {
		t.Error("an admin's page does not link the user")
	}
}

// "Verify the chain" runs the check of `drconsole audit verify`, records
// that it did (audit.verify, with what it found) and shows the command's
// words: the record count and head, or the first broken record once a row
// is edited behind the console's back.
func TestAuditVerifyButton(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	ctx := context.Background()
	// The test accounts are made without records; a baseline puts them on
	// record, as a console's first start does.
	if ok, err := audit.BaselineAccounts(ctx, s.store); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for i := 0; i < 5; i++ {
		if _, err := s.store.AppendAudit(ctx, model.AuditEntry{Actor: "alice", Action: "test.verify", Subject: fmt.Sprint(i),
			Details: json.RawMessage(`{"i":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	viewer := s.signedIn(t, "test-viewer")
	if rec := s.do(http.MethodGet, "/audit", nil, withCookie(viewer)); !strings.Contains(rec.Body.String(), `<form method="post" action="/audit/verify"`) {
		t.Fatal("no Verify the chain button on the audit page")
	}
	want, err := audit.Verify(ctx, s.store)
	if err != nil || want.Err() != nil {
		t.Fatal(want.Err(), err)
	}
	rec := s.post("/audit/verify", viewer, nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, fmt.Sprintf("audit: %d records, chain intact", want.Records)) ||
		!strings.Contains(body, fmt.Sprintf("audit: head record %d hash %s", want.HeadID, want.HeadHash)) ||
		!strings.Contains(body, "accounts match their audited history") {
		t.Fatalf("verify = %d:\n%s", rec.Code, body)
	}
	rs := s.audit(t, string(audit.ChainVerify))
	if len(rs) != 1 || rs[0].Actor != "test-viewer" || !strings.Contains(string(rs[0].Details), `"intact":true`) ||
		!strings.Contains(string(rs[0].Details), fmt.Sprintf(`"head_record":%d`, want.HeadID)) {
		t.Fatalf("audit.verify records: %+v", rs)
	}
	// A cross-site form cannot make anyone verify (or write a record).
	if rec := s.do(http.MethodPost, "/audit/verify", nil, withCookie(viewer), header("Sec-Fetch-Site", "cross-site")); rec.Code != http.StatusForbidden {
		t.Fatalf("cross-site verify = %d", rec.Code)
	}

	// Edit record 3 behind the console's back.
	db, err := sql.Open("sqlite3", "file:"+s.path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP TRIGGER audit_no_update`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit SET details = '{"i":2}' WHERE id = 3`); err != nil {
		t.Fatal(err)
	}
	broken, err := audit.Verify(ctx, s.store)
	if err != nil || broken.Broken == nil || broken.Broken.ID != 3 {
		t.Fatalf("the tampering did not break the chain at 3: %+v %v", broken, err)
	}
	rec = s.post("/audit/verify", viewer, nil)
	body = rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `role="alert" data-testid="verify-result"`) ||
		!strings.Contains(body, "audit: record 3: contents do not match the record&#39;s hash: it was edited (the 2 records before it are intact)") ||
		strings.Contains(body, "chain intact") {
		t.Fatalf("verify after tampering = %d:\n%s", rec.Code, body)
	}
	rs = s.audit(t, string(audit.ChainVerify))
	if len(rs) != 2 || !strings.Contains(string(rs[1].Details), `"intact":false`) || !strings.Contains(string(rs[1].Details), `"broken_record":3`) {
		t.Fatalf("audit.verify records after tampering: %+v", rs)
	}
	if rec := s.do(http.MethodPost, "/audit/verify", nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("signed out verify = %d", rec.Code)
	}
}

// Each verification reads the whole chain and adds a record: past the
// burst a user gets 429, and a refused one writes nothing.
func TestAuditVerifyIsRateLimited(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	viewer := s.signedIn(t, "test-viewer")
	served, refused := 0, 0
	began := time.Now()
	for range 2 * web.DefaultCostBurstPerUser {
		switch rec := s.post("/audit/verify", viewer, nil); rec.Code {
		case http.StatusTooManyRequests:
			refused++
		default:
			served++
		}
	}
	refilled := costRefilled(began)
	if served < web.DefaultCostBurstPerUser || served > web.DefaultCostBurstPerUser+refilled || refused == 0 {
		t.Fatalf("%d served, %d refused in %s; want the burst of %d served (and up to %d refilled), the rest 429",
			served, refused, time.Since(began).Round(time.Millisecond), web.DefaultCostBurstPerUser, refilled)
	}
	if n := len(s.audit(t, string(audit.ChainVerify))); n != served {
		t.Fatalf("%d audit.verify records for %d checks served", n, served)
	}
}
