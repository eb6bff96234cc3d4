package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/storage"
)

// `users add` records who created the account (the person at the
// terminal), so an approval from an account the requester made does not
// count.
func TestUsersAddRecordsCreator(t *testing.T) {
	cfg, db := cliConfig(t)
	if r := runCLI(t, "", "users", "add", "erin", "--role", "operator", "--no-password", "--config", cfg); r.code != 0 {
		t.Fatalf("users add: %d %q", r.code, r.stderr)
	}
	st, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	origins, err := st.AccountOrigins(context.Background(), "erin")
	if err != nil || len(origins) != 1 || origins[0].CreatedBy != cliActor() || !strings.HasPrefix(origins[0].CreatedBy, "cli:") {
		t.Fatalf("erin's creator on record: %+v %v", origins, err)
	}
}
