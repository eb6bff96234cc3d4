package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/safefile"
)

// Auth is how people sign in to the console.
type Auth struct {
	// Mode is "local" (accounts in the database, a login form, server-side
	// sessions), "proxy" (a trusted reverse proxy such as oauth2-proxy
	// signs people in and names them in a header) or "oidc" (the console
	// signs people in at an OpenID Connect provider, see OIDC; local
	// accounts with a password keep working for break-glass). Default local.
	Mode AuthMode `yaml:"mode"`
	// InsecureCookie drops the Secure flag of the session cookie so it
	// works over plain http. Only for the sandbox on 127.0.0.1.
	InsecureCookie bool `yaml:"insecure_cookie"`
	// IdleTimeout ends a session nobody used for this long (default 30m);
	// AbsoluteTimeout ends any session this long after sign-in (default 12h).
	IdleTimeout     Duration `yaml:"idle_timeout"`
	AbsoluteTimeout Duration `yaml:"absolute_timeout"`
	// LoginMaxFailures failed sign-ins within LoginFailureWindow for a
	// name from one client address lock that name there for the rest of
	// the window (defaults 5 and 5m); per name alone and per address alone
	// they only slow sign-in, so nobody behind a shared address is locked
	// out by someone else. Failed single sign-on callbacks count per
	// address the same way.
	LoginMaxFailures   int      `yaml:"login_max_failures"`
	LoginFailureWindow Duration `yaml:"login_failure_window"`
	// TrustedProxies are the addresses (CIDR or single IP) of reverse
	// proxies in front of the console. Only requests from them may name
	// the user (proxy mode) or the client address (X-Forwarded-For).
	TrustedProxies []string `yaml:"trusted_proxies"`
	// UserHeader names the user in proxy mode (default X-Forwarded-User).
	UserHeader string `yaml:"user_header"`
	// GroupsHeader carries the user's groups, comma separated, in proxy
	// mode (default X-Forwarded-Groups). GroupRoles maps a group to a role
	// in proxy and oidc mode (the strongest wins). In proxy mode a user
	// listed in the users table gets that role instead; in oidc mode the
	// groups decide at every sign-in (identity.OIDC).
	GroupsHeader string            `yaml:"groups_header"`
	GroupRoles   map[string]string `yaml:"group_roles"`
	// OIDC configures mode oidc.
	OIDC OIDC `yaml:"oidc"`
	// PublicURL is the address people use for the console
	// (https://drconsole.example.com). Requests naming any other host are
	// refused (DNS rebinding), except IP addresses and localhost, which a
	// rebinding page cannot make a browser send. Unset: only those.
	PublicURL string `yaml:"public_url"`

	trusted []netip.Prefix
}

// Auth modes.
const (
	AuthLocal AuthMode = "local"
	AuthProxy AuthMode = "proxy"
	AuthOIDC  AuthMode = "oidc"
)

