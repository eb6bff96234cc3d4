package monitor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/storage"
)

// The primary's committed offsets are stored for the mirrored topics only,
// stamped with the time of the reading.
func TestRecordPrimaryGroups(t *testing.T) {
	ctx := context.Background()
	_, pcl := newCluster(t, "primary", "events", "local")
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mirrored := func(topic string) bool { return topic == "events" }
	if n, err := RecordPrimaryGroups(ctx, store, "primary->dr", pcl, mirrored, time.UnixMilli(1)); err != nil || n != 0 {
		t.Fatalf("no groups: recorded %d, %v", n, err)
	}
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: "events", Partition: 1, At: 42, LeaderEpoch: -1})
	o.Add(kadm.Offset{Topic: "local", Partition: 0, At: 5, LeaderEpoch: -1})
	if err := kadm.NewClient(pcl).CommitAllOffsets(ctx, "billing", o); err != nil {
		t.Fatal(err)
	}
	if n, err := RecordPrimaryGroups(ctx, store, "primary->dr", pcl, mirrored, time.UnixMilli(7)); err != nil || n != 1 {
		t.Fatalf("recorded %d, %v", n, err)
	}
	got, err := store.PrimaryGroupOffsets(ctx, "primary->dr", "billing")
	if err != nil || len(got) != 1 || got[0] != (storage.GroupOffset{Group: "billing", Topic: "events", Partition: 1, Offset: 42, AtMs: 7}) {
		t.Fatalf("stored %+v, %v", got, err)
	}
}
