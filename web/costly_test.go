package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/drconsole/drconsole/web"
)

// GETs that reach a cluster per request are rate-limited per user and
// address: past the burst a viewer gets 429 with Retry-After, and the
// clusters see no more of their requests; another user still gets
// through. The reverse-flow fragment (Connect and both Kafka clusters per
// request) and the group picker (the primary's groups) are two of them.
func TestCostlyGETsAreRateLimited(t *testing.T) {
	c, _, srv := streamConsole(t)
	operator := sessionCookie(t, c, "operator")
	get := func(path string, ck *http.Cookie) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("HX-Request", "true")
		req.AddCookie(ck)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Each path by a user of its own: a budget is per user, not per path.
	for path, role := range map[string]string{"/group-picker?flow=" + url.QueryEscape("primary->dr"): "viewer", "/failover/999999/reverse": "admin"} {
		viewer := sessionCookie(t, c, role)
		served, refused := 0, 0
		var last *http.Response
		began := time.Now()
		for range 2 * web.DefaultCostBurstPerUser {
			if last = get(path, viewer); last.StatusCode == http.StatusTooManyRequests {
				refused++
			} else {
				served++
			}
		}
		if refilled := costRefilled(began); served < web.DefaultCostBurstPerUser || served > web.DefaultCostBurstPerUser+refilled || refused == 0 {
			t.Fatalf("GET %s ×%d: %d served, %d refused; want the burst of %d served (and up to %d refilled), the rest 429",
				path, 2*web.DefaultCostBurstPerUser, served, refused, web.DefaultCostBurstPerUser, refilled)
		}
		if s, err := strconv.Atoi(last.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("429 without a usable Retry-After: %q", last.Header.Get("Retry-After"))
		}
		if resp := get(path, operator); resp.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("GET %s by another user: 429", path)
		}
	}
}

// costRefilled bounds the tokens a user's bucket refilled since began (a
// token a second): requests that took a while on a loaded machine may be
// served that many beyond the burst, no more.
func costRefilled(began time.Time) int {
	return int(time.Since(began).Seconds()*web.DefaultCostRatePerUser) + 1
}
