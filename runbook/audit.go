package runbook

import (
	"context"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// StoreAuditor writes the runbook's records to the store's audit chain,
// through audit.
type StoreAuditor struct{ Store *storage.Store }

// Record implements Auditor.
func (a StoreAuditor) Record(ctx context.Context, who Actor, action audit.Action, subject string, details any) error {
	_, err := audit.New(a.Store).Record(withClient(ctx, who), who.Name, action, subject, details)
	return err
}

// AuditEntry is the record of who did action to subject. State changes
// hand it to the store, which writes it in the change's transaction.
func AuditEntry(who Actor, action audit.Action, subject string, details any) (model.AuditEntry, error) {
	return audit.Entry(withClient(context.Background(), who), who.Name, action, subject, details)
}

// withClient names who's client (as the web layer saw it) in the records
// made under ctx.
func withClient(ctx context.Context, who Actor) context.Context {
	return audit.WithClient(ctx, audit.Client{IP: who.ClientIP, UserAgent: who.UserAgent})
}

// Recorded makes a change of the console's state: write stores the record
// it is handed in the change's own transaction, so both happen or neither.
func (rb *Runbook) Recorded(ctx context.Context, who Actor, action audit.Action, subject string, details any,
	write func(model.AuditEntry) (model.AuditEntry, error)) (audit.Written, error) {
	return audit.New(rb.Store).With(withClient(ctx, who), who.Name, action, subject, details, write)
}
