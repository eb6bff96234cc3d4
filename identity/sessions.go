package identity

import (
	"context"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// SignOutEverywhere ends every session name has, with its audit record
// (audit.UserSignOutAll, details: how many sessions ended) in the same
// transaction, and returns how many there were. The user themself (their
// own account menu) or an admin (the users page) asks; audit names who.
// Live streams of those sessions end within a tick (web.Streams.Still).
// In proxy mode there are no console sessions: the proxy's own sign-out
// is what counts there.
func SignOutEverywhere(ctx context.Context, st *storage.Store, record Auditor, name string) (int64, error) {
	name = model.CanonicalName(name)
	var n int64
	err := record(ctx, audit.UserSignOutAll, "user:"+name, nil, func(rec model.AuditEntry) (model.AuditEntry, error) {
		var err error
		rec, n, err = st.DeleteUserSessionsAudited(ctx, name, rec)
		return rec, err
	})
	return n, err
}
