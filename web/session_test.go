package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// testPassword is every test account's password.
const testPassword = "correct horse battery"

// createTestUsers adds test-viewer, test-operator and test-admin.
func createTestUsers(store *storage.Store) error {
	hash, err := identity.HashPassword(testPassword)
	if err != nil {
		return err
	}
	for _, role := range model.Roles {
		if err := store.CreateUser(context.Background(), model.User{Name: "test-" + string(role), Role: role, PasswordHash: hash}); err != nil {
			return err
		}
	}
	return nil
}

// sessionCookie signs test-<role> in directly through storage (no form,
// no rate limit) and returns the session cookie a browser would send.
func sessionCookie(t testing.TB, c *console, role string) *http.Cookie {
	t.Helper()
	tok, err := c.Store.CreateSession(context.Background(), "test-"+role, "127.0.0.1", "go-test")
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: handlers.SessionCookie, Value: tok}
}
