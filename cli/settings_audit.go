package cli

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/storage"
)

// recordSettings writes a settings.changed audit record when the effective
// settings (config file plus defaults) differ from those the newest such
// record names; at first start every section counts as changed. Settings
// are changed in the config file only, so this is their audit trail.
func recordSettings(ctx context.Context, store *storage.Store, cfg *config.Config, file string) error {
	fp, err := config.Fingerprint(cfg)
	if err != nil {
		return err
	}
	var prev struct {
		Sections map[string]string `json:"sections"`
	}
	last, err := store.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.SettingsChanged), Limit: 1})
	if err != nil {
		return err
	}
	if len(last) == 1 {
		json.Unmarshal(last[0].Details, &prev) // unreadable: everything counts as changed
	}
	var changed []string
	for k, h := range fp {
		if prev.Sections[k] != h {
			changed = append(changed, k)
		}
	}
	for k := range prev.Sections {
		if _, ok := fp[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	// A config file has no client: the record names none.
	_, err = audit.New(store).Record(audit.WithClient(ctx, audit.Client{}), "config-file", audit.SettingsChanged, "settings",
		map[string]any{"file": file, "changed": changed, "sections": fp})
	return err
}
