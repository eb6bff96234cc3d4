package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// A DR drill in two browsers: operator A plans it (the Drill box), B
// approves, A starts it with the flow's name typed; the page shows the
// figures as they come in until the cleanup is done. The drill history
// lists it with its achieved RTO, a viewer reads it and its exports, and
// the stand-in's production job ran on untouched.
func TestBrowserDrillWithApproval(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	// A Flink stand-in of its own: the shared one's job list is other tests' evidence.
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fl.Close)
	v := serveVariant(t, c, func(cfg *config.Config) {
		cfg.FlinkTargets = []*config.FlinkTarget{{Name: "sandbox-flink-dr", RestURL: fl.URL, Region: "dr"}}
		cfg.Drill = config.Drill{JobArgs: []string{"--output-suffix", "-drill-{run}", "--group-id", "{group}"},
			Timeout: config.Duration(30 * time.Second), CleanupRetry: config.Duration(time.Second)}
	})
	spPath := usableSavepoint(t, c)
	a := newBrowser(t)
	signIn(t, a, v.URL+"/failover", "test-operator")
	b, cancelB := chromedp.NewContext(a, chromedp.WithNewBrowserContext())
	defer cancelB()
	err = chromedp.Do(a,
		chromedp.Click(chromedp.ID("drill")),
		chromedp.SetValue(chromedp.ID("groups"), "billing"),
		chromedp.Click(chromedp.ID("allow-partial")),
		chromedp.SetValue(chromedp.ID("flink-target"), "sandbox-flink-dr"),
		chromedp.SetValue(chromedp.ID("jar-id"), demo.FlinkJarID),
		chromedp.SendKeys(chromedp.ID("reason"), "quarterly DR drill"),
	)
	if err != nil {
		t.Fatalf("filling in the drill: %v; the page:\n%s", err, pageSays(a))
	}
	runURL := createPlan(t, a)
	if h := text(t, a, "h1"); !strings.HasPrefix(h, "DR drill of primary->dr") {
		t.Fatalf("heading %q", h)
	}
	// No savepoint named: the drill restores from the newest usable one,
	// picked when the plan was made and shown in its restore step.
	if steps := text(t, a, "ol.steps"); !strings.Contains(steps, "from "+spPath) {
		t.Fatalf("the drill's restore step does not name the newest usable savepoint %s:\n%s", spPath, steps)
	}
	if n := count(t, a, "#drill-start"); n != 0 {
		t.Fatal("an unapproved drill offers its start button")
	}
	if n := count(t, a, `button[id^="execute-"]`); n != 0 {
		t.Fatal("a drill offers per-step execute buttons")
	}
	signIn(t, b, runURL, "test-admin")
	if err := chromedp.Do(b, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	jobsBefore := len(fl.Jobs())
	if err := chromedp.Do(a, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.ID("drill-start")),
		chromedp.SendKeys(chromedp.ID("drill-confirm"), "primary->dr"), chromedp.Click(chromedp.ID("drill-start")),
		chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	// Pushed by the live stream: no reload.
	cleanup := waitText(t, a, `[data-testid="drill-figures"] [data-testid="drill-cleanup"]`, 60*time.Second, func(s string) bool {
		return s == "done" || strings.HasPrefix(s, "failed")
	})
	if status := text(t, a, `[data-testid="drill-figures"] [data-testid="drill-status"]`); cleanup != "done" || status != "succeeded" {
		t.Fatalf("drill %q, cleanup %q:\n%s", status, cleanup, text(t, a, "#live"))
	}
	rto := text(t, a, `[data-testid="drill-figures"] [data-testid="drill-rto"]`)
	if d, ok := parseShown(rto); !ok || d <= 0 {
		t.Fatalf("achieved RTO on the page %q", rto)
	}
	t.Logf("achieved RTO shown: %s", rto)
	if n := len(fl.Jobs()) - jobsBefore; n != 1 {
		t.Fatalf("%d jobs submitted by the drill", n)
	}
	if st := fl.JobState(demo.FlinkSandboxJobID); st != "RUNNING" {
		t.Fatalf("the production job is %s after the drill", st)
	}
	id := runURL[strings.LastIndex(runURL, "/")+1:]

	// The history, as a manager (viewer) reads it, and its exports.
	viewer := sessionCookie(t, c, "viewer")
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, v.URL+path, nil)
		req.AddCookie(viewer)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d: %.300s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	for _, path := range []string{"/drills?flow=primary-%3Edr", "/drills/report?flow=primary-%3Edr"} {
		if page := get(path); !strings.Contains(page, `data-testid="drill-`+id+`"`) || !strings.Contains(page, "succeeded") {
			t.Errorf("%s does not list drill %s as succeeded", path, id)
		}
	}
	var recs []map[string]any
	if err := json.Unmarshal([]byte(get("/drills/export.json")), &recs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if strconv.FormatFloat(r["run"].(float64), 'f', -1, 64) == id {
			found = r["succeeded"] == true && r["achieved_rto_ms"] != nil && r["cleanup"] == "done"
		}
	}
	if !found {
		t.Fatalf("JSON export: %v", recs)
	}
	rows, err := csv.NewReader(strings.NewReader(get("/drills/export.csv?flow=primary-%3Edr"))).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][6] != "achieved_rto_ms" {
		t.Fatalf("CSV export %v %v", rows, err)
	}
	drillEvidence(t, c, v.URL, a, id, viewer)
}

