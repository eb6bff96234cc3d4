package monitor

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// The per-partition series are exported by default while a flow has at
// most config.PerPartitionBound partitions; when the bound switches them
// off the snapshot says why and the log says so once, and again when they
// come back.
func TestPerPartitionSeriesBoundIsSaid(t *testing.T) {
	var logged bytes.Buffer
	m := &Monitor{cfg: &config.Config{}, log: slog.New(slog.NewTextHandler(&logged, nil))}
	fm := &flowMonitor{flow: &config.Flow{Name: "big"}}
	snap := func(n int) *flowstate.FlowSnapshot {
		s := &flowstate.FlowSnapshot{Partitions: make([]model.PartitionLag, n)}
		m.notePerPartition(fm, s)
		return s
	}
	if s := snap(config.PerPartitionBound); s.PerPartitionOff != "" || logged.Len() != 0 {
		t.Fatalf("%d partitions: off %q, logged %q", config.PerPartitionBound, s.PerPartitionOff, logged.String())
	}
	s := snap(config.PerPartitionBound + 1)
	if !strings.Contains(s.PerPartitionOff, "10001 partitions, above the bound of 10000") || strings.Count(logged.String(), "not exported") != 1 {
		t.Fatalf("above the bound: off %q, logged %q", s.PerPartitionOff, logged.String())
	}
	snap(config.PerPartitionBound + 5)
	if n := strings.Count(logged.String(), "not exported"); n != 1 {
		t.Fatalf("logged %d times while still above the bound", n)
	}
	snap(3)
	if !strings.Contains(logged.String(), "exported again") {
		t.Fatalf("back under the bound, not logged: %q", logged.String())
	}
	m.cfg.Metrics.PerPartition = new(true)
	if s := snap(config.PerPartitionBound * 3); s.PerPartitionOff != "" {
		t.Fatalf("per_partition: true, still off: %q", s.PerPartitionOff)
	}
}
