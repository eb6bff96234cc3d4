package audit

// Accounts held to the chain: the users table is where sign-in and the
// two-person rule read an account's role, creator, creation time,
// password, provider link and state, and a copy of the database (a
// backup, the data directory) can be edited. Every account change records
// the state it left (storage/account_state.go), so CheckAccounts can hold
// each row to the last state the chain recorded for it, and name the
// account whose row was changed behind the console's back.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// ssoCreator is identity.SSOCreator, the creator of accounts made at a
// first OIDC sign-in (identity imports this package, not the reverse).
const ssoCreator = "sso:oidc"

// StartActor is the actor of records the console writes about itself at
// start (the accounts baseline, a restore). The colon keeps it from ever
// being an account's name.
const StartActor = "drconsole:start"

// legacyCreatedSkew is how far a row's created_ms may lie from the time of
// its user.create record when the record, from before account states were
// recorded, does not carry it (the two were written in one transaction).
const legacyCreatedSkew = time.Minute

// AccountProblem is an account whose row does not match its audited
// history.
type AccountProblem struct {
	Name string
	Why  string
}

func (p AccountProblem) String() string { return p.Name + ": " + p.Why }

// expected is what the chain says of one account.
type expected struct {
	st storage.AccountState
	// exact: st came whole from a record (every field known). Otherwise
	// only records from before account states were recorded speak of it:
	// role and disabled are known, creation only roughly.
	exact       bool
	pwKnown     bool  // st.PasswordFP is known
	hasPassword bool  // some record gave it a password
	createdAtMs int64 // the user.create record's time (legacy)
	creator     string
}

// AccountsReport is what CheckAccounts found.
type AccountsReport struct {
	Problems []AccountProblem
	// Baselined: the chain holds an accounts.baseline, so every account's
	// state is known exactly (without it, accounts made before account
	// states were recorded are checked as far as their records go).
	Baselined bool
	Accounts  int
}

// Err is nil when no account has a problem, or an error naming each one.
func (r AccountsReport) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	var s []string
	for _, p := range r.Problems {
		s = append(s, p.String())
	}
	return fmt.Errorf("%d account(s) do not match their audited history (changed outside the console, e.g. in a copy of the database): %s",
		len(r.Problems), strings.Join(s, "; "))
}

// CheckAccounts holds every row of the users table to the chain. Run it
// after VerifyAudit: it trusts the records it reads.
func CheckAccounts(ctx context.Context, st *storage.Store) (AccountsReport, error) {
	var rep AccountsReport
	records, err := st.AccountRecords(ctx)
	if err != nil {
		return rep, err
	}
	want := map[string]*expected{}
	for _, e := range records {
		if err := replay(want, e, &rep.Baselined); err != nil {
			return rep, fmt.Errorf("audit record %d (%s): %w", e.ID, e.Action, err)
		}
	}
	rows, err := st.AccountStates(ctx)
	if err != nil {
		return rep, err
	}
	rep.Accounts = len(rows)
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if why := compare(n, rows[n], want[model.CanonicalName(n)]); why != "" {
			rep.Problems = append(rep.Problems, AccountProblem{Name: n, Why: why})
		}
	}
	return rep, nil
}

