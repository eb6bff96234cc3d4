package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/demo"
)

// The plan form's pickers: the flow's groups with their checkpoint age,
// the DR target's jars with entry classes (and Flink REST's error when it
// does not answer), the summary of what would be planned, and a refresh
// without JavaScript that keeps what was typed.
func TestFailoverPlanPickers(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := getAs(t, c, "operator", "/failover", nil)
		i := strings.Index(body, `data-name="flink-events"`)
		if i >= 0 && strings.Contains(body[i:min(len(body), i+600)], "last checkpoint") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpointed flink-events in the group picker after 30 s: %.2000s", body[max(strings.Index(body, "group-list"), 0):])
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Before anything is touched the summary says what the form's defaults
	// plan (pre-flight checked, stop the mirror), not "no step".
	if _, body := getAs(t, c, "operator", "/failover", nil); !strings.Contains(body, "Pre-flight") || strings.Contains(body, "plan-summary-problem") {
		t.Errorf("the empty form's summary does not match its defaults: %.1500s", body[max(strings.Index(body, "What this plan will run"), 0):])
	}
	if _, body := getAs(t, c, "viewer", "/failover", nil); strings.Contains(body, "group-list") {
		t.Fatal("viewers are offered the plan form's pickers")
	}

	resp, body := getAs(t, c, "operator", "/failover/plan/jars?flink_target=sandbox-flink-dr", nil)
	pick := demo.FlinkJarID + "|" + demo.FlinkEntryClass
	if resp.StatusCode != 200 || !strings.Contains(body, `value="`+pick+`"`) || !strings.Contains(body, "events-job.jar") || !strings.Contains(body, "uploaded") {
		t.Fatalf("jars of the DR target: %d %s", resp.StatusCode, body)
	}
	if _, body := getAs(t, c, "operator", "/failover/plan/jars?flink_target=nosuch", nil); !strings.Contains(body, `data-testid="jars-error"`) ||
		!strings.Contains(body, `no Flink target`) {
		t.Fatalf("jars of an unknown target: %s", body)
	}

	form := url.Values{"flow": {"primary->dr"}, "preflight": {"1"}, "stop": {"auto"}, "group_pick": {"billing"},
		"groups": {"a,b\nbilling"}, "flink_target": {"sandbox-flink-dr"}, "jar_pick": {pick}, "savepoint_pick": {"file:/sp/x"}}
	_, body = getAs(t, c, "operator", "/failover/plan/summary?"+form.Encode(), nil)
	for _, want := range []string{"Pre-flight", "Translate consumer group billing", "Translate consumer group a,b",
		`jar &#34;` + demo.FlinkJarID + `&#34;, entry class ` + demo.FlinkEntryClass, "from file:/sp/x"} {
		if !strings.Contains(body, want) {
			t.Errorf("summary lacks %q: %s", want, body)
		}
	}
	if strings.Count(body, "consumer group billing") != 1 || strings.Contains(body, "plan-summary-problem") {
		t.Errorf("summary: %s", body)
	}
	form.Del("jar_pick")
	if _, body = getAs(t, c, "operator", "/failover/plan/summary?"+form.Encode(), nil); !strings.Contains(body, "name the uploaded jar") {
		t.Errorf("summary without a jar does not say the plan would be refused: %s", body)
	}

	// Without JavaScript the refresh button resubmits the form by GET: the
	// page comes back with everything typed and picked still there.
	form.Set("reason", "drill <3")
	form.Set("jar_pick", pick)
	form.Set("refresh", "1")
	_, body = getAs(t, c, "operator", "/failover?"+form.Encode(), nil)
	for _, want := range []string{`value="drill &lt;3"`, ">a,b\nbilling</textarea>", `value="` + pick + `" selected`,
		`name="group_pick" value="billing" checked`, `<option value="sandbox-flink-dr" selected`} {
		if !strings.Contains(body, want) {
			t.Errorf("refreshed form lacks %q", want)
		}
	}

	// The translate page picks one group (radios) from the same list.
	if _, body = getAs(t, c, "operator", "/group-picker?flow=primary-%3Edr&multi=false", nil); !strings.Contains(body, `type="radio"`) ||
		!strings.Contains(body, `value="flink-events"`) {
		t.Fatalf("translate group picker: %s", body)
	}
}
