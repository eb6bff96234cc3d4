package demo

// A stand-in for the cluster-linking part of Confluent's Kafka REST API v3,
// so the tests and the sandbox can drive a Cluster Linking flow. It is NOT
// Confluent Server: it mirrors no data and runs no link. It serves the
// published shapes (confluentinc/ccloud-sdk-go-v2 kafkarest/v3/api/openapi.yaml:
// paths, bodies, status codes, per-topic errors inside a 200, the
// MirrorTopicStatus values) over an in-memory model of one link whose lags
// and source reachability the caller sets. Behaviour the spec does not pin
// down (message wording beyond the spec's example, how long PENDING_STOPPED
// lasts, which states each action accepts) is this file's assumption and is
// marked "stand-in" below. testenv/openapi holds its answers, and the
// console's requests, to that document.

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClusterLinkStandIn serves one cluster link's REST v3 endpoints on
// 127.0.0.1. URL ends in /kafka, as Confluent Server and Cloud do; pass it
// as the client's base. The REST Proxy layout (/v3/... at the root) is
// served too.
type ClusterLinkStandIn struct {
	URL       string
	ClusterID string
	Link      string

	srv *http.Server
	mux *http.ServeMux

	mu         sync.Mutex
	linkID     string
	sourceID   string
	linkState  string
	linkError  string
	linkErrMsg string
	mirrors    map[string]*standInMirror
	// remote holds the mirror topics on the link's other end (the source
	// cluster, id sourceID): the ones a reverse action turned around.
	remote     map[string]*standInMirror
	user, pass string
	failNext   []standInFailure
	delay      time.Duration
	pendingFor time.Duration
	sourceDown bool
	actions    []ClusterLinkAction
	// truncatable is, per topic on the source cluster, how many records
	// each partition holds beyond the stopped DR mirror's end: what a
	// truncate-and-restore there deletes.
	truncatable map[string][]int64
	// unlistRestored: a restored-from stopped mirror leaves its cluster's
	// mirrors list (stand-in: which a real cluster does is not documented).
	unlistRestored bool
}

type standInMirror struct {
	name, source string
	status       string
	since        time.Time
	stopAt       time.Time // when PENDING_STOPPED becomes STOPPED
	lag          []int64
	fetch        []int64
}

type standInFailure struct {
	status, code int
	msg          string
}

// ClusterLinkAction is one action request the stand-in answered.
type ClusterLinkAction struct {
	Action       string // promote, failover, pause, resume, reverse-and-start-mirror, reverse-and-pause-mirror, truncate-and-restore
	Topics       []string
	ValidateOnly bool
	Failed       map[string]string // topic -> per-topic error message
	At           time.Time
}

// ClusterLinkMirrorState is a mirror topic as the stand-in holds it.
type ClusterLinkMirrorState struct {
	Status           string
	Since            time.Time
	Lags             []int64
	LastFetchOffsets []int64
}

// ClusterLinkStandInState is a snapshot of the stand-in.
type ClusterLinkStandInState struct {
	LinkState         string
	SourceUnavailable bool
	Mirrors           map[string]ClusterLinkMirrorState
	// RemoteMirrors are the mirror topics on the source cluster, which a
	// reverse action creates.
	RemoteMirrors map[string]ClusterLinkMirrorState
	Actions       []ClusterLinkAction
}

// ClusterLinkSourceID is the id the stand-in serves the link's source
// (primary) cluster under: its REST API, for a failback, is the same URL
// with this cluster id.
const ClusterLinkSourceID = "standin-source-cluster"

// DefaultPendingStopped is how long a promoted or failed-over mirror stays
// PENDING_STOPPED before it reads STOPPED (stand-in: real clusters take as
// long as the final sync takes).
const DefaultPendingStopped = time.Second

