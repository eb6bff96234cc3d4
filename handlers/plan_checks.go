package handlers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/storage"
)

// checkPlanFields checks the plan form's values against what the console
// can ask beyond the form: the restore target's uploaded jars (when Flink
// answers; otherwise the form checks the id's shape) and, for a typed
// savepoint, the catalog. Every field refused is in the form.Errors.
func (h *Handlers) checkPlanFields(ctx context.Context, f form.Plan) error {
	e := form.Errors{}
	if target, jar := f.JarTarget(); target != "" && jar != "" {
		ids, known := h.jarIDs(ctx, target)
		var fields form.Errors
		if errors.As(f.CheckJar(ids, known), &fields) {
			maps.Copy(e, fields)
		}
	}
	if !f.Failback && f.SavepointTyped {
		if msg := h.notASavepoint(ctx, f.SavepointPath); msg != "" {
			e["savepoint_path"] = msg
		}
	}
	if len(e) == 0 {
		return nil
	}
	return e
}

// jarIDs are the ids of the jars uploaded to target; known false when
// Flink did not answer within jarsTimeout (or the console does not ask it).
func (h *Handlers) jarIDs(ctx context.Context, target string) ([]string, bool) {
	if h.Catalog == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, jarsTimeout)
	defer cancel()
	jars, err := h.Catalog.Jars(ctx, target)
	if err != nil {
		return nil, false
	}
	ids := make([]string, len(jars))
	for i, j := range jars {
		ids[i] = j.ID
	}
	return ids, true
}

// notASavepoint says why path is not a savepoint where the catalog can
// tell: a local path inside a configured savepoint directory (which the
// catalog scans), not in the catalog, with no _metadata file. "" when it
// is one, or the catalog cannot tell (elsewhere, or on S3): the restore
// step checks the catalog's verdict again when it starts.
func (h *Handlers) notASavepoint(ctx context.Context, path string) string {
	if path == "" || h.Catalog == nil {
		return ""
	}
	if _, err := flink.LocalPath(path); err != nil || !flink.UnderSavepointDir(h.Runbook.Config.SavepointDirs, path) {
		return ""
	}
	if _, err := h.Catalog.SavepointByPath(ctx, flink.CanonicalPath(path)); !errors.Is(err, storage.ErrNotFound) {
		return "" // known, or the catalog cannot tell
	}
	dir := strings.TrimSuffix(strings.TrimRight(path, "/"), "/"+flink.MetadataFileName)
	exists, err := h.Catalog.DirExists(ctx, dir+"/"+flink.MetadataFileName)
	if err != nil || exists {
		return ""
	}
	return fmt.Sprintf("Savepoint %s is not a savepoint: the catalog knows none there and it holds no %s file; pick one from the list, or check the path.",
		strconv.Quote(path), flink.MetadataFileName)
}
