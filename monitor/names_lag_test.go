package monitor

import (
	"context"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
)

// TestLagSkipsMM2InternalTopicsWithSeparator: with separator "_" and the
// offset syncs on the source (MM2's default), the source holds
// mm2-offset-syncs_dr_internal; MM2 never mirrors it, so the lag reader must
// not list it as a data topic (it would stay "unknown" forever).
func TestLagSkipsMM2InternalTopicsWithSeparator(t *testing.T) {
	primary, cl := newCluster(t, "primary", "events", "mm2-offset-syncs_dr_internal", "heartbeats")
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary.ListenAddrs()}, "dr": {Bootstrap: primary.ListenAddrs()}},
		Flows:    []*config.Flow{{Source: "primary", Target: "dr", Separator: "_"}},
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	flow := cfg.Flows[0]
	ft := flowstate.TopicsOf(flow)
	if ft.OffsetSyncs != "mm2-offset-syncs_dr_internal" {
		t.Fatalf("derived offset-syncs topic %q", ft.OffsetSyncs)
	}
	r := &LagReader{Flow: flow, Topics: ft, Source: cl}
	topics, err := r.sourceTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := topics.names; len(got) != 1 || got[0] != "events" {
		t.Errorf("data topics = %v, want [events]", got)
	}
}
