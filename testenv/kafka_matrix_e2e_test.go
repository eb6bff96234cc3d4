//go:build e2e

package testenv_test

// The Kafka version matrix: the version-sensitive end-to-end checks on the Kafka versions
// besides the main one (testenv.KafkaDefault, which runs the whole suite). Per version: the
// bytes the console decodes (offset syncs, checkpoints, heartbeats, Connect offsets),
// translation against real checkpoints, and lag while MM2 is held behind a producer, each in
// dedicated and Connect mode. The helpers are the main suite's, run with another
// testenv.KafkaDist.
//
//	go test -tags e2e -count=1 -run TestKafkaMatrix -v ./testenv/

import (
	"fmt"
	"testing"

	"github.com/drconsole/drconsole/testenv"
)

func TestKafkaMatrix(t *testing.T) {
	// Each policy and sync location once per version and mode where the scenario allows.
	checks := []struct {
		name   string
		second bool // the check's second mode: only for an MM2 the full suite does not run
		run    func(t *testing.T, d testenv.KafkaDist)
	}{
		{"dedicated-" + variants[1].name, false, func(t *testing.T, d testenv.KafkaDist) { runScenario(t, d, dedicated, variants[1]) }},
		{"connect-" + variants[0].name, true, func(t *testing.T, d testenv.KafkaDist) { runScenario(t, d, connectCluster, variants[0]) }},
		{"translate-dedicated-" + xlVariants[2].name, true, func(t *testing.T, d testenv.KafkaDist) { xlScenario(t, d, dedicated, xlVariants[2]) }},
		{"translate-connect-" + xlVariants[1].name, false, func(t *testing.T, d testenv.KafkaDist) { xlScenario(t, d, connectCluster, xlVariants[1]) }},
		{"lag-connect", false, consoleLagMatchesMM2},
		{"lag-dedicated", true, consoleBrokenAndPrimaryLoss},
	}
	for _, d := range []testenv.KafkaDist{testenv.Kafka3_6, testenv.Kafka3_9, testenv.Kafka4_4} {
		t.Run(d.String(), func(t *testing.T) {
			for _, c := range checks {
				// The main version's MM2 runs in both modes in the full suite; against other
				// brokers (4.4.0) each check runs in one mode.
				if c.second && d.Mirror == testenv.KafkaVersion {
					continue
				}
				t.Run(c.name, func(t *testing.T) { c.run(t, d) })
			}
		})
	}
}

// timedSyncs tells whether dist's MirrorMaker 2 has KAFKA-15906 (Kafka 3.7.0): each
// partition's newest offset sync is also emitted every offset.flush.interval.ms. Before it,
// syncs come only every offset.lag.max records and at upstream gaps, so a finished partition's
// records past its last sync are never synced.
func timedSyncs(dist testenv.KafkaDist) bool { return dist.MirrorAtLeast(3, 7) }

// endCheckpoint is a fully consumed partition's final checkpoint beside the DR end offset.
type endCheckpoint struct {
	name        string
	down, drEnd int64
}

// checkTimedSyncs says which sync emission rule dist follows, from the checkpoints of fully
// consumed partitions: with timed syncs every one lands on the DR end; without, some stop
// short of it (the group re-reads the tail after a failover), never past it.
func checkTimedSyncs(t *testing.T, dist testenv.KafkaDist, cps []endCheckpoint) {
	t.Helper()
	var short []string
	for _, c := range cps {
		if c.down > c.drEnd {
			t.Errorf("%s: checkpoint %d past the DR end %d", c.name, c.down, c.drEnd)
		}
		if c.down < c.drEnd {
			short = append(short, fmt.Sprintf("%s at %d of %d", c.name, c.down, c.drEnd))
		}
	}
	switch timed := timedSyncs(dist); {
	case timed && len(short) > 0:
		t.Errorf("MM2 %s has timed syncs (KAFKA-15906), yet fully consumed partitions checkpoint below the DR end: %v", dist.Mirror, short)
	case !timed && len(short) == 0:
		t.Errorf("MM2 %s has no timed syncs, yet all %d fully consumed partitions checkpoint at the DR end", dist.Mirror, len(cps))
	case timed:
		t.Logf("MM2 %s: timed syncs (KAFKA-15906): %d fully consumed partitions checkpoint at the DR end", dist.Mirror, len(cps))
	default:
		t.Logf("MM2 %s: no timed syncs (before KAFKA-15906): fully consumed partitions checkpoint short of the DR end: %v", dist.Mirror, short)
	}
}
