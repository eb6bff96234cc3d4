package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

func TestRecordSettings(t *testing.T) {
	ctx := context.Background()
	cfgPath, _ := cliConfig(t)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	records := func() []model.AuditEntry {
		t.Helper()
		e, err := store.AuditEntries(ctx, storage.AuditFilter{Action: "settings.changed"})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	changed := func(e model.AuditEntry) []string {
		var d struct {
			Changed []string `json:"changed"`
		}
		json.Unmarshal(e.Details, &d)
		return d.Changed
	}
	// First start: everything is new.
	if err := recordSettings(ctx, store, cfg, cfgPath); err != nil {
		t.Fatal(err)
	}
	if r := records(); len(r) != 1 || !slices.Contains(changed(r[0]), "flows") || r[0].Actor != "config-file" {
		t.Fatalf("first start: %+v", r)
	}
	// The same settings again: nothing to record.
	if err := recordSettings(ctx, store, cfg, cfgPath); err != nil || len(records()) != 1 {
		t.Fatalf("unchanged settings recorded again: %v %d", err, len(records()))
	}
	// One threshold changed: one record naming that section only.
	cfg.Thresholds.Warning.Lag = config.Duration(45 * time.Second)
	if err := recordSettings(ctx, store, cfg, cfgPath); err != nil {
		t.Fatal(err)
	}
	r := records()
	if len(r) != 2 || !slices.Equal(changed(r[0]), []string{"thresholds"}) {
		t.Fatalf("after a threshold change: %d records, newest changed %v", len(r), changed(r[0]))
	}
	if _, bad, err := store.VerifyAudit(ctx); bad != nil || err != nil {
		t.Fatalf("audit chain: %v %v", bad, err)
	}
}
