//go:build e2e

package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	_ "github.com/drconsole/drconsole/runbook/switchover"
	"github.com/drconsole/drconsole/testenv"
)

// swUsers are the primary's producing principals besides its admin: app is the one the fence
// names; rogue is a writer it does not.
var swUsers = map[string]string{"app": "app-secret", "rogue": "rogue-secret"}

// writer produces "<prefix>-<i>" records to events as one principal, round robin over the
// partitions, until a produce fails or stop is closed; it keeps what the broker acknowledged.
type writer struct {
	mu    sync.Mutex
	acked []string
	err   error
	done  chan struct{}
}

func startWriter(t *testing.T, cl *kgo.Client, prefix string, stop <-chan struct{}) *writer {
	w := &writer{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			v := fmt.Sprintf("%s-%d", prefix, i)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: int32(i % fbParts), Value: []byte(v)}).FirstErr()
			cancel()
			w.mu.Lock()
			if err != nil {
				w.err = err
				w.mu.Unlock()
				return
			}
			w.acked = append(w.acked, v)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *writer) result() ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...), w.err
}

// switchoverRig is a primary with SASL/PLAIN and StandardAuthorizer, a DR cluster, MirrorMaker 2 on
// Kafka Connect between them, and the console's runbook with the flow's ACL fence for User:app.
func switchoverRig(t *testing.T, ctx context.Context) (*testenv.Kafka, *testenv.Kafka, *testenv.Connect, fbSteps, *config.Config) {
	t.Helper()
	primary := testenv.StartKafkaAuthz(t, "primary", "primary-admin", "primary-secret", swUsers)
	dr := testenv.StartKafkaAuthz(t, "dr", "dr-admin", "dr-secret", swUsers)
	createTopics(t, primary, map[string]int32{"events": fbParts})
	// Explicit allows for the producers: once a topic has any ACL (the fence's DENY), a
	// principal without an ALLOW there is refused whatever allow.everyone.if.no.acl.found says.
	allow := kadm.NewACLs().Topics("*").Allow("User:app", "User:rogue").AllowHosts("*").
		Operations(kadm.OpWrite, kadm.OpDescribe, kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	for _, k := range []*testenv.Kafka{primary, dr} {
		if res, err := k.Admin(t).CreateACLs(ctx, allow); err != nil || res[0].Err != nil {
			t.Fatalf("allowing the producers on %s: %v %v", k.Name, res, err)
		}
	}
	// DR's standby fence: app may not write to DR's copy while it is a mirror (unfence-dr
	// removes it).
	if res, err := dr.Admin(t).CreateACLs(ctx, kafka.DenyWriteFilter([]string{"events"}, []string{"User:app"})); err != nil || res[0].Err != nil {
		t.Fatalf("DR's standby fence: %v %v", res, err)
	}
	fbSeedPrimary(t, ctx, primary)
	connect, cfg, store, mon, log := runbookOnConnectPolicy(t, ctx, "identity", primary, dr, filepath.Join(t.TempDir(), "drconsole.db"))
	cfg.Flow(fbFlowName).Switchover = &config.Switchover{Fence: config.FenceACL, Principals: []string{"User:app"},
		QuietPeriod: config.Duration(5 * time.Second), CatchUpTimeout: config.Duration(3 * time.Minute), CommandTimeout: config.Duration(time.Minute)}
	steps := fbSteps{t: t, ctx: ctx, rb: fbRunbook(cfg, store, mon, log)}
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		if s := mon.Snapshot(fbFlowName); s.Status != model.FlowStatusOK || s.HeartbeatAge == nil {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return primary, dr, connect, steps, cfg
}

// verifyFence runs verify-fence, again when an end moved once: a produce the broker authorized
// just before the fence's ACLs reached it may append after the first sample.
func (s fbSteps) verifyFence(id int64) {
	s.t.Helper()
	for attempt := 1; ; attempt++ {
		x, err := s.rb.Begin(s.ctx, fbAlice, id, 1, fbFlowName, "")
		if err == nil {
			err = x.Perform(s.ctx)
		}
		if err == nil {
			return
		}
		if attempt == 3 {
			s.t.Fatalf("verify-fence: %v", err)
		}
		s.t.Logf("verify-fence attempt %d: %v", attempt, err)
	}
}

// The planned switchover against real Kafka with an authorizer and real MirrorMaker 2: User:app
// writes until the fence's DENY WRITE ACL makes the broker refuse it; the fence holds, DR
// catches up, the mirror stops, the group moves, and the verdict is RPO 0, verified; every
// record app wrote before the fence (every record the broker acknowledged) is on DR, by payload.
func TestSwitchoverE2E(t *testing.T) {
	began := time.Now()
	ctx := context.Background()
	primary, dr, connect, steps, cfg := switchoverRig(t, ctx)
	stop := make(chan struct{})
	defer close(stop)
	if err := dr.ClientAs(t, "app").ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("split")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("app on DR behind its standby fence: %v", err)
	}
	app := startWriter(t, primary.ClientAs(t, "app", kgo.RecordPartitioner(kgo.ManualPartitioner())), "app", stop)
	if err := testenv.Eventually(30*time.Second, 100*time.Millisecond, func() error {
		if acked, err := app.result(); len(acked) < 50 || err != nil {
			return fmt.Errorf("app acked %d, %v", len(acked), err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	id := steps.approved(runbook.Request{Flow: fbFlowName, Kind: runbook.PlanSwitchover, Groups: []string{"orders-app"}}.Plan(cfg), "e2e switchover")
	steps.run(id, 0, 1) // fence
	<-app.done
	acked, err := app.result()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("app's writes after the fence: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	steps.verifyFence(id)
	steps.run(id, 2, 7) // wait-caught-up, stop-mirror, translate-group, unfence-dr, verdict
	r, _ := steps.rb.Get(ctx, id)
	if r.Status != model.RunCompleted || !strings.Contains(r.Steps[6].Result, `"verdict":"RPO 0, verified: DR held every record up to the fence`) {
		t.Fatalf("run %s, verdict %s", r.Status, r.Steps[6].Result)
	}
	if st, err := connect.Status(ctx, "MirrorSourceConnector"); err != nil || st.Connector.State != "STOPPED" {
		t.Fatalf("source connector after the switchover: %+v %v", st, err)
	}
	if a, err := failover.ActiveSideOf(ctx, steps.rb.Store, fbFlowName); err != nil || a.Side != model.SideDR {
		t.Fatalf("active side %+v %v", a, err)
	}
	// By payload: everything the broker acknowledged to app, and every primary record, is on DR.
	onDR := map[string]int{}
	for _, recs := range fbReadAll(t, dr, "events") {
		for _, rec := range recs {
			_, v, _ := strings.Cut(rec, ":")
			onDR[v]++
		}
	}
	var missing []string
	for _, v := range acked {
		if onDR[v] == 0 {
			missing = append(missing, v)
		}
	}
	onPrimary := 0
	for _, recs := range fbReadAll(t, primary, "events") {
		for _, rec := range recs {
			onPrimary++
			if _, v, _ := strings.Cut(rec, ":"); onDR[v] == 0 {
				missing = append(missing, "primary's "+rec)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d record(s) not on DR: %v", len(missing), missing[:min(len(missing), 20)])
	}
	// unfence-dr removed DR's standby fence: app writes to DR now.
	drApp := dr.ClientAs(t, "app")
	if err := testenv.Eventually(30*time.Second, 250*time.Millisecond, func() error {
		return drApp.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("on DR")}).FirstErr()
	}); err != nil {
		t.Fatalf("app on DR after the switchover: %v (unfence-dr: %s)", err, r.Steps[5].Result)
	}
	// The fence stays: app is still refused on the primary.
	if err := primary.ClientAs(t, "app").ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("late")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("app after the switchover: %v", err)
	}
	t.Logf("switchover e2e: app had %d records acknowledged before the fence, the primary holds %d, all on DR; %s",
		len(acked), onPrimary, time.Since(began).Round(time.Millisecond))
}

// A writer the fence does not name (User:rogue) keeps writing: verify-fence fails naming the
// partitions and records; the rollback removes the fence's ACLs, audited, cancels the run, and
// app can write again.
func TestSwitchoverBypassE2E(t *testing.T) {
	ctx := context.Background()
	primary, _, _, steps, cfg := switchoverRig(t, ctx)
	stop := make(chan struct{})
	rogue := startWriter(t, primary.ClientAs(t, "rogue", kgo.RecordPartitioner(kgo.ManualPartitioner())), "rogue", stop)
	id := steps.approved(runbook.Request{Flow: fbFlowName, Kind: runbook.PlanSwitchover}.Plan(cfg), "e2e switchover, bypassed")
	steps.run(id, 0, 1) // fence
	if err := primary.ClientAs(t, "app").ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("fenced")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("app behind the fence: %v", err)
	}
	x, err := steps.rb.Begin(ctx, fbAlice, id, 1, fbFlowName, "")
	if err != nil {
		t.Fatal(err)
	}
	err = x.Perform(ctx)
	if err == nil || !strings.Contains(err.Error(), "the fence does not hold") || !strings.Contains(err.Error(), "record(s)") {
		_, rerr := rogue.result()
		t.Fatalf("verify-fence with rogue writing: %v (rogue: %v)", err, rerr)
	}
	t.Logf("verify-fence: %v", err)
	close(stop)
	<-rogue.done
	if _, err := rogue.result(); err != nil {
		t.Fatalf("rogue was refused: %v", err)
	}
	r, _ := steps.rb.Get(ctx, id)
	if _, err := steps.rb.Rollbackable(r); err != nil {
		t.Fatal(err)
	}
	if err := steps.rb.Rollback(ctx, fbBob, id, "rogue writer bypasses the fence"); err != nil {
		t.Fatal(err)
	}
	if there, err := kafka.DenyWriteACLs(ctx, primary.Client(t), []string{"events"}, []string{"User:app"}); err != nil || len(there) != 0 {
		t.Fatalf("fence ACLs after the rollback: %v %v", there, err)
	}
	app := primary.ClientAs(t, "app")
	if err := testenv.Eventually(30*time.Second, 250*time.Millisecond, func() error {
		return app.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("unfenced")}).FirstErr()
	}); err != nil {
		t.Fatalf("app after the rollback: %v", err)
	}
	if r, _ := steps.rb.Get(ctx, id); r.Status != model.RunCancelled {
		t.Fatalf("run %s after the rollback", r.Status)
	}
}