// replay applies one record to want.
func replay(want map[string]*expected, e model.AuditEntry, baselined *bool) error {
	var d struct {
		Account  *storage.AccountState           `json:"account"`
		Accounts map[string]storage.AccountState `json:"accounts"`
		Role     model.Role                      `json:"role"`
		To       model.Role                      `json:"to"`
		Password bool                            `json:"password"`
	}
	if len(e.Details) > 0 {
		if err := json.Unmarshal(e.Details, &d); err != nil {
			return err
		}
	}
	action := Action(e.Action)
	if action == AccountsBaseline {
		clear(want)
		for n, s := range d.Accounts {
			want[model.CanonicalName(n)] = &expected{st: s, exact: true, pwKnown: true, hasPassword: s.PasswordFP != ""}
		}
		*baselined = true
		return nil
	}
	name := model.CanonicalName(strings.TrimPrefix(e.Subject, "user:"))
	if action == SSOIdentity {
		name = model.CanonicalName(e.Actor) // subject: the provider identity
	}
	if d.Account != nil {
		want[name] = &expected{st: *d.Account, exact: true, pwKnown: true, hasPassword: d.Account.PasswordFP != ""}
		return nil
	}
	// A record from before account states were recorded.
	x := want[name]
	if action == UserCreate {
		want[name] = &expected{st: storage.AccountState{Role: d.Role}, createdAtMs: e.AtMs, creator: e.Actor, hasPassword: d.Password}
		return nil
	}
	if x == nil {
		return nil // a change to an account with no creation: its row is refused anyway
	}
	switch action {
	case UserRole:
		x.st.Role = d.To
	case UserPassword:
		x.hasPassword, x.pwKnown = true, false
	case UserDisable:
		x.st.Disabled = true
	case UserEnable:
		x.st.Disabled = false
	}
	return nil
}

// compare says how row differs from what the chain says of it, or "".
func compare(name string, row storage.AccountState, x *expected) string {
	if x == nil {
		return "no record of its creation in the audit log"
	}
	ms := func(v int64) string { return time.UnixMilli(v).UTC().Format(time.RFC3339) }
	switch {
	case row.Role != x.st.Role:
		return fmt.Sprintf("role %s, the audit log says %s", row.Role, x.st.Role)
	case row.Disabled != x.st.Disabled:
		return fmt.Sprintf("disabled %v, the audit log says %v", row.Disabled, x.st.Disabled)
	case row.PasswordFP != "" && !x.hasPassword:
		return "has a password the audit log never set"
	case x.pwKnown && row.PasswordFP != x.st.PasswordFP:
		return "its password is not the one the audit log last recorded"
	}
	if x.exact {
		switch {
		case row.CreatedMs != x.st.CreatedMs:
			return fmt.Sprintf("created %s, the audit log says %s", ms(row.CreatedMs), ms(x.st.CreatedMs))
		case row.CreatedBy != x.st.CreatedBy:
			return fmt.Sprintf("created by %q, the audit log says %q", row.CreatedBy, x.st.CreatedBy)
		case row.LinkedMs != x.st.LinkedMs:
			return fmt.Sprintf("linked to its provider identity at %s, the audit log says %s", ms(row.LinkedMs), ms(x.st.LinkedMs))
		case row.RaisedMs != x.st.RaisedMs:
			return fmt.Sprintf("role raised by the provider at %s, the audit log says %s", ms(row.RaisedMs), ms(x.st.RaisedMs))
		}
		return ""
	}
	skew := row.CreatedMs - x.createdAtMs
	switch {
	case skew > legacyCreatedSkew.Milliseconds() || skew < -legacyCreatedSkew.Milliseconds():
		return fmt.Sprintf("created %s, but its user.create record is of %s", ms(row.CreatedMs), ms(x.createdAtMs))
	case row.CreatedBy != x.creator && !(row.CreatedBy == ssoCreator && model.CanonicalName(x.creator) == name):
		return fmt.Sprintf("created by %q, but its user.create record names %q", row.CreatedBy, x.creator)
	case row.LinkedMs != 0 || row.RaisedMs != 0:
		return "provider link or raise times the audit log never recorded"
	}
	return ""
}

// BaselineAccounts records every account's state in one accounts.baseline
// record, once: a database from before account states were recorded is
// checked as far as its records go (CheckAccounts), and from then on
// exactly. Call it after CheckAccounts found no problem; a chain that has
// its baseline is left alone (ok false).
func BaselineAccounts(ctx context.Context, st *storage.Store) (ok bool, err error) {
	e, err := Entry(ctx, StartActor, AccountsBaseline, "accounts",
		map[string]any{"why": "account states are recorded from here on; earlier accounts were checked against their user.* records"})
	if err != nil {
		return false, err
	}
	_, err = st.BaselineAccounts(ctx, e)
	if err == storage.ErrBaselineExists {
		return false, nil
	}
	return err == nil, err
}
