package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	confluent "github.com/confluentinc/ccloud-sdk-go-v2/kafkarest/v3/api"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/drconsole/drconsole/handlers"
)

// Spec is Confluent's published Kafka REST v3 document and a router over
// its paths.
type Spec struct {
	Doc    *openapi3.T
	router routers.Router
}

// LoadSpec parses the document (the one ccloud-sdk-go-v2's kafkarest
// module embeds; go.mod's pin, v0.25.0, is the version proven) and checks
// its structure. Its examples are not checked: some, outside Cluster
// Linking, break its own schemas. Its servers are dropped so that any host
// matches: the console talks to a loopback stand-in, not Confluent Cloud.
func LoadSpec() (*Spec, error) {
	htmlOnce.Do(func() { openapi3filter.RegisterBodyDecoder("text/html", textDecoder) })
	doc, err := openapi3.NewLoader().LoadFromData(confluent.GetSpec())
	if err != nil {
		return nil, fmt.Errorf("load the document: %w", err)
	}
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("the document: %w", err)
	}
	doc.Servers = nil
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &Spec{Doc: doc, router: r}, nil
}

// LoadConsoleSpec parses the console's own API document (the one
// /api/v1/openapi.json serves, handlers.OpenAPIDocument), checks it,
// examples included, and roots its paths at /api/v1 (its server) so that
// any host matches.
func LoadConsoleSpec() (*Spec, error) {
	doc, err := openapi3.NewLoader().LoadFromData(handlers.OpenAPIDocument())
	if err != nil {
		return nil, fmt.Errorf("load the console's document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the console's document: %w", err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/api/v1" {
		return nil, fmt.Errorf("the console's document names servers %v, want /api/v1", doc.Servers)
	}
	doc.Servers = nil
	rooted := openapi3.NewPaths()
	for path, item := range doc.Paths.Map() {
		rooted.Set("/api/v1"+path, item)
	}
	doc.Paths = rooted
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &Spec{Doc: doc, router: r}, nil
}

// htmlOnce registers a decoder for the 429 answers the document gives as
// text/html (Jetty's DoSFilter page; its schema is a string).
var htmlOnce sync.Once

func textDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	return string(b), err
}

// Exchange is one request and its answer, as the proxy saw and judged them.
type Exchange struct {
	Op, Method, Path, Query string
	Status                  int
	// Problems are the document's objections: to the request (its path,
	// parameters, credentials, body) and to the answer (an undocumented
	// status or content type, a body its schema refuses), and fields either
	// carries that the schema does not declare.
	Problems []string
}

func (x Exchange) String() string {
	s := fmt.Sprintf("%s %s %s?%s -> %d", x.Op, x.Method, x.Path, x.Query, x.Status)
	if len(x.Problems) > 0 {
		s += ": " + strings.Join(x.Problems, "; ")
	}
	return s
}

// Proxy stands between the console and a REST API: it judges every
// request against the document, forwards it, and judges the answer.
type Proxy struct {
	URL  string
	spec *Spec
	to   *url.URL
	mu   sync.Mutex
	seen []Exchange
}

// NewProxy serves on loopback in front of target (scheme and host; the
// path is kept as the console sent it). Close it with Close.
func (s *Spec) NewProxy(target string) (*Proxy, func(), error) {
	to, err := url.Parse(target)
	if err != nil {
		return nil, nil, err
	}
	p := &Proxy{spec: s, to: to}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = srv.URL
	return p, srv.Close, nil
}

// Exchanges returns what the proxy saw so far.
func (p *Proxy) Exchanges() []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	x := Exchange{Op: "(no operation)", Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	defer func() { // recorded even when the upstream did not answer
		p.mu.Lock()
		p.seen = append(p.seen, x)
		p.mu.Unlock()
	}()
	in, problems := p.spec.judgeRequest(r, body)
	x.Problems = append(x.Problems, problems...)
	if in != nil {
		x.Op = in.Route.Operation.OperationID
	}

	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.to.Scheme+"://"+p.to.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		x.Problems = append(x.Problems, "no answer: "+err.Error())
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	x.Status = resp.StatusCode
	if in != nil {
		x.Problems = append(x.Problems, p.spec.judgeResponse(in, resp.StatusCode, resp.Header, answer)...)
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// options: every problem at once, an answer's status must be one the
// operation documents, and credentials are judged (authenticate).
func options() *openapi3filter.Options {
	return &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, AuthenticationFunc: authenticate}
}

// authenticate accepts a request carrying what one of the operation's
// security schemes asks for. Confluent's document offers HTTP basic (an
// API key) and OAuth 2.0 bearer tokens, and the console sends basic auth;
// the console's own document asks for an HTTP bearer token.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, r := in.SecurityScheme, in.RequestValidationInput.Request
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
		if _, _, ok := r.BasicAuth(); ok {
			return nil
		}
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			return nil
		}
	case s.Type == "oauth2":
		if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			return nil
		}
	}
	return fmt.Errorf("no credentials for %s", in.SecuritySchemeName)
}

