//go:build e2e

package testenv_test

// The console (monitor.Monitor and the web handlers) against real Kafka and
// real MirrorMaker 2: its lag must equal what the real systems say.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
	"github.com/drconsole/drconsole/web"
)

// runConsole starts a monitor for one flow and returns it with its router.
func runConsole(t *testing.T, flow *config.Flow, primary, dr *testenv.Kafka, hbTimeout time.Duration) (*monitor.Monitor, http.Handler) {
	t.Helper()
	mon, router, stop := startConsole(t, flow, primary, dr, hbTimeout, filepath.Join(t.TempDir(), "drconsole.db"))
	t.Cleanup(stop)
	return mon, router
}

// startConsole is runConsole on a given database file; stop ends it and
// closes the database, so a test can start the console again on it.
func startConsole(t *testing.T, flow *config.Flow, primary, dr *testenv.Kafka, hbTimeout time.Duration, dbPath string) (*monitor.Monitor, http.Handler, func()) {
	t.Helper()
	cfg := &config.Config{
		Clusters:        map[string]*config.Cluster{"primary": {Bootstrap: []string{primary.Bootstrap}}, "dr": {Bootstrap: []string{dr.Bootstrap}}},
		Flows:           []*config.Flow{flow},
		RefreshInterval: config.Duration(time.Second),
		Thresholds:      config.Thresholds{HeartbeatTimeout: config.Duration(hbTimeout)},
	}
	if err := cfg.Normalize("e2e"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); mon.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done; mon.Close(); store.Close() }) }
	t.Cleanup(stop)
	// Pages need a signed-in user: a viewer, signed in through storage.
	if _, err := store.UserByName(ctx, "e2e-viewer"); err != nil {
		if err := store.CreateUser(ctx, model.User{Name: "e2e-viewer", Role: "viewer"}); err != nil {
			t.Fatal(err)
		}
	}
	token, err := store.CreateSession(ctx, "e2e-viewer", "127.0.0.1", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	router := web.Router(&handlers.Handlers{Monitor: mon, Store: store, Log: log, Version: "e2e"}, log)
	return mon, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.AddCookie(&http.Cookie{Name: handlers.SessionCookieName(false), Value: token})
		r.Host = "127.0.0.1" // httptest's example.com is no host of this console (DNS-rebinding check)
		router.ServeHTTP(w, r)
	}), stop
}

