//go:build e2e

package testenv_test

// Issue 10, items 6 and 9, against real Kafka and real MirrorMaker 2:
// internal topics under a non-default separator, and records of aborted
// transactions that MM2 copies to DR.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/testenv"
)

// With replication.policy.separator "_" and the offset syncs on the source
// (MM2's default location), the primary holds MM2's own
// mm2-offset-syncs_dr_internal. MM2 never mirrors it; the console must not
// list it as a data partition (it would stay "unknown" forever and keep the
// flow from ever reading fully healthy).
func TestSeparatorInternalTopics(t *testing.T) {
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": 3})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 3, 300)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "default", OffsetSyncsLocation: "source", Topics: ".*",
		Extra: map[string]string{"replication.policy.separator": "_"}}
	testenv.StartMM2Dedicated(t, opts)

	// MM2 really created its offset-syncs topic under the "_" name on the
	// primary, and mirrored events as primary_events.
	const syncs = "mm2-offset-syncs_dr_internal"
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		p, d := topicList(t, primary.Admin(t)), topicList(t, dr.Admin(t))
		if !slices.Contains(p, syncs) || !slices.Contains(d, "primary_events") || !slices.Contains(d, "primary_heartbeats") {
			return fmt.Errorf("primary topics %v, dr topics %v", p, d)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "default", Separator: "_", OffsetSyncsLocation: "source",
		ConnectOffsetsTopic: kafka.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{".*"}}}
	mon, _ := runConsole(t, flow, primary, dr, 30*time.Second)
	var last string
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		last = snapshotLine(s)
		var names []string
		for _, p := range s.Partitions {
			names = append(names, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
			if p.Topic == syncs {
				return fmt.Errorf("MM2's own %s listed as a mirrored partition: %s", syncs, last)
			}
			if p.LagMessages == nil || *p.LagMessages != 0 {
				return fmt.Errorf("not caught up: %s", last)
			}
		}
		if len(names) != 3 || s.Status != kafka.StatusOK || s.Unknown != 0 {
			return fmt.Errorf("partitions %v: %s", names, last)
		}
		return nil
	}); err != nil {
		t.Fatalf("console with separator _: %v", err)
	}
	// MM2 agrees it is internal: nothing named after it reached DR.
	for _, d := range topicList(t, dr.Admin(t)) {
		if d == "primary_"+syncs {
			t.Errorf("MM2 mirrored its own offset-syncs topic as %s", d)
		}
	}
	t.Logf("console: %s", last)
}
