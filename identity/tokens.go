package identity

// API tokens: a person's bearer tokens for /api/v1. A token is 32 random
// bytes behind a recognisable prefix ("drc_"), shown once when made; only
// its SHA-256 is stored (storage/api_tokens.go). Every token expires, may
// be revoked, and carries a scope that caps its owner's role: a read
// token acts as a viewer at most, an operate token as an operator at
// most, and never as more than the owner is now (the role and the
// account's state are read on every use, so a disabled account's tokens
// stop at once). Creation, revocation and every refused use are audited.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// TokenPrefix starts every API token, so a secret scanner (or a person)
// knows one when it leaks.
const TokenPrefix = "drc_"

// Token scopes.
const (
	ScopeRead    = "read"    // a viewer's reads at most
	ScopeOperate = "operate" // an operator's actions at most
)

// Token lifetimes: every token expires, within MaxTokenTTL.
const (
	DefaultTokenTTL = 30 * 24 * time.Hour
	MaxTokenTTL     = 90 * 24 * time.Hour
	MinTokenTTL     = time.Hour
)

// MaxLiveTokens bounds one person's live tokens.
const MaxLiveTokens = 20

// ScopeCap is the strongest role a token of scope acts with ("" for an
// unknown scope: nothing).
func ScopeCap(scope string) model.Role {
	switch scope {
	case ScopeRead:
		return model.RoleViewer
	case ScopeOperate:
		return model.RoleOperator
	}
	return ""
}

// capRole is role held to limit.
func capRole(role, limit model.Role) model.Role {
	if !limit.Valid() || !role.Valid() {
		return ""
	}
	if role.AtLeast(limit) {
		return limit
	}
	return role
}

// TokenRequest is what a person asks for in a new token.
type TokenRequest struct {
	Name  string
	Scope string
	TTL   time.Duration
}

// Check says what is wrong with q, one sentence per problem.
func (q TokenRequest) Check() error {
	var errs []error
	name := strings.TrimSpace(q.Name)
	switch {
	case name == "":
		errs = append(errs, errors.New("name the token (what uses it: \"status page\", \"ci drills\")"))
	case len(name) > 64:
		errs = append(errs, errors.New("the token's name is longer than 64 characters"))
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		errs = append(errs, errors.New("the token's name has characters that are not printable"))
	}
	if ScopeCap(q.Scope) == "" {
		errs = append(errs, fmt.Errorf("scope %q: want %q or %q", q.Scope, ScopeRead, ScopeOperate))
	}
	if q.TTL < MinTokenTTL || q.TTL > MaxTokenTTL {
		errs = append(errs, fmt.Errorf("a token expires within %d days (and lives at least an hour)", int(MaxTokenTTL.Hours()/24)))
	}
	return errors.Join(errs...)
}

// ErrTokenRequest wraps what Check refuses.
var ErrTokenRequest = errors.New("token request refused")

// ErrTooManyTokens: the person holds MaxLiveTokens live tokens already.
var ErrTooManyTokens = fmt.Errorf("you hold %d live API tokens: revoke one you no longer use first", MaxLiveTokens)

