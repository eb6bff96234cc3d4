// Package kubetest is a stand-in Kubernetes API server for the Flink
// Kubernetes Operator's resources, and a stand-in operator loop, for
// tests: enough of the API for client-go's dynamic and discovery clients
// (discovery, GET, JSON merge PATCH with the resourceVersion precondition,
// create, the status subresource), 403 per verb and resource, and a check
// of what is written against the fields of the published CRDs
// (helm/flink-kubernetes-operator/crds/, operator 1.15), stricter than a
// real server: an unknown or mistyped field is refused (422), not pruned.
package kubetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/drconsole/drconsole/kube"
)

// Server is the stand-in API server.
type Server struct {
	*httptest.Server
	// NoSnapshots leaves FlinkStateSnapshot out of discovery and the API
	// (an operator before 1.10, or its CRD not installed).
	NoSnapshots bool

	mu    sync.Mutex
	rv    int64
	objs  map[string]map[string]any // resource/namespace/name -> object
	deny  map[kube.Access]bool
	calls []kube.Access
	// onPatch runs before each spec patch is applied (tests move the
	// resourceVersion on there, as a concurrent writer would).
	onPatch func(n int)
	patches int
}

// New starts a stand-in API server; it stops with the test.
func New(t testing.TB) *Server {
	s := &Server{objs: map[string]map[string]any{}, deny: map[kube.Access]bool{}, rv: 1000}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Config is the rest.Config that reaches the server.
// Its rate limit is lifted: tests poll every few milliseconds.
func (s *Server) Config() *rest.Config {
	return &rest.Config{Host: s.URL, Timeout: 10 * time.Second, QPS: 10000, Burst: 10000}
}

// Client is a kube.Client for namespace/deployment on the server.
func (s *Server) Client(t testing.TB, namespace, deployment string) *kube.Client {
	c, err := kube.NewForConfig(s.Config(), namespace, deployment)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Deny makes every request of a (verb on resource) answer 403.
func (s *Server) Deny(a kube.Access) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny[a] = true
}

// OnPatch sets a hook run before the n-th (from 1) patch of a spec.
func (s *Server) OnPatch(f func(n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onPatch = f
}

// Calls are the accesses the server was asked for, in order.
func (s *Server) Calls() []kube.Access {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]kube.Access(nil), s.calls...)
}

func key(resource, ns, name string) string { return resource + "/" + ns + "/" + name }

// Put stores obj (a FlinkDeployment or FlinkStateSnapshot) as is, with a
// new resourceVersion: what an administrator's kubectl apply would leave.
func (s *Server) Put(obj map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	res := kube.FlinkDeployments.Resource
	if obj["kind"] == "FlinkStateSnapshot" {
		res = kube.FlinkStateSnapshots.Resource
	}
	obj = clone(obj)
	s.bump(obj)
	s.objs[key(res, ns, name)] = obj
}

// Get returns a copy of a stored object, nil when absent.
func (s *Server) Get(resource, ns, name string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.objs[key(resource, ns, name)]; o != nil {
		return clone(o)
	}
	return nil
}

// Touch moves an object's resourceVersion on, as any write would.
func (s *Server) Touch(resource, ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.objs[key(resource, ns, name)]; o != nil {
		s.bump(o)
	}
}

// SetStatus merges status into an object's status (the operator's write
// through the status subresource).
func (s *Server) SetStatus(resource, ns, name string, status map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.objs[key(resource, ns, name)]; o != nil {
		o["status"] = mergePatch(o["status"], status)
		s.bump(o)
	}
}

// NewSnapshots names namespace ns's FlinkStateSnapshots without a status
// (not reconciled by the operator yet).
func (s *Server) NewSnapshots(ns string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for k, o := range s.objs {
		if strings.HasPrefix(k, kube.FlinkStateSnapshots.Resource+"/"+ns+"/") && o["status"] == nil {
			names = append(names, strings.TrimPrefix(k, kube.FlinkStateSnapshots.Resource+"/"+ns+"/"))
		}
	}
	return names
}

func (s *Server) bump(o map[string]any) {
	s.rv++
	md, _ := o["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		o["metadata"] = md
	}
	md["resourceVersion"] = strconv.FormatInt(s.rv, 10)
}

func clone(o map[string]any) map[string]any {
	b, _ := json.Marshal(o)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// mergePatch applies an RFC 7386 JSON merge patch.
func mergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm := map[string]any{}
	if t, ok := target.(map[string]any); ok {
		for k, v := range t {
			tm[k] = v
		}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
		} else {
			tm[k] = mergePatch(tm[k], v)
		}
	}
	return tm
}

// status writes a metav1.Status failure, as the API server does.
func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": reason, "code": code})
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	gv := "/apis/" + kube.Group + "/" + kube.Version
	switch p := r.URL.Path; {
	case p == "/api":
		answer(w, 200, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case p == "/apis":
		answer(w, 200, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{map[string]any{"name": kube.Group,
			"versions":         []any{map[string]any{"groupVersion": kube.Group + "/" + kube.Version, "version": kube.Version}},
			"preferredVersion": map[string]any{"groupVersion": kube.Group + "/" + kube.Version, "version": kube.Version}}}})
	case p == gv:
		answer(w, 200, s.discovery())
	case strings.HasPrefix(p, gv+"/namespaces/"):
		s.resource(w, r, strings.Split(strings.TrimPrefix(p, gv+"/namespaces/"), "/"))
	default:
		status(w, 404, "NotFound", "the server could not find the requested resource")
	}
}

