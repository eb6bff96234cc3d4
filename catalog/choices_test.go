package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
)

// Jars lists a target's uploaded jars with their entry classes, newest
// upload first, in the shape of Flink's GET /jars; an unreachable target
// or an unknown one is an error, not an empty list.
func TestJars(t *testing.T) {
	ctx := context.Background()
	ff := newFakeFlink(t)
	ff.json("GET /jars", `{"address":"http://jm:8081","files":[
		{"id":"a1_old.jar","name":"old.jar","uploaded":1000,"entry":[{"name":"com.example.Old","description":null}]},
		{"id":"b2_new.jar","name":"new.jar","uploaded":2000,"entry":[{"name":"com.example.Job","description":null},{"name":"com.example.Tool","description":null}]},
		{"id":"c3_lib.jar","name":"lib.jar","uploaded":1500,"entry":[]}]}`)
	sb, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	c := &Catalog{Config: &config.Config{FlinkTargets: []*config.FlinkTarget{{Name: "flink-dr", RestURL: ff.URL, Region: "dr"},
		{Name: "gone", RestURL: deadURL(t), Region: "dr"}, {Name: "sandbox", RestURL: sb.URL, Region: "dr"}}}, Log: quietLog()}
	jars, err := c.Jars(ctx, "flink-dr")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jars {
		var entries []string
		for _, e := range j.Entry {
			entries = append(entries, e.Name)
		}
		got = append(got, j.ID+"="+strings.Join(entries, "+"))
	}
	if want := "b2_new.jar=com.example.Job+com.example.Tool c3_lib.jar= a1_old.jar=com.example.Old"; strings.Join(got, " ") != want {
		t.Fatalf("jars %q, want %q", strings.Join(got, " "), want)
	}
	if _, err := c.Jars(ctx, "gone"); err == nil {
		t.Fatal("an unreachable target listed jars")
	}
	if _, err := c.Jars(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no Flink target "nope"`) {
		t.Fatalf("unknown target: %v", err)
	}
	// The sandbox's Flink stand-in serves its jar with its entry class, as
	// the plan form's picker needs.
	jars, err = c.Jars(ctx, "sandbox")
	if err != nil || len(jars) != 1 || jars[0].ID != demo.FlinkJarID || len(jars[0].Entry) != 1 || jars[0].Entry[0].Name != demo.FlinkEntryClass {
		t.Fatalf("stand-in jars %+v, %v", jars, err)
	}
}