// CreateToken makes a token for owner as q asks, at now, audited as
// owner; the token is returned once and never stored.
func CreateToken(ctx context.Context, st *storage.Store, rec *audit.Recorder, owner string, q TokenRequest, now time.Time) (string, storage.APIToken, error) {
	if err := q.Check(); err != nil {
		return "", storage.APIToken{}, fmt.Errorf("%w: %w", ErrTokenRequest, err)
	}
	mine, err := st.APITokens(ctx, owner, 10*MaxLiveTokens)
	if err != nil {
		return "", storage.APIToken{}, err
	}
	live := 0
	for _, t := range mine {
		if t.Live(now) {
			live++
		}
	}
	if live >= MaxLiveTokens {
		return "", storage.APIToken{}, ErrTooManyTokens
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	t := storage.APIToken{Prefix: token[:len(TokenPrefix)+6], User: model.CanonicalName(owner), Name: strings.TrimSpace(q.Name),
		Scope: q.Scope, CreatedMs: now.UnixMilli(), ExpiresMs: now.Add(q.TTL).UnixMilli()}
	details := map[string]any{"name": t.Name, "scope": t.Scope, "prefix": t.Prefix, "expires": time.UnixMilli(t.ExpiresMs).UTC()}
	_, err = rec.With(ctx, t.User, audit.TokenCreate, "user:"+t.User, details, func(e model.AuditEntry) (model.AuditEntry, error) {
		var err error
		t.ID, e, err = st.CreateAPITokenAudited(ctx, t, token, e)
		return e, err
	})
	if err != nil {
		return "", storage.APIToken{}, err
	}
	return token, t, nil
}

// RevokeToken revokes token id for who: their own, or anyone's for an
// admin. Another person's token is, to anyone else, not there.
func RevokeToken(ctx context.Context, st *storage.Store, rec *audit.Recorder, who model.Principal, id int64, now time.Time) error {
	t, err := st.APIToken(ctx, id)
	if err != nil {
		return err
	}
	if !strings.EqualFold(t.User, who.Name) && !who.AtLeast(model.RoleAdmin) {
		return fmt.Errorf("storage: API token %d: %w", id, storage.ErrNotFound)
	}
	details := map[string]any{"id": t.ID, "name": t.Name, "scope": t.Scope, "prefix": t.Prefix, "owner": t.User}
	_, err = rec.With(ctx, who.Name, audit.TokenRevoke, "user:"+t.User, details, func(e model.AuditEntry) (model.AuditEntry, error) {
		return st.RevokeAPITokenAudited(ctx, id, who.Name, now.UnixMilli(), e)
	})
	return err
}

// TokenUse is who a request's token acts for.
type TokenUse struct {
	Token storage.APIToken
	// Principal is the owner with their role capped by the scope.
	Principal model.Principal
	// OwnerRole is the owner's own role (to tell a scope refusal from a
	// role refusal).
	OwnerRole model.Role
}

// ErrBadToken: the token is unknown, expired, revoked, or its owner's
// account is gone or disabled; it wraps which (storage's errors).
var ErrBadToken = errors.New("the API token is not valid")

// Authenticate is who token acts for at now. A refusal is audited (the
// token's prefix when it is one of ours, never the token) and wraps
// ErrBadToken; the client ctx carries is named in the record.
func Authenticate(ctx context.Context, st *storage.Store, rec *audit.Recorder, token string, now time.Time) (TokenUse, error) {
	t, u, err := st.APITokenUser(ctx, token, now)
	if err == nil {
		role := capRole(u.Role, ScopeCap(t.Scope))
		return TokenUse{Token: t, Principal: model.Principal{Name: u.Name, Role: role}, OwnerRole: u.Role}, nil
	}
	if !errors.Is(err, storage.ErrNoToken) && !errors.Is(err, storage.ErrTokenExpired) && !errors.Is(err, storage.ErrTokenRevoked) {
		return TokenUse{}, err // the database failed: not the token's fault, and not audited as such
	}
	actor, subject, details := "anonymous", "api", map[string]any{"why": err.Error()}
	if t.ID != 0 {
		actor, subject = t.User, "user:"+t.User
		details["id"], details["prefix"], details["name"] = t.ID, t.Prefix, t.Name
	}
	if _, aerr := rec.Record(ctx, actor, audit.TokenDenied, subject, details); aerr != nil {
		return TokenUse{}, errors.Join(fmt.Errorf("%w: %w", ErrBadToken, err), aerr)
	}
	return TokenUse{}, fmt.Errorf("%w: %w", ErrBadToken, err)
}

// DeniedScope audits a request refused because its token's scope (or its
// owner's role) is too weak for it.
func DeniedScope(ctx context.Context, rec *audit.Recorder, use TokenUse, method, path string, need model.Role) error {
	_, err := rec.Record(ctx, use.Principal.Name, audit.TokenDenied, "user:"+use.Principal.Name, map[string]any{
		"id": use.Token.ID, "prefix": use.Token.Prefix, "name": use.Token.Name, "scope": use.Token.Scope,
		"why": "needs the " + string(need) + " role", "request": method + " " + path})
	return err
}

type tokenKey struct{}

// WithToken returns ctx carrying the token a request authenticated with.
func WithToken(ctx context.Context, use TokenUse) context.Context {
	return context.WithValue(ctx, tokenKey{}, use)
}

// TokenFrom is the token ctx carries; false for a request without one.
func TokenFrom(ctx context.Context) (TokenUse, bool) {
	use, ok := ctx.Value(tokenKey{}).(TokenUse)
	return use, ok
}
