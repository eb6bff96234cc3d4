package model

import "encoding/json"

// AuditEntry is one record of the audit chain: who did what, when, from
// where, to what, with the evidence at that moment in Details (JSON). The
// chain's hash and its SQL are storage's; records are made by audit.
type AuditEntry struct {
	ID        int64
	AtMs      int64
	Actor     string // user name, "cli:<os user>", or "anonymous" (failed login)
	Action    string // e.g. login, login.failed, user.create, failover.approve
	ClientIP  string
	UserAgent string
	Subject   string // what the action was about, e.g. "user:alice", "run:12"
	Details   json.RawMessage
	PrevHash  string
	Hash      string
}
