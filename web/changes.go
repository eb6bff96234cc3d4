package web

import (
	"net/http"
	"sync"
)

// countChanges calls changed for every request that may change state
// (anything but GET, HEAD and OPTIONS): when its response starts, which
// is after the handler made its change and before the client can see the
// answer and ask again, and once more when it ends (a handler that writes
// nothing). The page cache keys its pages by that count, so an operator
// who acknowledges a loss sees it on the next page, not a second later.
func countChanges(changed func()) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				next.ServeHTTP(w, r)
				return
			}
			cw := &changeWriter{ResponseWriter: w, changed: changed}
			defer changed()
			next.ServeHTTP(cw, r)
		})
	}
}

// changeWriter calls changed once, when the response starts.
type changeWriter struct {
	http.ResponseWriter
	changed func()
	once    sync.Once
}

func (c *changeWriter) WriteHeader(status int) {
	c.once.Do(c.changed)
	c.ResponseWriter.WriteHeader(status)
}

func (c *changeWriter) Write(b []byte) (int, error) {
	c.once.Do(c.changed)
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (c *changeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
