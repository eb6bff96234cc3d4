package connect

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// GET /connectors/{name}/offsets, in the shape of KIP-875's example for a
// source connector (MM2's source partition and offset).
func TestOffsets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.EscapedPath() != "/connectors/dr-to-primary-MirrorSourceConnector/offsets" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"offsets":[{"partition":{"cluster":"dr","partition":0,"topic":"events"},"offset":{"offset":41}}]}`)
	}))
	defer srv.Close()
	offs, err := New(srv.URL).Offsets(context.Background(), "dr-to-primary-MirrorSourceConnector")
	if err != nil || len(offs) != 1 || string(offs[0].Offset) != `{"offset":41}` || string(offs[0].Partition) != `{"cluster":"dr","partition":0,"topic":"events"}` {
		t.Fatalf("%+v %v", offs, err)
	}
	if _, err := New(srv.URL).Offsets(context.Background(), "missing"); err == nil {
		t.Fatal("a 404 read as offsets")
	}
}
