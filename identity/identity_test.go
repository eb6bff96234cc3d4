package identity

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/drconsole/drconsole/model"
	"golang.org/x/crypto/bcrypt"
)

func TestRolesAndNames(t *testing.T) {
	op := &model.Principal{Name: "alice", Role: model.RoleOperator}
	for role, want := range map[model.Role]bool{model.RoleViewer: true, model.RoleOperator: true, model.RoleAdmin: false, "": false, "root": false} {
		if op.AtLeast(role) != want {
			t.Errorf("operator AtLeast(%q) = %v", role, !want)
		}
	}
	var nobody *model.Principal
	if nobody.AtLeast(model.RoleViewer) || (&model.Principal{Name: "x"}).AtLeast(model.RoleViewer) {
		t.Error("a nil user or one without a role holds a role")
	}
	for name, want := range map[string]bool{"alice": true, "a.b-c_d@example.com": true, "cli:root": false, "": false,
		"-x": false, "a b": false, string(make([]byte, 65)): false} {
		if model.ValidName(name) != want {
			t.Errorf("model.ValidName(%q) = %v", name, !want)
		}
	}
}

func TestPasswords(t *testing.T) {
	HashCost = bcrypt.MinCost
	if _, err := HashPassword("short"); err == nil {
		t.Fatal("short password hashed")
	}
	if _, err := HashPassword(string(make([]byte, 73))); err == nil {
		t.Fatal("password past bcrypt's 72 bytes hashed")
	}
	h, err := HashPassword("twelve chars!")
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(h, "twelve chars!") || CheckPassword(h, "twelve chars?") || CheckPassword("", "") || CheckPassword("", "twelve chars!") {
		t.Fatal("CheckPassword")
	}
}

func TestContext(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	if UserFrom(r.Context()) != nil || ClientIP(r) != "192.0.2.1" {
		t.Fatal("empty context")
	}
	ctx := WithClientIP(WithUser(context.Background(), &model.Principal{Name: "a", Role: model.RoleAdmin}), "203.0.113.9")
	r = r.WithContext(ctx)
	if u := UserFrom(r.Context()); u == nil || u.Name != "a" || ClientIP(r) != "203.0.113.9" {
		t.Fatal("context values lost")
	}
}
