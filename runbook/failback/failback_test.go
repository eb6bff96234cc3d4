package failback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// connectREST is a Kafka Connect REST stand-in that keeps what it is told:
// connectors with their config, state and committed source offsets. A
// connector's tasks run while it is RUNNING; PATCH offsets is refused
// unless it is STOPPED, as Connect does.
type connectREST struct {
	mu   sync.Mutex
	conn map[string]*fakeConnector
	log  []string // "METHOD name verb", in order
	// lagging: as real Connect, a status read right after a pause, stop
	// or resume still says the state before it (the worker applies the
	// change later), while offset changes already go by the new state.
	lagging bool
}

type fakeConnector struct {
	config  map[string]string
	state   string
	shown   string // the state the next status read says, when lagging
	offsets []connect.SourceOffset
}

func newConnectREST(t testing.TB, forward map[string]string) (*connectREST, string) {
	c := &connectREST{conn: map[string]*fakeConnector{}}
	for name, class := range forward {
		c.conn[name] = &fakeConnector{config: map[string]string{"connector.class": class, "name": name}, state: "RUNNING"}
	}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func (c *connectREST) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	name, verb, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/connectors"), "/")
	name, verb, _ = strings.Cut(strings.TrimPrefix(name+"/"+verb, "/"), "/")
	c.log = append(c.log, strings.TrimSpace(r.Method+" "+name+" "+verb))
	fail := func(status int, msg string) {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error_code": status, "message": msg})
	}
	if r.Method == http.MethodPost && name == "" {
		var body struct {
			Name         string            `json:"name"`
			Config       map[string]string `json:"config"`
			InitialState string            `json:"initial_state"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if c.conn[body.Name] != nil {
			fail(409, "Connector "+body.Name+" already exists")
			return
		}
		cfg := maps.Clone(body.Config)
		cfg["name"] = body.Name
		c.conn[body.Name] = &fakeConnector{config: cfg, state: body.InitialState}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(connect.ConnectorInfo{Name: body.Name, Config: cfg})
		return
	}
	k := c.conn[name]
	if r.Method == http.MethodPut && verb == "config" {
		var cfg map[string]string
		json.NewDecoder(r.Body).Decode(&cfg)
		cfg["name"] = name
		if k == nil {
			k = &fakeConnector{state: "RUNNING"}
			c.conn[name] = k
		}
		k.config = cfg
		json.NewEncoder(w).Encode(connect.ConnectorInfo{Name: name, Config: cfg})
		return
	}
	if k == nil {
		fail(404, "Connector "+name+" not found")
		return
	}
	switch {
	case r.Method == http.MethodGet && verb == "":
		json.NewEncoder(w).Encode(connect.ConnectorInfo{Name: name, Config: k.config})
	case r.Method == http.MethodGet && verb == "status":
		var s connect.ConnectorStatus
		s.Name, s.Connector.State = name, connect.State(k.state)
		if c.lagging && k.shown != "" {
			s.Connector.State, k.shown = connect.State(k.shown), ""
		}
		if st := s.Connector.State; st == "RUNNING" || st == "PAUSED" {
			s.Tasks = append(s.Tasks, connect.TaskStatus{State: st})
		}
		json.NewEncoder(w).Encode(s)
	case r.Method == http.MethodGet && verb == "offsets":
		json.NewEncoder(w).Encode(map[string]any{"offsets": k.offsets})
	case r.Method == http.MethodPatch && verb == "offsets":
		if k.state != "STOPPED" {
			fail(400, "Connectors must be in the STOPPED state before their offsets can be modified")
			return
		}
		var body struct {
			Offsets []connect.SourceOffset `json:"offsets"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		k.offsets = body.Offsets
		json.NewEncoder(w).Encode(map[string]string{"message": "The offsets for this connector have been altered successfully"})
	case r.Method == http.MethodDelete && verb == "offsets":
		if k.state != "STOPPED" {
			fail(400, "Connectors must be in the STOPPED state before their offsets can be modified")
			return
		}
		k.offsets = nil
		json.NewEncoder(w).Encode(map[string]string{"message": "The offsets for this connector have been reset successfully"})
	case r.Method == http.MethodPut && (verb == "stop" || verb == "pause" || verb == "resume"):
		if c.lagging {
			k.shown = k.state
		}
		k.state = map[string]string{"stop": "STOPPED", "pause": "PAUSED", "resume": "RUNNING"}[verb]
		w.WriteHeader(202)
	case r.Method == http.MethodDelete && verb == "":
		delete(c.conn, name)
		w.WriteHeader(204)
	default:
		fail(404, "no route")
	}
}

func (c *connectREST) state(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.conn[name]; k != nil {
		return k.state
	}
	return "gone"
}

// next is connector name's committed next offset per "topic-partition".
func (c *connectREST) next(t testing.TB, name string) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	for _, o := range c.conn[name].offsets {
		key, _ := json.Marshal([]any{name, o.Partition})
		co, err := mm2.DecodeConnectOffset(key, o.Offset)
		if err != nil {
			t.Fatal(err)
		}
		out[mm2.TPKey(model.TP{Topic: co.Topic, Partition: co.Partition})] = co.LastOffset + 1
	}
	return out
}

