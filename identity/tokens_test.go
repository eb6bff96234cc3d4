package identity_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// dbBytes is the database as it lies on disk, its write-ahead log
// included.
func dbBytes(t *testing.T, path string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

func records(t *testing.T, st *storage.Store, action audit.Action) []model.AuditEntry {
	t.Helper()
	es, err := st.AuditEntries(context.Background(), storage.AuditFilter{Action: string(action)})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// A token's life: made (shown once, only its hash stored, audited without
// it), used (as its owner, capped by its scope, marked used), refused once
// expired or revoked (each refusal on record), and dead the moment its
// owner's account is disabled.
func TestTokenLifecycle(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	rec := audit.New(st)
	for _, u := range []model.User{{Name: "olga", Role: model.RoleOperator}, {Name: "ada", Role: model.RoleAdmin}} {
		if err := st.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	tok, row, err := identity.CreateToken(ctx, st, rec, "olga", identity.TokenRequest{Name: "ci", Scope: identity.ScopeOperate, TTL: 24 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, identity.TokenPrefix) || len(tok) < len(identity.TokenPrefix)+43 {
		t.Fatalf("token %q: want %s and at least 32 random bytes", tok, identity.TokenPrefix)
	}
	sum := sha256.Sum256([]byte(tok))
	disk := dbBytes(t, path)
	if bytes.Contains(disk, []byte(tok)) || bytes.Contains(disk, []byte(tok[len(row.Prefix):])) {
		t.Fatal("the token itself is in the database")
	}
	if !bytes.Contains(disk, []byte(hex.EncodeToString(sum[:]))) {
		t.Fatal("the token's SHA-256 is not in the database: the check above proves nothing")
	}
	made := records(t, st, audit.TokenCreate)
	if len(made) != 1 || made[0].Actor != "olga" || strings.Contains(string(made[0].Details), tok[len(row.Prefix):]) {
		t.Fatalf("token.create records: %+v", made)
	}

	use, err := identity.Authenticate(ctx, st, rec, tok, now.Add(time.Minute))
	if err != nil || use.Principal != (model.Principal{Name: "olga", Role: model.RoleOperator}) {
		t.Fatalf("a live token: %+v, %v", use.Principal, err)
	}
	if got, _ := st.APIToken(ctx, row.ID); got.LastUsedMs != now.Add(time.Minute).UnixMilli() {
		t.Errorf("last used %d, want the use's time", got.LastUsedMs)
	}
	if _, err := identity.Authenticate(ctx, st, rec, tok, now.Add(25*time.Hour)); !errors.Is(err, storage.ErrTokenExpired) || !errors.Is(err, identity.ErrBadToken) {
		t.Fatalf("past its expiry: %v", err)
	}
	if _, err := identity.Authenticate(ctx, st, rec, identity.TokenPrefix+"guess", now); !errors.Is(err, storage.ErrNoToken) {
		t.Fatalf("a guessed token: %v", err)
	}

	// Someone else (not an admin) cannot revoke it, or even see it.
	other, _, err := identity.CreateToken(ctx, st, rec, "ada", identity.TokenRequest{Name: "ada's", Scope: identity.ScopeRead, TTL: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	adaUse, _ := identity.Authenticate(ctx, st, rec, other, now)
	if err := identity.RevokeToken(ctx, st, rec, model.Principal{Name: "olga", Role: model.RoleOperator}, adaUse.Token.ID, now); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("olga revoking ada's token: %v", err)
	}
	// An admin can revoke anyone's.
	if err := identity.RevokeToken(ctx, st, rec, model.Principal{Name: "ada", Role: model.RoleAdmin}, row.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := identity.RevokeToken(ctx, st, rec, model.Principal{Name: "ada", Role: model.RoleAdmin}, row.ID, now); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("revoking twice: %v", err)
	}
	if _, err := identity.Authenticate(ctx, st, rec, tok, now); !errors.Is(err, storage.ErrTokenRevoked) {
		t.Fatalf("a revoked token: %v", err)
	}
	if n := len(records(t, st, audit.TokenRevoke)); n != 1 {
		t.Errorf("%d token.revoke records, want 1 (the refused second revoke writes none)", n)
	}
	denied := records(t, st, audit.TokenDenied)
	if len(denied) != 3 {
		t.Fatalf("%d token.denied records, want 3 (expired, guessed, revoked)", len(denied))
	}
	for _, d := range denied {
		if strings.Contains(string(d.Details), tok[len(row.Prefix):]) {
			t.Fatal("a refusal's record holds the token")
		}
	}

	// Disabling ada stops her live token at once.
	if err := identity.SetDisabled(ctx, st, identity.AuditAs(rec, "olga"), "ada", true); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.Authenticate(ctx, st, rec, other, now); !errors.Is(err, storage.ErrNoToken) {
		t.Fatalf("a disabled account's token: %v", err)
	}
}

// The scope caps the owner's role and never raises it; the owner's role
// is read at each use.
func TestTokenScopeCapsTheRole(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	rec := audit.New(st)
	now := time.Now()
	for _, tc := range []struct {
		role  model.Role
		scope string
		want  model.Role
	}{
		{model.RoleViewer, identity.ScopeOperate, model.RoleViewer},
		{model.RoleViewer, identity.ScopeRead, model.RoleViewer},
		{model.RoleOperator, identity.ScopeRead, model.RoleViewer},
		{model.RoleOperator, identity.ScopeOperate, model.RoleOperator},
		{model.RoleAdmin, identity.ScopeOperate, model.RoleOperator},
		{model.RoleAdmin, identity.ScopeRead, model.RoleViewer},
	} {
		name := string(tc.role) + "-" + tc.scope
		if err := st.CreateUser(ctx, model.User{Name: name, Role: tc.role}); err != nil {
			t.Fatal(err)
		}
		tok, _, err := identity.CreateToken(ctx, st, rec, name, identity.TokenRequest{Name: "t", Scope: tc.scope, TTL: time.Hour}, now)
		if err != nil {
			t.Fatal(err)
		}
		use, err := identity.Authenticate(ctx, st, rec, tok, now)
		if err != nil || use.Principal.Role != tc.want || use.OwnerRole != tc.role {
			t.Errorf("%s's %s token acts as %q (owner %q), %v; want %q", tc.role, tc.scope, use.Principal.Role, use.OwnerRole, err, tc.want)
		}
		if tc.role == model.RoleOperator && tc.scope == identity.ScopeOperate {
			// Demoted since: the token follows.
			if err := st.SetRole(ctx, name, model.RoleViewer); err != nil {
				t.Fatal(err)
			}
			if use, _ := identity.Authenticate(ctx, st, rec, tok, now); use.Principal.Role != model.RoleViewer {
				t.Errorf("a demoted operator's operate token acts as %q", use.Principal.Role)
			}
		}
	}
}

// What a token request may ask for: a name, a known scope, an expiry
// within the bound; a refused request makes nothing and writes no record.
func TestTokenRequestsAreBounded(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	rec := audit.New(st)
	if err := st.CreateUser(ctx, model.User{Name: "olga", Role: model.RoleOperator}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []identity.TokenRequest{
		{Name: "", Scope: identity.ScopeRead, TTL: time.Hour},
		{Name: "x", Scope: "admin", TTL: time.Hour},
		{Name: "x", Scope: identity.ScopeRead, TTL: identity.MaxTokenTTL + time.Hour},
		{Name: "x", Scope: identity.ScopeRead, TTL: 0},
		{Name: "bell\a", Scope: identity.ScopeRead, TTL: time.Hour},
	} {
		if _, _, err := identity.CreateToken(ctx, st, rec, "olga", q, time.Now()); !errors.Is(err, identity.ErrTokenRequest) {
			t.Errorf("%+v: %v, want refused", q, err)
		}
	}
	if _, _, err := identity.CreateToken(ctx, st, rec, "nobody", identity.TokenRequest{Name: "x", Scope: identity.ScopeRead, TTL: time.Hour}, time.Now()); !errors.Is(err, storage.ErrUnknownUser) {
		t.Errorf("a token for no account: %v", err)
	}
	for i := range identity.MaxLiveTokens {
		if _, _, err := identity.CreateToken(ctx, st, rec, "olga", identity.TokenRequest{Name: "t", Scope: identity.ScopeRead, TTL: time.Hour}, time.Now()); err != nil {
			t.Fatalf("token %d: %v", i+1, err)
		}
	}
	if _, _, err := identity.CreateToken(ctx, st, rec, "olga", identity.TokenRequest{Name: "t", Scope: identity.ScopeRead, TTL: time.Hour}, time.Now()); !errors.Is(err, identity.ErrTooManyTokens) {
		t.Errorf("one token past the bound: %v", err)
	}
	if n := len(records(t, st, audit.TokenCreate)); n != identity.MaxLiveTokens {
		t.Errorf("%d token.create records, want %d", n, identity.MaxLiveTokens)
	}
}

// A token whose record cannot be written is not made, and one whose
// revocation cannot be recorded stays live.
func TestTokensNeedTheirAuditRecord(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	rec := audit.New(st)
	if err := st.CreateUser(ctx, model.User{Name: "olga", Role: model.RoleOperator}); err != nil {
		t.Fatal(err)
	}
	tok, row, err := identity.CreateToken(ctx, st, rec, "olga", identity.TokenRequest{Name: "t", Scope: identity.ScopeRead, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	storagetest.FailAuditWrites(t, path, true)
	if _, _, err := identity.CreateToken(ctx, st, rec, "olga", identity.TokenRequest{Name: "u", Scope: identity.ScopeRead, TTL: time.Hour}, time.Now()); err == nil {
		t.Fatal("a token was made without its record")
	}
	if err := identity.RevokeToken(ctx, st, rec, model.Principal{Name: "olga", Role: model.RoleOperator}, row.ID, time.Now()); err == nil {
		t.Fatal("a token was revoked without its record")
	}
	if ts, _ := st.APITokens(ctx, "olga", 10); len(ts) != 1 || ts[0].RevokedMs != 0 {
		t.Fatalf("tokens after the refused writes: %+v", ts)
	}
	storagetest.FailAuditWrites(t, path, false)
	if _, err := identity.Authenticate(ctx, st, rec, tok, time.Now()); err != nil {
		t.Fatalf("the token whose revocation was not recorded: %v", err)
	}
}
