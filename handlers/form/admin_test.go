package form

import (
	"strings"
	"testing"
)

// The admin page's add-user form refuses the names the console writes as
// actors itself (issue 29, finding 13), in any case, before anything is
// created.
func TestNewUserRefusesReservedNames(t *testing.T) {
	for _, name := range []string{"anonymous", "system", "config-file"} {
		err := NewUser{Name: name, Role: "viewer"}.Validate(false)
		if err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := (NewUser{Name: "erin", Role: "viewer"}).Validate(false); err != nil {
		t.Errorf("erin: %v", err)
	}
}