// copied stands for the reverse source having committed up to next.
func (c *connectREST) copied(name, alias string, next map[model.TP]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.conn[name]
	k.offsets = nil
	for tp, n := range next {
		p, _ := json.Marshal(map[string]any{"cluster": alias, "topic": tp.Topic, "partition": tp.Partition})
		o, _ := json.Marshal(map[string]int64{"offset": n - 1})
		k.offsets = append(k.offsets, connect.SourceOffset{Partition: p, Offset: o})
	}
}

var forwardConnectors = map[string]string{
	"MirrorSourceConnector":     mm2.MirrorSourceConnectorClass,
	"MirrorCheckpointConnector": mm2.MirrorCheckpointConnectorClass,
	"MirrorHeartbeatConnector":  mm2.MirrorHeartbeatConnectorClass,
}

// A failback end to end against the Connect stand-in and the sandbox's
// kfake clusters: refused while the primary is active, the reverse source
// started at the failover's cut, the wait failing with its figures until
// the reverse flow committed DR's new record, the reverse connectors
// deleted, the forward source set to the primary's recorded ends and
// resumed, and the flow active on the primary again.
// failedOver is the sandbox flow on MM2 on the Connect stand-in, after a
// completed failover run fo (the sandbox's mirror stopped too, so DR
// stands still at the cut).
func failedOver(t *testing.T) (e *runbooktest.Env, fc *connectREST, fo int64) {
	e = runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	fc, url := newConnectREST(t, forwardConnectors)
	e.RB.Connect = func(string) *connect.Client { return connect.New(url) }
	flow := e.Cfg.Flow("primary->dr")
	flow.ConnectURL, flow.Connectors = "http://connect:8083", []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}
	e.RB.ReverseCatchUp = 2 * time.Second
	if _, err := e.RB.Create(ctx, runbooktest.Alice, FailbackPlan("primary->dr"), "back"); err == nil || !strings.Contains(err.Error(), "primary is the active side") {
		t.Fatalf("failback while the primary is active: %v", err)
	}
	e.SB.SetMirrorRunning(false)
	time.Sleep(500 * time.Millisecond)
	fo = e.Approved(t, ctx, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindStopMirror}}})
	if err := e.Step(ctx, fo, 0); err != nil {
		t.Fatal(err)
	}
	return e, fc, fo
}

