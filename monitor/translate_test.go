package monitor

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The pages name a flow and get model's values back: the DR name under
// the flow's replication policy and the sync index's translation; a flow
// the monitor does not know is storage.ErrNotFound for every read, never
// an empty answer that reads as "nothing to translate".
func TestTranslationReadsByFlowName(t *testing.T) {
	primary, _ := newCluster(t, "primary", "events")
	dr, _ := newCluster(t, "dr", "events")
	cfg := testConfig(t, primary, dr)
	cfg.Flows[0].ReplicationPolicy = config.PolicyDefault // DR names carry the source alias
	flow := cfg.Flows[0].Name
	m, _ := newTestMonitor(t, cfg, filepath.Join(t.TempDir(), "db"))
	tp := model.TP{Topic: "events", Partition: 2}
	m.flows[0].state.Syncs.Add([]model.OffsetSync{{Topic: "events", Partition: 2, Upstream: 100, Downstream: 40, LogOffset: 1, RecordMs: 1}})

	gotTP, got, err := m.TranslateOffset(flow, tp, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := (model.TP{Topic: "primary.events", Partition: 2}); gotTP != want {
		t.Errorf("DR partition %v, want %v (the default policy prefixes the source alias)", gotTP, want)
	}
	if want := m.flows[0].state.Syncs.Translate(tp, 100); got != want || !got.Translated() {
		t.Errorf("translation %+v, want the sync index's %+v, translated", got, want)
	}

	ctx := context.Background()
	_, _, errOffset := m.TranslateOffset("nope", tp, 100)
	_, errGroups := m.KnownGroups(ctx, "nope", time.Second)
	_, errPlan := m.GroupPlan(ctx, "nope", "g")
	_, errSeek := m.SeekDR(ctx, "nope", 1, "events")
	for name, err := range map[string]error{"TranslateOffset": errOffset, "KnownGroups": errGroups, "GroupPlan": errPlan, "SeekDR": errSeek} {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s of an unknown flow: %v, want storage.ErrNotFound", name, err)
		}
	}
}
