package identity

// OIDC sign-in: the authorization code flow with PKCE (S256), state and
// nonce, at the provider of auth.oidc. The state, nonce and PKCE verifier
// of a sign-in in progress stay here, in memory, for at most
// PendingTTL and are taken out on first use: a callback URL replayed, or
// one from a sign-in this process did not start, finds nothing. Each is
// also bound to the browser that started it: Start makes a second secret,
// the binding, which the web layer puts in a short-lived cookie and which
// never appears in a URL (the state does: at the provider, in its logs,
// in the browser's history); only its hash is kept here, and the callback
// must bring both, so a callback planted in someone else's browser (login
// CSRF), or a cookie not made by this server for this sign-in, is refused.
//
// Pending sign-ins are bounded per source address (SourceKey) and in
// all: a flood of starts from one source pushes out only that source's
// oldest, never another's.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// PendingTTL is how long a sign-in may take at the provider.
const PendingTTL = 10 * time.Minute

// maxPending bounds the sign-ins in progress, and maxPendingPerSource
// those of one source: past it, a source's new start pushes out its own
// oldest. Past maxPending (many sources), a start pushes out the oldest
// of the source holding the most (of equals, the newest), so a person's
// sign-in outlives a flood from elsewhere.
const (
	maxPending          = 10_000
	maxPendingPerSource = 32
)

// SSOCreator is the created_by of accounts made at a first OIDC sign-in
// (not a valid user name, so no person "created" them).
const SSOCreator = "sso:oidc"

// OIDC signs people in at an OpenID Connect provider. The provider is
// discovered at the first sign-in, not at start: a console whose provider
// is down still starts, and its break-glass local accounts still work.
type OIDC struct {
	cfg        config.OIDC
	groupRoles map[string]string
	// Client makes the requests to the provider (discovery, keys, token
	// exchange); nil: one with a 10 s timeout.
	Client *http.Client
	// Now is the clock for pending sign-ins and token expiry; nil: time.Now.
	Now func() time.Time

	mu         sync.Mutex
	provider   *oidc.Provider
	endSession string
	pending    map[string]pendingLogin
	bySource   map[string][]pendingRef // by source, oldest first
	seq        uint64                  // of the last start
	swept      time.Time               // when expired sign-ins were last dropped
}

// pendingRef is a pending sign-in's state and when it began (seq).
type pendingRef struct {
	state string
	seq   uint64
}

type pendingLogin struct {
	nonce, verifier, next string
	binding               [32]byte // SHA-256 of the browser's binding
	source                string
	expires               time.Time
}

// NewOIDC is the sign-in of auth.oidc, whose groups map to roles through
// groupRoles (auth.group_roles).
func NewOIDC(cfg config.OIDC, groupRoles map[string]string) *OIDC {
	return &OIDC{cfg: cfg, groupRoles: groupRoles, pending: map[string]pendingLogin{}, bySource: map[string][]pendingRef{}}
}

// Refused is a sign-in the console turns down; Reason goes to the audit
// log and, in plain words, to the person.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return "sign-in refused: " + e.Reason }

func refused(format string, args ...any) error { return &Refused{Reason: fmt.Sprintf(format, args...)} }

// Login is who the provider vouched for.
type Login struct {
	Name    string // canonical (model.CanonicalName)
	Role    model.Role
	Groups  []string
	Issuer  string // the provider's "iss"
	Subject string // the provider's "sub"
	IDToken string // raw, for id_token_hint at sign-out
	Next    string // where the sign-in started
	// AdoptExisting is auth.oidc.adopt_existing_accounts (Admit).
	AdoptExisting bool
}

func (o *OIDC) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *OIDC) ctx(ctx context.Context) context.Context {
	c := o.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	return oidc.ClientContext(ctx, c)
}

