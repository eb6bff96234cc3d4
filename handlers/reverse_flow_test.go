package handlers

import (
	"context"
	"html"
	"maps"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
)

// A failback's reverse flow is on the overview and has a flow page, each
// saying which flow it reverses; plan, savepoint and active-side choices
// leave it out.
func TestReverseFlowPages(t *testing.T) {
	rig := newPagesRig(t, 1, 1, 0)
	fwd := rig.cfg.Flows[0]
	rev := &config.Flow{Name: fwd.Name + "~reverse", ReverseOf: fwd.Name, Kind: "mm2", Source: "dr", Target: "primary",
		SourceAlias: "dr", TargetAlias: "primary", ReplicationPolicy: "identity", OffsetSyncsLocation: "target", Topics: fwd.Topics}
	if err := rig.mon.SetWatched(context.Background(), []*config.Flow{rev}); err != nil {
		t.Fatal(err)
	}
	rig.tick(5e9)
	note := "the reverse flow of"
	w := rig.get(t, "/")
	body := w.Body.String()
	card := `data-flow="` + html.EscapeString(rev.Name) + `"`
	if w.Code != 200 || !strings.Contains(body, card) || strings.Count(body, note) != 1 {
		t.Fatalf("overview %d: reverse card %v, notes %d", w.Code, strings.Contains(body, card), strings.Count(body, note))
	}
	w = rig.get(t, "/flows/"+url.PathEscape(rev.Name))
	if w.Code != 200 || !strings.Contains(w.Body.String(), note) || !strings.Contains(w.Body.String(), "dr → primary") {
		t.Fatalf("reverse flow page %d: %s", w.Code, w.Body.String())
	}
	if w = rig.get(t, "/flows/"+url.PathEscape(fwd.Name)); strings.Contains(w.Body.String(), note) {
		t.Fatal("the forward flow's page calls it a reverse flow")
	}
	if !strings.Contains(body, "flows=2") {
		t.Fatal("the overview's event stream does not say how many flows the page has")
	}
	// A page loaded before the reverse flow was watched is told to reload,
	// and each card's events are named by flow, so none gets another's.
	for loaded, want := range map[string]bool{"1": true, "2": false} {
		req := httptest.NewRequest("GET", "/events?losses=0&flows="+loaded, nil)
		frags, _ := rig.h.OverviewEvents(httptest.NewRecorder(), req)
		fs, err := frags(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		events := map[string]string{}
		for _, f := range fs {
			var b strings.Builder
			if err := f.View.Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			events[f.Event] = b.String()
		}
		if got := strings.Contains(events["flows"], "flows-changed"); got != want {
			t.Errorf("page with %s flows: reload notice %v, want %v", loaded, got, want)
		}
		fc, rc := events["card-"+fwd.Name], events["card-"+rev.Name]
		if !strings.Contains(rc, note) || fc == "" || strings.Contains(fc, note) {
			t.Errorf("card events %v", slices.Collect(maps.Keys(events)))
		}
	}
	got := configuredFlows(rig.mon.Snapshots())
	if len(got) != 1 || got[0].Flow.Name != fwd.Name || len(rig.mon.Snapshots()) != 2 {
		t.Fatalf("configured flows %d of %d", len(got), len(rig.mon.Snapshots()))
	}
}
