package demo

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Names of the sandbox's Cluster Linking flow: a stand-in link that
// "mirrors" the primary's users topic beside the MM2 flow.
const (
	LinkClusterID = "sandbox-dr-cluster"
	LinkName      = "sandbox-dr-link"
	LinkTopic     = "users"
)

// LinkTopics are the stand-in link's mirror topics and partition counts.
var LinkTopics = map[string]int{LinkTopic: 3}

// DriveClusterLink makes the stand-in link follow the real primary: every
// second each ACTIVE partition's last fetched offset is the primary's end
// offset minus a lag wandering between 0 and 30 records, so the console's
// lag in time comes from real record timestamps. Once the mirror is failed
// over, each partition's records past its end are what the primary's
// truncate-and-restore would delete. It runs until ctx is done.
func DriveClusterLink(ctx context.Context, s *ClusterLinkStandIn, primary []string, seed int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(primary...), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		return err
	}
	go func() {
		defer cl.Close()
		adm := kadm.NewClient(cl)
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			st := s.State()
			m, ok := st.Mirrors[LinkTopic]
			_, restored := st.RemoteMirrors[LinkTopic]
			// Failed over, not yet restored: the primary's records past the
			// stopped mirror are what a truncate-and-restore would delete.
			stopped := ok && m.Status == "STOPPED" && !restored
			if !ok || (m.Status != "ACTIVE" && !stopped) {
				continue // promoted and restored, or paused: nothing flows
			}
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			ends, err := adm.ListEndOffsets(rctx, LinkTopic)
			cancel()
			if err != nil {
				continue // the primary is down: the link stalls
			}
			if stopped {
				beyond := make([]int64, len(m.LastFetchOffsets))
				ends.Each(func(o kadm.ListedOffset) {
					if p := int(o.Partition); o.Err == nil && p < len(beyond) {
						beyond[p] = max(0, o.Offset-m.LastFetchOffsets[p])
					}
				})
				s.SetTruncatable(LinkTopic, beyond)
				continue
			}
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err != nil {
					return
				}
				lag := min(int64(rng.IntN(31)), o.Offset)
				s.SetLastFetchOffset(LinkTopic, int(o.Partition), o.Offset-lag)
				s.SetLag(LinkTopic, int(o.Partition), lag)
			})
		}
	}()
	return nil
}
