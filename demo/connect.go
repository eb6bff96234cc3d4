package demo

// A stand-in for the Kafka Connect cluster the sandbox's MM2 runs on, so
// the console's Connect paths (stop-mirror, a failback's reverse flow,
// restart-forward) can be walked in the sandbox. It serves the part of
// Connect's REST API the console uses, with Connect's answers and status
// codes, and it drives the sandbox: the forward MirrorSourceConnector IS
// the sandbox's mirror (stop, pause and resume it; its offsets are the
// mirror's committed positions, and setting them moves the mirror), and a
// MirrorSourceConnector created from DR to the primary copies DR's
// records to the primary from the offsets it was given. The checkpoint
// and heartbeat connectors keep their state and config only: the
// sandbox's mirror writes the forward checkpoints and heartbeats itself,
// and the reverse flow writes none. It is NOT Connect: the console's
// client is proven against real Connect in testenv.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// ConnectWorker is the worker id the stand-in's statuses name.
const ConnectWorker = "sandbox-connect:8083"

// ForwardConnectors are the forward flow's MM2 connectors on the stand-in,
// source first.
var ForwardConnectors = []string{connector, "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}

// ConnectStandIn serves Kafka Connect REST on 127.0.0.1.
type ConnectStandIn struct {
	URL string
	sb  *Sandbox
	srv *http.Server

	mu    sync.Mutex
	conns map[string]*standInConnector
	// reverse keeps each reverse source's task by name past a delete, as
	// Connect keeps a deleted connector's offsets.
	reverse map[string]*reverseMirror
}

type standInConnector struct {
	config map[string]string
	state  string // RUNNING, PAUSED or STOPPED as last set
	// setAt is, for the forward source, the mirror's run changes count
	// right after Connect set it: a change since came from the sandbox page.
	setAt uint64
}

// StartConnectStandIn listens on a free loopback port with the forward
// connectors RUNNING, configured as MM2 would be for the sandbox.
func StartConnectStandIn(sb *Sandbox) (*ConnectStandIn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &ConnectStandIn{URL: "http://" + ln.Addr().String(), sb: sb, conns: map[string]*standInConnector{}, reverse: map[string]*reverseMirror{}}
	classes := []string{mm2.MirrorSourceConnectorClass, mm2.MirrorCheckpointConnectorClass, mm2.MirrorHeartbeatConnectorClass}
	for i, name := range ForwardConnectors {
		c.conns[name] = &standInConnector{state: "RUNNING", config: map[string]string{
			"name": name, "connector.class": classes[i],
			"source.cluster.alias": SourceAlias, "target.cluster.alias": TargetAlias,
			"source.cluster.bootstrap.servers": strings.Join(sb.PrimaryBootstrap(), ","),
			"target.cluster.bootstrap.servers": strings.Join(sb.DRBootstrap(), ","),
			"topics":                           strings.Join(Topics, ","),
			"replication.policy.class":         "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
			"offset-syncs.topic.location":      "target",
			"replication.factor":               "1", "offset-syncs.topic.replication.factor": "1",
			"checkpoints.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1",
		}}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /connectors", c.list)
	mux.HandleFunc("POST /connectors", c.create)
	mux.HandleFunc("GET /connectors/{name}", c.named(c.info))
	mux.HandleFunc("DELETE /connectors/{name}", c.named(c.remove))
	mux.HandleFunc("PUT /connectors/{name}/config", c.putConfig)
	mux.HandleFunc("GET /connectors/{name}/status", c.named(c.status))
	mux.HandleFunc("PUT /connectors/{name}/{verb}", c.named(c.setState))
	mux.HandleFunc("GET /connectors/{name}/offsets", c.named(c.offsets))
	mux.HandleFunc("PATCH /connectors/{name}/offsets", c.named(c.alterOffsets))
	mux.HandleFunc("DELETE /connectors/{name}/offsets", c.named(c.alterOffsets))
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go c.srv.Serve(ln)
	return c, nil
}

// Close stops the server and any reverse task.
func (c *ConnectStandIn) Close() {
	c.srv.Close()
	c.mu.Lock()
	rs := slices.Collect(maps.Values(c.reverse))
	c.mu.Unlock()
	for _, r := range rs {
		r.halt()
	}
}

// State is connector name's state as its status reports it ("" unknown).
func (c *ConnectStandIn) State(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.conns[name]; k != nil {
		return c.stateLocked(name, k)
	}
	return ""
}

// named serves a request about an existing connector with c.mu held;
// one Connect does not know is answered 404.
func (c *ConnectStandIn) named(h func(w http.ResponseWriter, r *http.Request, name string, k *standInConnector)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		name := r.PathValue("name")
		k := c.conns[name]
		if k == nil {
			connectError(w, 404, "Connector %s not found", name)
			return
		}
		h(w, r, name, k)
	}
}

// connectError is Connect's error body.
func connectError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]any{"error_code": status, "message": fmt.Sprintf(format, args...)})
}

