package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/drconsole/drconsole/config"
)

func testOIDC(t *testing.T) (*OIDC, *time.Time) {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	cfg := config.Auth{Mode: config.AuthOIDC, PublicURL: "https://drconsole.example.com",
		OIDC: config.OIDC{Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret}}
	cfg.ApplyDefaults()
	o := NewOIDC(cfg.OIDC, map[string]string{"sre": "operator"})
	now := time.Now()
	o.Now = func() time.Time { return now }
	return o, &now
}

func reason(err error) string {
	var r *Refused
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

// A sign-in's state works once, and only within PendingTTL.
func TestOIDCPendingState(t *testing.T) {
	o, now := testOIDC(t)
	ctx := context.Background()
	_, state, binding, err := o.Start(ctx, "/audit", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Pending(state, binding) || o.Pending(state, "") || o.Pending(state, state) {
		t.Fatal("Pending does not hold the state to its binding")
	}
	*now = now.Add(PendingTTL + time.Second)
	if o.Pending(state, binding) {
		t.Fatal("an expired sign-in is pending")
	}
	if _, err := o.Finish(ctx, state, binding, "code"); !strings.Contains(reason(err), "took longer than 10m0s") {
		t.Fatalf("late callback: %v", err)
	}
	if _, err := o.Finish(ctx, state, binding, "code"); !strings.Contains(reason(err), "unknown or already used") {
		t.Fatalf("second use of a state: %v", err)
	}
	if _, err := o.Finish(ctx, "never-issued", binding, "code"); !strings.Contains(reason(err), "unknown or already used") {
		t.Fatalf("a state never issued: %v", err)
	}
	// The binding is not the state, and a state with another binding (or
	// with the state itself as cookie) is refused and used up.
	_, state, binding, _ = o.Start(ctx, "/", "192.0.2.1")
	for _, b := range []string{state, "", binding + "x"} {
		if _, err := o.Finish(ctx, state, b, "code"); !strings.Contains(reason(err), "does not match this browser") {
			t.Fatalf("binding %q: %v", b, err)
		}
		_, state, binding, _ = o.Start(ctx, "/", "192.0.2.1")
	}
}

// A flood of sign-ins started and never finished stays bounded: the
// oldest make way.
func TestOIDCPendingBounded(t *testing.T) {
	o, now := testOIDC(t)
	ctx := context.Background()
	_, first, _, _ := o.Start(ctx, "/", "192.0.2.1")
	for range maxPending + 10 {
		*now = now.Add(time.Millisecond)
		if _, _, _, err := o.Start(ctx, "/", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(o.pending); n > maxPending {
		t.Fatalf("%d sign-ins pending, want at most %d", n, maxPending)
	}
	if _, ok := o.pending[first]; ok {
		t.Fatal("the oldest sign-in survived the flood")
	}
}

// The user name: the configured claim, else a verified email; checked
// before lowering, and never an unverified email.
func TestOIDCUsername(t *testing.T) {
	o, _ := testOIDC(t)
	for _, tc := range []struct {
		claims map[string]any
		want   string // "" refused
	}{
		{map[string]any{"preferred_username": " Alice ", "email": "x@example.com", "email_verified": true}, "alice"},
		{map[string]any{"email": "Bob@Example.com", "email_verified": true}, "bob@example.com"},
		{map[string]any{"preferred_username": "", "email": "bob@example.com", "email_verified": true}, "bob@example.com"},
		{map[string]any{"email": "bob@example.com", "email_verified": false}, ""},
		{map[string]any{"email": "bob@example.com"}, ""},
		{map[string]any{"email": "bob@example.com", "email_verified": "true"}, ""}, // a string is not a verification
		{map[string]any{"preferred_username": "\u212Aate"}, ""},                    // Kelvin sign: would lower to kate
		{map[string]any{"preferred_username": "cli:root"}, ""},
		{map[string]any{"preferred_username": strings.Repeat("a", 65)}, ""},
		{map[string]any{"preferred_username": 42}, ""},
		{map[string]any{}, ""},
	} {
		got, err := o.username(tc.claims)
		if got != tc.want || (tc.want == "") != (reason(err) != "") {
			t.Errorf("username(%v) = %q, %v; want %q", tc.claims, got, err, tc.want)
		}
	}
}

func TestOIDCGroupsClaim(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
		ok   bool
	}{
		{nil, "", true}, {"sre", "sre", true}, {[]any{"a", "b"}, "a,b", true}, {[]any{"a", 1.0}, "", false}, {map[string]any{}, "", false},
	} {
		got, err := stringsClaim(map[string]any{"groups": tc.v}, "groups")
		if strings.Join(got, ",") != tc.want || (err == nil) != tc.ok {
			t.Errorf("groups %v = %v, %v", tc.v, got, err)
		}
	}
	roles := map[string]string{"eng": "viewer", "sre": "operator", "dr-admins": "admin"}
	for groups, want := range map[string]string{"eng,sre": "operator", " dr-admins ,eng": "admin", "x,y": "", "": ""} {
		if got := RoleForGroups(roles, strings.Split(groups, ",")); string(got) != want {
			t.Errorf("RoleForGroups(%q) = %q, want %q", groups, got, want)
		}
	}
}

// end_session off, or no end_session_endpoint: no provider sign-out.
func TestOIDCLogoutURLOff(t *testing.T) {
	o, _ := testOIDC(t)
	if u := o.LogoutURL(context.Background(), "tok"); u != "" {
		t.Fatalf("mockoidc names no end_session_endpoint, yet LogoutURL = %q", u)
	}
	off := false
	o.cfg.EndSession = &off
	o.endSession = "https://idp.example/logout"
	if u := o.LogoutURL(context.Background(), "tok"); u != "" {
		t.Fatalf("end_session off, yet LogoutURL = %q", u)
	}
	on := true
	o.cfg.EndSession = &on
	if u := o.LogoutURL(context.Background(), ""); u != "https://idp.example/logout?client_id="+o.cfg.ClientID+
		"&post_logout_redirect_uri=https%3A%2F%2Fdrconsole.example.com%2Flogin" {
		t.Fatalf("LogoutURL without a hint = %q", u)
	}
}

// With username_claim email, the email is the name: only a verified one
// (email_verified true) counts, or anyone could type boss@… at the
// provider and lock the real boss out of the name.
func TestOIDCUnverifiedEmailName(t *testing.T) {
	o, _ := testOIDC(t)
	o.cfg.UsernameClaim = "email"
	for _, tc := range []struct {
		claims map[string]any
		want   string // "" refused
	}{
		{map[string]any{"email": "Boss@Example.com", "email_verified": true}, "boss@example.com"},
		{map[string]any{"email": "boss@example.com", "email_verified": false}, ""},
		{map[string]any{"email": "boss@example.com"}, ""},                           // absent: unverified
		{map[string]any{"email": "boss@example.com", "email_verified": "true"}, ""}, // a string is no verification
	} {
		got, err := o.username(tc.claims)
		if got != tc.want || (tc.want == "") != strings.Contains(reason(err), "not verified the email") {
			t.Errorf("username(%v) = %q, %v; want %q", tc.claims, got, err, tc.want)
		}
	}
}

// A flood of starts pushes out only its own source's oldest: one source
// holds at most maxPendingPerSource; many sources filling maxPending push
// out the oldest of whoever holds the most, never a person's one
// sign-in (issue 29, finding 6: 11,000 starts cancelled everyone's).
func TestOIDCPendingPerSource(t *testing.T) {
	o, now := testOIDC(t)
	ctx := context.Background()
	_, mine, binding, _ := o.Start(ctx, "/", "203.0.113.7")
	for range 11_000 {
		*now = now.Add(time.Millisecond)
		o.Start(ctx, "/", "198.51.100.1")
	}
	if n := len(o.bySource["198.51.100.1"]); n != maxPendingPerSource || len(o.pending) != maxPendingPerSource+1 {
		t.Fatalf("the flooding source holds %d sign-ins (%d in all), want %d", n, len(o.pending), maxPendingPerSource)
	}
	// Many sources (an IPv6 /64 is one): 400 × 32 starts, past maxPending.
	for i := range 400 {
		for j := range maxPendingPerSource {
			*now = now.Add(time.Millisecond)
			o.Start(ctx, "/", SourceKey(fmt.Sprintf("2001:db8:%x::%x", i, j+1)))
		}
	}
	if len(o.pending) > maxPending {
		t.Fatalf("%d sign-ins pending, want at most %d", len(o.pending), maxPending)
	}
	if !o.Pending(mine, binding) {
		t.Fatal("a person's sign-in was pushed out by floods from elsewhere")
	}
	if n := len(o.bySource["2001:db8:1::/64"]); n == 0 || n > maxPendingPerSource {
		t.Fatalf("a /64 holds %d sign-ins", n)
	}
	// As many sources as there is room for, one start each.
	for i := range maxPending + 100 {
		*now = now.Add(time.Millisecond)
		o.Start(ctx, "/", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255))
	}
	if len(o.pending) > maxPending || !o.Pending(mine, binding) {
		t.Fatalf("%d pending; mine survived: %v", len(o.pending), o.Pending(mine, binding))
	}
}