// StartClusterLinkStandIn listens on a free loopback port with one link
// whose mirror topics (mirror topic -> partitions) are ACTIVE with zero lag.
// Source topics have the same names (no link prefix).
func StartClusterLinkStandIn(clusterID, link string, topics map[string]int) (*ClusterLinkStandIn, error) {
	if clusterID == "" || link == "" {
		return nil, fmt.Errorf("cluster link stand-in: cluster id and link name are required")
	}
	now := time.Now()
	s := &ClusterLinkStandIn{
		ClusterID:   clusterID,
		Link:        link,
		linkID:      "standin-" + strconv.FormatInt(now.UnixNano()%1e9, 36),
		sourceID:    "standin-source-cluster",
		linkState:   "ACTIVE",
		linkError:   "NO_ERROR",
		mirrors:     map[string]*standInMirror{},
		remote:      map[string]*standInMirror{},
		pendingFor:  DefaultPendingStopped,
		truncatable: map[string][]int64{},
	}
	for name, n := range topics {
		if name == "" || n <= 0 {
			return nil, fmt.Errorf("cluster link stand-in: topic %q needs a name and at least one partition", name)
		}
		s.mirrors[name] = &standInMirror{name: name, source: name, status: "ACTIVE", since: now, lag: make([]int64, n), fetch: make([]int64, n)}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.URL = "http://" + ln.Addr().String() + "/kafka"
	mux := http.NewServeMux()
	const base = "/v3/clusters/{cluster}/links"
	mux.HandleFunc("GET "+base, s.listLinks)
	mux.HandleFunc("GET "+base+"/{link}", s.getLink)
	mux.HandleFunc("GET "+base+"/{link}/mirrors", s.listMirrors)
	mux.HandleFunc("GET "+base+"/{link}/mirrors/{topic}", s.getMirror)
	for _, a := range []string{"promote", "failover", "pause", "resume", "reverse-and-start-mirror", "reverse-and-pause-mirror", "truncate-and-restore"} {
		mux.HandleFunc("POST "+base+"/{link}/mirrors:"+a, func(w http.ResponseWriter, r *http.Request) { s.alter(w, r, a) })
	}
	s.mux = mux
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *ClusterLinkStandIn) Close() { s.srv.Close() }

// ServeHTTP applies the delay, the one-shot failure and authentication,
// then routes /kafka/v3/... and /v3/... alike.
func (s *ClusterLinkStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	var fail *standInFailure
	if len(s.failNext) > 0 {
		f := s.failNext[0]
		s.failNext = s.failNext[1:]
		fail = &f
	}
	user, pass := s.user, s.pass
	s.mu.Unlock()
	if fail != nil {
		writeStandInFailure(w, *fail)
		return
	}
	if user != "" {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(pass)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="stand-in"`)
			// The spec's kafka_authentication_failed example.
			writeJSON(w, http.StatusUnauthorized, restError(40101, "Authentication failed"))
			return
		}
	}
	if p, ok := strings.CutPrefix(r.URL.Path, "/kafka"); ok && strings.HasPrefix(p, "/v3/") {
		r2 := r.Clone(r.Context())
		r2.URL.Path = p
		r2.URL.RawPath = ""
		r = r2
	}
	s.mux.ServeHTTP(w, r)
}

func writeStandInFailure(w http.ResponseWriter, f standInFailure) {
	if f.status == http.StatusTooManyRequests {
		// The spec documents 429 as text/html from Jetty's DoSFilter.
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		w.WriteHeader(f.status)
		msg := f.msg
		if msg == "" {
			msg = "Too Many Requests"
		}
		fmt.Fprintf(w, "<html><head><title>Error 429 %s</title></head><body><h2>HTTP ERROR 429 %s</h2></body></html>", html.EscapeString(msg), html.EscapeString(msg))
		return
	}
	code, msg := f.code, f.msg
	if code == 0 {
		code = f.status
	}
	if msg == "" {
		msg = http.StatusText(f.status)
	}
	writeJSON(w, f.status, restError(code, msg))
}

func restError(code int, msg string) map[string]any {
	return map[string]any{"error_code": code, "message": msg}
}

// SetAuth requires HTTP basic auth with these credentials; an empty user
// turns authentication off. Wrong credentials get 401, error_code 40101.
func (s *ClusterLinkStandIn) SetAuth(user, pass string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user, s.pass = user, pass
}

// FailNext makes the next request fail with this HTTP status, error_code
// and message (code 0 uses the status). Calls queue up, one request each.
// A 429 is answered as HTML, like Jetty's DoSFilter in the spec.
func (s *ClusterLinkStandIn) FailNext(status int, code int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, standInFailure{status, code, msg})
}

// Delay holds every answer back this long (0 turns it off), to exercise
// client timeouts.
func (s *ClusterLinkStandIn) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// SetPendingStopped sets how long promoted or failed-over mirrors stay
// PENDING_STOPPED before they read STOPPED.
func (s *ClusterLinkStandIn) SetPendingStopped(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pendingFor = d
}

// SetLag sets one partition's mirror lag in messages. Unknown topics or
// partitions are ignored.
func (s *ClusterLinkStandIn) SetLag(topic string, partition int, lag int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mirrors[topic]; ok && partition >= 0 && partition < len(m.lag) {
		m.lag[partition] = max(lag, 0)
	}
}

// SetLastFetchOffset sets one partition's last_source_fetch_offset.
// Unknown topics or partitions are ignored.
func (s *ClusterLinkStandIn) SetLastFetchOffset(topic string, partition int, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mirrors[topic]; ok && partition >= 0 && partition < len(m.fetch) {
		m.fetch[partition] = offset
	}
}

// SetSourceUnavailable makes the source cluster unreachable or reachable
// again. Mirrors that were ACTIVE read SOURCE_UNAVAILABLE; the link itself
// stays ACTIVE with NO_ERROR, as links were seen to do while the peer was
// down, so a console must not judge the source by link_state alone.
// Lags freeze at their last values while the source is away.
func (s *ClusterLinkStandIn) SetSourceUnavailable(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	s.sourceDown = down
	now := time.Now()
	for _, m := range s.mirrors {
		switch {
		case down && m.status == "ACTIVE":
			m.status, m.since = "SOURCE_UNAVAILABLE", now
		case !down && m.status == "SOURCE_UNAVAILABLE":
			m.status, m.since = "ACTIVE", now
		}
	}
}

// SetLinkState overrides the link's link_state, link_error and
// link_error_message (for example FAILED, AUTHENTICATION_ERROR).
func (s *ClusterLinkStandIn) SetLinkState(state, linkError, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.linkState, s.linkError, s.linkErrMsg = state, linkError, message
}

// State returns a snapshot of the link, its mirrors and the actions so far.
func (s *ClusterLinkStandIn) State() ClusterLinkStandInState {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	st := ClusterLinkStandInState{LinkState: s.linkState, SourceUnavailable: s.sourceDown,
		Mirrors: mirrorStates(s.mirrors), RemoteMirrors: mirrorStates(s.remote)}
	for _, a := range s.actions {
		a.Topics = slices.Clone(a.Topics)
		st.Actions = append(st.Actions, a)
	}
	return st
}

func mirrorStates(ms map[string]*standInMirror) map[string]ClusterLinkMirrorState {
	out := map[string]ClusterLinkMirrorState{}
	for n, m := range ms {
		out[n] = ClusterLinkMirrorState{Status: m.status, Since: m.since, Lags: slices.Clone(m.lag), LastFetchOffsets: slices.Clone(m.fetch)}
	}
	return out
}

// advance moves mirrors whose PENDING_STOPPED time is up to STOPPED.
// Callers hold s.mu.
func (s *ClusterLinkStandIn) advance() {
	now := time.Now()
	for _, ms := range []map[string]*standInMirror{s.mirrors, s.remote} {
		for _, m := range ms {
			if m.status == "PENDING_STOPPED" && !now.Before(m.stopAt) {
				m.status, m.since = "STOPPED", m.stopAt
			}
		}
	}
}

func sortedNames(ms map[string]*standInMirror) []string {
	out := make([]string, 0, len(ms))
	for n := range ms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sides returns the mirror topics on the cluster a request names and on
// the link's other end: the DR cluster's (ClusterID) by default, the
// source cluster's when the request names sourceID. Callers hold s.mu.
func (s *ClusterLinkStandIn) sides(r *http.Request) (here, there map[string]*standInMirror) {
	if r.PathValue("cluster") == s.sourceID {
		return s.remote, s.mirrors
	}
	return s.mirrors, s.remote
}

// check answers 404 for a foreign cluster id or link name (stand-in
// wording; the spec lists no 404 for these paths). link "-" means all links.
// The source cluster's id is served too: the link seen from its other end.
func (s *ClusterLinkStandIn) check(w http.ResponseWriter, r *http.Request, allowAll bool) bool {
	if c := r.PathValue("cluster"); c != s.ClusterID && c != s.sourceID {
		writeJSON(w, http.StatusNotFound, restError(404, "Cluster "+c+" cannot be found."))
		return false
	}
	if l := r.PathValue("link"); l != "" && l != s.Link && !(allowAll && l == "-") {
		writeJSON(w, http.StatusNotFound, restError(404, "Cluster link '"+l+"' does not exist."))
		return false
	}
	return true
}

func (s *ClusterLinkStandIn) self(parts ...string) string {
	return s.URL + "/v3/clusters/" + s.ClusterID + "/links" + strings.Join(parts, "")
}

func (s *ClusterLinkStandIn) linkJSON(tasks bool) map[string]any {
	var errMsg any
	if s.linkErrMsg != "" {
		errMsg = s.linkErrMsg
	}
	l := map[string]any{
		"kind":               "KafkaLinkData",
		"metadata":           map[string]any{"self": s.self("/", s.Link), "resource_name": nil},
		"source_cluster_id":  s.sourceID,
		"link_name":          s.Link,
		"link_id":            s.linkID,
		"cluster_link_id":    s.linkID,
		"topic_names":        sortedNames(s.mirrors),
		"link_error":         s.linkError,
		"link_error_message": errMsg,
		"link_state":         s.linkState,
	}
	if tasks {
		// Stand-in task names; the spec gives the task states, not names.
		state := map[string]string{"ACTIVE": "ACTIVE", "UNAVAILABLE": "LINK_UNAVAILABLE", "FAILED": "LINK_FAILED", "PAUSED": "LINK_PAUSED"}[s.linkState]
		if state == "" {
			state = "UNKNOWN"
		}
		var ts []map[string]any
		for _, n := range []string{"ConsumerOffsetSync", "AclSync", "TopicConfigsSync"} {
			ts = append(ts, map[string]any{"task_name": n, "state": state, "errors": []any{}})
		}
		l["tasks"] = ts
	}
	return l
}

func (s *ClusterLinkStandIn) listLinks(w http.ResponseWriter, r *http.Request) {
	if !s.check(w, r, false) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, 200, map[string]any{
		"kind":     "KafkaLinkDataList",
		"metadata": map[string]any{"self": s.self(), "next": nil},
		"data":     []any{s.linkJSON(r.URL.Query().Get("include_tasks") == "true")},
	})
}

func (s *ClusterLinkStandIn) getLink(w http.ResponseWriter, r *http.Request) {
	if !s.check(w, r, false) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, 200, s.linkJSON(r.URL.Query().Get("include_tasks") == "true"))
}

func lagsJSON(m *standInMirror) []map[string]any {
	out := []map[string]any{}
	if m == nil {
		return out
	}
	for p := range m.lag {
		out = append(out, map[string]any{"partition": p, "lag": m.lag[p], "last_source_fetch_offset": m.fetch[p]})
	}
	return out
}

func (s *ClusterLinkStandIn) mirrorJSON(m *standInMirror, transitionErrors bool) map[string]any {
	out := map[string]any{
		"kind":               "KafkaMirrorData",
		"metadata":           map[string]any{"self": s.self("/", s.Link, "/mirrors/", m.name), "resource_name": "crn:///kafka=" + s.ClusterID + "/cluster-link=" + s.Link + "/topic=" + m.name},
		"link_name":          s.Link,
		"mirror_topic_name":  m.name,
		"source_topic_name":  m.source,
		"num_partitions":     len(m.lag),
		"mirror_lags":        lagsJSON(m),
		"mirror_status":      m.status,
		"state_time_ms":      m.since.UnixMilli(),
		"mirror_topic_error": "NO_ERROR",
	}
	if transitionErrors {
		out["mirror_state_transition_errors"] = []any{}
	}
	return out
}

func (s *ClusterLinkStandIn) listMirrors(w http.ResponseWriter, r *http.Request) {
	if !s.check(w, r, true) {
		return
	}
	filter := r.URL.Query().Get("mirror_status")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	here, _ := s.sides(r)
	data := []any{}
	for _, n := range sortedNames(here) {
		m := here[n]
		if filter == "" || strings.EqualFold(filter, m.status) {
			data = append(data, s.mirrorJSON(m, false))
		}
	}
	writeJSON(w, 200, map[string]any{
		"kind":     "KafkaMirrorDataList",
		"metadata": map[string]any{"self": s.self("/", r.PathValue("link"), "/mirrors"), "next": nil},
		"data":     data,
	})
}

func (s *ClusterLinkStandIn) getMirror(w http.ResponseWriter, r *http.Request) {
	if !s.check(w, r, false) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	here, _ := s.sides(r)
	m, ok := here[r.PathValue("topic")]
	if !ok {
		writeJSON(w, http.StatusNotFound, restError(404, "Mirror topic '"+r.PathValue("topic")+"' does not exist on link '"+s.Link+"'."))
		return
	}
	writeJSON(w, 200, s.mirrorJSON(m, r.URL.Query().Get("include_state_transition_errors") == "true"))
}

// alter serves POST .../mirrors:{action}?validate_only= with body
// {"mirror_topic_names":[...]} or {"mirror_topic_name_pattern":"..."}.
// It answers 200 with one AlterMirrorsData per topic, errors included.
func (s *ClusterLinkStandIn) alter(w http.ResponseWriter, r *http.Request, action string) {
	if !s.check(w, r, false) {
		return
	}
	validate := false
	if v := r.URL.Query().Get("validate_only"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeJSON(w, 400, restError(400, "Cannot deserialize value of type `java.lang.Boolean` from String \""+v+"\""))
			return
		}
		validate = b
	}
	var body struct {
		Names   []string `json:"mirror_topic_names"`
		Pattern string   `json:"mirror_topic_name_pattern"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		writeJSON(w, 400, restError(400, "Cannot deserialize the request body: "+err.Error()))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	here, there := s.sides(r)
	var names []string
	switch {
	case len(body.Names) > 0:
		for _, n := range body.Names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	case body.Pattern != "":
		re, err := regexp.Compile("^(?:" + body.Pattern + ")$")
		if err != nil {
			writeJSON(w, 400, restError(400, "Invalid mirror_topic_name_pattern: "+err.Error()))
			return
		}
		for _, n := range sortedNames(here) {
			if re.MatchString(n) {
				names = append(names, n)
			}
		}
	default:
		// Stand-in wording.
		writeJSON(w, 400, restError(400, "One of mirror_topic_names or mirror_topic_name_pattern is required."))
		return
	}
	now := time.Now()
	rec := ClusterLinkAction{Action: action, Topics: names, ValidateOnly: validate, At: now}
	data := []any{}
	for _, n := range names {
		m := here[n]
		var code int
		var msg string
		var truncated any
		truncation := []any{}
		if action == "truncate-and-restore" {
			var remote *standInMirror
			if remote, code, msg = s.restorable(n, here, there); code == 0 {
				truncated, truncation = s.truncation(n, remote, r.URL.Query().Get("include_partition_level_truncation_data") == "true")
				if !validate {
					s.restore(n, remote, now, here)
					if s.unlistRestored {
						delete(there, remote.name)
					}
					m = here[n]
				}
			}
		} else if code, msg = s.refuse(action, n, m); code == 0 && !validate {
			s.apply(action, m, now, here, there)
		}
		entry := map[string]any{
			"kind":                            "AlterMirrorsData",
			"metadata":                        map[string]any{"self": s.self("/", s.Link, "/mirrors/", n), "resource_name": "crn:///kafka=" + s.ClusterID + "/cluster-link=" + s.Link + "/topic=" + n},
			"mirror_topic_name":               n,
			"error_code":                      nil,
			"error_message":                   nil,
			"mirror_lags":                     lagsJSON(m),
			"messages_truncated":              truncated,
			"partition_level_truncation_data": truncation,
		}
		if code != 0 {
			entry["error_code"], entry["error_message"] = code, msg
			if rec.Failed == nil {
				rec.Failed = map[string]string{}
			}
			rec.Failed[n] = msg
		}
		data = append(data, entry)
	}
	s.actions = append(s.actions, rec)
	// Every action example in the spec carries this kind. The metadata is
	// its schema's (ResourceCollectionMetadata: self, next), not its
	// example's, which adds a resource_name the schema does not declare.
	writeJSON(w, 200, map[string]any{
		"kind":     "KafkaPromoteMirror",
		"metadata": map[string]any{"self": s.self("/", s.Link, "/mirrors"), "next": nil},
		"data":     data,
	})
}

// refuse returns the per-topic error for an action, code 0 when allowed.
// The "has already stopped its mirror" wording is the spec's example; the
// other messages are stand-in wording.
func (s *ClusterLinkStandIn) refuse(action, name string, m *standInMirror) (int, string) {
	if m == nil {
		return 404, fmt.Sprintf("Topic '%s' is not a mirror topic of link '%s'", name, s.Link)
	}
	switch m.status {
	case "STOPPED":
		return 400, fmt.Sprintf("Topic '%s' has already stopped its mirror from '%s'", name, s.Link)
	case "PENDING_STOPPED":
		return 400, fmt.Sprintf("Topic '%s' is already stopping its mirror from '%s'", name, s.Link)
	}
	switch action {
	case "promote", "reverse-and-start-mirror", "reverse-and-pause-mirror":
		// Promote is the planned, lossless path: it needs the source and
		// zero lag, and refuses otherwise. Failover is the way round both.
		// Stand-in: a reverse swaps the roles of two in-sync topics, so it
		// asks the same as promote.
		verb := map[string]string{"promote": "promoted"}[action]
		if verb == "" {
			verb = "reversed"
		}
		if s.sourceDown || m.status == "SOURCE_UNAVAILABLE" {
			return 400, fmt.Sprintf("Topic '%s' cannot be %s: the source cluster is unavailable; use failover to stop mirroring without a final sync", name, verb)
		}
		if m.status == "PAUSED" {
			return 400, fmt.Sprintf("Topic '%s' cannot be %s while its mirror is paused; resume it first", name, verb)
		}
		var lag int64
		var parts int
		for _, l := range m.lag {
			if l > 0 {
				lag += l
				parts++
			}
		}
		if lag > 0 {
			return 400, fmt.Sprintf("Topic '%s' cannot be %s: mirror lag is %d messages on %d partition(s); %s requires zero lag, failover does not", name, verb, lag, parts, action)
		}
	case "failover":
		// Allowed in every state that still mirrors, whatever the lag.
	case "pause", "resume":
		// Pausing a paused mirror or resuming an active one is a no-op.
	}
	return 0, ""
}

// apply changes m, a mirror topic in here; a reverse moves it to there.
func (s *ClusterLinkStandIn) apply(action string, m *standInMirror, now time.Time, here, there map[string]*standInMirror) {
	switch action {
	case "reverse-and-start-mirror", "reverse-and-pause-mirror":
		// The local mirror becomes a plain, writable source topic (so it
		// leaves this side's mirrors list) and the topic it mirrored, on
		// the other end, becomes its mirror: running, or paused. Offsets
		// are the same on both ends, so the new mirror starts caught up.
		delete(here, m.name)
		status := "ACTIVE"
		if action == "reverse-and-pause-mirror" {
			status = "PAUSED"
		}
		there[m.source] = &standInMirror{name: m.source, source: m.name, status: status, since: now,
			lag: make([]int64, len(m.lag)), fetch: slices.Clone(m.fetch)}
	case "promote", "failover":
		m.status, m.since, m.stopAt = "PENDING_STOPPED", now, now.Add(s.pendingFor)
	case "pause":
		if m.status != "PAUSED" {
			m.status, m.since = "PAUSED", now
		}
	case "resume":
		if m.status == "PAUSED" {
			m.status, m.since = "ACTIVE", now
			if s.sourceDown {
				m.status = "SOURCE_UNAVAILABLE"
			}
		}
	}
}

// SetTruncatable says how many records each partition of topic holds, on
// the source cluster, beyond the end of DR's stopped mirror of it: what a
// truncate-and-restore sent there deletes (stand-in: the real cluster
// compares the two logs).
func (s *ClusterLinkStandIn) SetTruncatable(topic string, perPartition []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncatable[topic] = slices.Clone(perPartition)
}

// SetRemoteLag is SetLag for a mirror topic on the source cluster (one a
// truncate-and-restore or a reverse made there).
func (s *ClusterLinkStandIn) SetRemoteLag(topic string, partition int, lag int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.remote[topic]; ok && partition >= 0 && partition < len(m.lag) {
		m.lag[partition] = max(lag, 0)
	}
}

// restorable finds the stopped mirror on the other end (there) that local
// topic name, on this end, would be truncated to and restored from. The
// wording is the stand-in's.
func (s *ClusterLinkStandIn) restorable(name string, here, there map[string]*standInMirror) (*standInMirror, int, string) {
	if m := here[name]; m != nil && m.status != "STOPPED" {
		return nil, 400, fmt.Sprintf("Topic '%s' is already a mirror topic of link '%s' (%s)", name, s.Link, m.status)
	}
	for _, n := range sortedNames(there) {
		if r := there[n]; r.source == name {
			if r.status != "STOPPED" {
				return nil, 400, fmt.Sprintf("Topic '%s' cannot be restored: its remote mirror '%s' is %s, not stopped; promote or fail it over first", name, n, r.status)
			}
			return r, 0, ""
		}
	}
	return nil, 404, fmt.Sprintf("Topic '%s' has no stopped mirror topic on the other end of link '%s'", name, s.Link)
}

// truncation is what truncating name to remote's end deletes: the total,
// and per partition when asked (offset_truncated_to is the remote
// mirror's end: offsets are the same on both ends).
func (s *ClusterLinkStandIn) truncation(name string, remote *standInMirror, perPartition bool) (int64, []any) {
	var total int64
	out := []any{}
	for p := range remote.fetch {
		var n int64
		if t := s.truncatable[name]; p < len(t) {
			n = t[p]
		}
		total += n
		if perPartition {
			out = append(out, map[string]any{"partition_id": p, "offset_truncated_to": remote.fetch[p], "messages_truncated": n})
		}
	}
	return total, out
}

// restore makes local topic name a mirror of remote, running, caught up
// to the records remote held when it stopped; lags set later (SetRemoteLag
// on the source end) stand for DR's writes since.
func (s *ClusterLinkStandIn) restore(name string, remote *standInMirror, now time.Time, here map[string]*standInMirror) {
	here[name] = &standInMirror{name: name, source: remote.name, status: "ACTIVE", since: now,
		lag: make([]int64, len(remote.lag)), fetch: slices.Clone(remote.fetch)}
	delete(s.truncatable, name)
}

// SetUnlistRestored makes a truncate-and-restore remove the stopped mirror
// it restored from from that cluster's mirrors list (by default it stays
// listed, STOPPED): the spec does not say which a real cluster does, so a
// console must cope with both.
func (s *ClusterLinkStandIn) SetUnlistRestored(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlistRestored = on
}
