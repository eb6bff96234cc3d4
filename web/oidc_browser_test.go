package web_test

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A person opens the console, presses "Sign in with Test IdP", logs in on
// the provider's page and is back where they were going, signed in with
// their group's role; signing out ends the session here and at the
// provider. The console is on localhost and the provider on 127.0.0.1:
// two sites, as in production, so the state cookie must survive the
// provider's cross-site redirect back (SameSite=Lax).
func TestBrowserOIDCSignInAndOut(t *testing.T) {
	t.Parallel()
	p := startIdP(t, true)
	p.user("Alice", "engineering", "sre")
	srv := httptest.NewUnstartedServer(nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://localhost:" + port
	auth := p.auth(base)
	auth.InsecureCookie = true // plain http in the test
	s := newAuthServer(t, auth)
	srv.Config.Handler = s.h
	srv.Start()
	t.Cleanup(srv.Close)

	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/audit?action=login"),
		chromedp.WaitVisible(chromedp.ID("sign-in-sso")),
		chromedp.Click(chromedp.ID("sign-in-sso")),
		// The provider's login page.
		chromedp.WaitVisible(chromedp.ID("idp-user")),
		chromedp.SendKeys(chromedp.ID("idp-user"), "Alice"),
		chromedp.Click(chromedp.ID("idp-login")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)))
	if err != nil {
		t.Fatalf("signing in through the provider: %v\n%s", err, s.logs)
	}
	user, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="signed-in-user"]`)))
	role, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="signed-in-role"]`)))
	url, _ := chromedp.Run(ctx, chromedp.Location())
	if user != "alice" || role != "operator" || url != base+"/audit?action=login" {
		t.Fatalf("back at %s as %q (%q), want alice the operator at /audit?action=login", url, user, role)
	}
	table, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="audit-table"] tbody`)))
	if err != nil || !strings.Contains(table, "alice") {
		t.Fatalf("the audit page %q (%v) lacks alice's sign-in", table, err)
	}

	// Sign out: here, then at the provider.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("idp-logged-out"))); err != nil {
		t.Fatalf("signing out: %v", err)
	}
	p.mu.Lock()
	logouts := p.logouts
	p.mu.Unlock()
	if len(logouts) != 1 || logouts[0].Get("id_token_hint") == "" || logouts[0].Get("post_logout_redirect_uri") != base+"/login" {
		t.Fatalf("the provider's logout got %v", logouts)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.ID("sign-in-sso"))); err != nil {
		t.Fatalf("after signing out /audit: %v", err)
	}
	if url, _ = chromedp.Run(ctx, chromedp.Location()); !strings.HasPrefix(url, base+"/login?next=") {
		t.Fatalf("after signing out /audit went to %s, want the sign-in page", url)
	}
}
