//go:build e2e

package testenv_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	connectrest "github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

// The runbook against real MirrorMaker 2 on Kafka Connect: the stop step
// really stops the connectors through Connect's REST API, and the translate
// step really commits the DR group's offsets.
func TestFailoverRunbookOnRealMM2(t *testing.T) {
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": 3})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 3, 900)
	commits := kadm.Offsets{}
	for p, at := range []int64{120, 300, 299} {
		commits.Add(kadm.Offset{Topic: "events", Partition: int32(p), At: at, LeaderEpoch: -1})
	}
	ctx := context.Background()
	if err := primary.Admin(t).CommitAllOffsets(ctx, "orders-app", commits); err != nil {
		t.Fatal(err)
	}
	connect, cfg, store, mon, log := runbookOnConnect(t, ctx, primary, dr)
	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connectrest.New}, failover.Env{Monitor: mon})

	// Wait until the console has MM2 caught up and the group checkpointed.
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		if s.Status != model.FlowStatusOK || s.TotalLagMessages == nil || *s.TotalLagMessages != 0 {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		plan, err := mon.Translator("primary->dr").Plan(ctx, "orders-app")
		if err != nil || plan.Untranslatable() > 0 {
			return fmt.Errorf("plan: %v", err)
		}
		// Lag reaches 0 before MM2 writes the syncs for each partition's last record (at
		// its next offset commit): wait for them, or the plan taken below is older than
		// the one the translate step uses. Committed 300 and 299 translate exactly then.
		prop := plan.Proposed()
		if prop[model.TP{Topic: "events", Partition: 1}] != 300 || prop[model.TP{Topic: "events", Partition: 2}] != 299 {
			return fmt.Errorf("plan %v: last syncs not ingested yet", prop)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	alice := runbook.Actor{Name: "alice", Role: "operator"}
	bob := runbook.Actor{Name: "bob", Role: "operator"}
	id, err := rb.Create(ctx, alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}, {Kind: failover.KindTranslateGroup, Group: "orders-app"},
	}}, "e2e drill")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, bob, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	want, err := mon.Translator("primary->dr").Plan(ctx, "orders-app")
	if err != nil {
		t.Fatal(err)
	}
	for idx := range 3 {
		x, err := rb.Begin(ctx, alice, id, idx, "primary->dr", "")
		if err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	for _, name := range cfg.Flows[0].Connectors {
		st, err := connect.Status(ctx, name)
		if err != nil || st.Connector.State != "STOPPED" || len(st.Tasks) != 0 {
			t.Fatalf("%s after the stop step: %s with %d tasks, %v", name, st.Connector.State, len(st.Tasks), err)
		}
	}
	got, err := testenv.FetchCommitted(ctx, dr.Admin(t), "orders-app")
	if err != nil {
		t.Fatal(err)
	}
	for tp, off := range want.Proposed() {
		o, ok := got.Lookup(tp.Topic, tp.Partition)
		if !ok || o.At != off {
			t.Errorf("DR group at %s-%d = %d, want %d", tp.Topic, tp.Partition, o.At, off)
		}
	}
	if run, _ = rb.Get(ctx, id); run.Status != "completed" {
		t.Fatalf("run %s", run.Status)
	}
	if _, bad, err := store.VerifyAudit(ctx); err != nil || bad != nil {
		t.Fatalf("audit chain: %v %v", bad, err)
	}
}

// onConnectConfig is the console's configuration of runbookOnConnect's flow.
func onConnectConfig(t testing.TB, primary, dr, connectURL, offsetTopic string) *config.Config {
	t.Helper()
	return onConnectConfigPolicy(t, "identity", primary, dr, connectURL, offsetTopic)
}

// onConnectConfigPolicy is onConnectConfig under replication policy ("identity" or "default").
func onConnectConfigPolicy(t testing.TB, policy, primary, dr, connectURL, offsetTopic string) *config.Config {
	t.Helper()
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: config.ReplicationPolicy(policy), OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: offsetTopic, HeartbeatsTopic: "heartbeats", Topics: config.Topics{Include: []string{"events.*"}},
		ConnectURL: connectURL}
	cfg := &config.Config{
		Clusters:        map[string]*config.Cluster{"primary": {Bootstrap: []string{primary}}, "dr": {Bootstrap: []string{dr}}},
		Flows:           []*config.Flow{flow},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("e2e"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runbookOnConnect mirrors primary's events.* topics to dr with MM2 on a
// Connect worker (identity policy, syncs in the target), and starts a
// console's store and monitor of that flow, closed when the test ends.
func runbookOnConnect(t *testing.T, ctx context.Context, primary, dr *testenv.Kafka) (*testenv.Connect, *config.Config, *storage.Store, *monitor.Monitor, *slog.Logger) {
	t.Helper()
	return runbookOnConnectAt(t, ctx, primary, dr, filepath.Join(t.TempDir(), "drconsole.db"))
}

// runbookOnConnectAt is runbookOnConnect with the store at dbPath.
func runbookOnConnectAt(t *testing.T, ctx context.Context, primary, dr *testenv.Kafka, dbPath string) (*testenv.Connect, *config.Config, *storage.Store, *monitor.Monitor, *slog.Logger) {
	t.Helper()
	return runbookOnConnectPolicy(t, ctx, "identity", primary, dr, dbPath)
}

// runbookOnConnectPolicy is runbookOnConnectAt under replication policy ("identity" or "default").
func runbookOnConnectPolicy(t *testing.T, ctx context.Context, policy string, primary, dr *testenv.Kafka, dbPath string) (*testenv.Connect, *config.Config, *storage.Store, *monitor.Monitor, *slog.Logger) {
	t.Helper()
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: policy, OffsetSyncsLocation: "target", Topics: "events.*"}
	connect := testenv.StartConnect(t, dr)
	connect.CreateMirrorConnectors(t, opts)
	cfg := onConnectConfigPolicy(t, policy, primary.Bootstrap, dr.Bootstrap, connect.URL, connect.OffsetTopic)
	for name, k := range map[string]*testenv.Kafka{"primary": primary, "dr": dr} {
		if k.SASL != nil {
			cfg.Clusters[name].SASL = &config.SASL{Mechanism: "PLAIN", Username: k.SASL.User, Password: k.SASL.Password}
		}
	}
	store, err := storage.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runCtx, cancel := context.WithCancel(ctx)
	mon, err := monitor.NewMonitor(runCtx, cfg, store, log)
	if err != nil {
		cancel()
		store.Close()
		t.Fatal(err)
	}
	go mon.Run(runCtx)
	// Cleanups run last-in first-out: the monitor stops before the store closes.
	t.Cleanup(func() { store.Close() })
	t.Cleanup(cancel)
	t.Cleanup(mon.Close)
	return connect, cfg, store, mon, log
}
