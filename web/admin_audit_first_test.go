package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// Audit first on the admin page and at sign-in: with the audit log
// unwritable, no account is added, no role, password or state changes
// (the admin is told nothing was changed), and a correct password starts
// no session.
func TestAdminChangesAndSignInNeedTheirAuditRecord(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	admin := s.signedIn(t, "test-admin")
	before := s.user(t, "test-operator")
	storagetest.FailAuditWrites(t, s.path, true)
	pw := "a long enough password"
	for path, form := range map[string]url.Values{
		"/admin/users":                        {"name": {"mallory"}, "role": {"admin"}, "password": {pw}, "password2": {pw}},
		"/admin/users/test-operator/role":     {"role": {"admin"}},
		"/admin/users/test-operator/password": {"password": {pw}, "password2": {pw}},
		"/admin/users/test-operator/disable":  nil,
	} {
		rec := s.post(path, admin, form)
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "Cannot write the audit log; nothing was changed.") {
			t.Errorf("POST %s with the audit log unwritable = %d %.200s", path, rec.Code, rec.Body.String())
		}
	}
	after := s.user(t, "test-operator")
	if after.Role != before.Role || after.Disabled || !identity.CheckPassword(after.PasswordHash, testPassword) {
		t.Errorf("test-operator changed without audit records: %+v", after)
	}
	if _, err := s.store.UserByName(t.Context(), "mallory"); err == nil {
		t.Error("mallory was added without an audit record")
	}
	rec := s.login("test-operator", testPassword, "/audit")
	if rec.Code != http.StatusInternalServerError || len(rec.Result().Cookies()) != 0 {
		t.Errorf("sign-in with the audit log unwritable = %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
}
