package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// A planned switchover in the sandbox as `drconsole demo` configures it:
// the ACL fence makes the sandbox's primary refuse its writers, the fence
// holds, DR catches up, the Connect stand-in stops the mirror, the group
// moves, and the verdict is RPO 0, verified; every record the primary
// holds up to the fence is in DR, by payload.
func TestSandboxSwitchover(t *testing.T) {
	t.Parallel()
	c := startSandboxConsole(t)
	ctx := context.Background()
	if f := c.world.Config.Flow("primary->dr").Switchover; f == nil || f.Fence != config.FenceACL {
		t.Fatalf("the sandbox's flow has no ACL fence: %+v", f)
	}
	id := c.approved(t, runbook.Request{Flow: "primary->dr", Kind: runbook.PlanSwitchover, Groups: []string{"billing"}}.Plan(c.world.Config))
	c.step(t, id, 0)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.world.Sandbox.PrimaryBootstrap()...), kgo.RecordRetries(1), kgo.UnknownTopicRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = cl.ProduceSync(pctx, &kgo.Record{Topic: "events", Value: []byte("behind the fence")}).FirstErr()
	cancel()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("a sandbox write behind the fence: %v", err)
	}
	// The fence may cut a sandbox transaction short: its abort marker
	// moves an end once, and the check is run again, as an operator would.
	for attempt := 0; ; attempt++ {
		x, err := c.rb.Begin(ctx, runbooktest.Alice, id, 1, "primary->dr", "")
		if err == nil {
			err = x.Perform(ctx)
		}
		if err == nil {
			break
		}
		if attempt == 2 {
			t.Fatalf("verify-fence: %v", err)
		}
	}
	for idx := 2; idx < 7; idx++ {
		c.step(t, id, idx)
	}
	r, _ := c.rb.Get(ctx, id)
	if r.Status != model.RunCompleted || c.world.Connect.State("MirrorSourceConnector") != "STOPPED" {
		t.Fatalf("run %s, source connector %s", r.Status, c.world.Connect.State("MirrorSourceConnector"))
	}
	var verdict struct {
		Verdict  string `json:"verdict"`
		Verified bool   `json:"verified"`
	}
	if err := json.Unmarshal([]byte(r.Steps[6].Result), &verdict); err != nil || !verdict.Verified ||
		!strings.HasPrefix(verdict.Verdict, "RPO 0, verified: DR held every record up to the fence") {
		t.Fatalf("verdict %s (%v)", r.Steps[6].Result, err)
	}
	var verified struct {
		Ends map[string]int64 `json:"fenced_ends"`
	}
	if err := json.Unmarshal([]byte(r.Steps[1].Result), &verified); err != nil || len(verified.Ends) == 0 {
		t.Fatalf("verify-fence result %s (%v)", r.Steps[1].Result, err)
	}
	// By payload: every record on the primary below its fenced end is in DR.
	primary := payloads(t, c.world.Config.Clusters[demo.SourceAlias], demo.Topics, verified.Ends)
	dr := payloads(t, c.world.Config.Clusters[demo.TargetAlias], demo.Topics, nil)
	missing := 0
	for p := range primary {
		if !dr[p] {
			missing++
		}
	}
	if len(primary) == 0 || missing > 0 {
		t.Fatalf("%d of the primary's %d records up to the fence are not in DR", missing, len(primary))
	}
}

// payloads reads every record of topics on cluster (up to ends, by
// "topic-partition", or to the log end when nil) as topic and value.
func payloads(t *testing.T, cluster *config.Cluster, topics []string, ends map[string]int64) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts, err := kafka.ClientOptions("payloads", cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bounds, err := kafka.ListBounds(ctx, cl, topics...)
	if err != nil {
		t.Fatal(err)
	}
	var ranges []kafka.Range
	for tp, b := range bounds {
		to := b.End
		if ends != nil {
			e, ok := ends[mm2.TPKey(tp)]
			if !ok {
				t.Fatalf("no fenced end of %v", tp)
			}
			to = e
		}
		ranges = append(ranges, kafka.Range{TP: tp, From: b.Start, To: to})
	}
	out := map[string]bool{}
	err = kafka.ReadRecords(ctx, opts, ranges, kafka.ReadLimits{Idle: 20 * time.Second}, func(r *kafka.Record) error {
		out[r.Topic+"|"+string(r.Value)] = true
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
