package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// A recorded data loss is on the overview until an operator acknowledges
// it (a viewer may not); the acknowledgement is audited and the flow page
// keeps the incident in its history.
func TestLossIncidentAcknowledged(t *testing.T) {
	c := startConsole(t)
	ctx := context.Background()
	now := time.Now().UnixMilli()
	id, err := c.Store.AddLossIncident(ctx, model.LossIncident{Flow: "primary->dr", Topic: "orders", Partition: 3,
		FirstOffset: 7001, LastOffset: 7042, Lost: 42, DetectedMs: now - 5000, ConfirmedMs: now, How: "test"})
	if err != nil {
		t.Fatal(err)
	}
	shown := func(path string) bool {
		t.Helper()
		code, body := get(t, c, path)
		if code != 200 {
			t.Fatalf("%s = %d", path, code)
		}
		return strings.Contains(body, "7001–7042")
	}
	if !shown("/") || !shown(views.FlowPath("primary->dr")) {
		t.Fatal("the loss is not shown on the overview and flow page")
	}
	post := func(role string) int {
		req := httptest.NewRequest(http.MethodPost, views.LossAckPath("primary->dr", id), nil)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.AddCookie(sessionCookie(t, c, role))
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := post("viewer"); code != http.StatusForbidden {
		t.Fatalf("viewer acknowledged: %d", code)
	}
	if !shown("/") {
		t.Fatal("gone from the overview without an acknowledgement")
	}
	if code := post("operator"); code != http.StatusSeeOther {
		t.Fatalf("operator acknowledgement = %d", code)
	}
	if code := post("operator"); code != http.StatusNotFound {
		t.Fatalf("second acknowledgement = %d, want 404", code)
	}
	audit, err := c.Store.AuditEntries(ctx, storage.AuditFilter{Action: "loss.acknowledge"})
	if err != nil || len(audit) != 1 || audit[0].Actor != "test-operator" || !strings.Contains(string(audit[0].Details), `"first_offset":7001`) {
		t.Fatalf("audit %+v (%v)", audit, err)
	}
	if shown("/") {
		t.Fatal("still on the overview after the acknowledgement")
	}
	_, body := get(t, c, views.FlowPath("primary->dr"))
	if !strings.Contains(body, "7001–7042") || !strings.Contains(body, "by test-operator") {
		t.Fatal("the flow page's history lost the acknowledged incident")
	}
}