// discover reads the provider's discovery document once; a failure is
// not kept, so the next sign-in tries again.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	p := o.provider
	o.mu.Unlock()
	if p != nil {
		return p, nil
	}
	ctx, cancel := context.WithTimeout(o.ctx(ctx), 15*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the identity provider %s: %w", o.cfg.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := p.Claims(&extra); err != nil {
		return nil, fmt.Errorf("identity provider %s: discovery document: %w", o.cfg.Issuer, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.provider, o.endSession = p, extra.EndSession
	return p, nil
}

func (o *OIDC) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: o.cfg.RedirectURL, Scopes: o.cfg.Scopes}
}

// random is 256 bits, base64url.
func random() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Start begins a sign-in from source (the client's SourceKey) that
// returns to next (a local path the caller checked): the provider's
// authorization URL to send the browser to, the state, and the binding
// the caller gives the browser (a cookie) for the callback to bring back.
func (o *OIDC) Start(ctx context.Context, next, source string) (authURL, state, binding string, err error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", "", "", err
	}
	state, binding, nonce, verifier := random(), random(), random(), oauth2.GenerateVerifier()
	now := o.now()
	o.mu.Lock()
	o.makeRoom(now, source)
	o.pending[state] = pendingLogin{nonce: nonce, verifier: verifier, next: next, binding: sha256.Sum256([]byte(binding)),
		source: source, expires: now.Add(PendingTTL)}
	o.seq++
	o.bySource[source] = append(o.bySource[source], pendingRef{state, o.seq})
	o.mu.Unlock()
	return o.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), state, binding, nil
}

// makeRoom makes room for one more sign-in from source. o.mu is held.
func (o *OIDC) makeRoom(now time.Time, source string) {
	if len(o.bySource[source]) >= maxPendingPerSource {
		o.take(o.bySource[source][0].state)
	}
	if len(o.pending) < maxPending {
		return
	}
	if now.Sub(o.swept) >= time.Second { // a sweep per start would cost O(n) each
		o.swept = now
		for s, p := range o.pending {
			if now.After(p.expires) {
				o.take(s)
			}
		}
	}
	// The source holding the most; of equals, the one that began last, so
	// sign-ins already under way outlive a flood of one-start sources.
	for len(o.pending) >= maxPending {
		var most []pendingRef
		for _, refs := range o.bySource {
			if len(refs) > len(most) || len(refs) == len(most) && refs[0].seq > most[0].seq {
				most = refs
			}
		}
		o.take(most[0].state)
	}
}

// take removes state's sign-in and returns it. o.mu is held.
func (o *OIDC) take(state string) (pendingLogin, bool) {
	p, ok := o.pending[state]
	if !ok {
		return p, false
	}
	delete(o.pending, state)
	refs := slices.DeleteFunc(o.bySource[p.source], func(r pendingRef) bool { return r.state == state })
	if len(refs) == 0 {
		delete(o.bySource, p.source)
	} else {
		o.bySource[p.source] = refs
	}
	return p, true
}

// bound reports whether binding is p's.
func (p pendingLogin) bound(binding string) bool {
	h := sha256.Sum256([]byte(binding))
	return binding != "" && subtle.ConstantTimeCompare(h[:], p.binding[:]) == 1
}

// Pending reports whether state is a sign-in in progress that binding
// belongs to (a callback worth completing), without using it up.
func (o *OIDC) Pending(state, binding string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	p, ok := o.pending[state]
	return ok && p.bound(binding) && !o.now().After(p.expires)
}