func (s *Server) discovery() map[string]any {
	res := func(name, kind, short string, verbs ...string) []any {
		return []any{
			map[string]any{"name": name, "singularName": strings.ToLower(kind), "namespaced": true, "kind": kind, "verbs": verbs, "shortNames": []string{short}},
			map[string]any{"name": name + "/status", "singularName": "", "namespaced": true, "kind": kind, "verbs": []string{"get", "patch", "update"}},
		}
	}
	verbs := []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	list := res("flinkdeployments", "FlinkDeployment", "flinkdep", verbs...)
	if !s.NoSnapshots {
		list = append(list, res("flinkstatesnapshots", "FlinkStateSnapshot", "flinksnp", verbs...)...)
	}
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": kube.Group + "/" + kube.Version, "resources": list}
}

var kinds = map[string]string{"flinkdeployments": "FlinkDeployment", "flinkstatesnapshots": "FlinkStateSnapshot"}

// resource serves namespaces/{ns}/{resource}[/{name}[/status]].
func (s *Server) resource(w http.ResponseWriter, r *http.Request, parts []string) {
	if len(parts) < 2 || len(parts) > 4 || kinds[parts[1]] == "" || (parts[1] == "flinkstatesnapshots" && s.NoSnapshots) ||
		(len(parts) == 4 && parts[3] != "status") {
		status(w, 404, "NotFound", "the server could not find the requested resource")
		return
	}
	ns, res := parts[0], parts[1]
	name, sub := "", ""
	if len(parts) >= 3 {
		name = parts[2]
	}
	if len(parts) == 4 {
		sub = "/status"
	}
	verb := map[string]string{http.MethodGet: "get", http.MethodPatch: "patch", http.MethodPost: "create", http.MethodPut: "update", http.MethodDelete: "delete"}[r.Method]
	if name == "" && verb == "get" {
		verb = "list"
	}
	a := kube.Access{Verb: verb, Resource: res + sub}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, a)
	full := res + "." + kube.Group
	if s.deny[a] {
		status(w, 403, "Forbidden", fmt.Sprintf(`%s %q is forbidden: User "system:serviceaccount:%s:drconsole" cannot %s resource %q in API group %q in the namespace %q`,
			full, name, ns, verb, res+sub, kube.Group, ns))
		return
	}
	switch {
	case verb == "get":
		o := s.objs[key(res, ns, name)]
		if o == nil {
			status(w, 404, "NotFound", fmt.Sprintf("%s %q not found", full, name))
			return
		}
		answer(w, 200, o)
	case verb == "patch":
		s.patch(w, r, res, ns, name, sub != "")
	case verb == "create" && name == "":
		s.create(w, r, res, ns)
	default:
		status(w, 405, "MethodNotAllowed", verb+" is not served by the stand-in")
	}
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, res, ns, name string, statusOnly bool) {
	full := res + "." + kube.Group
	if ct := r.Header.Get("Content-Type"); ct != "application/merge-patch+json" {
		status(w, 415, "UnsupportedMediaType", "the stand-in takes JSON merge patches only, not "+ct)
		return
	}
	var p map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&p); err != nil {
		status(w, 400, "BadRequest", "patch is not a JSON object: "+err.Error())
		return
	}
	o := s.objs[key(res, ns, name)]
	if o == nil {
		status(w, 404, "NotFound", fmt.Sprintf("%s %q not found", full, name))
		return
	}
	if !statusOnly {
		s.patches++
		if s.onPatch != nil {
			f := s.onPatch
			s.mu.Unlock()
			f(s.patches)
			s.mu.Lock()
			o = s.objs[key(res, ns, name)]
		}
	}
	if md, ok := p["metadata"].(map[string]any); ok {
		if want, ok := md["resourceVersion"]; ok && want != o["metadata"].(map[string]any)["resourceVersion"] {
			status(w, 409, "Conflict", fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", full, name))
			return
		}
	}
	var next map[string]any
	if statusOnly { // the status subresource takes the status only
		next = clone(o)
		next["status"] = mergePatch(o["status"], p["status"])
	} else { // the main resource ignores status (subresources.status is on)
		delete(p, "status")
		next, _ = mergePatch(clone(o), p).(map[string]any)
	}
	if err := checkShape(kinds[res], next); err != nil {
		status(w, 422, "Invalid", fmt.Sprintf("%s %q is invalid: %v", kinds[res], name, err))
		return
	}
	if !statusOnly && !jsonEqual(o["spec"], next["spec"]) {
		md := next["metadata"].(map[string]any)
		g, _ := md["generation"].(float64)
		md["generation"] = g + 1
	}
	s.bump(next)
	s.objs[key(res, ns, name)] = next
	answer(w, 200, next)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, res, ns string) {
	var o map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&o); err != nil {
		status(w, 400, "BadRequest", "body is not a JSON object: "+err.Error())
		return
	}
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if name == "" || (md["namespace"] != nil && md["namespace"] != ns) {
		status(w, 400, "BadRequest", "metadata.name is required and metadata.namespace must match the URL")
		return
	}
	if o["kind"] != kinds[res] || o["apiVersion"] != kube.Group+"/"+kube.Version {
		status(w, 400, "BadRequest", fmt.Sprintf("kind %v apiVersion %v on %s", o["kind"], o["apiVersion"], res))
		return
	}
	if s.objs[key(res, ns, name)] != nil {
		status(w, 409, "AlreadyExists", fmt.Sprintf("%s.%s %q already exists", res, kube.Group, name))
		return
	}
	if err := checkShape(kinds[res], o); err != nil {
		status(w, 422, "Invalid", fmt.Sprintf("%s %q is invalid: %v", kinds[res], name, err))
		return
	}
	delete(o, "status")
	md["namespace"], md["generation"], md["uid"] = ns, 1, fmt.Sprintf("uid-%d", s.rv)
	s.bump(o)
	s.objs[key(res, ns, name)] = o
	answer(w, 201, o)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