// drillEvidence: the drills page offers the drill's evidence pack to the
// keyboard; the pack needs a sign-in, its every download is on record,
// its figures are the drill's stored ones, and it verifies against the
// log, as JSON and as HTML.
func drillEvidence(t *testing.T, c *console, base string, a context.Context, id string, viewer *http.Cookie) {
	t.Helper()
	ctx := context.Background()
	html := "/drills/" + id + "/evidence.html"
	// Tab to the link: it is reachable without a mouse.
	err := chromedp.Do(a, chromedp.Navigate(base+"/drills"), chromedp.WaitVisible(chromedp.ID("evidence-html-"+id)),
		chromedp.Focus(chromedp.ID("evidence-html-"+id)))
	focused := ""
	if err == nil {
		focused, err = chromedp.Run(a, chromedp.Evaluate[string](`document.activeElement.getAttribute("href")`))
	}
	if err != nil || focused != html {
		t.Fatalf("the drills page's evidence link: focused %q, %v", focused, err)
	}
	exports := func() int {
		es, err := c.Store.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.DrillEvidence)})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	before := exports()
	resp, err := noRedirect.Get(base + html)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("the pack without a sign-in: %d", resp.StatusCode)
	}
	for path, status := range map[string]int{"/drills/999999/evidence.json": http.StatusNotFound, "/drills/x/evidence.html": http.StatusBadRequest} {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if resp, body := send(t, req, nil, viewer); resp.StatusCode != status {
			t.Fatalf("GET %s = %d, want %d: %.300s", path, resp.StatusCode, status, body)
		}
	}
	if n := exports(); n != before {
		t.Fatalf("a refused download put %d export(s) on record", n-before)
	}
	download := func(path string) []byte {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		resp, body := send(t, req, nil, viewer)
		if cd := resp.Header.Get("Content-Disposition"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(cd, "attachment;") {
			t.Fatalf("GET %s = %d, Content-Disposition %q: %.300s", path, resp.StatusCode, cd, body)
		}
		return []byte(body)
	}
	for _, path := range []string{"/drills/" + id + "/evidence.json", html} {
		p, err := audit.ParseEvidence(download(path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		d, err := c.Store.Drill(ctx, p.Run)
		if err != nil {
			t.Fatal(err)
		}
		if *p.Drill.AchievedRTOMs != *d.RTOMs() || !reflect.DeepEqual(p.Drill.RPOMs, d.RPOMs) || p.Drill.RPOIsLowerBound != d.RPOAtLeast {
			t.Fatalf("%s: figures %+v, the drill's RTO %d, RPO %v", path, p.Drill, *d.RTOMs(), d.RPOMs)
		}
		if p.Produced.By != "test-viewer" {
			t.Fatalf("%s: produced by %q", path, p.Produced.By)
		}
		if _, err := audit.VerifyEvidence(ctx, c.Store, p, runbook.RunSubject(p.Run)); err != nil {
			t.Fatalf("%s does not verify: %v", path, err)
		}
	}
	if n := exports() - before; n != 2 {
		t.Fatalf("%d downloads on record, want 2", n)
	}

	// The same check on the drills page, from the keyboard: the HTML pack
	// matches; one with its RTO edited does not, and the page says why.
	dir := t.TempDir()
	pack := filepath.Join(dir, "pack.html")
	page := download(html)
	p, err := audit.ParseEvidence(page)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pack, page, 0o600)
	*p.Drill.AchievedRTOMs = 1
	body, _ := audit.EvidenceJSON(*p)
	edited := filepath.Join(dir, "edited.json")
	os.WriteFile(edited, body, 0o600)
	for _, check := range []struct{ file, want string }{{pack, "The pack matches the log."}, {edited, "drill figures: the pack says"}} {
		file, want := check.file, check.want
		err := chromedp.Do(a, chromedp.Navigate(base+"/drills"), chromedp.SetUploadFiles(chromedp.ID("evidence-pack"), []string{file}),
			chromedp.Focus(chromedp.ID("evidence-verify")), chromedp.KeyEvent("\r"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="evidence-result"]`)))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, a, `[data-testid="evidence-result"]`); !strings.Contains(got, want) {
			t.Fatalf("checking %s on the drills page: %q, want %q", filepath.Base(file), got, want)
		}
	}
	checks, err := c.Store.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.DrillEvidenceVerify), Limit: 2})
	if err != nil || len(checks) != 2 || !strings.Contains(string(checks[0].Details), `"intact":false`) || !strings.Contains(string(checks[1].Details), `"intact":true`) {
		t.Fatalf("the checks on record: %+v %v", checks, err)
	}
}

// usableSavepoint registers a completed savepoint of the sandbox's events
// topic at the positions MM2 has replicated (so every partition translates
// and nothing it needs is deleted), newer than any other entry, and waits
// until the catalog judges it the flow's newest usable one.
func usableSavepoint(t *testing.T, c *console) string {
	t.Helper()
	ctx := context.Background()
	offsets := map[string]int64{}
	deadline := time.Now().Add(30 * time.Second)
	for len(offsets) == 0 {
		if s := c.Monitor.Snapshot("primary->dr"); s != nil {
			for _, p := range s.Partitions {
				if p.Topic.String() == "events" && p.Replicated.Known && p.Replicated.V > 0 {
					offsets[mm2.TPKey(model.TP{Topic: p.Topic.String(), Partition: p.Partition})] = p.Replicated.V
				}
			}
		}
		if len(offsets) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no replicated position of events after 30 s")
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	ms := time.Now().Add(time.Hour).UnixMilli() // newer than entries other tests register
	path := fmt.Sprintf("file:/savepoints/drill-newest-%d", ms)
	id, err := c.Store.UpsertSavepoint(ctx, model.Savepoint{Path: path, Kind: model.KindSavepoint, Origin: model.OriginManual,
		Status: model.SavepointCompleted, CompletedMs: &ms, JobName: "events"}, ms)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(offsets)
	if err := c.Store.SetSavepointOffsets(ctx, id, string(body), "", 0, ""); err != nil {
		t.Fatal(err)
	}
	for {
		sp, err := c.Catalog.NewestUsable(ctx, "primary->dr", 10)
		if err == nil && sp.Path == path {
			return path
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalog does not judge %s the newest usable savepoint: %q %v", path, sp.Path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
