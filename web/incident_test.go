package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/views"
)

// Issue 31: with the primary down the overview leads with the incident,
// on the page and pushed to a page left open since before the outage;
// an operator is offered the failover, a viewer is not. Its own console:
// tests of the shared one leave its flow failed over, which no incident
// leads.
func TestOverviewLeadsWithTheIncident(t *testing.T) {
	t.Parallel() // a console of its own: not one of the shared one's serial tests
	c := ownConsole(t)
	waitReady(t, c)
	_, calm := getAs(t, c, "operator", "/", nil)
	if strings.Contains(calm, `data-testid="incident"`) {
		t.Fatal("a calm overview leads with an incident")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := readEvents(openStream(t, ctx, c.URL+"/events?losses=0&flows=1", sessionCookie(t, c, "operator")))

	c.Sandbox.SetPrimaryDown(true)
	t.Cleanup(func() { c.Sandbox.SetPrimaryDown(false) })
	waitFor(t, "the primary to read as unreachable", func() bool {
		s := c.Monitor.Snapshot("primary->dr")
		return s.Source.Checked && !s.Source.OK
	})
	deadline := time.Now().Add(30 * time.Second)
	pushed := ""
	for ev := range events {
		if ev.name == "incidents" && strings.Contains(ev.data, `data-flow="primary-&gt;dr"`) {
			pushed = ev.data
			break
		}
		if time.Now().After(deadline) {
			break
		}
	}
	mustContain(t, "the incident pushed to a page left open", pushed, "the primary (primary) does not answer", "Start a failover of primary-&gt;dr")

	_, page := getAs(t, c, "operator", "/", nil)
	mustContain(t, "the overview of an operator", page, `data-testid="incident"`, "Primary unreachable since", "Data at risk",
		`data-testid="incident-at-risk"><strong>≥ `, `href="`+strings.ReplaceAll(views.StartFailoverPath("primary->dr"), "&", "&amp;")+`"`)
	if strings.Index(page, `data-testid="incident"`) > strings.Index(page, `class="cards"`) {
		t.Error("the incident does not lead the overview: it comes after the flow cards")
	}
	_, viewer := getAs(t, c, "viewer", "/", nil)
	mustContain(t, "the overview of a viewer", viewer, `data-testid="incident"`, "An operator can start a failover")
	if strings.Contains(viewer, "from=incident") {
		t.Error("a viewer is offered the failover")
	}
}
