package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/storage"
)

// checkAtStart holds the database to its evidence before the console
// serves it: the audit chain verifies, every account row matches its
// audited history (a copy edited to add an admin, or to backdate an
// account, is refused and the account named), and the chain reaches every
// head the anchor file recorded (a database rolled back to an older copy
// is refused). A database from before account states were recorded gets
// its accounts baseline here, once, audited.
func checkAtStart(ctx context.Context, store *storage.Store, a config.AuditAnchor, log *slog.Logger) error {
	start := time.Now()
	n, bad, err := store.VerifyAudit(ctx)
	if err != nil {
		return err
	}
	if bad != nil {
		return fmt.Errorf("the audit log is broken at %w (the %d records before it are intact); nothing was started: "+
			"restore a backup (drconsole restore) or investigate with drconsole audit verify", bad, n)
	}
	if err := checkAccounts(ctx, store); err != nil {
		return fmt.Errorf("%w; nothing was started", err)
	}
	if a.File != "" {
		if err := anchorAtStart(ctx, store, a.File); err != nil {
			return err
		}
	}
	if ok, err := audit.BaselineAccounts(ctx, store); err != nil {
		return fmt.Errorf("recording the accounts baseline: %w", err)
	} else if ok {
		log.Info("accounts baseline recorded in the audit log: account states are checked exactly from now on")
	}
	log.Info("audit log and accounts checked", "records", n, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// checkAccounts is audit.CheckAccounts as an error naming each account
// whose row does not match its audited history.
func checkAccounts(ctx context.Context, store *storage.Store) error {
	rep, err := audit.CheckAccounts(ctx, store)
	if err != nil {
		return err
	}
	if err := rep.Err(); err != nil {
		return fmt.Errorf("%w. Disable or remove each named account (sqlite3 FILE \"DELETE FROM users WHERE name = '...'\"), "+
			"or restore a backup taken before the change, and create real accounts with drconsole users add", err)
	}
	return nil
}

// anchorAtStart checks the anchor file at start: a head it recorded that
// the log no longer holds means the database was rolled back (or
// rewritten) since, and the console refuses to serve it. A restore marks
// itself in the file (a "restore" line), after which only later lines
// count. A missing file is the first start.
func anchorAtStart(ctx context.Context, store *storage.Store, file string) error {
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	id, _, err := store.AuditHead(ctx)
	if err != nil {
		return err
	}
	if _, err := checkAnchors(ctx, store, file, id); err != nil {
		return fmt.Errorf("%w; nothing was started. The database is not the one the anchor file %s vouched for: "+
			"if you restored an older backup on purpose, mark it with \"drconsole audit head --restore --db FILE >> %s\" "+
			"(drconsole restore --config does it) and start again", err, file, file)
	}
	return nil
}