// isForwardSource is the forward MirrorSourceConnector: the sandbox's mirror.
func isForwardSource(name string, k *standInConnector) bool {
	return name == connector && k.config["connector.class"] == mm2.MirrorSourceConnectorClass && k.config["source.cluster.alias"] == SourceAlias
}

// reverseSource is k's task when k copies DR to the primary.
func (c *ConnectStandIn) reverseSource(name string, k *standInConnector) *reverseMirror {
	if k.config["connector.class"] != mm2.MirrorSourceConnectorClass || k.config["source.cluster.alias"] != TargetAlias {
		return nil
	}
	r := c.reverse[name]
	if r == nil {
		r = newReverseMirror(c.sb, name)
		c.reverse[name] = r
	}
	return r
}

// stateLocked is what k's status says: the forward source's is the
// mirror's, which the sandbox page pauses and resumes too (a mirror the
// page paused reads PAUSED, even after a stop through Connect was undone
// there).
func (c *ConnectStandIn) stateLocked(name string, k *standInConnector) string {
	if !isForwardSource(name, k) {
		return k.state
	}
	switch running, changes := c.sb.ctl.runState(); {
	case running:
		return "RUNNING"
	case k.state == "STOPPED" && changes == k.setAt:
		return "STOPPED"
	default:
		return "PAUSED" // paused on the sandbox page
	}
}

func (c *ConnectStandIn) list(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	writeJSON(w, 200, slices.Sorted(maps.Keys(c.conns)))
}

func (c *ConnectStandIn) infoOf(name string, k *standInConnector) map[string]any {
	return map[string]any{"name": name, "config": k.config, "tasks": []map[string]any{{"connector": name, "task": 0}}, "type": "source"}
}

func (c *ConnectStandIn) info(w http.ResponseWriter, r *http.Request, name string, k *standInConnector) {
	writeJSON(w, 200, c.infoOf(name, k))
}

