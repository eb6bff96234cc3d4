package handlers

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink/flinktest"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
)

// uploadedJar is the jar the Flink stand-in lists, as Flink names it.
const uploadedJar = "4f1c9a2e-7b3d-4e5f-9a8b-0c1d2e3f4a5b_events-job.jar"

// planFieldsRig is a plan form on a flow with a DR Flink target whose
// REST lists one jar, a savepoint directory holding one savepoint, and
// the catalog.
func planFieldsRig(t *testing.T) (*pagesRig, chi.Router, *runbook.Runbook, url.Values) {
	t.Helper()
	rig := newPagesRig(t, 1, 1, 0)
	rb := failover.Equip(&runbook.Runbook{Store: rig.store, Config: rig.cfg, Audit: runbook.StoreAuditor{Store: rig.store},
		Log: rig.h.Log, Clock: rig.clock}, failover.Env{Monitor: rig.mon})
	rig.h.Runbook = rb
	rig.h.Failovers = failback.BookOf(rb)
	rig.h.Worker = &failover.Worker{Runbook: rb, Catalog: catalogOf(rig.h), Log: rig.h.Log, Now: rig.h.Now}
	jars := flinktest.REST(t, map[string]func(http.ResponseWriter, map[string]any){
		"GET /jars": func(w http.ResponseWriter, _ map[string]any) {
			w.Write([]byte(`{"address":"http://jm:8081","files":[{"id":"` + uploadedJar + `","name":"events-job.jar","uploaded":1,"entry":[{"name":"com.example.Job"}]}]}`))
		},
	})
	dir := t.TempDir()
	sp := filepath.Join(dir, "savepoint-1")
	if err := os.MkdirAll(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sp, "_metadata"), []byte("not read here"), 0o644); err != nil {
		t.Fatal(err)
	}
	rig.cfg.FlinkTargets = []*config.FlinkTarget{{Name: "flink-dr", RestURL: jars, Region: config.RegionDR}}
	rig.cfg.SavepointDirs = []string{dir}
	rig.h.Catalog = &catalog.Catalog{Store: rig.store, Config: rig.cfg, Monitor: rig.mon, Log: rig.h.Log}
	r := chi.NewRouter()
	r.Get("/failover", rig.h.FailoverList)
	r.Post("/failover", rig.h.FailoverCreate)
	good := url.Values{"flow": {rig.flow}, "preflight": {"1"}, "stop": {"none"}, "groups": {"app"}, "reason": {"INC-1234 us-east-1 outage"},
		"flink_target": {"flink-dr"}, "jar_id": {uploadedJar}, "entry_class": {"com.example.Job"}, "savepoint_path": {"file:" + sp},
		"parallelism": {"4"}, "args": {"--bootstrap\ndr:9092"}}
	return rig, r, rb, good
}

func runCount(t *testing.T, rb *runbook.Runbook) int {
	t.Helper()
	runs, err := rb.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// Every field of the plan form is checked where it is typed (issue 31):
// a bad value is refused with 422, no run is created, its message stands
// beside the field (tied to it for screen readers) and every typed value
// is kept; the same form with good values is created.
func TestPlanCreateRefusesEachBadFieldBesideIt(t *testing.T) {
	rig, r, rb, good := planFieldsRig(t)
	long := strings.Repeat("é", 200_000)
	for _, tc := range []struct {
		field, value, want string
	}{
		{"parallelism", "-3", "want a whole number from 1 to 32,768"},
		{"parallelism", "abc", "want a whole number from 1 to 32,768"},
		{"parallelism", "40000", "want a whole number from 1 to 32,768"},
		{"parallelism", "2.5", "want a whole number"},
		{"jar_id", "j", "is not uploaded to this Flink cluster"},
		{"jar_id", "../x.jar", "without /"},
		{"entry_class", "com.example.Job; rm", "want a Java class name"},
		{"savepoint_path", "file:x", "absolute path"},
		{"savepoint_path", "savepoints/sp-1", "want an absolute path or a URI"},
		{"savepoint_path", "file://flink-host/savepoints/sp-1", "not on host"},
		{"savepoint_path", "ftp://host/sp-1", "not ftp:"},
		{"savepoint_path", "s3:///sp-1", "want s3://<bucket or host>/<path>"},
		{"savepoint_path", "file:" + filepath.Join(rig.cfg.SavepointDirs[0], "x"), "is not a savepoint"},
		{"reason", long, "The reason is 200,000 characters long; keep it to 1,000"},
		{"args", strings.Repeat("a", 1001), "A program argument is 1,001 characters long"},
	} {
		form := url.Values{}
		for k, v := range good {
			form[k] = v
		}
		form.Set(tc.field, tc.value)
		w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", form)
		body := w.Body.String()
		if w.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s=%.40q: status %d, want 422", tc.field, tc.value, w.Code)
			continue
		}
		if n := runCount(t, rb); n != 0 {
			t.Fatalf("%s=%.40q: %d run(s) created", tc.field, tc.value, n)
		}
		i := strings.Index(body, `data-testid="err-`+tc.field+`"`)
		if i < 0 || !strings.Contains(body[i:min(len(body), i+600)], html.EscapeString(tc.want)) {
			t.Errorf("%s=%.40q: no message %q beside the field", tc.field, tc.value, tc.want)
			continue
		}
		// The field is tied to its message and takes the focus (the only one).
		j := strings.Index(body, `aria-describedby="err-`+tc.field+`"`)
		if j < 0 {
			t.Errorf("%s: the field is not tied to its message", tc.field)
			continue
		}
		tag := body[strings.LastIndex(body[:j], "<"):]
		if tag = tag[:strings.Index(tag, ">")]; !strings.Contains(tag, " autofocus") || strings.Count(body, " autofocus") != 1 {
			t.Errorf("%s: the refused field does not take the focus alone: %.200s", tc.field, tag)
		}
		// The refused value and the others are all still in the form.
		kept := []string{`value="` + html.EscapeString(good.Get("reason")) + `"`, `value="` + uploadedJar + `"`, ">--bootstrap\ndr:9092</textarea>"}
		switch tc.field {
		case "args":
			kept[2] = ">" + tc.value + "</textarea>"
		case "reason":
			kept[0] = `value="` + html.EscapeString(tc.value) + `"`
		case "jar_id":
			kept[1] = `value="` + html.EscapeString(tc.value) + `"`
		default:
			kept = append(kept, `value="`+html.EscapeString(tc.value)+`"`)
		}
		for _, k := range kept {
			if !strings.Contains(body, k) {
				t.Errorf("%s=%.40q: %.60q not kept in the form", tc.field, tc.value, k)
			}
		}
	}
	if w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", good); w.Code != http.StatusSeeOther || runCount(t, rb) != 1 {
		t.Fatalf("the good form: %d %s", w.Code, w.Body)
	}
}

