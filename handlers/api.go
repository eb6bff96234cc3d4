package handlers

import (
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/handlers/form"
)

// The JSON API, /api/v1 (docs/api.md; the document is api_openapi.json):
// the pages' reads and run actions for scripts, status pages and chat
// bots, signed in with an API token (web/api.go checks it). Its handlers
// (api_*.go) call the same services, forms and engine as the pages, so an
// action through the API passes the same gate, checks and audit; errors
// take their status from statusFor, as JSON.

//go:embed api_openapi.json
var openAPIDoc []byte

// OpenAPIDocument is the API's OpenAPI 3 document, as served.
func OpenAPIDocument() []byte { return openAPIDoc }

// APIOpenAPI is GET /api/v1/openapi.json.
func (h *Handlers) APIOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(openAPIDoc)
}

// apiError is every error answer's body.
type apiError struct {
	Status  int    `json:"status"`
	Message string `json:"error"`
	// Fields says what is wrong with each field of a refused request.
	Fields map[string]string `json:"fields,omitempty"`
	// Ref ties a 5xx to the console's log line (the cause is never shown).
	Ref string `json:"ref,omitempty"`
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "primary->dr", not "primary-\u003edr": no HTML here
	enc.Encode(v)
}

// apiFail answers err with the status statusFor gives it, as JSON; a 5xx
// says what to do and gives a reference, its cause only in the log.
func (h *Handlers) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusFor(err)
	e := apiError{Status: status, Message: err.Error()}
	var fields form.Errors
	if errors.As(err, &fields) {
		e.Fields = fields
	}
	if status >= 500 {
		e.Ref = newRef()
		e.Message = serverMessage(err, status)
		if h.Log != nil {
			h.Log.Error("API request failed", "ref", e.Ref, "path", r.URL.Path, "status", status, "err", err)
		}
	} else if status == http.StatusNotFound {
		e.Message = strings.Replace(strings.TrimPrefix(e.Message, "storage: "), ": not found", " not found", 1)
	}
	writeJSON(w, status, e)
}

// APIRefuse answers a request the API's middleware turns away (no token,
// a bad one, a scope too weak, too many requests) with msg, as JSON.
func (h *Handlers) APIRefuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="drconsole"`)
	}
	writeJSON(w, status, apiError{Status: status, Message: msg})
}

// APINotFound answers a path under /api/v1 the API does not have.
func (h *Handlers) APINotFound(w http.ResponseWriter, r *http.Request) {
	h.APIRefuse(w, r, http.StatusNotFound, "no API operation at "+clipPath(r.URL.Path)+": see /api/v1/openapi.json")
}

func clipPath(p string) string {
	if len(p) > 128 {
		return p[:128]
	}
	return p
}

// maxAPIBody bounds a request body.
const maxAPIBody = 64 << 10

// apiForm reads a JSON object body into form values, so the API's
// requests are read and checked by the pages' own forms (handlers/form):
// a string is one value, a list of strings one line each (as the form's
// text areas take them), a boolean "on" when true (as a ticked box), a
// whole number its digits. A field not in fields, or of another type, is
// refused (400): a misspelt option must not be quietly ignored.
func apiForm(r *http.Request, fields ...string) (url.Values, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, badRequest("send the request body as application/json")
		}
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxAPIBody+1))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		return nil, badRequest("the request body is not a JSON object: " + err.Error())
	}
	if dec.More() {
		return nil, badRequest("the request body holds more than one JSON value")
	}
	v := url.Values{}
	for k, x := range body {
		if !slices.Contains(fields, k) {
			return nil, badRequest("unknown field " + strconv.Quote(clipPath(k)) + ": this request takes " + strings.Join(fields, ", "))
		}
		switch x := x.(type) {
		case nil:
		case string:
			v.Set(k, x)
		case bool:
			if x {
				v.Set(k, "on")
			}
		case json.Number:
			if _, err := strconv.ParseInt(x.String(), 10, 64); err != nil {
				return nil, badRequest(k + ": a whole number is expected")
			}
			v.Set(k, x.String())
		case []any:
			lines := make([]string, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok || strings.ContainsAny(s, "\r\n") {
					return nil, badRequest(k + ": a list of strings, each on one line, is expected")
				}
				lines[i] = s
			}
			v.Set(k, strings.Join(lines, "\n"))
		default:
			return nil, badRequest(k + ": a string, number, boolean or list of strings is expected")
		}
	}
	return v, nil
}

// formRequest is r with the form values v, for the pages' form readers.
func formRequest(r *http.Request, v url.Values) *http.Request {
	fr := r.Clone(r.Context())
	fr.Body = http.NoBody
	fr.Form, fr.PostForm = v, v
	return fr
}

// apiTime is t in RFC 3339 (UTC), nil when t is zero (unknown).
func apiTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// apiTimeMs is apiTime of epoch milliseconds (0: unknown).
func apiTimeMs(ms int64) *string {
	if ms == 0 {
		return nil
	}
	return apiTime(time.UnixMilli(ms))
}
