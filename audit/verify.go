package audit

import (
	"context"
	"fmt"

	"github.com/drconsole/drconsole/storage"
)

// Verification is what Verify found: the chain walked from its first
// record, its head, and the accounts held to it. `drconsole audit verify`
// prints it, and the audit page's "Verify the chain" shows it, in the same
// words (Lines, Err).
type Verification struct {
	// Records is how many records were checked and found intact: all of
	// them, or those before Broken.
	Records int
	// Broken is the first record that was edited, deleted, inserted or
	// reordered; nil when the chain is intact.
	Broken *storage.AuditProblem
	// HeadID and HeadHash are the newest record's (intact chains only).
	HeadID   int64
	HeadHash string
	// Accounts is the users table held to the chain (intact chains only:
	// CheckAccounts trusts the records it reads).
	Accounts AccountsReport
}

// Verify walks the chain of st, and when it is intact reads its head and
// holds every account to it.
func Verify(ctx context.Context, st *storage.Store) (Verification, error) {
	var v Verification
	var err error
	if v.Records, v.Broken, err = st.VerifyAudit(ctx); err != nil || v.Broken != nil {
		return v, err
	}
	if v.HeadID, v.HeadHash, err = st.AuditHead(ctx); err != nil {
		return v, err
	}
	v.Accounts, err = CheckAccounts(ctx, st)
	return v, err
}

// Err is nil when the chain is intact and every account matches its
// audited history; else what is wrong, the first broken record first.
func (v Verification) Err() error {
	if v.Broken != nil {
		return fmt.Errorf("audit: %w (the %d records before it are intact)", v.Broken, v.Records)
	}
	if err := v.Accounts.Err(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Lines are what an intact chain's check says, one line each: its length,
// its head, and the accounts when they match. None for a broken chain
// (Err says it).
func (v Verification) Lines() []string {
	if v.Broken != nil {
		return nil
	}
	lines := []string{
		fmt.Sprintf("audit: %d records, chain intact", v.Records),
		fmt.Sprintf("audit: head record %d hash %s", v.HeadID, v.HeadHash),
	}
	if v.Accounts.Err() != nil {
		return lines
	}
	how := "exactly (accounts baseline recorded)"
	if !v.Accounts.Baselined {
		how = "as far as their records go (no accounts baseline yet: the next start records it)"
	}
	return append(lines, fmt.Sprintf("audit: %d accounts match their audited history, %s", v.Accounts.Accounts, how))
}
