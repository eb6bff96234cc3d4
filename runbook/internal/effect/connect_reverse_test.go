package effect

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// connectStandIn is a Kafka Connect REST stand-in with the answers of
// ConnectorsResource.java (201 created / 200 updated on PUT config, 202
// pause, 204 stop and delete, 404 with Connect's error body) over a map
// of connectors, recording every request it gets.
type connectStandIn struct {
	mu         sync.Mutex
	connectors map[string]*standInConnector
	requests   []seenRequest
	failNext   *failAnswer // answers the request after skip others
}

type standInConnector struct {
	config  map[string]string
	state   string
	offsets string // the last PATCH offsets body
}

type seenRequest struct{ Method, Path, ContentType, Body string }

type failAnswer struct {
	skip, status int
	msg          string
}

func newConnectStandIn(t *testing.T) (*connectStandIn, *connect.Client) {
	s := &connectStandIn{connectors: map[string]*standInConnector{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, connect.New(srv.URL)
}

func (s *connectStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, seenRequest{r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type"), string(body)})
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if v != nil {
			json.NewEncoder(w).Encode(v)
		}
	}
	fail := func(status int, msg string) { answer(status, map[string]any{"error_code": status, "message": msg}) }
	if f := s.failNext; f != nil {
		if f.skip == 0 {
			s.failNext = nil
			fail(f.status, f.msg)
			return
		}
		f.skip--
	}
	if r.Method == http.MethodPost && r.URL.Path == "/connectors" {
		var req struct {
			Name         string            `json:"name"`
			Config       map[string]string `json:"config"`
			InitialState string            `json:"initial_state"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Name == "" {
			fail(400, "Cannot deserialize the request")
			return
		}
		if s.connectors[req.Name] != nil {
			fail(409, "Connector "+req.Name+" already exists") // DistributedHerder's wording
			return
		}
		req.Config["name"] = req.Name
		state := map[string]string{"": "RUNNING", "RUNNING": "RUNNING", "PAUSED": "PAUSED", "STOPPED": "STOPPED"}[req.InitialState]
		s.connectors[req.Name] = &standInConnector{config: req.Config, state: state}
		answer(http.StatusCreated, map[string]any{"name": req.Name, "config": req.Config, "tasks": []any{}, "type": "source"})
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/connectors/"), "/")
	name, verb := parts[0], ""
	if len(parts) > 1 {
		verb = parts[1]
	}
	c := s.connectors[name]
	if c == nil && !(r.Method == http.MethodPut && verb == "config") {
		fail(404, "Connector "+name+" not found")
		return
	}
	switch {
	case r.Method == http.MethodPut && verb == "config":
		var cfg map[string]string
		if err := json.Unmarshal(body, &cfg); err != nil {
			fail(500, "Cannot deserialize the config")
			return
		}
		cfg["name"] = name // checkAndPutConnectorConfigName
		status := http.StatusOK
		if c == nil {
			c, status = &standInConnector{state: "RUNNING"}, http.StatusCreated
			s.connectors[name] = c
		}
		c.config = cfg
		answer(status, map[string]any{"name": name, "config": cfg, "tasks": []any{map[string]any{"connector": name, "task": 0}}, "type": "source"})
	case r.Method == http.MethodGet && verb == "status":
		tasks := []any{}
		if c.state != "STOPPED" {
			tasks = append(tasks, map[string]any{"id": 0, "state": c.state, "worker_id": "w:8083"})
		}
		answer(200, map[string]any{"name": name, "connector": map[string]any{"state": c.state, "worker_id": "w:8083"}, "tasks": tasks, "type": "source"})
	case r.Method == http.MethodGet && verb == "":
		answer(200, map[string]any{"name": name, "config": c.config, "tasks": []any{}, "type": "source"})
	case r.Method == http.MethodPatch && verb == "offsets":
		if c.state != "STOPPED" {
			// Stand-in wording of Connect's refusal.
			fail(400, "Connectors must be in the STOPPED state before their offsets can be modified")
			return
		}
		c.offsets = string(body)
		answer(200, map[string]any{"message": "The offsets for this connector have been altered successfully"})
	case r.Method == http.MethodDelete && verb == "offsets":
		if c.state != "STOPPED" {
			fail(400, "Connectors must be in the STOPPED state before their offsets can be modified")
			return
		}
		c.offsets = ""
		answer(200, map[string]any{"message": "The offsets for this connector have been reset successfully"})
	case r.Method == http.MethodPut && verb == "resume":
		c.state = "RUNNING"
		answer(http.StatusAccepted, nil)
	case r.Method == http.MethodPut && verb == "pause":
		c.state = "PAUSED"
		answer(http.StatusAccepted, nil)
	case r.Method == http.MethodPut && verb == "stop":
		c.state = "STOPPED"
		answer(http.StatusNoContent, nil)
	case r.Method == http.MethodDelete && verb == "":
		delete(s.connectors, name)
		answer(http.StatusNoContent, nil)
	default:
		fail(405, "HTTP 405 Method Not Allowed")
	}
}

func (s *connectStandIn) seen() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.requests...)
}

// fail makes the request after skip others fail with status and msg.
func (s *connectStandIn) fail(skip, status int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = &failAnswer{skip, status, msg}
}

// withReverseConnectors is a Connect stand-in holding the reverse
// connectors of reverseForTest.
func withReverseConnectors(t *testing.T) (*connectStandIn, *connect.Client, mm2.ReverseConnectors) {
	t.Helper()
	s, c := newConnectStandIn(t)
	r := reverseForTest(t)
	if _, err := PutReverseConnectors(context.Background(), writtenT(t), c, r); err != nil {
		t.Fatal(err)
	}
	return s, c, r
}

func reverseForTest(t *testing.T) mm2.ReverseConnectors {
	t.Helper()
	r, err := mm2.ForwardFlow{PrimaryAlias: "primary", DRAlias: "dr", Policy: mm2.ReplicationPolicy{Identity: true},
		PrimaryBootstrap: "primary:9092", DRBootstrap: "dr:9092", Include: []string{"events.*"}}.ReverseConfigs()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The three PUTs carry exactly the configs, in order, as JSON; a retried
// set-up rewrites the same three (200, not 201) and creates no twins.
func TestPutReverseConnectors(t *testing.T) {
	s, c := newConnectStandIn(t)
	r := reverseForTest(t)
	ctx := context.Background()
	for round := range 2 {
		infos, err := PutReverseConnectors(ctx, writtenT(t), c, r)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(infos) != 3 || infos[0].Name != r.Source || infos[0].Config["connector.class"] != mm2.MirrorSourceConnectorClass {
			t.Fatalf("round %d: answers %+v", round, infos)
		}
	}
	reqs := s.seen()
	if len(reqs) != 6 {
		t.Fatalf("%d requests: %+v", len(reqs), reqs)
	}
	for i, req := range reqs {
		name := r.Names()[i%3]
		if req.Method != http.MethodPut || req.Path != "/connectors/"+name+"/config" || req.ContentType != "application/json" {
			t.Errorf("request %d: %+v", i, req)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(req.Body), &got); err != nil || !maps.Equal(got, r.Configs[name]) {
			t.Errorf("request %d body %s, want %v", i, req.Body, r.Configs[name])
		}
	}
	if len(s.connectors) != 3 {
		t.Fatalf("%d connectors after a retried set-up", len(s.connectors))
	}
	st, err := c.Statuses(ctx, r.Names())
	if err != nil || len(st) != 3 || st[r.Checkpoint].Connector.State != "RUNNING" {
		t.Fatalf("statuses %+v %v", st, err)
	}
}

// Connect's 409 (rebalance) and 500 reach the operator with Connect's own
// message; the set-up stops at the refused connector, and the retry after
// a 409 completes it without a twin.
func TestPutReverseConnectorsRefused(t *testing.T) {
	s, c, r := withReverseConnectors(t)
	ctx := context.Background()
	const rebalance = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	s.fail(1, 409, rebalance) // the checkpoint connector's PUT
	infos, err := PutReverseConnectors(ctx, writtenT(t), c, r)
	var he *connect.HTTPError
	if !errors.As(err, &he) || he.Status != 409 || !strings.Contains(err.Error(), rebalance) ||
		!strings.Contains(err.Error(), "retrying this step is safe") || len(infos) != 1 || infos[0].Name != r.Source {
		t.Fatalf("409: %v, %+v", err, infos)
	}
	if n := len(s.seen()); n != 5 {
		t.Fatalf("the set-up went on after the 409: %d requests", n)
	}
	if infos, err = PutReverseConnectors(ctx, writtenT(t), c, r); err != nil || len(infos) != 3 || len(s.connectors) != 3 {
		t.Fatalf("retry after 409: %v, %d answers, %d connectors", err, len(infos), len(s.connectors))
	}

	// A Connect without MM2's plugins: the 500 and its message, no hint to retry.
	s2, c2 := newConnectStandIn(t)
	s2.fail(0, 500, "Failed to find any class that implements Connector and which name matches org.apache.kafka.connect.mirror.MirrorSourceConnector")
	infos, err = PutReverseConnectors(ctx, writtenT(t), c2, r)
	if err == nil || !strings.Contains(err.Error(), "HTTP 500: Failed to find any class") || strings.Contains(err.Error(), "retrying") {
		t.Fatalf("500: %v", err)
	}
	if len(infos) != 0 || len(s2.connectors) != 0 || len(s2.seen()) != 1 {
		t.Fatalf("500 on the first PUT: %d answers, %d connectors, %d requests", len(infos), len(s2.connectors), len(s2.seen()))
	}
}

// Pause, stop and delete send exactly their requests; deleting again finds
// nothing and is no error.
func TestReverseConnectorsPauseStopDelete(t *testing.T) {
	s, c, r := withReverseConnectors(t)
	ctx := context.Background()
	n := len(s.seen())
	if err := PauseConnector(ctx, writtenT(t), c, r.Source); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.Status(ctx, r.Source); st.Connector.State != "PAUSED" {
		t.Fatalf("after pause %+v", st)
	}
	if err := StopConnector(ctx, writtenT(t), c, r.Source); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.Status(ctx, r.Source); !st.Stopped() {
		t.Fatalf("after stop %+v", st)
	}
	for i, want := range []bool{true, false} {
		gone, err := DeleteConnector(ctx, writtenT(t), c, r.Source)
		if err != nil || gone != want {
			t.Fatalf("delete %d: %v, %v", i, gone, err)
		}
	}
	if _, err := c.Status(ctx, r.Source); err == nil {
		t.Fatal("status of a deleted connector")
	}
	var got []string
	for _, req := range s.seen()[n:] {
		if req.Method != http.MethodGet {
			got = append(got, req.Method+" "+req.Path+" "+req.Body)
		}
	}
	p := "/connectors/" + r.Source
	want := []string{"PUT " + p + "/pause ", "PUT " + p + "/stop ", "DELETE " + p + " ", "DELETE " + p + " "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("requests\n got %q\nwant %q", got, want)
	}
	// A 409 on stop carries the hint too; the other connectors are untouched.
	s.fail(0, 409, "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)")
	if err := StopConnector(ctx, writtenT(t), c, r.Checkpoint); err == nil || !strings.Contains(err.Error(), "stale configuration") || !strings.Contains(err.Error(), "safe") {
		t.Fatalf("stop during a rebalance: %v", err)
	}
	if len(s.connectors) != 2 || s.connectors[r.Checkpoint].state != "RUNNING" {
		t.Fatalf("connectors %v", s.connectors)
	}
}

// Under the identity policy the reverse source connector is created
// STOPPED, its offsets set to the cut, then resumed: no task runs from the
// earliest offset. A retried create finds the same stopped connector and
// is done; one found running is refused.
func TestReverseSourceStartsAtCut(t *testing.T) {
	s, c := newConnectStandIn(t)
	r := reverseForTest(t)
	ctx := context.Background()
	cfg := r.Configs[r.Source]
	for round := range 2 {
		if _, err := CreateConnectorStopped(ctx, writtenT(t), c, r.Source, cfg); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	reqs := s.seen()
	var create struct {
		Name         string            `json:"name"`
		Config       map[string]string `json:"config"`
		InitialState string            `json:"initial_state"`
	}
	if err := json.Unmarshal([]byte(reqs[0].Body), &create); err != nil || reqs[0].Method != http.MethodPost || reqs[0].Path != "/connectors" ||
		create.Name != r.Source || create.InitialState != "STOPPED" || !maps.Equal(create.Config, cfg) {
		t.Fatalf("create request %+v", reqs[0])
	}
	if len(s.connectors) != 1 || s.connectors[r.Source].state != "STOPPED" {
		t.Fatalf("connectors %+v", s.connectors)
	}
	body, err := mm2.ReverseStartOffsets("dr", map[model.TP]int64{{Topic: "events", Partition: 0}: 42})
	if err != nil {
		t.Fatal(err)
	}
	if err := AlterConnectorOffsets(ctx, writtenT(t), c, r.Source, body); err != nil {
		t.Fatal(err)
	}
	last := s.seen()[len(s.seen())-1]
	if last.Method != http.MethodPatch || last.Path != "/connectors/"+r.Source+"/offsets" || last.ContentType != "application/json" ||
		last.Body != `{"offsets":[{"partition":{"cluster":"dr","partition":0,"topic":"events"},"offset":{"offset":41}}]}` {
		t.Fatalf("offsets request %+v", last)
	}
	if err := ResumeConnector(ctx, writtenT(t), c, r.Source); err != nil {
		t.Fatal(err)
	}
	// Running now: a create is refused, and so are new offsets (Connect's 400).
	if _, err := CreateConnectorStopped(ctx, writtenT(t), c, r.Source, cfg); err == nil || !strings.Contains(err.Error(), "state RUNNING") {
		t.Fatalf("create over a running connector: %v", err)
	}
	if err := AlterConnectorOffsets(ctx, writtenT(t), c, r.Source, body); err == nil || !strings.Contains(err.Error(), "HTTP 400: Connectors must be in the STOPPED state") {
		t.Fatalf("offsets of a running connector: %v", err)
	}
	// Another config under the same name is refused too.
	other := maps.Clone(cfg)
	other["topics"] = "other"
	if err := StopConnector(ctx, writtenT(t), c, r.Source); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateConnectorStopped(ctx, writtenT(t), c, r.Source, other); err == nil || !strings.Contains(err.Error(), "config different") {
		t.Fatalf("create with another config: %v", err)
	}
	// A 409 for a connector that does not exist is a rebalance.
	s2, c2 := newConnectStandIn(t)
	s2.fail(0, 409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
	if _, err := CreateConnectorStopped(ctx, writtenT(t), c2, r.Source, cfg); err == nil || !strings.Contains(err.Error(), "retrying this step is safe") {
		t.Fatalf("rebalance: %v", err)
	}
	if len(s2.connectors) != 0 {
		t.Fatal("created during a rebalance")
	}
}

// Under the default policy the reverse source's offsets are reset while it
// is stopped (DELETE /connectors/{name}/offsets); Connect refuses it for a
// running connector, and a reset twice is as once.
func TestResetConnectorOffsets(t *testing.T) {
	s, c := newConnectStandIn(t)
	r := reverseForTest(t)
	ctx := context.Background()
	if _, err := CreateConnectorStopped(ctx, writtenT(t), c, r.Source, r.Configs[r.Source]); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.connectors[r.Source].offsets = `{"offsets":[{"partition":{"cluster":"dr","partition":0,"topic":"events"},"offset":{"offset":41}}]}`
	s.mu.Unlock()
	for round := range 2 {
		if err := ResetConnectorOffsets(ctx, writtenT(t), c, r.Source); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	last := s.seen()[len(s.seen())-1]
	if last.Method != http.MethodDelete || last.Path != "/connectors/"+r.Source+"/offsets" || last.Body != "" {
		t.Fatalf("reset request %+v", last)
	}
	if s.connectors[r.Source].offsets != "" {
		t.Fatalf("offsets after the reset: %s", s.connectors[r.Source].offsets)
	}
	if err := ResumeConnector(ctx, writtenT(t), c, r.Source); err != nil {
		t.Fatal(err)
	}
	if err := ResetConnectorOffsets(ctx, writtenT(t), c, r.Source); err == nil || !strings.Contains(err.Error(), "HTTP 400: Connectors must be in the STOPPED state") {
		t.Fatalf("reset of a running connector: %v", err)
	}
}