// judgeRequest finds the operation and checks the request against it. The
// input is nil when no operation of the document matches.
func (s *Spec) judgeRequest(r *http.Request, body []byte) (*openapi3filter.RequestValidationInput, []string) {
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		return nil, []string{fmt.Sprintf("request: no operation of the document: %v", err)}
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: options()}
	var out []string
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		out = append(out, flatten("request", err)...)
	}
	out = append(out, undeclaredQuery(route, req.URL.Query())...)
	if rb := route.Operation.RequestBody; rb != nil && rb.Value != nil && len(bytes.TrimSpace(body)) > 0 {
		if mt := rb.Value.Content.Get(req.Header.Get("Content-Type")); mt != nil && mt.Schema != nil {
			out = append(out, undeclaredIn("request body", mt.Schema, body)...)
		}
	}
	in.Request.Body = io.NopCloser(bytes.NewReader(body))
	return in, out
}

// undeclaredQuery names the query parameters the operation does not
// declare: kin-openapi ignores them, and a cluster may too, so a flag sent
// to the wrong action would pass unnoticed.
func undeclaredQuery(route *routers.Route, q url.Values) []string {
	declared := map[string]bool{}
	for _, ps := range []openapi3.Parameters{route.PathItem.Parameters, route.Operation.Parameters} {
		for _, p := range ps {
			if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
				declared[p.Value.Name] = true
			}
		}
	}
	var out []string
	for k := range q {
		if !declared[k] {
			out = append(out, "request: query parameter "+k+" is not declared by "+route.Operation.OperationID)
		}
	}
	sort.Strings(out)
	return out
}

// judgeResponse checks an answer against the operation's responses. An
// error status the operation does not document (the document lists no 404
// for any Cluster Linking operation) is named as such, and its body is still held
// to the document's Error schema, which is what the console parses.
func (s *Spec) judgeResponse(in *openapi3filter.RequestValidationInput, status int, h http.Header, body []byte) []string {
	op := in.Route.Operation
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	isJSON := strings.Contains(h.Get("Content-Type"), "json")
	if ref == nil && status >= 400 {
		problems := []string{fmt.Sprintf("answer: HTTP %d is not documented for %s", status, op.OperationID)}
		if !isJSON {
			return append(problems, "answer: not the document's Error body: "+h.Get("Content-Type"))
		}
		errSchema := s.Doc.Components.Schemas["Error"]
		var v any
		if err := jsonDecode(body, &v); err != nil {
			return append(problems, "answer: not JSON: "+err.Error())
		}
		if err := errSchema.Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
			problems = append(problems, flatten("answer (as Error)", err)...)
		}
		return append(problems, undeclaredIn("answer (as Error)", errSchema, body)...)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), Options: options()}
	var problems []string
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		problems = flatten("answer", err)
	}
	if ref != nil && ref.Value != nil && isJSON {
		if mt := ref.Value.Content.Get(h.Get("Content-Type")); mt != nil && mt.Schema != nil {
			problems = append(problems, undeclaredIn("answer", mt.Schema, body)...)
		}
	}
	return problems
}

// flatten turns kin-openapi's multi-errors into one line each.
func flatten(where string, err error) []string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []string
		for _, e := range me {
			out = append(out, flatten(where, e)...)
		}
		return out
	}
	return []string{where + ": " + strings.Join(strings.Fields(err.Error()), " ")}
}

// undeclaredIn lists the object fields of a JSON body that its schema does
// not declare. The document leaves additionalProperties open, so a schema
// check alone would pass a field of the stand-in's own invention, or one a
// client depends on that Confluent never sends.
func undeclaredIn(where string, ref *openapi3.SchemaRef, body []byte) []string {
	var v any
	if err := jsonDecode(body, &v); err != nil {
		return []string{where + ": not JSON: " + err.Error()}
	}
	var out []string
	undeclared(ref, v, "", &out)
	sort.Strings(out)
	for i, f := range out {
		out[i] = where + ": field " + f + " is not declared by the document"
	}
	return out
}

func undeclared(ref *openapi3.SchemaRef, v any, at string, out *[]string) {
	if ref == nil || ref.Value == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		props := properties(ref.Value)
		open := ref.Value.AdditionalProperties.Schema
		for k, fv := range v {
			p, ok := props[k]
			switch {
			case ok:
				undeclared(p, fv, at+"/"+k, out)
			case open != nil:
				undeclared(open, fv, at+"/"+k, out)
			case ref.Value.AdditionalProperties.Has == nil || !*ref.Value.AdditionalProperties.Has:
				*out = append(*out, at+"/"+k)
			}
		}
	case []any:
		for i, e := range v {
			undeclared(ref.Value.Items, e, fmt.Sprintf("%s/%d", at, i), out)
		}
	}
}

// properties gathers an object schema's properties through allOf.
func properties(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	for k, v := range s.Properties {
		out[k] = v
	}
	for _, a := range s.AllOf {
		if a.Value != nil {
			for k, v := range properties(a.Value) {
				out[k] = v
			}
		}
	}
	return out
}
