package failover

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// Issue 29, finding 3: an account made earlier without a password was
// taken over by a new provider identity of its name, the provider's
// groups raised it to operator, and, the account being old, its approval
// counted. Now adopting an account made here needs
// auth.oidc.adopt_existing_accounts, and an approval from an account
// linked or raised after the run was requested does not count, saying why.
func TestApprovalsFromAccountsLinkedOrRaisedAfterTheRequestDoNotCount(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	rec := audit.New(e.Store)
	root := identity.AuditAs(rec, "root-admin")
	for _, name := range []string{"olive", "sso-early", "sso-late"} {
		if err := identity.CreateUser(ctx, e.Store, root, name, model.RoleViewer, "", "root-admin"); err != nil {
			t.Fatal(err)
		}
	}
	login := func(name string, role model.Role, adopt bool) identity.Login {
		return identity.Login{Name: name, Role: role, Issuer: "https://idp.example", Subject: "sub-" + name, AdoptExisting: adopt}
	}
	// Linked (and raised) before the request: an account like any other.
	if err := identity.Admit(ctx, e.Store, rec, login("sso-early", model.RoleOperator, true)); err != nil {
		t.Fatal(err)
	}
	// Linked before the request, still a viewer.
	if err := identity.Admit(ctx, e.Store, rec, login("sso-late", model.RoleViewer, true)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	requested := time.Now()
	e.Now = requested
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}

	// Off by default: a provider user named olive does not become olive.
	err = identity.Admit(ctx, e.Store, rec, login("olive", model.RoleOperator, false))
	if err == nil || !strings.Contains(err.Error(), "adopt_existing_accounts") {
		t.Fatalf("adopting olive without the setting: %v", err)
	}
	if u, _ := e.Store.UserByName(ctx, "olive"); u.Role != model.RoleViewer {
		t.Fatalf("olive is %s after a refused sign-in", u.Role)
	}
	// With the setting: linked and raised now, after the request.
	if err := identity.Admit(ctx, e.Store, rec, login("olive", model.RoleOperator, true)); err != nil {
		t.Fatal(err)
	}
	// Raised by the groups after the request.
	if err := identity.Admit(ctx, e.Store, rec, login("sso-late", model.RoleOperator, true)); err != nil {
		t.Fatal(err)
	}

	r, _ := e.RB.Get(ctx, id)
	for _, name := range []string{"olive", "sso-late", "sso-early"} {
		if err := e.RB.Approve(ctx, runbook.Actor{Name: name, Role: model.RoleOperator}, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	r, _ = e.RB.Get(ctx, id)
	wants := map[string]string{
		"olive":    "the account olive was linked to its identity at the provider",
		"sso-late": "the account sso-late was raised to operator by the provider's groups",
	}
	for name, want := range wants {
		if !strings.Contains(r.Discounted[name], want) || !strings.Contains(r.Discounted[name], "after the run was requested") {
			t.Errorf("%s: discounted %q, want it to say %q", name, r.Discounted[name], want)
		}
	}
	if len(r.ValidApprovers) != 1 || r.ValidApprovers[0] != "sso-early" {
		t.Fatalf("valid approvers %v (discounted %v), want sso-early only", r.ValidApprovers, r.Discounted)
	}
	// The links and raises are in the accounts' audited state.
	if rep, err := audit.CheckAccounts(ctx, e.Store); err != nil || rep.Err() != nil {
		t.Fatalf("accounts after the sign-ins: %v %v", err, rep.Err())
	}
}
