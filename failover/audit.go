package failover

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/drconsole/drconsole/storage"
)

// StoreAuditor writes the runbook's records to the store's audit chain.
type StoreAuditor struct{ Store *storage.Store }

// Record implements Auditor.
func (a StoreAuditor) Record(ctx context.Context, who Actor, action, subject string, details any) error {
	body, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	_, err = a.Store.AppendAudit(ctx, storage.AuditEntry{Actor: who.Name, Action: action, ClientIP: who.ClientIP,
		UserAgent: who.UserAgent, Subject: subject, Details: body})
	return err
}
