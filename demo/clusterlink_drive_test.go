package demo

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The sandbox's link follows the real primary; once failed over, what a
// truncate-and-restore sent to the primary's end says it deletes is
// exactly the primary's records past the stopped mirror, per partition,
// records written after the failover included: never fewer.
func TestDriveClusterLinkCountsWhatTruncationDeletes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	primary, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, LinkTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(primary.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(n int) {
		t.Helper()
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: LinkTopic, Partition: int32(i % 3), Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(90)
	s, err := StartClusterLinkStandIn(LinkClusterID, LinkName, LinkTopics)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetPendingStopped(50 * time.Millisecond)
	if err := DriveClusterLink(ctx, s, primary.ListenAddrs(), 3); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the link to follow the primary", func() bool {
		return s.State().Mirrors[LinkTopic].LastFetchOffsets[0] > 0
	})
	post := func(cluster, action string) []map[string]any {
		t.Helper()
		resp, err := http.Post(s.URL+"/v3/clusters/"+cluster+"/links/"+LinkName+"/mirrors:"+action, "application/json",
			strings.NewReader(`{"mirror_topic_names":["`+LinkTopic+`"]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Data []map[string]any }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Data) != 1 || out.Data[0]["error_code"] != nil {
			t.Fatalf("%s: %d %+v %v", action, resp.StatusCode, out, err)
		}
		return out.Data
	}
	post(LinkClusterID, "failover")
	waitFor(t, 10*time.Second, "the mirror to stop", func() bool { return s.State().Mirrors[LinkTopic].Status == "STOPPED" })
	produce(12) // the primary took writes DR never got
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, LinkTopic)
	if err != nil {
		t.Fatal(err)
	}
	stoppedAt := s.State().Mirrors[LinkTopic].LastFetchOffsets
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset - stoppedAt[o.Partition] })
	var got float64
	waitFor(t, 10*time.Second, "the driver to count the records past the stopped mirror", func() bool {
		d := post(ClusterLinkSourceID, "truncate-and-restore?validate_only=true")
		got, _ = d[0]["messages_truncated"].(float64)
		return int64(got) == want
	})
	if want < 12 {
		t.Fatalf("want %d: the 12 records written after the failover are not all counted", want)
	}
}