// create is POST /connectors, with KIP-980's initial_state.
func (c *ConnectStandIn) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name         string            `json:"name"`
		Config       map[string]string `json:"config"`
		InitialState string            `json:"initial_state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" || body.Config == nil {
		connectError(w, 400, "a connector needs a name and a config: %v", err)
		return
	}
	state := strings.ToUpper(body.InitialState)
	switch state {
	case "":
		state = "RUNNING"
	case "RUNNING", "PAUSED", "STOPPED":
	default:
		connectError(w, 400, "initial_state %q is not RUNNING, PAUSED or STOPPED", body.InitialState)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns[body.Name] != nil {
		connectError(w, 409, "Connector %s already exists", body.Name)
		return
	}
	k := &standInConnector{config: maps.Clone(body.Config), state: state}
	k.config["name"] = body.Name
	c.conns[body.Name] = k
	c.applyLocked(body.Name, k)
	writeJSON(w, 201, c.infoOf(body.Name, k))
}

// putConfig is PUT /connectors/{name}/config: creates (201, RUNNING) or
// updates (200).
func (c *ConnectStandIn) putConfig(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var cfg map[string]string
	if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil || cfg == nil {
		connectError(w, 400, "the body is not a connector config: %v", err)
		return
	}
	cfg["name"] = name
	c.mu.Lock()
	defer c.mu.Unlock()
	k, status := c.conns[name], 200
	if k == nil {
		k, status = &standInConnector{state: "RUNNING"}, 201
		c.conns[name] = k
	}
	k.config = cfg
	c.applyLocked(name, k)
	writeJSON(w, status, c.infoOf(name, k))
}

// applyLocked makes the sandbox do what k's state says.
func (c *ConnectStandIn) applyLocked(name string, k *standInConnector) {
	if isForwardSource(name, k) {
		c.sb.SetMirrorRunning(k.state == "RUNNING")
		_, k.setAt = c.sb.ctl.runState()
		return
	}
	if rev := c.reverseSource(name, k); rev != nil {
		if k.state == "RUNNING" {
			rev.start()
		} else {
			rev.halt()
		}
	}
}

func (c *ConnectStandIn) status(w http.ResponseWriter, r *http.Request, name string, k *standInConnector) {
	state := c.stateLocked(name, k)
	task := map[string]any{"id": 0, "state": state, "worker_id": ConnectWorker}
	if rev := c.reverseSource(name, k); rev != nil && state == "RUNNING" {
		rev.mu.Lock()
		if rev.lastErr != nil {
			task["state"], task["trace"] = "FAILED", rev.lastErr.Error()
		}
		rev.mu.Unlock()
	}
	tasks := []map[string]any{task}
	if state == "STOPPED" {
		tasks = []map[string]any{} // Connect lists no task of a stopped connector
	}
	writeJSON(w, 200, map[string]any{"name": name, "type": "source", "tasks": tasks,
		"connector": map[string]any{"state": state, "worker_id": ConnectWorker}})
}

// setState is PUT stop, pause or resume: 202, as Connect answers.
func (c *ConnectStandIn) setState(w http.ResponseWriter, r *http.Request, name string, k *standInConnector) {
	state, ok := map[string]string{"stop": "STOPPED", "pause": "PAUSED", "resume": "RUNNING"}[r.PathValue("verb")]
	if !ok {
		connectError(w, 404, "HTTP 404 Not Found")
		return
	}
	k.state = state
	c.applyLocked(name, k)
	w.WriteHeader(202)
}

func (c *ConnectStandIn) remove(w http.ResponseWriter, r *http.Request, name string, k *standInConnector) {
	if isForwardSource(name, k) {
		c.sb.SetMirrorRunning(false)
	} else if rev := c.reverseSource(name, k); rev != nil {
		rev.halt()
	}
	delete(c.conns, name)
	w.WriteHeader(204)
}

// positionsLocked are a source connector's committed next offsets and the
// cluster alias its partitions name; ok false for a connector with none.
func (c *ConnectStandIn) positionsLocked(name string, k *standInConnector) (next map[topicPartition]int64, alias string, ok bool) {
	if isForwardSource(name, k) {
		next = map[topicPartition]int64{}
		for tp, last := range c.sb.mirror.committedOffsets() {
			next[tp] = last + 1
		}
		return next, SourceAlias, true
	}
	if rev := c.reverseSource(name, k); rev != nil {
		return rev.positions(), TargetAlias, true
	}
	return nil, "", false
}

// offsets is GET /connectors/{name}/offsets (KIP-875).
func (c *ConnectStandIn) offsets(w http.ResponseWriter, r *http.Request, name string, k *standInConnector) {
	next, alias, _ := c.positionsLocked(name, k)
	type entry struct {
		Partition json.RawMessage `json:"partition"`
		Offset    json.RawMessage `json:"offset"`
	}
	out := []entry{}
	for _, tp := range slices.SortedFunc(maps.Keys(next), func(a, b topicPartition) int {
		return strings.Compare(fmt.Sprintf("%s/%09d", a.topic, a.partition), fmt.Sprintf("%s/%09d", b.topic, b.partition))
	}) {
		if next[tp] <= 0 {
			continue // nothing copied there: Connect has no offset for it
		}
		o := model.ConnectOffset{Connector: name, Cluster: alias, Topic: tp.topic, Partition: tp.partition, LastOffset: next[tp] - 1}
		var key []json.RawMessage
		if err := json.Unmarshal(mm2.EncodeKey(o), &key); err != nil || len(key) != 2 {
			connectError(w, 500, "encoding the offset of %s-%d: %v", tp.topic, tp.partition, err)
			return
		}
		out = append(out, entry{Partition: key[1], Offset: mm2.EncodeValue(o)})
	}
	writeJSON(w, 200, map[string]any{"offsets": out})
}

// alterOffsets is PATCH (alter) and DELETE (reset) of a stopped source
// connector's offsets (KIP-875); Connect refuses both for one running.
func (c *ConnectStandIn) alterOffsets(w http.ResponseWriter, r *http.Request, name string, k *standInConnector) {
	if c.stateLocked(name, k) != "STOPPED" {
		connectError(w, 400, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
		return
	}
	next, alias, ok := c.positionsLocked(name, k)
	if !ok {
		connectError(w, 400, "the sandbox's stand-in keeps offsets only for MirrorSourceConnectors")
		return
	}
	changed := map[topicPartition]int64{}
	if r.Method == http.MethodDelete {
		// Every partition starts again at its earliest offset.
		for tp := range next {
			changed[tp] = 0
		}
	} else {
		var body struct {
			Offsets []struct {
				Partition json.RawMessage `json:"partition"`
				Offset    json.RawMessage `json:"offset"`
			} `json:"offsets"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			connectError(w, 400, "the offsets body cannot be read: %v", err)
			return
		}
		for _, e := range body.Offsets {
			key, _ := json.Marshal([]json.RawMessage{json.RawMessage(fmt.Sprintf("%q", name)), e.Partition})
			if string(e.Offset) == "null" {
				var p struct {
					Topic     string `json:"topic"`
					Partition int32  `json:"partition"`
				}
				json.Unmarshal(e.Partition, &p)
				changed[topicPartition{p.Topic, p.Partition}] = 0 // KIP-875: null removes the offset
				continue
			}
			o, err := mm2.DecodeConnectOffset(key, e.Offset)
			if err != nil || o.Cluster != alias {
				connectError(w, 400, "offset %s %s is not an MM2 source offset of cluster %s: %v", e.Partition, e.Offset, alias, err)
				return
			}
			changed[topicPartition{o.Topic, o.Partition}] = o.LastOffset + 1
		}
	}
	if isForwardSource(name, k) {
		c.sb.mirror.startAt(changed)
	} else {
		maps.Copy(next, changed)
		c.reverseSource(name, k).setPositions(next)
	}
	verb := map[string]string{http.MethodPatch: "altered", http.MethodDelete: "reset"}[r.Method]
	writeJSON(w, 200, map[string]any{"message": "The offsets for this connector have been " + verb + " successfully"})
}