// Finish completes the sign-in of state with the provider's code: the
// code is exchanged with the PKCE verifier, and the ID token is verified
// (signature, issuer, audience, expiry) and must carry this sign-in's
// nonce; binding must be the one Start gave this browser. The state is
// used up whatever happens. A *Refused error says why the person is not
// let in; the Login returned with it names them when the token was good.
func (o *OIDC) Finish(ctx context.Context, state, binding, code string) (Login, error) {
	o.mu.Lock()
	pl, ok := o.take(state)
	o.mu.Unlock()
	switch {
	case !ok:
		return Login{}, refused("unknown or already used sign-in state")
	case !pl.bound(binding):
		// Not the browser that started this sign-in, or a cookie someone
		// else set.
		return Login{}, refused("the sign-in state does not match this browser's (cookie missing or different)")
	case o.now().After(pl.expires):
		return Login{}, refused("the sign-in took longer than %s", PendingTTL)
	case code == "":
		return Login{}, refused("the provider sent no authorization code")
	}
	p, err := o.discover(ctx)
	if err != nil {
		return Login{}, err
	}
	tok, err := o.oauth(p).Exchange(o.ctx(ctx), code, oauth2.VerifierOption(pl.verifier))
	if err != nil {
		return Login{}, refused("the provider did not accept the authorization code: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Login{}, refused("the provider's token response holds no ID token")
	}
	idt, err := p.VerifierContext(o.ctx(ctx), &oidc.Config{ClientID: o.cfg.ClientID, Now: o.now}).Verify(ctx, raw)
	if err != nil {
		return Login{}, refused("ID token rejected: %v", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(pl.nonce)) != 1 {
		return Login{}, refused("ID token nonce does not match this sign-in (replayed token?)")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return Login{}, refused("ID token claims: %v", err)
	}
	l := Login{Issuer: idt.Issuer, Subject: idt.Subject, IDToken: raw, Next: pl.next, AdoptExisting: o.cfg.AdoptExistingAccounts}
	if l.Name, err = o.username(claims); err != nil {
		return Login{}, err
	}
	if l.Groups, err = stringsClaim(claims, o.cfg.GroupsClaim); err != nil {
		return l, err
	}
	if l.Role = RoleForGroups(o.groupRoles, l.Groups); l.Role == "" {
		return l, refused("none of %s's groups %v is mapped to a role (auth.group_roles)", l.Name, l.Groups)
	}
	return l, nil
}

// username reads the username claim, or a verified email when it is
// absent, checked before lowering like every other name (Unicode lowers
// the Kelvin sign to "k"). An email names nobody unless the provider
// says it verified it (email_verified true; absent is unverified), also
// when username_claim is email: an unverified email is whatever someone
// typed in at the provider, and would take the account of its real owner.
func (o *OIDC) username(claims map[string]any) (string, error) {
	claim := o.cfg.UsernameClaim
	raw, _ := claims[claim].(string)
	verified, _ := claims["email_verified"].(bool)
	if strings.TrimSpace(raw) == "" && verified {
		raw, _ = claims["email"].(string)
		claim = "email"
	}
	raw = strings.TrimSpace(raw)
	if claim == "email" && raw != "" && !verified {
		return "", refused("the provider has not verified the email %q, and an unverified email does not name an account "+
			"(ask your administrator to verify it at the provider)", clip(raw))
	}
	if raw == "" {
		return "", refused("the ID token has no %s claim and no verified email", o.cfg.UsernameClaim)
	}
	if !model.ValidName(raw) {
		return "", refused("%s %q is not a valid user name (letters, digits, . _ @ -; at most 64)", claim, clip(raw))
	}
	return model.CanonicalName(raw), nil
}

// stringsClaim reads a claim holding a list of strings, or one string.
// Absent is an empty list.
func stringsClaim(claims map[string]any, name string) ([]string, error) {
	switch v := claims[name].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, refused("the %s claim holds a %T, not a string", name, e)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, refused("the %s claim is a %T, not a list of strings", name, v)
	}
}

// RoleForGroups is the strongest role groupRoles gives any of groups
// ("" for none): auth.group_roles, shared by proxy and oidc mode.
func RoleForGroups(groupRoles map[string]string, groups []string) model.Role {
	var best model.Role
	for _, g := range groups {
		if r := model.Role(groupRoles[strings.TrimSpace(g)]); r.Rank() > best.Rank() {
			best = r
		}
	}
	return best
}

// Admit gives l an account, the kind sessions belong to. A first sign-in
// creates one without a password (audited user.create, created by
// SSOCreator); later ones set its role to what the groups say now (audited
// user.role when it changed; a raise is stamped on the account, see
// providerRole). Fail closed:
//   - a name that belongs to a local account (one with a password) is
//     refused, so a provider identity that happens to carry a break-glass
//     account's name never becomes that account; so is a disabled account;
//   - an account made here without a password is not taken over by a
//     provider identity of its name unless auth.oidc.adopt_existing_accounts
//     says so (adoptable);
//   - each name is tied to the provider identity (issuer and subject) that
//     first signed in with it (audited sso.identity). A name claimed by
//     another identity, or an identity coming back under a new name, is
//     refused: otherwise one person renamed at the provider would hold two
//     accounts and could approve their own failover.
func Admit(ctx context.Context, st *storage.Store, rec *audit.Recorder, l Login) error {
	if reserved(l.Name) {
		return refused("the name %s is reserved for the console's own audit records", l.Name)
	}
	linked, err := checkLink(ctx, st, l)
	if err != nil {
		return err
	}
	u, err := st.UserByName(ctx, l.Name)
	as := AuditAs(rec, l.Name)
	switch {
	case errors.Is(err, storage.ErrUnknownUser):
		err = CreateUser(ctx, st, as, l.Name, l.Role, "", SSOCreator)
	case err != nil:
	case u.PasswordHash != "":
		err = refused("%s is a local account (password sign-in); the provider's user of that name is not let in", l.Name)
	case u.Disabled:
		err = refused("account disabled")
	case !linked && !adoptable(u, l):
		err = refused("%s is an account made here (by %s), not at a sign-in through the provider; taking it over needs auth.oidc.adopt_existing_accounts: true", l.Name, u.CreatedBy)
	case u.Role != l.Role:
		err = providerRole(ctx, st, as, l.Name, u.Role, l.Role)
	}
	if err == nil && !linked {
		err = linkIdentity(ctx, st, rec, l)
	}
	return err
}

// identityKey names a provider identity in sso.identity records.
func identityKey(l Login) string { return "oidc:" + l.Issuer + "#" + l.Subject }

// checkLink reports whether l's name is already tied to l's identity, and
// refuses a name tied to another identity or an identity tied to another
// name.
func checkLink(ctx context.Context, st *storage.Store, l Login) (linked bool, err error) {
	if l.Subject == "" || l.Issuer == "" {
		return false, refused("the ID token names no subject")
	}
	key := identityKey(l)
	byName, err := st.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.SSOIdentity), Actor: l.Name})
	if err != nil {
		return false, err
	}
	for _, e := range byName {
		if e.Subject != key {
			return false, refused("the name %s belongs to another identity at the provider (%s); ask an administrator", l.Name, e.Subject)
		}
		linked = true
	}
	byID, err := st.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.SSOIdentity), Subject: key})
	if err != nil {
		return false, err
	}
	for _, e := range byID {
		if e.Subject == key && e.Actor != l.Name {
			return false, refused("this identity at the provider signed in before as %s, now as %s; ask an administrator", e.Actor, l.Name)
		}
	}
	return linked, nil
}

