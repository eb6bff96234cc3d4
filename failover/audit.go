package failover

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// StoreAuditor writes the runbook's records to the store's audit chain.
type StoreAuditor struct{ Store *storage.Store }

// Record implements Auditor.
func (a StoreAuditor) Record(ctx context.Context, who Actor, action, subject string, details any) error {
	e, err := auditEntry(who, action, subject, details)
	if err != nil {
		return err
	}
	_, err = a.Store.AppendAudit(ctx, e)
	return err
}

// auditEntry is the record of who did action to subject. State changes
// hand it to the store, which writes it in the change's transaction.
func auditEntry(who Actor, action, subject string, details any) (model.AuditEntry, error) {
	body, err := json.Marshal(details)
	if err != nil {
		return model.AuditEntry{}, fmt.Errorf("audit %s: %w", action, err)
	}
	return model.AuditEntry{Actor: who.Name, Action: action, ClientIP: who.ClientIP,
		UserAgent: who.UserAgent, Subject: subject, Details: body}, nil
}
