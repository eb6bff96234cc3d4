package handlers

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
)

// serveAs serves one request on r as a user of role.
func serveAs(r http.Handler, role model.Role, method, path string, form url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req = req.WithContext(identity.WithUser(req.Context(), &model.Principal{Name: string(role) + "-1", Role: role}))
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w
}

// After a failover (pre-flight, then the mirror stopped with DR holding
// nothing of the flow), the overview and the flow page say DR is active;
// the lost-records page counts what the primary holds, a viewer sees it,
// and only an operator exports it.
func TestAfterAFailoverPagesSayDRIsActiveAndShowTheLost(t *testing.T) {
	rig := newPagesRig(t, 1, 2, 0)
	ctx := context.Background()
	rb := failover.Equip(&runbook.Runbook{Store: rig.store, Config: rig.cfg, Audit: runbook.StoreAuditor{Store: rig.store},
		Log: rig.h.Log, Clock: rig.clock, StopVerifyWindow: 100 * time.Millisecond}, failover.Env{Monitor: rig.mon})
	rig.h.Runbook = rb
	rig.h.Failovers = failback.BookOf(rb)
	rig.h.Worker = &failover.Worker{Runbook: rb, Catalog: catalogOf(rig.h), Log: rig.h.Log, Now: rig.h.Now}
	r := chi.NewRouter()
	r.Get("/", rig.h.Overview)
	r.Get("/flows/{flow}", rig.h.Flow)
	r.Get("/flows/{flow}/lost", rig.h.LostToDR)
	r.Post("/flows/{flow}/lost/export", rig.h.LostExport)
	flowPath := "/flows/" + url.PathEscape(rig.flow)

	if w := serveAs(r, model.RoleViewer, http.MethodGet, flowPath+"/lost", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "the primary is the active side") {
		t.Fatalf("before a failover: %d %s", w.Code, w.Body)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(rig.cfg.Clusters["primary"].Bootstrap...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range []string{"a", "b", "c"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t-0000", Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := runbook.Actor{Name: "alice", Role: model.RoleOperator}, runbook.Actor{Name: "bob", Role: model.RoleOperator}
	id, err := rb.Create(ctx, alice, runbook.Plan{Flow: rig.flow, Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, bob, id, run.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	for idx := range 2 {
		x, err := rb.Begin(ctx, alice, id, idx, rig.flow, "test: no MM2 here")
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := "DR is active since " + rig.clock().UTC().Format("2006-01-02 15:04:05 UTC") + ", after run #1"
	for _, path := range []string{"/", flowPath} {
		if w := serveAs(r, model.RoleViewer, http.MethodGet, path, nil); !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s does not say %q", path, want)
		}
	}
	page := serveAs(r, model.RoleViewer, http.MethodGet, flowPath+"/lost", nil).Body.String()
	figures := strings.Count(page, `data-testid="lost-figure">`)
	if figures != 1 || !strings.Contains(page, `data-testid="lost-figure">3`) || !strings.Contains(page, `data-testid="lost-total">3<`) ||
		!strings.Contains(page, `data-testid="lost-zero">1 more partition(s): nothing lost`) || strings.Contains(page, "Export JSONL") {
		t.Fatalf("lost page (viewer): %s", page)
	}
	if !strings.Contains(serveAs(r, model.RoleOperator, http.MethodGet, flowPath+"/lost", nil).Body.String(), "Export JSONL") {
		t.Error("an operator is not offered the export")
	}
	if w := serveAs(r, model.RoleViewer, http.MethodPost, flowPath+"/lost/export", nil); w.Code != http.StatusForbidden {
		t.Fatalf("viewer export: %d", w.Code)
	}
	if w := serveAs(r, model.RoleOperator, http.MethodPost, flowPath+"/lost/export", url.Values{"partition": {"x"}}); w.Code != http.StatusBadRequest {
		t.Fatalf("unreadable partition: %d", w.Code)
	}
	w := serveAs(r, model.RoleOperator, http.MethodPost, flowPath+"/lost/export", url.Values{"topic": {"t-0000"}, "partition": {"0"}})
	lines := strings.Split(strings.TrimSpace(w.Body.String()), "\n")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/x-ndjson" || len(lines) != 4 {
		t.Fatalf("export: %d %q", w.Code, w.Body)
	}
	var end failover.LostEndLine
	if err := json.Unmarshal([]byte(lines[3]), &end); err != nil || !end.End.Complete || end.End.Records != 3 {
		t.Fatalf("end line %s: %v", lines[3], err)
	}
}

// The plan form offers a failback only while DR is active for a flow, and
// creates the fixed failback plan pinned to the failover it undoes.
func TestPlanFormOffersFailbackOnlyWhileDRIsActive(t *testing.T) {
	rig := newPagesRig(t, 1, 1, 0)
	ctx := context.Background()
	rb := failover.Equip(&runbook.Runbook{Store: rig.store, Config: rig.cfg, Audit: runbook.StoreAuditor{Store: rig.store},
		Log: rig.h.Log, Clock: rig.clock, StopVerifyWindow: 100 * time.Millisecond}, failover.Env{Monitor: rig.mon})
	rig.h.Runbook = rb
	rig.h.Failovers = failback.BookOf(rb)
	rig.h.Worker = &failover.Worker{Runbook: rb, Catalog: catalogOf(rig.h), Log: rig.h.Log, Now: rig.h.Now}
	r := chi.NewRouter()
	r.Get("/failover", rig.h.FailoverList)
	r.Post("/failover", rig.h.FailoverCreate)
	r.Get("/failover/plan/summary", rig.h.PlanSummary)
	r.Get("/failover/{run}", rig.h.FailoverRun)
	offered := func() bool {
		return strings.Contains(serveAs(r, model.RoleOperator, http.MethodGet, "/failover", nil).Body.String(), `name="failback"`)
	}
	if offered() {
		t.Fatal("failback offered while the primary is active")
	}
	back := url.Values{"flow": {rig.flow}, "failback": {"1"}, "reason": {"primary is back"}, "groups": {"app"}}
	if w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", back); w.Code == http.StatusSeeOther || !strings.Contains(w.Body.String(), "primary is the active side") {
		t.Fatalf("failback created while the primary is active: %d", w.Code)
	}
	alice, bob := runbook.Actor{Name: "alice", Role: model.RoleOperator}, runbook.Actor{Name: "bob", Role: model.RoleOperator}
	id, err := rb.Create(ctx, alice, runbook.Plan{Flow: rig.flow, Steps: []runbook.Step{{Kind: failover.KindStopMirror}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, bob, id, run.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	x, err := rb.Begin(ctx, alice, id, 0, rig.flow, "test: no MM2 here")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	if !offered() {
		t.Fatal("failback not offered while DR is active")
	}
	// The flow runs MM2 on Connect from here on (a failback needs it).
	f := rig.cfg.Flow(rig.flow)
	f.ConnectURL, f.Connectors = "http://127.0.0.1:1", []string{"MirrorSourceConnector"} // nothing answers: previews say so
	rb.Connect = connect.New
	q := back.Encode()
	if s := serveAs(r, model.RoleOperator, http.MethodGet, "/failover/plan/summary?"+q, nil).Body.String(); !strings.Contains(s, "Create the reverse MirrorMaker 2 connectors") ||
		!strings.Contains(s, "failover run #1") {
		t.Fatalf("summary %s", s)
	}
	w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", back)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("failback plan: %d %s", w.Code, w.Body)
	}
	runs, _ := rb.Runs(ctx)
	fb, err := rb.Get(ctx, runs[0].ID)
	if err != nil || fb.Plan.Kind != runbook.PlanFailback || fb.Plan.FailbackOf != id || len(fb.Plan.Steps) != 6 || fb.Plan.Steps[4].Group != "app" {
		t.Fatalf("failback run %+v %v", fb.Plan, err)
	}
	page := serveAs(r, model.RoleOperator, http.MethodGet, w.Header().Get("Location"), nil).Body.String()
	if !strings.Contains(page, "Failback of "+html.EscapeString(rig.flow)) || !strings.Contains(page, "undoing failover run #1") || !strings.Contains(page, "Confirm that every producer writing to DR") {
		t.Fatalf("run page %s", page)
	}
	// No reverse connectors before set-up-reverse: no reverse flow section, and its fragment says so.
	if strings.Contains(page, `data-testid="reverse-flow"`) {
		t.Fatal("a reverse flow section before set-up-reverse")
	}
	r.Get("/failover/{run}/reverse", rig.h.FailoverReverse)
	if frag := serveAs(r, model.RoleViewer, http.MethodGet, w.Header().Get("Location")+"/reverse", nil); frag.Code != 200 || !strings.Contains(frag.Body.String(), `data-testid="reverse-none"`) {
		t.Fatalf("reverse fragment before set-up-reverse: %d %s", frag.Code, frag.Body)
	}

	// With a primary Flink cluster configured, the form offers the Flink
	// steps; a DR job without a directory for its copy is refused on the
	// form, then the plan holds savepoint-dr, the rewrite and the restore.
	rig.cfg.FlinkTargets = []*config.FlinkTarget{{Name: "flink-dr", RestURL: "http://127.0.0.1:1", Region: "dr"}, {Name: "flink-primary", RestURL: "http://127.0.0.1:1", Region: "primary"}}
	rig.cfg.SavepointDirs = []string{"/savepoints"}
	if form := serveAs(r, model.RoleOperator, http.MethodGet, "/failover", nil).Body.String(); !strings.Contains(form, `data-testid="failback-flink"`) ||
		!strings.Contains(form, `<option value="flink-primary"`) {
		t.Fatalf("the failback's Flink fields are not offered: %s", form)
	}
	drJob := "d0b0d0b0d0b0d0b0d0b0d0b0d0b0d0b0"
	flinkBack := url.Values{"flow": {rig.flow}, "failback": {"1"}, "reason": {"primary is back, with the job"}, "groups": {"app"},
		"failback_flink_target": {"flink-primary"}, "failback_dr_target": {"flink-dr"}, "failback_dr_job": {drJob},
		"failback_jar_id": {"4f1c9a2e-7b3d-4e5f-9a8b-0c1d2e3f4a5b_job.jar"}, "failback_args": {"--bootstrap\nprimary:9092"}, "failback_parallelism": {"2"}}
	if w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", flinkBack); w.Code == http.StatusSeeOther || !strings.Contains(w.Body.String(), "Name where the copy for the primary goes") {
		t.Fatalf("a DR job without a directory for its copy: %d %s", w.Code, w.Body)
	}
	flinkBack.Set("failback_rewrite_to", "/savepoints/for-primary")
	if w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", flinkBack); w.Code != http.StatusSeeOther {
		t.Fatalf("failback plan with Flink: %d %s", w.Code, w.Body)
	}
	runs, _ = rb.Runs(ctx)
	fb, err = rb.Get(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range fb.Plan.Steps {
		kinds = append(kinds, string(s.Kind))
	}
	restore := fb.Plan.Steps[7]
	if strings.Join(kinds, ",") != "set-up-reverse,wait-reverse-caught-up,stop-writers,stop-reverse,translate-group-back,savepoint-dr,rewrite-savepoint-back,restore-flink,restart-forward" ||
		fb.Plan.Steps[5].JobID != drJob || restore.FlinkTarget != "flink-primary" || restore.SavepointPath != "/savepoints/for-primary" || restore.Parallelism != 2 || len(restore.Args) != 2 {
		t.Fatalf("failback plan with Flink: %v %+v", kinds, fb.Plan.Steps)
	}
}
