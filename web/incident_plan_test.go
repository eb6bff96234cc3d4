package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/views"
)

// Issue 31: "Start a failover" from the incident view opens the plan form
// filled with what the console knows: pre-flight and the mirror stop,
// every group MM2 checkpointed, the only DR Flink target and its only
// jar, the newest usable savepoint with the recommended strategy, and a
// reason; a plain visit to the form stays empty.
func TestIncidentOpensAFilledPlan(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	sp := usableSavepoint(t, c)
	var groups map[string]int64
	for deadline := time.Now().Add(30 * time.Second); len(groups) == 0; time.Sleep(100 * time.Millisecond) {
		var err error
		if groups, err = c.Store.CheckpointGroups(context.Background(), "primary->dr"); err != nil || time.Now().After(deadline) {
			t.Fatalf("no checkpointed group in 30 s (%v)", err)
		}
	}
	_, page := getAs(t, c, "operator", strings.TrimSuffix(views.StartFailoverPath("primary->dr"), "#plan-form"), nil)
	checked := func(name, value string) bool {
		re := regexp.MustCompile(`<input[^>]*name="` + name + `"[^>]*value="` + regexp.QuoteMeta(value) + `"[^>]*checked`)
		return re.MatchString(page)
	}
	selected := func(value string) bool {
		return strings.Contains(page, `value="`+value+`" selected`)
	}
	for g := range groups {
		if !checked("group_pick", g) {
			t.Errorf("checkpointed group %s is not ticked", g)
		}
	}
	if !selected("sandbox-flink-dr") {
		t.Error("the only DR Flink target is not chosen")
	}
	if !selected(views.JarPick(demo.FlinkJarID, "")) && !strings.Contains(page, `value="`+demo.FlinkJarID+`|`) {
		t.Error("the only jar is not chosen")
	}
	if !selected(sp) {
		t.Errorf("the newest usable savepoint %s is not chosen", sp)
	}
	if !checked("restore_strategy", "new-uid") {
		t.Error("the recommended strategy for MirrorMaker 2 (translated offsets, new uid) is not the default")
	}
	_, plain := getAs(t, c, "operator", "/failover", nil)
	if strings.Contains(plain, `value="`+sp+`" selected`) {
		t.Error("a plain visit to the form is filled in")
	}
}
