package cli

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
)

// The anchor's witness URL may carry a token: a failed POST names its
// scheme and host only (net/http's error names the whole URL).
func TestAnchorURLNotInErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // connection refused
	a := config.AuditAnchor{URL: "http://witness:pwSECRET@" + gone + "/anchor/SECRETTOKEN?key=SECRET"}
	err = writeAnchor(context.Background(), &http.Client{Timeout: 5 * time.Second}, a, time.Now(), 1, strings.Repeat("0", 64))
	if err == nil {
		t.Fatal("a refused POST succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "witness") || !strings.Contains(msg, "POST http://"+gone) {
		t.Fatalf("error %q: want the scheme and host only", msg)
	}
}
