package config

import (
	"strings"
	"testing"
	"time"
)

func TestSwitchoverConfig(t *testing.T) {
	flow := func(sw string) string {
		return "clusters:\n  a: {bootstrap: [\"h:1\"]}\n  b: {bootstrap: [\"h:2\"]}\nflows:\n  - {name: f, source: a, target: b, switchover: " + sw + "}\n"
	}
	c, err := Parse("s.yaml", strings.NewReader(flow(`{fence: acl, principals: ["User:app", "User:billing"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Flows[0].Switchover
	if s == nil || s.Fence != FenceACL || len(s.Principals) != 2 || s.QuietPeriod.D() != 10*time.Second ||
		s.CatchUpTimeout.D() != 10*time.Minute || s.CommandTimeout.D() != time.Minute {
		t.Fatalf("switchover %+v", s)
	}
	for sw, want := range map[string][]string{
		`{}`:            {"switchover.fence"},
		`{fence: wall}`: {"switchover.fence", `"wall"`},
		`{fence: acl}`:  {"switchover.principals"},
		`{fence: acl, principals: [app, "User:*"]}`:                     {"switchover.principals[0]", "switchover.principals[1]"},
		`{fence: command}`:                                              {"switchover.command"},
		`{fence: command, command: [fence.sh], principals: ["User:a"]}`: {"switchover.principals", "only for fence acl"},
		`{fence: manual, quiet_period: 100ms}`:                          {"switchover.quiet_period", "at least 1s"},
		`{fence: manual, catch_up_timeout: -1s}`:                        {"switchover.catch_up_timeout", "negative"},
	} {
		_, err := Parse("s.yaml", strings.NewReader(flow(sw)))
		if err == nil {
			t.Errorf("%s: accepted", sw)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %v, want %s", sw, err, w)
			}
		}
	}
	// One problem per mistake: two principals wrong, two problems.
	_, err = Parse("s.yaml", strings.NewReader(flow(`{fence: acl, principals: [app, bob]}`)))
	if n := strings.Count(err.Error(), "principals["); n != 2 {
		t.Errorf("want 2 principal problems, got %d: %v", n, err)
	}
}
