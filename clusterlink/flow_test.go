package clusterlink

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
)

// The REST client built from a flow's config trusts the configured CA
// (monitoring and the runbook's promote/failover share it).
func TestForFlowUsesTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/kafka/v3/clusters/dr-id/links/primary-to-dr/mirrors" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kind":"KafkaMirrorTopicList","metadata":{"self":"x"},"data":[]}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	flow := &config.Flow{Name: "primary->dr", ClusterLink: &config.ClusterLink{RestURL: srv.URL + "/kafka", ClusterID: "dr-id", Link: "primary-to-dr"}}
	plain, err := ForFlow(flow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Mirrors(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v", err)
	}
	flow.ClusterLink.TLS = &config.TLS{CAFile: ca}
	withCA, err := ForFlow(flow)
	if err != nil {
		t.Fatal(err)
	}
	if ms, err := withCA.Mirrors(t.Context()); err != nil || len(ms) != 0 {
		t.Fatalf("with the CA: %v %v", ms, err)
	}
	flow.ClusterLink.TLS = &config.TLS{CAFile: filepath.Join(t.TempDir(), "missing.pem")}
	if _, err := ForFlow(flow); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
}
