package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/identity"
)

var tokenRE = regexp.MustCompile(`value="(` + identity.TokenPrefix + `[A-Za-z0-9_-]{43})"`)

// The tokens page: a viewer makes a read token, sees it once, uses it,
// revokes it; an operate token is refused to a viewer; an operator cannot
// touch an admin's token, an admin revokes anyone's.
func TestTokensPage(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	viewer := sessionCookie(t, c, "viewer")
	resp, page := postForm(t, c, viewer, "/account/tokens", url.Values{"name": {"status page"}, "scope": {"read"}, "days": {"7"}}, nil)
	m := tokenRE.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusCreated || m == nil {
		t.Fatalf("making a token: %d, token on the page: %v", resp.StatusCode, m != nil)
	}
	token := m[1]
	if code, _ := apiCall(t, c, token, "GET", "/api/v1/flows", nil); code != http.StatusOK {
		t.Fatalf("the new token: %d", code)
	}
	_, list := getAs(t, c, "viewer", "/account/tokens", nil)
	if strings.Contains(list, token) || strings.Contains(list, token[len(identity.TokenPrefix)+6:]) {
		t.Fatal("the token is shown again after it was made")
	}
	mustContain(t, "the list", list, "status page", token[:len(identity.TokenPrefix)+6]+"…", ">live<")

	if resp, page := postForm(t, c, viewer, "/account/tokens", url.Values{"name": {"x"}, "scope": {"operate"}, "days": {"7"}}, nil); resp.StatusCode != http.StatusForbidden || tokenRE.MatchString(page) {
		t.Errorf("a viewer's operate token: %d", resp.StatusCode)
	}
	if resp, _ := postForm(t, c, viewer, "/account/tokens", url.Values{"name": {"x"}, "scope": {"read"}, "days": {"91"}}, nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a token for 91 days: %d", resp.StatusCode)
	}

	ids := regexp.MustCompile(`<tr data-token="(\d+)">\s*<th scope="row">status page</th>`).FindStringSubmatch(list)
	if ids == nil {
		t.Fatalf("no row for the token:\n%s", list)
	}
	// Another operator cannot revoke it; its owner can.
	if resp, _ := postForm(t, c, sessionCookie(t, c, "operator"), "/account/tokens/"+ids[1]+"/revoke", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an operator revoking a viewer's token: %d, want 404", resp.StatusCode)
	}
	if resp, page := postForm(t, c, viewer, "/account/tokens/"+ids[1]+"/revoke", nil, nil); resp.StatusCode != http.StatusOK || !strings.Contains(page, "Revoked") {
		t.Fatalf("revoking: %d", resp.StatusCode)
	}
	if code, _ := apiCall(t, c, token, "GET", "/api/v1/flows", nil); code != http.StatusUnauthorized {
		t.Fatalf("the revoked token: %d", code)
	}

	// An admin sees everyone's tokens and revokes them.
	other := apiToken(t, c, "test-operator", identity.ScopeRead, time.Now())
	mine, _ := c.Store.APITokens(context.Background(), "test-operator", 1)
	_, admin := getAs(t, c, "admin", "/account/tokens", nil)
	mustContain(t, "the admin's page", admin, `data-testid="all-tokens-table"`, "test-operator")
	if resp, _ := postForm(t, c, sessionCookie(t, c, "admin"), "/account/tokens/"+strconv.FormatInt(mine[0].ID, 10)+"/revoke", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the admin revoking an operator's token: %d", resp.StatusCode)
	}
	if code, _ := apiCall(t, c, other, "GET", "/api/v1/flows", nil); code != http.StatusUnauthorized {
		t.Fatalf("the token the admin revoked: %d", code)
	}
}

// A person makes a token with the keyboard alone, reads it off the page,
// and the API answers it.
func TestBrowserMakesAnAPIToken(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	b := newBrowser(t)
	signIn(t, b, c.URL+"/account/tokens", "test-operator")
	err := chromedp.Do(b, chromedp.Focus(chromedp.ID("token-name")), chromedp.SendKeys(chromedp.ID("token-name"), "chat bot"),
		chromedp.Focus(chromedp.ID("token-scope")), chromedp.KeyEvent("o"),
		chromedp.Focus(chromedp.ID("token-days")), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.ID("new-token-value")))
	if err != nil {
		t.Fatal(err)
	}
	token, err := chromedp.Run(b, chromedp.Value(chromedp.ID("new-token-value")))
	if err != nil || !strings.HasPrefix(token, identity.TokenPrefix) {
		t.Fatalf("the token on the page: %q, %v", token, err)
	}
	rows, _ := chromedp.Run(b, chromedp.Text(chromedp.CSS(`[data-testid="my-tokens-table"]`)))
	if !strings.Contains(rows, "chat bot") || !strings.Contains(rows, "operate") {
		t.Fatalf("the list after making it: %q", rows)
	}
	code, body := apiCall(t, c, token, "POST", "/api/v1/runs", map[string]any{"flow": "primary->dr", "reason": ""})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("the operate token made in the browser: %d %v (want the plan form's 422, past the gates)", code, body)
	}
}
