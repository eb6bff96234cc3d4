package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestSeekByTimestamp(t *testing.T) {
	ctx := context.Background()
	_, dcl := newCluster(t, "dr", "events")
	base := time.UnixMilli(1_700_000_000_000)
	for i := range 10 {
		produce(t, dcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	got, err := SeekByTimestamp(ctx, dcl, base.Add(4500*time.Millisecond).UnixMilli(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if r := got[model.TP{Topic: "events", Partition: 0}]; r.Offset != 5 || r.Timestamp != base.Add(5*time.Second).UnixMilli() {
		t.Fatalf("events-0 = %+v", r)
	}
	if r := got[model.TP{Topic: "events", Partition: 1}]; r.Offset != 0 || r.Timestamp != -1 {
		t.Fatalf("empty events-1 = %+v", r)
	}
}
