package monitor_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
)

// A Cluster Linking flow on the same monitor as MM2 flows: lag in messages
// from mirror_lags, lag in time from the source record at the last fetched
// offset, BROKEN when a mirror fails even though the link stays ACTIVE.
func TestMonitorClusterLinkFlow(t *testing.T) {
	ctx := context.Background()
	src := kfake.MustCluster(kfake.NumBrokers(1), kfake.ClusterID("primary"), kfake.SeedTopics(2, "payments"))
	defer src.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	now := time.Now()
	for i := range 10 { // payments-1: offsets 0..9, ten seconds apart
		r := &kgo.Record{Topic: "payments", Partition: 1, Value: []byte{byte(i)}, Timestamp: now.Add(time.Duration(i-10) * 10 * time.Second)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	link, err := demo.StartClusterLinkStandIn("dr-cluster", "dr-link", map[string]int{"payments": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	link.SetLastFetchOffset("payments", 1, 7)
	link.SetLag("payments", 1, 3)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: src.ListenAddrs()}, "dr": {Bootstrap: []string{"127.0.0.1:1"}}},
		Flows: []*config.Flow{{Name: "link", Kind: "cluster-link", Source: "primary", Target: "dr",
			ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: "dr-cluster", Link: "dr-link"}}},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := monitor.NewMonitor(ctx, cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Now = func() time.Time { return now }
	m.Refresh(ctx)
	s := m.Snapshot("link")
	if len(s.Partitions) != 2 || s.Link == nil || s.Link.LinkState != "ACTIVE" {
		t.Fatalf("snapshot %+v link %+v", s.Partitions, s.Link)
	}
	p1 := s.Partitions[1]
	if p1.LagMessages.V != 3 || p1.Replicated.V != 7 || p1.SourceEnd.V != 10 || p1.Method != model.PositionClusterLink {
		t.Fatalf("payments-1: lag %d replicated %d end %d (%s)", p1.LagMessages.V, p1.Replicated.V, p1.SourceEnd.V, p1.Method)
	}
	// The oldest unreplicated record is offset 7, written 30 s before now.
	if !p1.LagMs.Known || p1.LagMs.V != 30_000 {
		t.Fatalf("payments-1 lag ms %v", p1.LagMs)
	}
	if s.Status != model.FlowStatusOK || *s.RPOMs != 30_000 {
		t.Fatalf("status %s (%s), rpo %v", s.Status, s.Reason, s.RPOMs)
	}
	// The source goes away: the link stays ACTIVE, the mirror does not.
	link.SetSourceUnavailable(true)
	m.Refresh(ctx)
	if s := m.Snapshot("link"); s.Status != model.FlowStatusBroken || !strings.Contains(s.Reason, "SOURCE_UNAVAILABLE") {
		t.Fatalf("source unavailable: %s (%s)", s.Status, s.Reason)
	}
	// The REST API stops answering: last values stay, stale; BROKEN after the timeout.
	link.Close()
	m.Now = func() time.Time { return now.Add(40 * time.Second) }
	m.Refresh(ctx)
	s = m.Snapshot("link")
	if s.Target.OK || !s.FiguresStale || s.Partitions[1].LagMessages.V != 3 || s.Status != model.FlowStatusBroken ||
		!strings.Contains(s.Reason, "no answer from the cluster link REST API") {
		t.Fatalf("REST gone: target %+v, %s (%s)", s.Target, s.Status, s.Reason)
	}
}