// LogoutURL is where to send the browser after its session here ended,
// to end its session at the provider too (RP-initiated logout), or "" when
// auth.oidc.end_session is off or the provider names no
// end_session_endpoint. idToken ("" if unknown) becomes id_token_hint.
func (o *OIDC) LogoutURL(ctx context.Context, idToken string) string {
	if o.cfg.EndSession != nil && !*o.cfg.EndSession {
		return ""
	}
	if _, err := o.discover(ctx); err != nil {
		return ""
	}
	o.mu.Lock()
	es := o.endSession
	o.mu.Unlock()
	u, err := url.Parse(es)
	if es == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	q := u.Query()
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	q.Set("client_id", o.cfg.ClientID)
	q.Set("post_logout_redirect_uri", o.PostLogoutURL())
	u.RawQuery = q.Encode()
	return u.String()
}

// PostLogoutURL is the console's sign-in page, on the origin of the
// redirect URL: register it at the provider as a post-logout redirect URI.
func (o *OIDC) PostLogoutURL() string {
	u, err := url.Parse(o.cfg.RedirectURL)
	if err != nil {
		return "/login"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/login"}).String()
}

// clip cuts an untrusted claim for a message.
func clip(s string) string {
	if len(s) > 128 {
		return strings.ToValidUTF8(s[:128], "")
	}
	return s
}
