package identity

// What an OIDC sign-in changes on an account, as events with their own
// times: linking a provider identity to an account, and a role raised by
// the provider's groups. Each is stamped on the account in the
// transaction of its audit record, and the two-person rule (failover)
// does not count an approval from an account linked or raised after the
// run was requested, whenever the account itself was created.

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// adoptable reports whether l's identity may take over u, an existing
// account with no password that no identity is linked to yet: one made
// at a sign-in through the provider (by SSOCreator, or by the name itself
// before creators were recorded) always; any other only with
// auth.oidc.adopt_existing_accounts.
func adoptable(u model.User, l Login) bool {
	return u.CreatedBy == SSOCreator || model.CanonicalName(u.CreatedBy) == l.Name || l.AdoptExisting
}

// providerRole sets name's role to what the provider's groups give now
// (audited user.role, "by": "provider groups"); a raise is stamped on the
// account with its time.
func providerRole(ctx context.Context, st *storage.Store, as Auditor, name string, from, to model.Role) error {
	if err := CheckRole(to); err != nil {
		return err
	}
	details := map[string]any{"from": from, "to": to, "by": "provider groups"}
	return as(ctx, audit.UserRole, "user:"+name, details, func(rec model.AuditEntry) (model.AuditEntry, error) {
		if to.Rank() > from.Rank() {
			return st.RaiseRoleAudited(ctx, name, to, time.Now().UnixMilli(), rec)
		}
		return st.SetRoleAudited(ctx, name, to, rec)
	})
}

// linkIdentity ties l's provider identity to its account (audited
// sso.identity, the link time stamped on the account).
func linkIdentity(ctx context.Context, st *storage.Store, rec *audit.Recorder, l Login) error {
	_, err := rec.With(ctx, l.Name, audit.SSOIdentity, identityKey(l), map[string]any{"user": l.Name},
		func(e model.AuditEntry) (model.AuditEntry, error) {
			return st.LinkIdentityAudited(ctx, l.Name, time.Now().UnixMilli(), e)
		})
	return err
}
