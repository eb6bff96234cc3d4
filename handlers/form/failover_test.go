package form

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
)

// The plan form takes groups one per line: a name with a comma stays one
// group, blank lines and line-end spaces (CRLF from browsers) are ignored.
func TestPlanFormGroupsOnePerLine(t *testing.T) {
	form := url.Values{"flow": {"primary->dr"}, "groups": {"a,b\r\n\r\n  billing  \n\n", "flink-events"}}
	req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p := NewPlan(req).Request().Plan(&config.Config{})
	var groups []string
	for _, s := range p.Steps {
		if s.Kind == failover.KindTranslateGroup {
			groups = append(groups, s.Group)
		}
	}
	if want := []string{"a,b", "billing", "flink-events"}; !slices.Equal(groups, want) {
		t.Fatalf("groups %q, want %q", groups, want)
	}
}

// Picked groups come first, then the typed ones; a group both picked and
// typed is planned once, and neither source splits a name at a comma. A
// typed jar, entry class or savepoint path wins over the picked one.
func TestPlanFormPickedAndTyped(t *testing.T) {
	form := url.Values{"flow": {"primary->dr"}, "group_pick": {"billing", "a,b"}, "groups": {"a,b\nextra, with comma\nbilling"},
		"flink_target": {"dr"}, "jar_pick": {"abc_events.jar|com.example.Job"}, "savepoint_pick": {"file:/sp/savepoint-1"}}
	read := func(form url.Values) Plan {
		req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return NewPlan(req)
	}
	p := read(form)
	if want := []string{"billing", "a,b", "extra, with comma"}; !slices.Equal(p.Groups, want) {
		t.Fatalf("groups %q, want %q", p.Groups, want)
	}
	if p.JarID != "abc_events.jar" || p.EntryClass != "com.example.Job" || p.SavepointPath != "file:/sp/savepoint-1" {
		t.Fatalf("picked jar %q class %q savepoint %q", p.JarID, p.EntryClass, p.SavepointPath)
	}
	form.Set("jar_id", " typed.jar ")
	form.Set("entry_class", "com.example.Other")
	form.Set("savepoint_path", "s3://b/sp-2")
	p = read(form)
	if p.JarID != "typed.jar" || p.EntryClass != "com.example.Other" || p.SavepointPath != "s3://b/sp-2" {
		t.Fatalf("typed jar %q class %q savepoint %q: the typed values must win", p.JarID, p.EntryClass, p.SavepointPath)
	}
	steps := p.Request().Plan(&config.Config{}).Steps
	last := steps[len(steps)-1]
	if last.Kind != failover.KindRestoreFlink || last.JarID != "typed.jar" || last.SavepointPath != "s3://b/sp-2" {
		t.Fatalf("restore step %+v", last)
	}
}

// The translate form takes the typed group over the picked one, and
// remembers which it was.
func TestTranslateGroupPickedOrTyped(t *testing.T) {
	picked := NewTranslateQuery(httptest.NewRequest("GET", "/translate?flow=f&group_pick=a%2Cb&group=", nil))
	typed := NewTranslateQuery(httptest.NewRequest("GET", "/translate?flow=f&group_pick=a%2Cb&group=+billing+", nil))
	if picked.Group != "a,b" || picked.Typed != "" || typed.Group != "billing" || typed.Typed != "billing" {
		t.Fatalf("picked %+v, typed %+v", picked, typed)
	}
}