// When the target's Flink does not answer, the jar list is unknown: the
// typed id must then have Flink's shape (<uuid>_<name>.jar).
func TestPlanCreateChecksJarShapeWhenFlinkIsSilent(t *testing.T) {
	rig, r, rb, good := planFieldsRig(t)
	rig.cfg.FlinkTargets[0].RestURL = "http://127.0.0.1:1"
	form := url.Values{}
	for k, v := range good {
		form[k] = v
	}
	form.Set("jar_id", "j.jar")
	w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", form)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "Flink names an uploaded jar &lt;uuid&gt;_&lt;file name&gt;.jar") || runCount(t, rb) != 0 {
		t.Fatalf("a jar id of no shape with Flink silent: %d", w.Code)
	}
	form.Set("jar_id", "0b6c5a3e-1d2f-4a5b-8c9d-0e1f2a3b4c5d_other.jar")
	if w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", form); w.Code != http.StatusSeeOther {
		t.Fatalf("a jar id of Flink's shape with Flink silent: %d %s", w.Code, w.Body)
	}
}

// A planned promote of a Cluster Linking flow while a mirror lags is a
// plan the runbook refuses at its start, with no override: Create refuses
// it, the rule's evidence beside the stop choice; the unplanned failover,
// which accepts the loss, is created.
func TestPlanCreateRefusesPlannedPromoteWithLag(t *testing.T) {
	rig, r, rb, _ := planFieldsRig(t)
	link, err := demo.StartClusterLinkStandIn("dr-cluster", "dr-link", map[string]int{"payments": 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	rig.cfg.Flows = append(rig.cfg.Flows, &config.Flow{Name: "link", Kind: "cluster-link", Source: "primary", Target: "dr",
		ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: "dr-cluster", Link: "dr-link"}})
	if err := rig.cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	link.SetLag("payments", 0, 42)
	form := url.Values{"flow": {"link"}, "stop": {"auto"}, "reason": {"planned move to DR"}}
	w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", form)
	body := w.Body.String()
	i := strings.Index(body, `data-testid="err-stop"`)
	if w.Code != http.StatusUnprocessableEntity || i < 0 || !strings.Contains(body[i:], "payments ACTIVE lag 42") || runCount(t, rb) != 0 {
		t.Fatalf("planned promote with lag: %d, run(s) %d, %s", w.Code, runCount(t, rb), body)
	}
	if !strings.Contains(body, `id="stop-auto" name="stop" value="auto" checked`) || !strings.Contains(body, `value="planned move to DR"`) {
		t.Fatal("the choices typed were not kept")
	}
	form.Set("stop", "failover")
	if w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", form); w.Code != http.StatusSeeOther {
		t.Fatalf("unplanned failover: %d %s", w.Code, w.Body)
	}
}

// What the runbook says of a step when it refuses the plan stands beside
// the field that asks for the step: a drill's restore without drill job
// arguments, beside the Flink cluster; the form is kept and nothing stored.
func TestPlanCreateShowsStepProblemBesideItsField(t *testing.T) {
	_, r, rb, good := planFieldsRig(t)
	form := url.Values{}
	for k, v := range good {
		form[k] = v
	}
	form.Set("drill", "1")
	w := serveAs(r, model.RoleOperator, http.MethodPost, "/failover", form)
	body := w.Body.String()
	i := strings.Index(body, `data-testid="err-flink_target"`)
	if w.Code != http.StatusUnprocessableEntity || i < 0 || !strings.Contains(body[i:], "no drill job arguments (drill.job_args)") || runCount(t, rb) != 0 {
		t.Fatalf("a drill without job arguments: %d, %d run(s)", w.Code, runCount(t, rb))
	}
	if !strings.Contains(body, `id="drill" name="drill" value="1" checked`) || !strings.Contains(body, `aria-describedby="err-flink_target"`) {
		t.Fatal("the drill box was not kept, or the cluster not tied to its message")
	}
}
