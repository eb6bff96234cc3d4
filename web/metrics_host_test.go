package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/web"
)

// /metrics names flows and topics and tells RPO and failover counts: a
// DNS-rebinding page (Host: evil.example) must not read it. Prometheus
// scraping a pod IP, or a name listed in metrics.allowed_hosts, still
// does; the probes answer any Host.
func TestMetricsHostCheck(t *testing.T) {
	c := startConsole(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &handlers.Handlers{Monitor: c.Monitor, Store: c.Store, Log: log, Version: "test",
		Auth:    config.Auth{InsecureCookie: true, PublicURL: "https://drconsole.example.com"},
		Metrics: config.Metrics{AllowedHosts: []string{"drconsole.kafka-dr.svc"}}}
	router := web.Router(h, log)
	for _, tc := range []struct {
		path, host string
		want       int
	}{
		{"/metrics", "evil.example", http.StatusMisdirectedRequest},
		{"/metrics", "evil.example:8080", http.StatusMisdirectedRequest},
		{"/metrics", "drconsole.kafka-dr.svc.evil.example", http.StatusMisdirectedRequest},
		{"/metrics", "10.12.0.7:8080", http.StatusOK},              // a pod IP: the chart's ServiceMonitor
		{"/metrics", "[fd00::7]:8080", http.StatusOK},              // the same in IPv6
		{"/metrics", "drconsole.kafka-dr.svc:8080", http.StatusOK}, // metrics.allowed_hosts
		{"/metrics", "drconsole.example.com", http.StatusOK},       // auth.public_url
		{"/healthz", "evil.example", http.StatusOK},
		{"/readyz", "drconsole.internal:8080", 0},                           // any status but 421: ready or not
		{"/login", "drconsole.kafka-dr.svc", http.StatusMisdirectedRequest}, // allowed_hosts is for /metrics only
	} {
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		req.Host = tc.host
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		switch {
		case tc.want == 0 && rec.Code == http.StatusMisdirectedRequest:
			t.Errorf("GET %s with Host %q: refused by the host check", tc.path, tc.host)
		case tc.want != 0 && rec.Code != tc.want:
			t.Errorf("GET %s with Host %q = %d, want %d", tc.path, tc.host, rec.Code, tc.want)
		}
		if tc.path == "/metrics" && rec.Code == http.StatusMisdirectedRequest && strings.Contains(rec.Body.String(), "kafka_mirror") {
			t.Errorf("Host %q: a refusal carries metrics", tc.host)
		}
	}
}