// The rewrite strategy plans a rewrite-savepoint step (destination
// proposed beside the source, the choices read per partition) and restores
// its copy without allowNonRestoredState; the new-uid strategy translates
// the groups from the savepoint and restores with allowNonRestoredState.
// Unreadable choices and a ticked allowNonRestoredState are refused.
func TestPlanFormRestoreStrategies(t *testing.T) {
	cfg := &config.Config{SavepointDirs: []string{"/sp"}}
	read := func(form url.Values) Plan {
		req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return NewPlan(req)
	}
	form := url.Values{"flow": {"primary->dr"}, "flink_target": {"dr"}, "jar_id": {"j"}, "savepoint_pick": {"file:/sp/savepoint-1"},
		"group_pick": {"billing"}, "restore_strategy": {"rewrite"}, ChoiceField("events-2"): {"earliest"},
		ChoiceField("events-3"): {"timestamp"}, ChoiceAtField("events-3"): {"2026-12-01T07:00:00Z"}, ChoiceField("events-4"): {""}}
	p := read(form)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	steps := p.Request().Plan(cfg).Steps
	rw, restore := steps[len(steps)-2], steps[len(steps)-1]
	if rw.Kind != failover.KindRewriteSavepoint || rw.RewriteFrom != "file:/sp/savepoint-1" || rw.RewriteTo != "file:/sp/savepoint-1-dr-primary--dr" ||
		len(rw.Choices) != 2 || rw.Choices["events-2"].Kind != "earliest" || rw.Choices["events-3"].AtMs != 1796108400000 {
		t.Fatalf("rewrite step %+v", rw)
	}
	if restore.SavepointPath != rw.RewriteTo || restore.AllowNonRestoredState || steps[len(steps)-3].FromSavepoint != "" {
		t.Fatalf("restore %+v after %+v", restore, steps[len(steps)-3])
	}
	form.Set("rewrite_to", "file:/sp/mine")
	if rw := read(form).Request().Plan(cfg).Steps[len(steps)-2]; rw.RewriteTo != "file:/sp/mine" {
		t.Fatalf("typed destination %q", rw.RewriteTo)
	}
	form.Set("allow_non_restored_state", "1")
	form.Set(ChoiceAtField("events-3"), "yesterday")
	err := read(form).Validate()
	if err == nil || !strings.Contains(err.Error(), "untick allowNonRestoredState") || !strings.Contains(err.Error(), "events-3: choice") {
		t.Fatalf("bad rewrite form: %v", err)
	}
	form = url.Values{"flow": {"primary->dr"}, "flink_target": {"dr"}, "jar_id": {"j"}, "savepoint_pick": {"file:/sp/savepoint-1"},
		"group_pick": {"billing"}, "restore_strategy": {"new-uid"}}
	steps = read(form).Request().Plan(cfg).Steps
	if g, r := steps[len(steps)-2], steps[len(steps)-1]; g.FromSavepoint != "file:/sp/savepoint-1" || !r.AllowNonRestoredState || r.SavepointPath != "file:/sp/savepoint-1" {
		t.Fatalf("new uid: %+v %+v", g, r)
	}
}

// A failback of a Cluster Linking flow is its own fixed plan; the pause
// box picks reverse-and-pause-mirror, and groups typed beside it are not
// translated (offsets are the same on both ends).
func TestPlanFormClusterLinkFailback(t *testing.T) {
	cfg := &config.Config{Flows: []*config.Flow{{Name: "link", Kind: "cluster-link"}}}
	for _, pause := range []bool{false, true} {
		form := url.Values{"flow": {"link"}, "failback": {"1"}, "groups": {"app"}}
		if pause {
			form.Set("failback_pause_mirrors", "1")
		}
		req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		got, want := NewPlan(req).Request().Plan(cfg), failback.LinkFailbackPlan("link", pause)
		if got.Hash() != want.Hash() {
			t.Fatalf("pause %v: plan %+v, want %+v", pause, got, want)
		}
	}
}

// The switchover box asks for a switchover plan, and only alone.
func TestPlanFormSwitchover(t *testing.T) {
	read := func(v url.Values) Plan {
		req := httptest.NewRequest("POST", "/failover", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return NewPlan(req)
	}
	p := read(url.Values{"flow": {"f"}, "switchover": {"1"}, "groups": {"app"}, "reason": {"region evacuation"}})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if q := p.Request(); q.Kind != runbook.PlanSwitchover || q.Groups[0] != "app" {
		t.Fatalf("request %+v", q)
	}
	for _, other := range []string{"drill", "failback"} {
		p := read(url.Values{"flow": {"f"}, "switchover": {"1"}, other: {"1"}, "reason": {"both"}})
		var errs Errors
		if err := p.Validate(); !errors.As(err, &errs) || errs["switchover"] == "" {
			t.Errorf("switchover and %s: %v", other, err)
		}
	}
}
