package handlers

import (
	"net/http"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/views"
)

// AuditVerify is POST /audit/verify, for anyone signed in: the check of
// `drconsole audit verify` (the chain walked from its first record, its
// head, the accounts held to it) run on the console's database, recorded
// as audit.verify with what it found, and shown on the audit page in the
// command's words. It changes nothing but the record of itself. A check
// whose record could not be written still shows what it found, with a
// 503 saying it is not on record.
func (h *Handlers) AuditVerify(w http.ResponseWriter, r *http.Request) {
	v, err := audit.Verify(r.Context(), h.Store)
	if err != nil {
		h.fail(w, r, say("cannot read the audit log to verify it", err))
		return
	}
	shown := &views.AuditVerified{Intact: v.Err() == nil, Lines: v.Lines()}
	details := map[string]any{"intact": shown.Intact, "records_intact": v.Records}
	if v.Broken != nil {
		details["broken_record"] = v.Broken.ID
		details["why"] = v.Broken.Why
	} else {
		details["head_record"], details["head_hash"] = v.HeadID, v.HeadHash
		details["accounts"] = v.Accounts.Accounts
	}
	if err := v.Err(); err != nil {
		shown.Problem = err.Error()
		details["problem"] = shown.Problem
	}
	status := http.StatusOK
	if err := h.Audit(r, audit.ChainVerify, "audit-chain", details); err != nil {
		status = statusFor(errNotAudited)
		shown.NotRecorded = "This check could not be written to the audit log (the console's log has why): what it found is above, but it is not on record. Try again."
	}
	h.renderAudit(w, r, status, shown)
}