func TestFailbackRun(t *testing.T) {
	t.Parallel()
	e, fc, fo := failedOver(t)
	ctx := context.Background()
	flow := e.Cfg.Flow("primary->dr")
	if s := e.Mon.Snapshot("primary->dr"); s.FailedOver == nil || s.FailedOver.Run != fo || s.Status != model.FlowStatusFailedOver {
		t.Fatalf("after the failover: %s %+v", s.Status, s.FailedOver)
	}
	cut, err := e.Store.FailoverCut(ctx, fo)
	if err != nil || len(cut) == 0 {
		t.Fatalf("cut %v %v", cut, err)
	}

	// A cut that does not know a partition's DR end refuses the set-up,
	// naming the partition.
	end := int64(5)
	other, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindStopMirror}}}, "a run to hold a cut")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SaveFailoverCut(ctx, other, []model.CutPosition{{Topic: "events", RemoteTopic: "events", DREnd: &end},
		{Topic: "events", Partition: 1, RemoteTopic: "events"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := book(e.RB).reverseStart(ctx, &runbook.Run{Plan: runbook.Plan{FailbackOf: other}}); err == nil || !strings.Contains(err.Error(), "does not know DR's log end of events-1") {
		t.Fatalf("a cut with an unknown partition: %v", err)
	}

	id := e.Approved(t, ctx, FailbackPlan("primary->dr", "fb-app"))
	r, _ := e.RB.Get(ctx, id)
	if r.Plan.FailbackOf != fo {
		t.Fatalf("failback of run %d, want %d", r.Plan.FailbackOf, fo)
	}
	if !strings.Contains(r.Plan.StepTitle(0, flow), "dr-to-primary-MirrorSourceConnector") || !strings.Contains(r.Plan.StepTitle(0, flow), "http://connect:8083") {
		t.Fatalf("title %q", r.Plan.StepTitle(0, flow))
	}

	pv := e.RB.Preview(ctx, r)
	if pv[0].Err != "" || !strings.Contains(strings.Join(pv[0].Lines, "\n"), "created STOPPED") || len(pv[0].Rules) != 4 || len(pv[4].Lines) == 0 || len(pv[5].Lines) == 0 {
		t.Fatalf("preview %+v", pv)
	}
	// A forward connector paused, not stopped: a cycle away, refused.
	fc.mu.Lock()
	fc.conn["MirrorCheckpointConnector"].state = "PAUSED"
	fc.mu.Unlock()
	if err := e.Step(ctx, id, 0); !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "MirrorCheckpointConnector (PAUSED)") {
		t.Fatalf("set-up with a paused forward connector: %v", err)
	}
	fc.mu.Lock()
	fc.conn["MirrorCheckpointConnector"].state = "STOPPED"
	fc.mu.Unlock()

	// No audit record, no effect: with the chain refusing records, the
	// set-up sends Connect nothing that changes it.
	noAudit := func(idx int) {
		t.Helper()
		before := len(fc.log)
		storagetest.FailAuditWrites(t, e.Path, true)
		err := e.Step(ctx, id, idx)
		storagetest.FailAuditWrites(t, e.Path, false)
		if err == nil {
			t.Fatalf("step %d ran without its audit record", idx+1)
		}
		fc.mu.Lock()
		defer fc.mu.Unlock()
		for _, l := range fc.log[before:] {
			if !strings.HasPrefix(l, "GET") {
				t.Fatalf("step %d sent %s without its audit record", idx+1, l)
			}
		}
	}
	// The forward source's replication factor comes along; its topics do not.
	fc.mu.Lock()
	fc.conn["MirrorSourceConnector"].config["replication.factor"] = "1"
	fc.conn["MirrorSourceConnector"].config["topics"] = "forward-only"
	fc.mu.Unlock()
	noAudit(0)
	// 1. set-up-reverse: the source starts at the cut.
	if err := e.Step(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	src := "dr-to-primary-MirrorSourceConnector"
	for _, n := range []string{src, "dr-to-primary-MirrorCheckpointConnector", "dr-to-primary-MirrorHeartbeatConnector"} {
		if s := fc.state(n); s != "RUNNING" {
			t.Fatalf("%s is %s", n, s)
		}
	}
	// The reverse flow is watched as a flow of its own from now on, and
	// found again from the store by a console that starts now.
	rev := ReverseFlowName("primary->dr")
	watchedOnly := func(want ...string) {
		t.Helper()
		if got := e.Mon.Watched(); !slices.Equal(got, want) {
			t.Fatalf("watched flows %v, want %v", got, want)
		}
	}
	watchedOnly(rev)
	if s := e.Mon.Snapshot(rev); s == nil || s.Flow.ReverseOf != "primary->dr" || s.Flow.Source != "dr" || s.Flow.SourceAlias != "dr" || s.Flow.TargetAlias != "primary" {
		t.Fatalf("reverse flow snapshot %+v", s)
	}
	if err := e.Mon.SetWatched(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := book(e.RB).WatchReverseFlows(ctx); err != nil {
		t.Fatal(err)
	}
	watchedOnly(rev)
	fc.mu.Lock()
	if c := fc.conn[src].config; c["replication.factor"] != "1" || c["topics"] == "forward-only" {
		t.Errorf("reverse source config %v: want the forward replication.factor, not its topics", c)
	}
	fc.mu.Unlock()
	next := fc.next(t, src)
	cutAt := map[model.TP]int64{}
	for _, c := range cut {
		tp := model.TP{Topic: c.RemoteTopic, Partition: c.Partition}
		cutAt[tp] = *c.DREnd
		if got, ok := next[mm2.TPKey(tp)]; *c.DREnd > 0 && (!ok || got != *c.DREnd) {
			t.Fatalf("%s: reverse source starts at %d (set %v), cut %d", mm2.TPKey(tp), got, ok, *c.DREnd)
		}
	}
	// Retried, it finds its own running source and creates nothing.
	before := len(fc.log)
	r, _ = e.RB.Get(ctx, id)
	if res, err := book(e.RB).setUpReverse(ctx, runbooktest.Written(t, e), r, flow, e.RB.Connect(flow.ConnectURL)); err != nil || !strings.Contains(res.Note, "earlier attempt") {
		t.Fatalf("set-up retried: %v %v", res, err)
	}
	for _, l := range fc.log[before:] {
		if strings.HasPrefix(l, "POST") || strings.HasPrefix(l, "PATCH") {
			t.Fatalf("a retry sent %s", l)
		}
	}

	// 2. A record written in DR since the failover, not yet committed by
	// the reverse flow: the wait fails at its timeout with the figures.
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.SB.DRBootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 0, Value: []byte("written in DR")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tp0 := model.TP{Topic: "events", Partition: 0}
	// Offsets Connect does not report are unknown, never caught up.
	fc.copied(src, "dr", nil)
	r, _ = e.RB.Get(ctx, id)
	if v := book(e.RB).ReverseFlow(ctx, r); v == nil || v.Err != "" || v.Unknown != 1 || len(v.Rows) != 1 || v.Rows[0].Partition != "events-0" ||
		v.Rows[0].Next != nil || v.Behind != 1 || v.States[src] != "RUNNING" || v.Heartbeat != nil || !strings.Contains(v.HeartbeatErr, "dr.heartbeats") {
		t.Fatalf("the reverse flow with no committed offsets: %+v", v)
	}
	// A heartbeat emitted in DR, copied to the primary's dr.heartbeats.
	pcl, err := kgo.NewClient(kgo.SeedBrokers(e.SB.PrimaryBootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	if _, err := kadm.NewClient(pcl).CreateTopic(ctx, 1, 1, nil, "dr.heartbeats"); err != nil {
		t.Fatal(err)
	}
	hb := model.Heartbeat{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: e.Now.Add(-3 * time.Second).UnixMilli()}
	if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: "dr.heartbeats", Key: mm2.EncodeKey(hb), Value: mm2.EncodeValue(hb)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if v := book(e.RB).ReverseFlow(ctx, r); v.Heartbeat == nil || v.Heartbeat.UnixMilli() != hb.EmittedMs {
		t.Fatalf("the reverse flow's heartbeat: %+v", v)
	}
	if err := e.Step(ctx, id, 1); err == nil || !strings.Contains(err.Error(), "reverse at ?") {
		t.Fatalf("wait with no reverse offsets: %v", err)
	}
	fc.copied(src, "dr", cutAt)
	if err := e.Step(ctx, id, 1); err == nil || !strings.Contains(err.Error(), "did not catch up") || !strings.Contains(err.Error(), "events-0 DR end") {
		t.Fatalf("wait with a record not copied back: %v", err)
	}
	if v := book(e.RB).ReverseFlow(ctx, r); v.Unknown != 0 || len(v.Rows) != 1 || v.Rows[0].Next == nil || *v.Rows[0].Next != cutAt[tp0] || v.Behind != 1 {
		t.Fatalf("the reverse flow one record behind: %+v", v)
	}
	// A transaction in DR: its commit marker is never copied, so a reverse
	// source past its record is caught up one offset below the log end.
	txn, err := kgo.NewClient(kgo.SeedBrokers(e.SB.DRBootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("dr-writer"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 1, Value: []byte("in a transaction")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	tp1 := model.TP{Topic: "events", Partition: 1}
	caught := maps.Clone(cutAt)
	caught[tp0]++
	caught[tp1]++
	fc.copied(src, "dr", caught)
	v := book(e.RB).ReverseFlow(ctx, r)
	if v.Err != "" || v.Behind != 0 || len(v.Rows) != 2 || v.Rows[1].Partition != "events-1" || !v.Rows[1].MarkersOnly || v.Rows[0].MarkersOnly {
		t.Fatalf("the reverse flow past a transaction's record, below its marker: %+v", v)
	}
	// Caught up, but the console has ingested none of the reverse flow's
	// offset syncs yet (MM2 writes one for the first record it copies):
	// the wait holds, naming them, until they are in.
	if err := e.Step(ctx, id, 1); err == nil || !strings.Contains(err.Error(), "events-0: no offset sync of the reverse flow ingested yet") {
		t.Fatalf("wait with no reverse syncs ingested: %v", err)
	}
	// (events-1's sits past its record, on the marker, so that the
	// translations below use only the syncs they add: theirs rewind
	// upstream and start a new history.)
	for i, tp := range []model.TP{tp0, tp1} {
		if err := e.Store.Apply(ctx, storage.Batch{Flow: ReverseFlowName("primary->dr"), Topic: "mm2-offset-syncs.dr.internal", Incarnation: 0,
			NextOffset: int64(i) + 1, Syncs: []model.OffsetSync{{Topic: tp.Topic, Partition: tp.Partition, Upstream: cutAt[tp] + int64(i), Downstream: 0,
				LogOffset: int64(i), RecordMs: time.Now().UnixMilli()}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Step(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	// 3. stop-writers: the typed confirmation is the step.
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 2, "yes", ""); !errors.Is(err, runbook.ErrConfirmation) {
		t.Fatalf("stop-writers without the flow name: %v", err)
	}
	if err := e.Step(ctx, id, 2); err != nil {
		t.Fatal(err)
	}
	// restart-forward is not next; 4. stop-reverse deletes them.
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 4, "primary->dr", ""); !errors.Is(err, runbook.ErrOrder) {
		t.Fatalf("restart-forward before stop-reverse: %v", err)
	}
	if err := e.Step(ctx, id, 3); err != nil {
		t.Fatal(err)
	}
	watchedOnly() // stopped: no longer copying
	if s := fc.state(src); s != "PAUSED" {
		t.Fatalf("reverse source %s after stop-reverse", s)
	}
	r, _ = e.RB.Get(ctx, id)
	stopped, err := recordedEnds(r)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := stopped.primary()
	if err != nil || len(ends) == 0 {
		t.Fatalf("recorded ends %v %v", ends, err)
	}
	// 5. translate-group-back: refused until the DR group is at DR's
	// recorded end on every partition it has, then committed at the
	// primary's recorded ends.
	if err := e.Step(ctx, id, 4); err == nil || !strings.Contains(err.Error(), "no committed offset in DR") {
		t.Fatalf("group back with no DR offsets: %v", err)
	}
	drEnds, err := stopped.dr()
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	commit := func(offs map[model.TP]int64) {
		t.Helper()
		o := kadm.Offsets{}
		for tp, at := range offs {
			o.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: at, LeaderEpoch: -1})
		}
		if resp, err := adm.CommitOffsets(ctx, "fb-app", o); err != nil || resp.Error() != nil {
			t.Fatal(err, resp.Error())
		}
	}
	// events-1 ends with a committed transaction: its record at end-2,
	// the commit marker at end-1. A group below the record is behind.
	commit(map[model.TP]int64{tp0: drEnds[tp0], tp1: drEnds[tp1] - 2})
	if err := e.Step(ctx, id, 4); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("events-1 (DR group at %d, DR's end was %d; a record at %d it has not consumed; no offset sync of this failback's reverse flow at or below it)", drEnds[tp1]-2, drEnds[tp1], drEnds[tp1]-2)) {
		t.Fatalf("group back with a partition behind: %v", err)
	}
	// A group below the cut (it lagged since before the failover) goes
	// through the forward flow's syncs, read backwards: on the primary it
	// starts at or before the record it had not read in DR, re-reading at
	// most the records since the sync, checked by payload.
	below := drEnds[tp1] - markerTail - 1
	commit(map[model.TP]int64{tp1: below})
	r, _ = e.RB.Get(ctx, id)
	b, err := book(e.RB).groupBack(ctx, r, "fb-app")
	if err != nil || len(b.Translated) != 1 || !strings.Contains(b.Translated[0], "read backwards") {
		t.Fatalf("group back below the cut: %+v %v", b, err)
	}
	fs, ok := e.Mon.SyncSourceOf("primary->dr", tp1, below)
	if !ok || fs.Downstream > below {
		t.Fatalf("forward sync at or below %d: %+v %v", below, fs, ok)
	}
	unread := readRecords(t, e.SB.DRBootstrap(), tp1, below, 1)
	var at int64 = -1 // the unread record's offset on the primary
	for _, rec := range readRecords(t, e.SB.PrimaryBootstrap(), tp1, fs.Upstream, int(below-fs.Downstream)+1) {
		if len(unread) == 1 && string(rec.Value) == string(unread[0].Value) {
			at = rec.Offset
		}
	}
	// MM2's rule mirrored: the sync's upstream offset, +1 past its
	// downstream one; the stated re-read bound holds.
	want := fs.Upstream
	if below > fs.Downstream {
		want++
	}
	if at < 0 || b.Primary[tp1] != want || b.Primary[tp1] > at || at-b.Primary[tp1] > max(below-fs.Downstream-1, 0) ||
		!strings.Contains(b.Translated[0], fmt.Sprintf("at most %d re-read", max(below-fs.Downstream-1, 0))) {
		t.Fatalf("DR's next record for the group is at %d on the primary; the group was moved to %d (%s)", at, b.Primary[tp1], b.Translated[0])
	}
	// Retention on the primary since: the records from that offset are
	// gone, so the group would start past ones it has not read: refused.
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: tp1.Topic, Partition: tp1.Partition, At: want + 1})
	if resp, err := kadm.NewClient(runbooktest.PrimaryClient(e.Mon, "primary->dr")).DeleteRecords(ctx, del); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	if _, err := book(e.RB).groupBack(ctx, r, "fb-app"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("gives %d on the primary, below its log start %d", want, want+1)) {
		t.Fatalf("group back below the primary's log start: %v", err)
	}
	// Inside the log, through this failback's reverse offset syncs: only
	// syncs at or past the cut and not older than the run count. An
	// earlier failback's sync, stored under the same name, would give
	// +50; one below the cut would start a new history (MM2's rewind rule)
	// and give -9.
	start, err := book(e.RB).reverseStart(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if start[tp1] != drEnds[tp1]-2 {
		t.Fatalf("the test expects one DR record past the cut on events-1: cut %d, DR's end %d", start[tp1], drEnds[tp1])
	}
	commit(map[model.TP]int64{tp1: start[tp1]}) // has not read DR's one new record
	now := time.Now().UnixMilli()
	down := ends[tp1] - 1 // where the reverse flow wrote it on the primary
	syncsAt := func(ss ...model.OffsetSync) {
		t.Helper()
		for _, s := range ss {
			s.Topic, s.Partition = "events", 1
			if err := e.Store.Apply(ctx, storage.Batch{Flow: ReverseFlowName("primary->dr"), Topic: "mm2-offset-syncs.dr.internal", Incarnation: 1,
				NextOffset: s.LogOffset + 1, Syncs: []model.OffsetSync{s}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	syncsAt(model.OffsetSync{Upstream: start[tp1], Downstream: down, RecordMs: now, LogOffset: 0},
		model.OffsetSync{Upstream: start[tp1], Downstream: down + 50, RecordMs: 1, LogOffset: 1},
		model.OffsetSync{Upstream: start[tp1] - 1, Downstream: down - 10, RecordMs: now, LogOffset: 2})
	r, _ = e.RB.Get(ctx, id)
	b, err = book(e.RB).groupBack(ctx, r, "fb-app")
	if err != nil || b.Primary[tp1] != down || len(b.Translated) != 1 ||
		!strings.Contains(b.Translated[0], fmt.Sprintf("events-1 at %d → %d (reverse sync %d→%d, exact: at most 0 re-read)", start[tp1], down, start[tp1], down)) {
		t.Fatalf("group inside the log: %+v %v", b, err)
	}
	pv4 := e.RB.Preview(ctx, r)[4]
	if !strings.Contains(strings.Join(pv4.Lines, "\n"), "moved through the reverse flow's offset syncs: events-1 at") {
		t.Fatalf("preview of the translation inside the log: %+v", pv4)
	}
	// Retention on the primary past where the reverse sync puts the
	// group: the step's start re-checks the primary's log start (issue
	// 28) and refuses, naming the records gone.
	del = kadm.Offsets{}
	del.Add(kadm.Offset{Topic: tp1.Topic, Partition: tp1.Partition, At: down + 1})
	if resp, err := kadm.NewClient(runbooktest.PrimaryClient(e.Mon, "primary->dr")).DeleteRecords(ctx, del); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 4, "primary->dr", ""); !errors.Is(err, runbook.ErrRuleViolation) ||
		!strings.Contains(err.Error(), fmt.Sprintf("data deleted on the primary: events-1: log start %d is past the position %d", down+1, down)) {
		t.Fatalf("group back below the primary's current log start: %v", err)
	}
	// A sync that would land past the primary's recorded end is refused.
	syncsAt(model.OffsetSync{Upstream: start[tp1], Downstream: ends[tp1] + 5, RecordMs: now, LogOffset: 3})
	if _, err := book(e.RB).groupBack(ctx, r, "fb-app"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the reverse flow's sync gives %d, past the primary's end %d", ends[tp1]+5, ends[tp1])) {
		t.Fatalf("a sync past the primary's end: %v", err)
	}
	// Past the record, below the marker (as franz-go commits: last
	// record + 1; seen against real Kafka in TestFailbackE2E): consumed
	// everything, translated to the primary's end.
	commit(map[model.TP]int64{tp1: drEnds[tp1] - 1})
	if err := e.Step(ctx, id, 4); err != nil {
		t.Fatal(err)
	}
	primaryAdm := kadm.NewClient(runbooktest.PrimaryClient(e.Mon, "primary->dr"))
	got, err := primaryAdm.FetchOffsets(ctx, "fb-app")
	if err != nil {
		t.Fatal(err)
	}
	if o0, _ := got.Lookup("events", 0); o0.At != ends[tp0] || len(got) != 1 || len(got["events"]) != 2 {
		t.Fatalf("primary group offsets %+v, want events-0 at %d and events-1 only", got, ends[tp0])
	}
	if e.Audit.Count("failback.group-before") != 1 {
		t.Fatal("the primary group's offsets before the change are not on record")
	}
	// Someone resumed the reverse source: restart-forward is refused.
	fc.mu.Lock()
	fc.conn[src].state = "RUNNING"
	fc.mu.Unlock()
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 5, "primary->dr", ""); !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), src+" (RUNNING)") {
		t.Fatalf("restart-forward with the reverse source running: %v", err)
	}
	fc.mu.Lock()
	fc.conn[src].state = "PAUSED"
	fc.mu.Unlock()
	// 6. restart-forward: the forward source at the recorded ends, resumed.
	noAudit(5)
	if err := e.Step(ctx, id, 5); err != nil {
		t.Fatal(err)
	}
	// Retried, it finds the forward source resumed at the ends and only
	// resumes again (harmless).
	before = len(fc.log)
	r, _ = e.RB.Get(ctx, id)
	if res, err := book(e.RB).restartForward(ctx, runbooktest.Written(t, e), r, flow, e.RB.Connect(flow.ConnectURL)); err != nil || !strings.Contains(fmt.Sprint(res), "earlier attempt") {
		t.Fatalf("restart-forward retried: %v %v", res, err)
	}
	for _, l := range fc.log[before:] {
		if strings.HasPrefix(l, "PATCH") || strings.HasPrefix(l, "POST") {
			t.Fatalf("a retry sent %s", l)
		}
	}
	if s := fc.state(src); s != "gone" {
		t.Fatalf("reverse source %s after restart-forward", s)
	}
	if r, _ := e.RB.Get(ctx, id); book(e.RB).ReverseFlow(ctx, r) != nil {
		t.Fatal("a reverse flow shown after restart-forward")
	}
	for n := range forwardConnectors {
		if s := fc.state(n); s != "RUNNING" {
			t.Fatalf("forward %s is %s", n, s)
		}
	}
	fwd := fc.next(t, "MirrorSourceConnector")
	for tp, end := range ends {
		if got := fwd[mm2.TPKey(tp)]; end > 0 && got != end {
			t.Fatalf("forward source %s starts at %d, want the recorded end %d", mm2.TPKey(tp), got, end)
		}
	}
	a, err := failover.ActiveSideOf(ctx, e.Store, "primary->dr")
	if err != nil || a.Side != model.SidePrimary || a.Run != id {
		t.Fatalf("after the failback: %+v %v", a, err)
	}
	if s := e.Mon.Snapshot("primary->dr"); s.FailedOver != nil || s.Status == model.FlowStatusFailedOver {
		t.Fatalf("after the failback the flow is still failed over: %s %+v", s.Status, s.FailedOver)
	}
	if _, err := e.RB.Create(ctx, runbooktest.Alice, FailbackPlan("primary->dr"), "again"); err == nil {
		t.Fatal("a second failback accepted while the primary is active")
	}
}

func TestFailbackPlanRefusals(t *testing.T) {
	t.Parallel()
	base := func(mut func(*config.Config)) *config.Config {
		cfg := &config.Config{
			Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{"p:9092"}}, "dr": {Bootstrap: []string{"d:9092"}}},
			Flows:    []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", ConnectURL: "http://connect:8083"}},
		}
		if mut != nil {
			mut(cfg)
		}
		if err := cfg.Normalize("test"); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ok := FailbackPlan("primary->dr")
	if err := ok.Validate(base(nil)); err != nil {
		t.Fatalf("the failback plan refused: %v", err)
	}
	if err := ok.Validate(base(func(c *config.Config) { c.Flows[0].ReplicationPolicy = "default" })); err != nil {
		t.Fatalf("the failback plan refused under the default policy: %v", err)
	}
	reordered := FailbackPlan("primary->dr")
	reordered.Steps[2], reordered.Steps[3] = reordered.Steps[3], reordered.Steps[2]
	stray := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindStopReverse}}}
	for _, c := range []struct {
		name string
		cfg  *config.Config
		plan runbook.Plan
		want string
	}{
		{"dedicated MM2", base(func(c *config.Config) { c.Flows[0].ConnectURL = "" }), ok, "no connect_url"},
		{"cluster link", base(func(c *config.Config) {
			c.Flows[0].Kind, c.Flows[0].ConnectURL = "cluster-link", ""
			c.Flows[0].ClusterLink = &config.ClusterLink{RestURL: "http://dr:8090/kafka", ClusterID: "c", Link: "l"}
		}), ok, "set cluster_link.primary"},
		{"order", base(nil), reordered, "exactly"},
		{"stray step", base(nil), stray, "only in a failback plan"},
	} {
		if err := c.plan.Validate(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A plan has one kind: both old flags at once are refused as it is read.
	fb, _ := json.Marshal(FailbackPlan("primary->dr"))
	both := strings.Replace(string(fb), `"failback":true`, `"drill":true,"failback":true`, 1)
	if err := json.Unmarshal([]byte(both), new(runbook.Plan)); err == nil || !strings.Contains(err.Error(), "a drill or a failback") {
		t.Errorf("drill: %v, want %q", err, "a drill or a failback")
	}
}

// A console killed at every step boundary of a failback resumes each step
// and applies none twice: the reverse connectors are created once, their
// offsets set once, the forward source's offsets set once.
func TestFailbackResumesAfterCrashAtEveryBoundary(t *testing.T) {
	e, fc, _ := failedOver(t)
	ctx := context.Background()
	id := e.Approved(t, ctx, FailbackPlan("primary->dr"))
	fc.lagging = true // a resumed step finds the state before its resume (TestFailbackE2E found it)
	crashed := errors.New("crash")
	for idx := range 5 {
		for _, point := range []string{"started", "effect-done", ""} {
			e.RB.CrashHook = func(p string) {
				if p == point {
					panic(crashed)
				}
			}
			err := func() (err error) {
				defer func() {
					if v := recover(); v != nil {
						err = v.(error)
					}
				}()
				return e.Step(ctx, id, idx)
			}()
			switch {
			case point != "" && !errors.Is(err, crashed):
				t.Fatalf("step %d: crash at %s did not happen: %v", idx+1, point, err)
			case point != "":
				runbook.Restarted() // the console comes back as a new process
			case err != nil:
				t.Fatalf("step %d after crashes: %v", idx+1, err)
			}
		}
	}
	counts := map[string]int{}
	for _, l := range fc.log {
		if strings.HasPrefix(l, "POST") || strings.HasPrefix(l, "PATCH") {
			counts[l]++
		}
	}
	// Crashed at "effect-done", the set-up and restart-forward ran their
	// effects twice: the second attempt found the connectors started and
	// sent no second create or offset change.
	want := map[string]int{"POST": 1, "PATCH dr-to-primary-MirrorSourceConnector offsets": 1, "PATCH MirrorSourceConnector offsets": 1}
	if !maps.Equal(counts, want) {
		t.Fatalf("creates and offset changes %v, want %v", counts, want)
	}
	if a, err := failover.ActiveSideOf(ctx, e.Store, "primary->dr"); err != nil || a.Side != model.SidePrimary {
		t.Fatalf("after the resumed failback: %+v %v", a, err)
	}
}

// Clusters the console reaches with SASL or TLS: set-up-reverse is refused
// while the forward MirrorSourceConnector names no security.protocol for
// them; with its settings, the reverse connectors get them swapped (DR's
// as source.cluster.*, the primary's as target.cluster.* and, where a
// connector writes to the primary, producer.override.*), config-provider
// references passed on unresolved, and none of it in the audit log.
func TestFailbackReverseRepeatsWorkerClientSettings(t *testing.T) {
	t.Parallel()
	e, fc, _ := failedOver(t)
	ctx := context.Background()
	e.Cfg.Clusters["primary"].SASL = &config.SASL{Mechanism: "PLAIN", Username: "u", Password: "p"}
	id := e.Approved(t, ctx, FailbackPlan("primary->dr"))
	if err := e.Step(ctx, id, 0); !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "cluster primary has TLS or SASL settings, but the forward MirrorSourceConnector sets no source.cluster.security.protocol") {
		t.Fatalf("set-up-reverse without the workers' settings: %v", err)
	}
	const jaas = "${file:/etc/kafka/secrets.properties:primary.jaas}"
	fc.mu.Lock()
	maps.Copy(fc.conn["MirrorSourceConnector"].config, map[string]string{
		"source.cluster.bootstrap.servers": "primary-internal:9093", "source.cluster.security.protocol": "SASL_SSL",
		"source.cluster.sasl.mechanism": "PLAIN", "source.cluster.sasl.jaas.config": jaas,
		"target.cluster.security.protocol": "SSL", "target.cluster.ssl.truststore.location": "/etc/kafka/dr.jks",
	})
	fc.mu.Unlock()
	if err := e.Step(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	fc.mu.Lock()
	src := maps.Clone(fc.conn["dr-to-primary-MirrorSourceConnector"].config)
	hb := maps.Clone(fc.conn["dr-to-primary-MirrorHeartbeatConnector"].config)
	fc.mu.Unlock()
	for k, want := range map[string]string{
		"target.cluster.security.protocol": "SASL_SSL", "target.cluster.sasl.jaas.config": jaas, "target.cluster.sasl.mechanism": "PLAIN",
		"producer.override.security.protocol": "SASL_SSL", "producer.override.sasl.jaas.config": jaas,
		"source.cluster.security.protocol": "SSL", "source.cluster.ssl.truststore.location": "/etc/kafka/dr.jks",
		"target.cluster.bootstrap.servers": "primary-internal:9093", "producer.override.bootstrap.servers": "primary-internal:9093",
	} {
		if src[k] != want {
			t.Errorf("reverse source %s = %q, want %q", k, src[k], want)
		}
	}
	if hb["producer.override.security.protocol"] != "SSL" || hb["producer.override.ssl.truststore.location"] != "/etc/kafka/dr.jks" {
		t.Errorf("the heartbeat connector writes to DR: %v", hb)
	}
	entries, err := e.Store.AuditEntries(ctx, storage.AuditFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if strings.Contains(string(en.Details), "primary.jaas") || strings.Contains(string(en.Details), "dr.jks") {
			t.Fatalf("a worker client setting in the audit record %s: %s", en.Action, en.Details)
		}
	}
}

// readRecords reads up to n records of tp from offset from on the cluster
// at bootstrap.
func readRecords(t *testing.T, bootstrap []string, tp model.TP, from int64, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tp.Topic: {tp.Partition: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if len(out) < n {
				out = append(out, r)
			}
		})
	}
	return out
}