// OIDC is the OpenID Connect provider of mode oidc: authorization code
// flow with PKCE, the ID token's claims naming the user and their groups.
type OIDC struct {
	// Name is the provider as the sign-in button names it ("Sign in with
	// Okta"; default SSO).
	Name string `yaml:"name"`
	// Issuer is the provider's issuer URL; its discovery document is
	// Issuer + "/.well-known/openid-configuration".
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecret, or ClientSecretFile holding it (read at start); both
	// empty: a public client (PKCE only).
	ClientSecret     string `yaml:"client_secret"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// RedirectURL is where the provider sends the browser back (default
	// public_url + /auth/callback); register it at the provider.
	RedirectURL string `yaml:"redirect_url"`
	// Scopes asked for (default openid, profile, email, groups).
	Scopes []string `yaml:"scopes"`
	// UsernameClaim names the user (default preferred_username; when it is
	// absent, a verified email instead). GroupsClaim lists their groups
	// (default groups), mapped to roles by auth.group_roles.
	UsernameClaim string `yaml:"username_claim"`
	GroupsClaim   string `yaml:"groups_claim"`
	// EndSession: on sign-out, also end the provider's session
	// (RP-initiated logout) when its discovery document names an
	// end_session_endpoint. Default true.
	EndSession *bool `yaml:"end_session"`
	// AdoptExistingAccounts lets a provider identity take over an account
	// of its name made here without a password (users add --no-password,
	// the admin page in proxy mode). Default false: such an account was
	// someone's before the provider vouched for anyone, so a provider user
	// who merely shares its name is refused. Accounts with a password are
	// never taken over.
	AdoptExistingAccounts bool `yaml:"adopt_existing_accounts"`
}

// CallbackPath is where the provider sends the browser back.
const CallbackPath = "/auth/callback"

// ApplyDefaults fills in unset auth settings; Normalize calls it, and so
// does the web server for a Config built in code.
func (a *Auth) ApplyDefaults() {
	if a.Mode == "" {
		a.Mode = AuthLocal
	}
	setDefault(&a.IdleTimeout, 30*time.Minute)
	setDefault(&a.AbsoluteTimeout, 12*time.Hour)
	setDefault(&a.LoginFailureWindow, 5*time.Minute)
	if a.LoginMaxFailures == 0 {
		a.LoginMaxFailures = 5
	}
	if a.UserHeader == "" {
		a.UserHeader = "X-Forwarded-User"
	}
	if a.GroupsHeader == "" {
		a.GroupsHeader = "X-Forwarded-Groups"
	}
	o := &a.OIDC
	if o.Name == "" {
		o.Name = "SSO"
	}
	if o.RedirectURL == "" && a.PublicURL != "" {
		o.RedirectURL = strings.TrimSuffix(a.PublicURL, "/") + CallbackPath
	}
	if len(o.Scopes) == 0 {
		o.Scopes = []string{"openid", "profile", "email", "groups"}
	}
	if o.UsernameClaim == "" {
		o.UsernameClaim = "preferred_username"
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	if o.EndSession == nil {
		yes := true
		o.EndSession = &yes
	}
}

// PublicHost is the host name of PublicURL, lower case ("" when unset).
func (a *Auth) PublicHost() (string, error) {
	if a.PublicURL == "" {
		return "", nil
	}
	u, err := url.Parse(a.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return "", fmt.Errorf("%q: want an http(s) URL such as https://drconsole.example.com", a.PublicURL)
	}
	return strings.ToLower(u.Hostname()), nil
}

// TrustedPrefixes are TrustedProxies parsed; entries that do not parse
// (validation reports them) are left out.
func (a *Auth) TrustedPrefixes() []netip.Prefix {
	if a.trusted == nil {
		for _, s := range a.TrustedProxies {
			if p, err := ParsePrefix(s); err == nil {
				a.trusted = append(a.trusted, p)
			}
		}
	}
	return a.trusted
}

// ParsePrefix reads "10.0.0.0/8" or a single address ("10.1.2.3" is
// 10.1.2.3/32).
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// headerRE is an HTTP header field name (RFC 9110 token).
var headerRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

func (a *Auth) validate(bad func(key, format string, args ...any)) {
	switch a.Mode {
	case AuthLocal, AuthProxy:
	case AuthOIDC:
		a.OIDC.validate(a, bad)
	default:
		bad("auth.mode", "%q: want local, proxy or oidc", a.Mode)
	}
	if a.IdleTimeout <= 0 || a.AbsoluteTimeout <= 0 {
		bad("auth", "idle_timeout and absolute_timeout must be positive")
	} else if a.IdleTimeout > a.AbsoluteTimeout {
		bad("auth.idle_timeout", "%s is longer than absolute_timeout %s", a.IdleTimeout.D(), a.AbsoluteTimeout.D())
	}
	if a.LoginMaxFailures < 1 {
		bad("auth.login_max_failures", "must be at least 1")
	}
	if a.LoginFailureWindow <= 0 {
		bad("auth.login_failure_window", "must be positive")
	}
	a.trusted = nil
	for i, s := range a.TrustedProxies {
		if _, err := ParsePrefix(s); err != nil {
			bad(fmt.Sprintf("auth.trusted_proxies[%d]", i), "%q is not an IP address or CIDR (e.g. 10.0.0.0/8)", s)
		}
	}
	if a.Mode == AuthProxy && len(a.TrustedProxies) == 0 {
		bad("auth.trusted_proxies", "proxy mode needs the proxy's address: without it anyone could name themselves in %s", a.UserHeader)
	}
	for k, h := range map[string]string{"auth.user_header": a.UserHeader, "auth.groups_header": a.GroupsHeader} {
		if !headerRE.MatchString(h) {
			bad(k, "%q is not an HTTP header name", h)
		}
	}
	if a.PublicURL != "" {
		if _, err := a.PublicHost(); err != nil {
			bad("auth.public_url", "%v", err)
		}
	}
	for g, r := range a.GroupRoles {
		switch r {
		case "viewer", "operator", "admin":
		default:
			bad("auth.group_roles."+g, "%q: want viewer, operator or admin", r)
		}
	}
}

func (o *OIDC) validate(a *Auth, bad func(key, format string, args ...any)) {
	if u, err := url.Parse(o.Issuer); o.Issuer == "" || err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" ||
		u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		bad("auth.oidc.issuer", "%q: want the provider's https URL (http only on localhost), e.g. https://login.example.com/realms/ops", o.Issuer)
	}
	if o.ClientID == "" {
		bad("auth.oidc.client_id", "required: the client (application) id registered at the provider")
	}
	switch {
	case o.ClientSecret != "" && o.ClientSecretFile != "":
		bad("auth.oidc", "set client_secret or client_secret_file, not both")
	case o.ClientSecretFile != "":
		b, err := safefile.ReadFile(o.ClientSecretFile, safefile.SecretLimit)
		if err != nil {
			bad("auth.oidc.client_secret_file", "cannot read: %v", errors.Unwrap(err))
		}
		o.ClientSecret = strings.TrimRight(string(b), "\r\n")
	}
	if o.RedirectURL == "" {
		bad("auth.oidc.redirect_url", "required, or set auth.public_url (the default is public_url + %s)", CallbackPath)
	} else if u, err := url.Parse(o.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != CallbackPath {
		bad("auth.oidc.redirect_url", "%q: want the console's address + %s, e.g. https://drconsole.example.com%s", o.RedirectURL, CallbackPath, CallbackPath)
	}
	if !slices.Contains(o.Scopes, "openid") {
		bad("auth.oidc.scopes", "%v: must include openid", o.Scopes)
	}
	if len(a.GroupRoles) == 0 {
		bad("auth.group_roles", "oidc mode needs at least one group mapped to a role: a user without a mapped group is refused")
	}
}

// isLoopback: localhost or a loopback address (a provider under test).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
