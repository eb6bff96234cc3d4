package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postAs posts a form as test-<role>, without following a redirect.
func postAs(t *testing.T, c *console, role, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	return postForm(t, c, sessionCookie(t, c, role), path, form, nil)
}

func getAs(t *testing.T, c *console, role, path string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.URL+path, nil)
	return send(t, req, hdr, sessionCookie(t, c, role))
}

// copyFixture copies a real Flink savepoint's _metadata into a new
// directory below the stand-in's savepoint directory (a configured
// savepoint_dirs entry).
func copyFixture(t *testing.T, c *console, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "flink", "testdata", "savepoints", "flink-2.2.1-p2-events4-stop", "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.Flink.SavepointDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			i := strings.Index(body, `<main`)
			t.Errorf("%s lacks %q\n%.3000s", what, w, body[max(i, 0):])
		}
	}
}

// A savepoint registered by path shows on the catalog page and its detail
// page with the real offsets read from it, the translate form (operators)
// or the JSON to copy (viewers), and the restore preview with the
// Kubernetes patch for a typed namespace/name.
func TestSavepointCatalogPages(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	dir := copyFixture(t, c, "registered-by-test")

	// Outside the configured directories: refused, said inline.
	resp, body := postAs(t, c, "operator", "/savepoints/register", url.Values{"path": {"/etc"}})
	if resp.StatusCode != 422 {
		t.Fatalf("register /etc = %d", resp.StatusCode)
	}
	mustContain(t, "refused registration", body, `data-testid="register-error"`, "not inside a configured savepoint directory", c.Flink.SavepointDir)

	resp, _ = postAs(t, c, "operator", "/savepoints/register", url.Values{"path": {"file:" + dir}, "flow": {"primary->dr"}})
	loc := resp.Header.Get("Location")
	m := regexp.MustCompile(`^/savepoints/(\d+)\?flow=primary-%3Edr$`).FindStringSubmatch(loc)
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("register = %d Location %q", resp.StatusCode, loc)
	}
	id := m[1]
	if e, _ := c.Store.AuditEntries(context.Background(), storage.AuditFilter{Action: "savepoint.register", Subject: "savepoint:" + id}); len(e) != 1 || e[0].Actor != "test-operator" {
		t.Errorf("register audit records %+v", e)
	}

	// The catalog page, as a viewer.
	code, body := get(t, c, "/savepoints")
	if code != 200 {
		t.Fatalf("GET /savepoints = %d", code)
	}
	mustContain(t, "catalog page", body, `data-testid="savepoint-row" data-id="`+id+`"`, "4 partition(s)",
		"<code>events-0</code>: 800", "<code>events-3</code>: 1,350", `data-testid="verdict"`,
		"judged only for the newest 20 entries", "Viewers see the catalog")
	if strings.Contains(body, `action="/savepoints/trigger"`) || strings.Contains(body, `action="/savepoints/register"`) {
		t.Error("a viewer is offered the operators' forms")
	}
	_, body = getAs(t, c, "operator", "/savepoints", nil)
	mustContain(t, "catalog page (operator)", body, `action="/savepoints/sync"`, `action="/savepoints/register"`, `action="/savepoints/trigger"`,
		`data-testid="savepoint-dirs">`+c.Flink.SavepointDir, demo.FlinkSandboxJobID)

	// The detail page, as a viewer: real offsets from the fixture.
	code, body = get(t, c, "/savepoints/"+id)
	if code != 200 {
		t.Fatalf("GET /savepoints/%s = %d", id, code)
	}
	mustContain(t, "detail page", body, "file:"+dir, `data-testid="sp-checkpoint">23<`, `data-testid="sp-uid">kafka-source<`,
		`data-testid="usability"`, "against flow primary-&gt;dr", `data-testid="sp-translate-viewer"`, `&#34;events-0&#34;: 800`, `&#34;events-3&#34;: 1350`,
		`data-testid="restore-preview"`, `data-testid="strategy-2"`, "kafka-source-dr", `href="/failover"`)
	if n := strings.Count(body, `data-testid="sp-offset-row"`); n != 4 {
		t.Errorf("offsets table has %d rows, want 4", n)
	}
	for _, tc := range []struct{ key, off string }{{"events-0", "800"}, {"events-1", "1,300"}, {"events-2", "750"}, {"events-3", "1,350"}} {
		if !regexp.MustCompile(`<td>` + tc.key + `</td><td class="num">` + tc.off + `</td>`).MatchString(body) {
			t.Errorf("offsets table lacks %s at %s", tc.key, tc.off)
		}
	}
	// Every partition translates (once MM2 has synced each: the sandbox may
	// have just started) and the KafkaSource state reads: the rewrite (4) is
	// recommended, the new uid (2) an alternative.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(body, "partition(s) translate, at most") ||
		strings.Contains(body, "Not yet:"); _, body = get(t, c, "/savepoints/"+id) {
		if time.Now().After(deadline) {
			t.Fatal("the savepoint's partitions do not all translate after 20 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if i, j := strings.Index(body, `data-testid="strategy-2"`), strings.Index(body, `data-testid="strategy-3"`); i < 0 || j < i ||
		strings.Contains(body[i:j], `data-testid="recommended"`) {
		t.Error("strategy 2 is still recommended for an MM2 flow whose savepoint can be rewritten")
	}
	if i := strings.Index(body, `data-testid="strategy-4"`); i < 0 || !strings.Contains(body[i:i+800], `data-testid="recommended"`) {
		t.Error("strategy 4 (rewritten savepoint) is not recommended for an MM2 flow")
	}
	if strings.Contains(body, `id="sp-translate"`) {
		t.Error("a viewer gets the translate button (a POST)")
	}
	// As an operator: the form that posts the offsets to /translate.
	_, body = getAs(t, c, "operator", "/savepoints/"+id, nil)
	mustContain(t, "detail page (operator)", body, `id="sp-translate"`, `name="source" value="offsets"`, `name="offsets" value="{`)
	// ...which the translation page accepts.
	resp, body = postAs(t, c, "operator", "/translate", url.Values{"flow": {"primary->dr"}, "source": {"offsets"},
		"offsets": {`{"events-0": 800, "events-1": 1300, "events-2": 750, "events-3": 1350}`}})
	if resp.StatusCode != 200 || !strings.Contains(body, `data-testid="translate-result"`) {
		t.Errorf("translate the savepoint's offsets = %d", resp.StatusCode)
	}

	// Against the Cluster Linking flow: the same savepoint is the restore.
	_, body = get(t, c, "/savepoints/"+id+"?flow=link")
	mustContain(t, "detail page (cluster link)", body, `data-testid="cluster-link-caveat"`)
	if i := strings.Index(body, `data-testid="strategy-1"`); i < 0 || !strings.Contains(body[i:i+800], `data-testid="recommended"`) {
		t.Error("strategy 1 is not recommended for a Cluster Linking flow")
	}

	// The offsets file.
	resp, body = getAs(t, c, "viewer", "/savepoints/"+id+"/offsets.json", nil)
	var offs map[string]int64
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &offs) != nil || offs["events-0"] != 800 || offs["events-3"] != 1350 || len(offs) != 4 {
		t.Errorf("offsets.json = %d %q", resp.StatusCode, body)
	}
	if !strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("offsets.json is not a download: %q", resp.Header.Get("Content-Disposition"))
	}

	// Kubernetes: the patch for a typed namespace/name; a bad name refused.
	code, body = get(t, c, "/savepoints/"+id+"?flow=primary-%3Edr&ns=flink-dr&name=events-job&strategy=2")
	if code != 200 {
		t.Fatalf("k8s preview = %d", code)
	}
	mustContain(t, "k8s preview", body, `data-testid="k8s-patch"`, `&#34;initialSavepointPath&#34;: &#34;file:`+dir+`&#34;`,
		"&#34;allowNonRestoredState&#34;: true", "&#34;upgradeMode&#34;: &#34;savepoint&#34;",
		"kubectl --namespace flink-dr patch flinkdeployment events-job --type merge --patch-file restore-events-job-savepoint-"+id+".yaml")
	_, body = get(t, c, "/savepoints/"+id+"?ns=Bad%20NS&name=x")
	mustContain(t, "bad namespace", body, `data-testid="k8s-error"`)
	if strings.Contains(body, `data-testid="k8s-patch"`) {
		t.Error("a patch rendered for a bad namespace")
	}

	for path, want := range map[string]int{"/savepoints/x": 400, "/savepoints/999999": 404, "/savepoints/999999/offsets.json": 404} {
		if code, _ := get(t, c, path); code != want {
			t.Errorf("GET %s = %d, want %d", path, code, want)
		}
	}
}