// createTopics creates each topic with its partition count. A topic that
// already exists with that count is taken as created: a loaded broker can
// answer the client's first request late, and the retry finds the topic.
func createTopics(t *testing.T, k *testenv.Kafka, parts map[string]int32) {
	t.Helper()
	ctx := context.Background()
	adm := k.Admin(t)
	for topic, n := range parts {
		_, err := adm.CreateTopic(ctx, n, 1, nil, topic)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			td, derr := adm.ListTopics(ctx, topic)
			if derr == nil && td.Has(topic) && int32(len(td[topic].Partitions)) == n {
				continue
			}
			err = errors.Join(err, derr, fmt.Errorf("topic %s exists with %d partition(s), want %d", topic, len(td[topic].Partitions), n))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func produceN(t *testing.T, cl *kgo.Client, topic string, parts int32, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i) % parts, Value: fmt.Appendf(nil, "%s-%d", topic, i)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// produceTxn writes n records to topic in committed transactions of 10, so
// each partition ends with a transaction marker.
func produceTxn(t *testing.T, k *testenv.Kafka, topic string, parts int32, n int) {
	t.Helper()
	cl := k.Client(t, kgo.TransactionalID("e2e-"+topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	for i := 0; i < n; i += 10 {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := i; j < i+10 && j < n; j++ {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(j) % parts, Value: fmt.Appendf(nil, "txn-%d", j)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
}

func snapshotLine(s *flowstate.FlowSnapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %s (%s) source %+v;", s.Status, s.Reason, s.Source.OK)
	for _, p := range s.Partitions {
		fmt.Fprintf(&b, " %s-%d lag=%s ms=%s repl=%s end=%s (%s)", p.Topic, p.Partition, ptr(p.LagMessages.Ptr()), ptr(p.LagMs.Ptr()), ptr(p.Replicated.Ptr()), ptr(p.SourceEnd.Ptr()), p.Method)
	}
	return b.String()
}

func ptr(v *int64) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprint(*v)
}

// connectOffsets reads MirrorSourceConnector's committed offsets from the
// Connect REST API (KIP-875): an independent account of MM2's position.
func connectOffsets(t *testing.T, c *testenv.Connect) map[model.TP]int64 {
	t.Helper()
	resp, err := http.Get(c.URL + "/connectors/MirrorSourceConnector/offsets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Offsets []struct {
			Partition struct {
				Cluster   string `json:"cluster"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[model.TP]int64{}
	for _, o := range body.Offsets {
		out[model.TP{Topic: o.Partition.Topic, Partition: o.Partition.Partition}] = o.Offset.Offset
	}
	return out
}

func putConnector(t *testing.T, c *testenv.Connect, name, action string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, c.URL+"/connectors/"+name+"/"+action, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s/%s = %s", name, action, resp.Status)
	}
}

// The console's per-partition lag in messages equals the real source end
// offset minus MirrorMaker 2's committed position (read from Connect's
// REST API), and reaches 0 when MM2 catches up.
func TestConsoleLagMatchesMM2(t *testing.T) { consoleLagMatchesMM2(t, testenv.KafkaDefault) }

func consoleLagMatchesMM2(t *testing.T, dist testenv.KafkaDist) {
	primary := testenv.StartKafkaDist(t, "primary", dist)
	dr := testenv.StartKafkaDist(t, "dr", dist)
	createTopics(t, primary, map[string]int32{"events": 3, "orders": 2})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 3, 1500)
	produceTxn(t, primary, "orders", 2, 200)
	// The checkpoint connector waits for a group with offsets on a mirrored topic.
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "events", Partition: 0, At: 100, LeaderEpoch: -1})
	if err := primary.Admin(t).CommitAllOffsets(context.Background(), "flink-events", commits); err != nil {
		t.Fatal(err)
	}

	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "identity", OffsetSyncsLocation: "target", Topics: "events.*,orders.*"}
	connect := testenv.StartConnect(t, dr)
	connect.CreateMirrorConnectors(t, opts)
	// On a Connect cluster the heartbeat connector writes into the target's
	// own "heartbeats" (testenv.MirrorConnectorConfigs).
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: connect.OffsetTopic, HeartbeatsTopic: "heartbeats", Topics: config.Topics{Include: []string{"events.*", "orders.*"}}}
	mon, _ := runConsole(t, flow, primary, dr, 30*time.Second)

	caughtUp := func() error {
		s := mon.Snapshot("primary->dr")
		if len(s.Partitions) != 5 || s.Status != model.FlowStatusOK {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		for _, p := range s.Partitions {
			if !p.LagMessages.Known || p.LagMessages.V != 0 || !p.LagMs.Known || p.LagMs.V != 0 {
				return fmt.Errorf("%s", snapshotLine(s))
			}
		}
		return nil
	}
	start := time.Now()
	if err := testenv.Eventually(60*time.Second, 250*time.Millisecond, caughtUp); err != nil {
		t.Fatalf("console never saw MM2 catch up: %v", err)
	}
	t.Logf("console saw MM2 caught up %s after start", time.Since(start).Round(time.Millisecond))

	// Freeze MM2's position, then let the source run ahead.
	putConnector(t, connect, "MirrorSourceConnector", "stop")
	if err := testenv.Eventually(30*time.Second, 250*time.Millisecond, func() error {
		st, err := connect.Status(context.Background(), "MirrorSourceConnector")
		// A stopped connector's tasks are gone from the status only once
		// they have really shut down.
		if err != nil || st.Connector.State != "STOPPED" || len(st.Tasks) > 0 {
			return fmt.Errorf("state %q with %d tasks, %v", st.Connector.State, len(st.Tasks), err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	produceN(t, pcl, "events", 3, 600)
	ends, err := primary.Admin(t).ListEndOffsets(context.Background(), "events", "orders")
	if err != nil {
		t.Fatal(err)
	}
	mirror := connectOffsets(t, connect)
	var last string
	err = testenv.Eventually(30*time.Second, 250*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		last = snapshotLine(s)
		for _, p := range s.Partitions {
			end, _ := ends.Lookup(p.Topic.String(), p.Partition)
			committed, ok := mirror[model.TP{Topic: p.Topic.String(), Partition: p.Partition}]
			if !ok || !p.LagMessages.Known || !p.SourceEnd.Known {
				return fmt.Errorf("%s-%d: no MM2 offset or no console figure", p.Topic, p.Partition)
			}
			want := end.Offset - (committed + 1)
			if p.Topic.String() == "orders" {
				// MM2's position stops at the last data record; only the
				// commit marker after it is "behind", and that is never copied.
				if want != 1 || p.LagMessages.V != 0 {
					return fmt.Errorf("orders-%d: MM2 is %d behind the end, console says %d (want 0: only a marker)", p.Partition, want, p.LagMessages.V)
				}
				continue
			}
			if p.SourceEnd.V != end.Offset || p.LagMessages.V != want || want != 200 {
				return fmt.Errorf("%s-%d: console lag %d (end %d), real end %d - MM2 position %d = %d", p.Topic, p.Partition,
					p.LagMessages.V, p.SourceEnd.V, end.Offset, committed+1, want)
			}
			if !p.LagMs.Known || p.LagMs.V <= 0 {
				return fmt.Errorf("%s-%d: lag in ms %s while 200 records behind", p.Topic, p.Partition, ptr(p.LagMs.Ptr()))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("with MM2 stopped: %v\nlast: %s\nMM2 offsets %v", err, last, mirror)
	}

	putConnector(t, connect, "MirrorSourceConnector", "resume")
	if err := testenv.Eventually(60*time.Second, 250*time.Millisecond, caughtUp); err != nil {
		t.Fatalf("console never saw MM2 catch up again: %v", err)
	}
}

// Stopping MM2 turns the flow BROKEN within the heartbeat timeout; killing
// the primary keeps the console serving, marks the primary unreachable and
// keeps the last known values.
func TestConsoleBrokenAndPrimaryLoss(t *testing.T) {
	consoleBrokenAndPrimaryLoss(t, testenv.KafkaDefault)
}

func consoleBrokenAndPrimaryLoss(t *testing.T, dist testenv.KafkaDist) {
	primary := testenv.StartKafkaDist(t, "primary", dist)
	dr := testenv.StartKafkaDist(t, "dr", dist)
	createTopics(t, primary, map[string]int32{"events": 2})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 2, 400)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "identity", OffsetSyncsLocation: "target", Topics: "events.*"}
	mirror := testenv.StartMM2Dedicated(t, opts)
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"events.*"}}}
	const hbTimeout = 8 * time.Second
	mon, router := runConsole(t, flow, primary, dr, hbTimeout)
	if err := testenv.Eventually(60*time.Second, 250*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		if s.Status != model.FlowStatusOK || s.TotalLagMessages == nil || *s.TotalLagMessages != 0 {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	mirror.Stop()
	stopped := time.Now()
	if err := testenv.Eventually(hbTimeout+10*time.Second, 200*time.Millisecond, func() error {
		if s := mon.Snapshot("primary->dr"); s.Status != model.FlowStatusBroken {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		return nil
	}); err != nil {
		t.Fatalf("flow not BROKEN after MM2 stopped: %v", err)
	}
	t.Logf("BROKEN %s after MM2 stopped (heartbeat timeout %s)", time.Since(stopped).Round(100*time.Millisecond), hbTimeout)

	produceN(t, pcl, "events", 2, 100) // unreplicated: MM2 is down
	if err := testenv.Eventually(20*time.Second, 200*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		if s.TotalLagMessages == nil || *s.TotalLagMessages != 100 || s.RPOMs == nil || *s.RPOMs <= 0 {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	primary.Kill()
	killed := time.Now()
	if err := testenv.Eventually(30*time.Second, 200*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		if s.Source.OK || !s.Source.Checked {
			return fmt.Errorf("source still reachable: %s", snapshotLine(s))
		}
		if !s.Target.OK {
			return fmt.Errorf("DR marked unreachable too")
		}
		for _, p := range s.Partitions {
			if !s.FiguresStale || !p.LagMessages.Known || p.LagMessages.V != 50 {
				return fmt.Errorf("last known values not kept: %s", snapshotLine(s))
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("primary marked unreachable %s after the kill", time.Since(killed).Round(100*time.Millisecond))

	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "UNREACHABLE") || !strings.Contains(body, "as last seen before the primary became unreachable") {
		t.Fatalf("overview with the primary dead: %d\n%s", rec.Code, body)
	}
	rec = httptest.NewRecorder()
	router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `kafka_mirror_cluster_up{flow="primary->dr",role="source"} 0`) {
		t.Fatalf("metrics do not report the primary down")
	}
}
