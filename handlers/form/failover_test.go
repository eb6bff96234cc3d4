package form

import (
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/failover"
)

// The plan form takes groups one per line: a name with a comma stays one
// group, blank lines and line-end spaces (CRLF from browsers) are ignored.
func TestPlanFormGroupsOnePerLine(t *testing.T) {
	form := url.Values{"flow": {"primary->dr"}, "groups": {"a,b\r\n\r\n  billing  \n\n", "flink-events"}}
	req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p := NewPlan(req).Plan(&config.Config{})
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
	steps := p.Plan(&config.Config{}).Steps
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