// Taking a savepoint of the sandbox's running job: stop-with-savepoint is
// refused (one operator may not end a job); the trigger is audited before and after, its
// progress shows while the stand-in works, and the savepoint lands in the
// catalog with the offsets read from it.
func TestSavepointTrigger(t *testing.T) {
	c := startConsole(t)
	ctx := context.Background()
	// Other tests share the console (and may have taken savepoints):
	// only records after this one count.
	var since int64
	if e, _ := c.Store.AuditEntries(ctx, storage.AuditFilter{Limit: 1}); len(e) > 0 {
		since = e[0].ID
	}
	audits := func(action string) []model.AuditEntry {
		e, err := c.Store.AuditEntries(ctx, storage.AuditFilter{Action: action, Subject: demo.FlinkSandboxJobID, Oldest: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []model.AuditEntry
		for _, x := range e {
			if x.ID > since {
				out = append(out, x)
			}
		}
		return out
	}
	job := demo.FlinkSandboxJobID

	// Stop-with-savepoint, even confirmed (the form of older pages): one
	// operator may not end a job; only an approved runbook does. Refused,
	// nothing asked of Flink, nothing on record.
	for _, form := range []url.Values{
		{"target": {"sandbox-flink-dr"}, "job": {job}, "stop": {"1"}, "confirm_job": {job}},
		{"target": {"sandbox-flink-dr"}, "job": {job}, "stop": {"1"}},
	} {
		resp, body := postAs(t, c, "operator", "/savepoints/trigger", form)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("stop-with-savepoint by one operator = %d, want 403", resp.StatusCode)
		}
		mustContain(t, "stop refused", body, `data-testid="trigger-error"`, "only an approved runbook changes a job")
	}
	time.Sleep(500 * time.Millisecond) // a stop let through would be under way by now
	if len(audits("savepoint.stop"))+len(audits("savepoint.trigger")) != 0 || c.Flink.JobState(job) != "RUNNING" {
		t.Fatalf("a refused stop reached the audit log or Flink: job %s", c.Flink.JobState(job))
	}
	_, page := getAs(t, c, "operator", "/savepoints", nil)
	if strings.Contains(page, `name="stop"`) || !strings.Contains(page, `data-testid="sp-no-stop"`) {
		t.Error("the savepoints page still offers stop-with-savepoint")
	}
	for _, form := range []url.Values{
		{"target": {"nope"}, "job": {job}},
		{"target": {"sandbox-flink-dr"}, "job": {"not-a-job"}},
	} {
		if resp, _ := postAs(t, c, "operator", "/savepoints/trigger", form); resp.StatusCode != 422 {
			t.Errorf("trigger %v = %d, want 422", form, resp.StatusCode)
		}
	}
	if resp, _ := postAs(t, c, "viewer", "/savepoints/trigger", url.Values{"target": {"sandbox-flink-dr"}, "job": {job}}); resp.StatusCode != 403 {
		t.Errorf("viewer trigger = %d, want 403", resp.StatusCode)
	}

	resp, _ := postAs(t, c, "operator", "/savepoints/trigger", url.Values{"target": {"sandbox-flink-dr"}, "job": {job}, "flow": {"primary->dr"}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/savepoints?") {
		t.Fatalf("trigger = %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	before := audits("savepoint.trigger")
	if len(before) != 1 || before[0].Actor != "test-operator" {
		t.Fatalf("trigger audit records %+v", before)
	}
	var d map[string]any
	json.Unmarshal(before[0].Details, &d)
	if d["flink_target"] != "sandbox-flink-dr" || d["job_id"] != job || d["stop"] != false || d["lag"] == nil {
		t.Errorf("trigger audit details %s", before[0].Details)
	}
	// In progress: the page's progress list is pushed.
	_, body := get(t, c, "/savepoints")
	mustContain(t, "progress", body, `sse-connect="/savepoints/events?since=`, `sse-swap="progress"`, "in progress for")
	if resp, _ := postAs(t, c, "operator", "/savepoints/trigger", url.Values{"target": {"sandbox-flink-dr"}, "job": {job}}); resp.StatusCode != 409 {
		t.Errorf("second trigger while one runs = %d, want 409", resp.StatusCode)
	}

	deadline := time.Now().Add(30 * time.Second)
	var after []model.AuditEntry
	for {
		if after = append(audits("savepoint.done"), audits("savepoint.failed")...); len(after) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no savepoint.done record after 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if after[0].Action != "savepoint.done" || after[0].ID <= before[0].ID || after[0].Actor != "test-operator" {
		t.Fatalf("after: %+v", after[0])
	}
	var done struct {
		ID   int64  `json:"savepoint_id"`
		Path string `json:"path"`
		Read bool   `json:"offsets_read"`
	}
	json.Unmarshal(after[0].Details, &done)
	sp, err := c.Store.SavepointByID(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	offs, _ := sp.Offsets()
	if !done.Read || sp.Origin != model.OriginTriggered || sp.JobID != job || sp.JobName != demo.FlinkSandboxJobName ||
		!strings.HasPrefix(sp.Path, "file:"+c.Flink.SavepointDir+"/savepoint-") || offs["events-2"] != 750 || sp.SourceUID != "kafka-source" {
		t.Fatalf("catalog entry %+v (done %+v)", sp, done)
	}
	// The poll that sees it finished reloads the page, which lists it.
	resp, body = getAs(t, c, "viewer", "/savepoints/progress?since=0", map[string]string{"HX-Request": "true"})
	if resp.Header.Get("HX-Refresh") != "true" || !strings.Contains(body, "done in") || strings.Contains(body, "every 1s") {
		t.Errorf("progress after completion: HX-Refresh %q %.500s", resp.Header.Get("HX-Refresh"), body)
	}
	_, body = get(t, c, "/savepoints?job="+job)
	mustContain(t, "catalog after trigger", body, `data-testid="savepoint-row" data-id="`+strconv.FormatInt(sp.ID, 10)+`"`, "triggered", demo.FlinkSandboxJobName)
	if c.Flink.JobState(job) != "RUNNING" {
		t.Error("a plain savepoint stopped the job")
	}
}
