package storage

// Account state in the audit chain: every record of an account change
// (user.create, user.role, user.password, user.disable, user.enable,
// sso.identity) carries, under "account", the account's whole state as the
// change left it, read inside the change's own transaction; an
// accounts.baseline record carries every account's state at once. So the
// users table can be held to the chain: a row whose state is not the last
// one the chain recorded for it was changed behind the console's back
// (audit.CheckAccounts).

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/drconsole/drconsole/model"
)

// AccountState is what the two-person rule and sign-in rely on of an
// account. The password itself is not in the chain, only a fingerprint of
// its hash: a hash swapped for one of a known password shows.
type AccountState struct {
	Role       model.Role `json:"role"`
	CreatedMs  int64      `json:"created_ms"`
	CreatedBy  string     `json:"created_by"`
	Disabled   bool       `json:"disabled"`
	PasswordFP string     `json:"password_fp"` // "" for no password
	LinkedMs   int64      `json:"linked_ms"`
	RaisedMs   int64      `json:"raised_ms"`
}

// ActionAccountsBaseline is the record of every account's state at once,
// written once when a database from before account states were recorded
// is first served (audit.BaselineAccounts).
const ActionAccountsBaseline = "accounts.baseline"

// passwordFP is the fingerprint of a password hash in the chain: the first
// 16 bytes of its SHA-256, hex. It reveals nothing a guess could be tested
// against without the hash itself (bcrypt's salt is in the hash).
func passwordFP(hash string) string {
	if hash == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(hash))
	return hex.EncodeToString(sum[:16])
}

const accountStateCols = "name, role, created_ms, created_by, disabled, password_hash, linked_ms, raised_ms"

// accountStateColsAt is accountStateCols for a database at schema v,
// opened read-only and so not migrated (a backup an older version made,
// checked before it is restored): columns added since read as empty.
func accountStateColsAt(v int) string {
	cols := accountStateCols
	if v < 18 { // 0018_account_links.sql
		cols = strings.Replace(cols, "linked_ms, raised_ms", "0 AS linked_ms, 0 AS raised_ms", 1)
	}
	if v < 7 { // 0007_step_runner_user_creator.sql
		cols = strings.Replace(cols, "created_by", "'' AS created_by", 1)
	}
	return cols
}

type rowScanner interface{ Scan(...any) error }

func scanAccountState(r rowScanner) (string, AccountState, error) {
	var name, hash string
	var a AccountState
	err := r.Scan(&name, &a.Role, &a.CreatedMs, &a.CreatedBy, &a.Disabled, &hash, &a.LinkedMs, &a.RaisedMs)
	a.PasswordFP = passwordFP(hash)
	return name, a, err
}

// AccountStates is every account's state as its row says, by name.
func (s *Store) AccountStates(ctx context.Context) (map[string]AccountState, error) {
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: reading accounts: %w", err)
	}
	return accountStates(ctx, s.r, accountStateColsAt(v))
}

type rowsQuerier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

func accountStates(ctx context.Context, q rowsQuerier, cols string) (map[string]AccountState, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+cols+" FROM users ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("storage: reading accounts: %w", err)
	}
	defer rows.Close()
	out := map[string]AccountState{}
	for rows.Next() {
		name, a, err := scanAccountState(rows)
		if err != nil {
			return nil, err
		}
		out[name] = a
	}
	return out, rows.Err()
}

// withDetail returns details (a JSON object, or empty) with key set to v.
func withDetail(details json.RawMessage, key string, v any) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(details) > 0 {
		if err := json.Unmarshal(details, &m); err != nil {
			return nil, fmt.Errorf("storage: audit details are not a JSON object: %w", err)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m[key] = b
	return json.Marshal(m)
}

// stampAccount puts name's state, as tx sees it after the change, into
// each record under "account".
func stampAccount(ctx context.Context, tx *sql.Tx, name string, records []model.AuditEntry) error {
	if len(records) == 0 {
		return nil
	}
	_, a, err := scanAccountState(tx.QueryRowContext(ctx, "SELECT "+accountStateCols+" FROM users WHERE name = ?", name))
	if err != nil {
		return fmt.Errorf("storage: reading account %q after its change: %w", name, err)
	}
	for i := range records {
		if records[i].Details, err = withDetail(records[i].Details, "account", a); err != nil {
			return err
		}
	}
	return nil
}

// ErrBaselineExists: BaselineAccounts on a chain that has its baseline.
var ErrBaselineExists = errors.New("the accounts baseline is already in the audit log")

// BaselineAccounts writes rec with every account's state under
// "accounts" (name: state), in one transaction with reading them, unless
// the chain holds an accounts.baseline already (ErrBaselineExists).
func (s *Store) BaselineAccounts(ctx context.Context, rec model.AuditEntry) (model.AuditEntry, error) {
	rec.Action = ActionAccountsBaseline
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM audit WHERE action = ?", ActionAccountsBaseline).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrBaselineExists
		}
		states, err := accountStates(ctx, tx, accountStateCols)
		if err != nil {
			return err
		}
		if rec.Details, err = withDetail(rec.Details, "accounts", states); err != nil {
			return err
		}
		if rec, err = prepareAudit(rec); err != nil {
			return err
		}
		return insertAudit(ctx, tx, &rec)
	})
	if err != nil {
		return model.AuditEntry{}, err
	}
	return rec, nil
}

// AccountRecords lists, oldest first, the records that say what an
// account is: user.*, sso.identity and accounts.baseline.
func (s *Store) AccountRecords(ctx context.Context) ([]model.AuditEntry, error) {
	return s.auditRecords(ctx, "account records", `SELECT id, at_ms, actor, action, client_ip, user_agent, subject, details, prev_hash, hash FROM audit
		WHERE action IN ('user.create', 'user.role', 'user.password', 'user.disable', 'user.enable', 'sso.identity', ?) ORDER BY id`, ActionAccountsBaseline)
}
