package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Auth is how people sign in to the console.
type Auth struct {
	// Mode is "local" (accounts in the database, a login form, server-side
	// sessions) or "proxy" (a trusted reverse proxy such as oauth2-proxy
	// signs people in and names them in a header). Default local.
	Mode string `yaml:"mode"`
	// InsecureCookie drops the Secure flag of the session cookie so it
	// works over plain http. Only for the sandbox on 127.0.0.1.
	InsecureCookie bool `yaml:"insecure_cookie"`
	// IdleTimeout ends a session nobody used for this long (default 30m);
	// AbsoluteTimeout ends any session this long after sign-in (default 12h).
	IdleTimeout     Duration `yaml:"idle_timeout"`
	AbsoluteTimeout Duration `yaml:"absolute_timeout"`
	// LoginMaxFailures failed sign-ins within LoginFailureWindow, per
	// client address and per name+address, lock sign-in for the rest of
	// the window (defaults 5 and 5m); per name alone they only slow it.
	LoginMaxFailures   int      `yaml:"login_max_failures"`
	LoginFailureWindow Duration `yaml:"login_failure_window"`
	// TrustedProxies are the addresses (CIDR or single IP) of reverse
	// proxies in front of the console. Only requests from them may name
	// the user (proxy mode) or the client address (X-Forwarded-For).
	TrustedProxies []string `yaml:"trusted_proxies"`
	// UserHeader names the user in proxy mode (default X-Forwarded-User).
	UserHeader string `yaml:"user_header"`
	// GroupsHeader carries the user's groups, comma separated, in proxy
	// mode (default X-Forwarded-Groups); GroupRoles maps a group to a role.
	// A user listed in the users table gets that role instead.
	GroupsHeader string            `yaml:"groups_header"`
	GroupRoles   map[string]string `yaml:"group_roles"`
	// PublicURL is the address people use for the console
	// (https://drconsole.example.com). Requests naming any other host are
	// refused (DNS rebinding), except IP addresses and localhost, which a
	// rebinding page cannot make a browser send. Unset: only those.
	PublicURL string `yaml:"public_url"`

	trusted []netip.Prefix
}

// Auth modes.
const (
	AuthLocal = "local"
	AuthProxy = "proxy"
)

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
	default:
		bad("auth.mode", "%q: want local or proxy", a.Mode)
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
