package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/mm2"
	"github.com/twmb/franz-go/pkg/kadm"
)

// send is one write to the stand-in's REST API, as Connect's clients send it.
func send(t *testing.T, method, url, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The forward MirrorSourceConnector on the Connect stand-in is the
// sandbox's mirror: stopping it stops the copy, its offsets are the
// mirror's committed positions, an offsets change is refused while it
// runs and, made while stopped, is where the copy resumes.
func TestConnectStandInDrivesTheMirror(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var copied []int64 // upstream offsets of events-0, in copy order
	sb, err := Start(ctx, Options{Seed: 7, Logger: testLogger(), trace: func(topic string, p int32, up, _ int64) {
		if topic == "events" && p == 0 {
			mu.Lock()
			copied = append(copied, up)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	cs, err := StartConnectStandIn(sb)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	api := connect.New(cs.URL)
	src := cs.URL + "/connectors/" + connector

	if st, err := api.Status(ctx, connector); err != nil || st.Connector.State != connect.Running || len(st.Tasks) != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
	if code := send(t, http.MethodPatch, src+"/offsets", `{"offsets":[]}`); code != 400 {
		t.Fatalf("offsets changed on a running connector: HTTP %d", code)
	}
	// The sandbox page's pause is Connect's PAUSED.
	sb.SetMirrorRunning(false)
	if st, _ := api.Status(ctx, connector); st.Connector.State != connect.Paused {
		t.Fatalf("paused from the sandbox page: %s", st.Connector.State)
	}
	sb.SetMirrorRunning(true)

	waitFor(t, 20*time.Second, "the mirror to commit events-0", func() bool { return next(t, api)[0] > 0 })
	if code := send(t, http.MethodPut, src+"/stop", ""); code != 202 {
		t.Fatalf("stop: HTTP %d", code)
	}
	st, err := api.Status(ctx, connector)
	if err != nil || !st.Stopped() || sb.State().MirrorRunning {
		t.Fatalf("after stop: %+v %v, mirror running %v", st, err, sb.State().MirrorRunning)
	}
	// Stopped: nothing is copied, the committed offsets stand still.
	before := next(t, api)
	mu.Lock()
	n := len(copied)
	mu.Unlock()
	// The mirror may have copied everything when it stopped: the traffic
	// goes on, so wait for a record past the committed offset to skip.
	var end kadm.ListedOffset
	waitFor(t, 20*time.Second, "a record past events-0's committed offset", func() bool {
		ends, err := kadm.NewClient(sb.mirror.src).ListEndOffsets(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		end, _ = ends.Lookup("events", 0)
		return end.Offset > before[0]
	})
	// Resume past the records copied: half way to the end.
	skipTo := before[0] + (end.Offset-before[0]+1)/2
	body := fmt.Sprintf(`{"offsets":[{"partition":{"cluster":"primary","partition":0,"topic":"events"},"offset":{"offset":%d}}]}`, skipTo-1)
	if code := send(t, http.MethodPatch, src+"/offsets", body); code != 200 {
		t.Fatalf("offsets of a stopped connector: HTTP %d", code)
	}
	if got := next(t, api); got[0] != skipTo || got[1] != before[1] {
		t.Fatalf("offsets after the change %v, want events-0 at %d and events-1 at %d", got, skipTo, before[1])
	}
	mu.Lock()
	if len(copied) != n {
		t.Fatalf("copied while stopped: %v", copied[n:])
	}
	mu.Unlock()
	if code := send(t, http.MethodPut, src+"/resume", ""); code != 202 || !sb.State().MirrorRunning {
		t.Fatalf("resume: HTTP %d, mirror running %v", code, sb.State().MirrorRunning)
	}
	waitFor(t, 20*time.Second, "events-0 copied again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(copied) > n
	})
	mu.Lock()
	first := copied[n]
	mu.Unlock()
	if first != skipTo {
		t.Fatalf("the copy resumed at %d, the offsets said %d", first, skipTo)
	}
	// Stopped through Connect, resumed and paused on the sandbox page:
	// PAUSED, which a failback's set-up refuses, not STOPPED.
	if code := send(t, http.MethodPut, src+"/stop", ""); code != 202 {
		t.Fatalf("stop: HTTP %d", code)
	}
	sb.SetMirrorRunning(true)
	sb.SetMirrorRunning(false)
	if st, _ := api.Status(ctx, connector); st.Connector.State != connect.Paused {
		t.Fatalf("stopped, then resumed and paused on the sandbox page: %s", st.Connector.State)
	}
	if code := send(t, http.MethodPost, cs.URL+"/connectors", `{"name":"no-config"}`); code != 400 {
		t.Fatalf("a connector without a config: HTTP %d", code)
	}
	if _, err := api.Status(ctx, "no-such"); !errors.As(err, new(*connect.HTTPError)) {
		t.Fatalf("status of an unknown connector: %v", err)
	}
}

// next is the forward source's committed next offsets of events.
func next(t *testing.T, api *connect.Client) map[int32]int64 {
	t.Helper()
	offs, err := api.Offsets(context.Background(), connector)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, o := range offs {
		key, _ := json.Marshal([]any{connector, o.Partition})
		c, err := mm2.DecodeConnectOffset(key, o.Offset)
		if err != nil || c.Cluster != SourceAlias {
			t.Fatalf("offset %s %s: %v %+v", o.Partition, o.Offset, err, c)
		}
		if c.Topic == "events" {
			out[c.Partition] = c.LastOffset + 1
		}
	}
	return out
}
