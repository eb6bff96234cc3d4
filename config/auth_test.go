package config

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

const minimal = `
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
`

func TestAuthDefaults(t *testing.T) {
	c, err := Parse("min.yaml", strings.NewReader(minimal))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Auth
	if a.Mode != AuthLocal || a.InsecureCookie || a.IdleTimeout.D() != 30*time.Minute || a.AbsoluteTimeout.D() != 12*time.Hour ||
		a.LoginMaxFailures != 5 || a.LoginFailureWindow.D() != 5*time.Minute || a.UserHeader != "X-Forwarded-User" ||
		a.GroupsHeader != "X-Forwarded-Groups" || len(a.TrustedPrefixes()) != 0 {
		t.Fatalf("auth defaults = %+v", a)
	}
}

func TestAuthProxy(t *testing.T) {
	c, err := Parse("proxy.yaml", strings.NewReader(minimal+`
auth:
  mode: proxy
  trusted_proxies: [10.0.0.0/8, 192.168.1.7, "fd00::/8"]
  user_header: X-Auth-Request-User
  group_roles: {dr-admins: admin, sre: operator}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8")}
	got := c.Auth.TrustedPrefixes()
	if len(got) != len(want) {
		t.Fatalf("prefixes = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("prefixes = %v, want %v", got, want)
		}
	}
	if c.Auth.UserHeader != "X-Auth-Request-User" || c.Auth.GroupRoles["sre"] != "operator" {
		t.Fatalf("auth = %+v", c.Auth)
	}
}

func TestAuthProblems(t *testing.T) {
	_, err := Parse("bad.yaml", strings.NewReader(minimal+`
auth:
  mode: ldap
  idle_timeout: 24h
  absolute_timeout: 1h
  login_max_failures: -1
  trusted_proxies: [10.0.0.0/33, proxy.example]
  user_header: "X User"
  group_roles: {ops: root}
  public_url: "drconsole.example.com"
`))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{
		`bad.yaml: auth.mode: "ldap": want local, proxy or oidc`,
		`bad.yaml: auth.idle_timeout: 24h0m0s is longer than absolute_timeout 1h0m0s`,
		`bad.yaml: auth.login_max_failures: must be at least 1`,
		`bad.yaml: auth.trusted_proxies[0]: "10.0.0.0/33" is not an IP address or CIDR`,
		`bad.yaml: auth.trusted_proxies[1]: "proxy.example" is not an IP address or CIDR`,
		`bad.yaml: auth.user_header: "X User" is not an HTTP header name`,
		`bad.yaml: auth.group_roles.ops: "root": want viewer, operator or admin`,
		`bad.yaml: auth.public_url: "drconsole.example.com": want an http(s) URL`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in\n%v", want, err)
		}
	}

	// Proxy mode without a trusted proxy would let anyone name themselves.
	_, err = Parse("p.yaml", strings.NewReader(minimal+"auth: {mode: proxy}\n"))
	if err == nil || !strings.Contains(err.Error(), "auth.trusted_proxies: proxy mode needs the proxy's address") {
		t.Fatalf("proxy without trusted_proxies: %v", err)
	}
}

func TestAuditAnchorConfig(t *testing.T) {
	_, err := Parse("a.yaml", strings.NewReader(minimal+`
audit_anchor: {file: /var/lib/drconsole/drconsole.db, url: "ftp://x", interval: 10s}
`))
	for _, want := range []string{
		`a.yaml: audit_anchor.url: "ftp://x": want an http(s) URL`,
		`a.yaml: audit_anchor.file: "/var/lib/drconsole/drconsole.db": the anchor belongs outside`,
		`a.yaml: audit_anchor.interval: 10s: at least 1m`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in\n%v", want, err)
		}
	}
	c, err := Parse("ok.yaml", strings.NewReader(minimal+"audit_anchor: {file: /srv/anchors/drconsole.txt}\n"))
	if err != nil || c.AuditAnchor.Interval.D() != time.Hour {
		t.Fatalf("defaults: %v %+v", err, c.AuditAnchor)
	}
}

func TestAuthOIDC(t *testing.T) {
	secret := t.TempDir() + "/secret"
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Parse("oidc.yaml", strings.NewReader(minimal+`
auth:
  mode: oidc
  public_url: https://drconsole.example.com/
  group_roles: {dr-admins: admin}
  oidc: {issuer: "https://login.example.com/realms/ops", client_id: drconsole, client_secret_file: "`+secret+`"}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Auth.OIDC
	if o.ClientSecret != "s3cret" || o.RedirectURL != "https://drconsole.example.com/auth/callback" || o.Name != "SSO" ||
		o.UsernameClaim != "preferred_username" || o.GroupsClaim != "groups" || strings.Join(o.Scopes, " ") != "openid profile email groups" ||
		!*o.EndSession {
		t.Fatalf("oidc = %+v", o)
	}

	_, err = Parse("bad.yaml", strings.NewReader(minimal+`
auth:
  mode: oidc
  oidc: {issuer: "http://login.example.com", client_secret: a, client_secret_file: /nonexistent, scopes: [profile]}
`))
	for _, want := range []string{
		`bad.yaml: auth.oidc.issuer: "http://login.example.com": want the provider's https URL`,
		`bad.yaml: auth.oidc.client_id: required`,
		`bad.yaml: auth.oidc: set client_secret or client_secret_file, not both`,
		`bad.yaml: auth.oidc.redirect_url: required, or set auth.public_url`,
		`bad.yaml: auth.oidc.scopes: [profile]: must include openid`,
		`bad.yaml: auth.group_roles: oidc mode needs at least one group mapped`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in\n%v", want, err)
		}
	}
	_, err = Parse("bad2.yaml", strings.NewReader(minimal+`
auth:
  mode: oidc
  group_roles: {x: viewer}
  oidc: {issuer: "http://127.0.0.1:5556/dex", client_id: c, client_secret_file: /nonexistent/secret, redirect_url: "https://drconsole.example.com/callback"}
`))
	for _, want := range []string{
		`bad2.yaml: auth.oidc.client_secret_file: cannot read`,
		`bad2.yaml: auth.oidc.redirect_url: "https://drconsole.example.com/callback": want the console's address + /auth/callback`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in\n%v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "auth.oidc.issuer") {
		t.Errorf("a loopback http issuer (a provider under test) is refused: %v", err)
	}
}
