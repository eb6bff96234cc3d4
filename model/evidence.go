package model

import "encoding/json"

// EvidenceVersion is the drill evidence pack's format version: a reader
// refuses any other.
const EvidenceVersion = 1

// EvidenceKind names what the pack is, so a file of another kind is told
// apart from a malformed pack.
const EvidenceKind = "drconsole-drill-evidence"

// EvidencePack is a drill's evidence, made once the drill ended: who
// requested and approved it, each step's times, the figures the drill
// measured, every audit record of its run with its chain hashes, the audit
// head when it was made (and the anchor, when one is configured), and who
// made it. Its JSON (these tags) is the pack's canonical form: the JSON
// download is it, and the HTML download embeds it byte for byte.
// Unknown figures are null, never 0.
type EvidencePack struct {
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	Run     int64  `json:"run"`
	Flow    string `json:"flow"`
	Reason  string `json:"reason"`
	// RunStatus is the run's status when the pack was made.
	RunStatus         string          `json:"run_status"`
	Plan              json.RawMessage `json:"plan"`
	PlanHash          string          `json:"plan_hash"`
	RequestedBy       string          `json:"requested_by"`
	RequestedAt       string          `json:"requested_at"`
	RequestedAtMs     int64           `json:"requested_at_ms"`
	ApprovalsRequired int             `json:"approvals_required"`
	// BreakGlass is the reason given when the run was forced on without
	// its approvals ("" when it was not).
	BreakGlass string             `json:"break_glass"`
	Approvals  []EvidenceApproval `json:"approvals"`
	Steps      []EvidenceStep     `json:"steps"`
	Drill      EvidenceDrill      `json:"drill"`
	Records    []EvidenceRecord   `json:"audit_records"`
	Head       EvidenceHead       `json:"audit_head"`
	// Anchor is the newest audit anchor written outside the database
	// (audit_anchor); nil when none is configured.
	Anchor   *EvidenceAnchor  `json:"audit_anchor"`
	Produced EvidenceProduced `json:"produced"`
}

// EvidenceApproval is one decision on the run's plan, as recorded.
type EvidenceApproval struct {
	Approver string `json:"approver"`
	Decision string `json:"decision"`
	At       string `json:"at"`
	AtMs     int64  `json:"at_ms"`
	PlanHash string `json:"plan_hash"`
	// ForThisPlan: given for the plan the run ran (its hash).
	ForThisPlan bool   `json:"for_this_plan"`
	Reason      string `json:"reason"`
}

// EvidenceStep is one step of the run: nil times are not reached.
type EvidenceStep struct {
	Step       int     `json:"step"` // 1-based, as the pages number it
	Kind       string  `json:"kind"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	StartedBy  string  `json:"started_by"`
	Started    *string `json:"started"`
	StartedMs  *int64  `json:"started_ms"`
	Finished   *string `json:"finished"`
	FinishedMs *int64  `json:"finished_ms"`
	// Result is the step's typed result as stored (JSON text); Error why
	// it failed.
	Result string `json:"result"`
	Error  string `json:"error"`
}

// EvidenceDrill is what the drill measured, as stored: nil is unknown.
type EvidenceDrill struct {
	Started         string   `json:"started"`
	StartedMs       int64    `json:"started_ms"`
	Status          string   `json:"status"`
	Succeeded       bool     `json:"succeeded"`
	Outcome         string   `json:"outcome"`
	Error           string   `json:"error"`
	SubmittedMs     *int64   `json:"submitted_ms"`
	RunningMs       *int64   `json:"running_ms"`
	FirstRecordMs   *int64   `json:"first_record_ms"`
	ToRunningMs     *int64   `json:"to_running_ms"`
	AchievedRTOMs   *int64   `json:"achieved_rto_ms"`
	ObjectiveRTOMs  *int64   `json:"objective_rto_ms"`
	RPOMs           *int64   `json:"rpo_ms"`
	RPOIsLowerBound bool     `json:"rpo_is_lower_bound"`
	ObjectiveRPOMs  *int64   `json:"objective_rpo_ms"`
	RereadMax       *int64   `json:"reread_max"`
	RulesFailed     []string `json:"rules_that_would_have_failed"`
	FlinkTarget     string   `json:"flink_target"`
	JobID           string   `json:"job_id"`
	Groups          []string `json:"temporary_groups"`
	Cleanup         string   `json:"cleanup"`
	CleanupError    string   `json:"cleanup_error"`
	CleanupDoneMs   *int64   `json:"cleanup_done_ms"`
}

// EvidenceRecord is one audit record exactly as the chain holds it:
// Details is the stored JSON text verbatim (a string, so no re-encoding
// changes a byte of what was hashed).
type EvidenceRecord struct {
	Seq       int64  `json:"seq"`
	At        string `json:"at"`
	AtMs      int64  `json:"at_ms"`
	Actor     string `json:"actor"`
	Action    string `json:"action"`
	ClientIP  string `json:"client_ip"`
	UserAgent string `json:"user_agent"`
	Subject   string `json:"subject"`
	Details   string `json:"details"`
	PrevHash  string `json:"prev_hash"`
	Hash      string `json:"hash"`
}

// Entry is r as the chain's record.
func (r EvidenceRecord) Entry() AuditEntry {
	return AuditEntry{ID: r.Seq, AtMs: r.AtMs, Actor: r.Actor, Action: r.Action, ClientIP: r.ClientIP, UserAgent: r.UserAgent,
		Subject: r.Subject, Details: json.RawMessage(r.Details), PrevHash: r.PrevHash, Hash: r.Hash}
}

// EvidenceHead is the newest audit record when the pack was made.
type EvidenceHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// EvidenceAnchor is the newest line of the configured anchor file (or
// why it could not be read), or says the anchor goes to a URL only.
type EvidenceAnchor struct {
	File string `json:"file"`
	URL  bool   `json:"url_configured"`
	Line string `json:"line"`
	At   string `json:"at"`
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	// Problem says why no anchor line is given ("" when one is).
	Problem string `json:"problem"`
}

// EvidenceProduced says who made the pack, when, and which audit record
// (one of the pack's) put the export on record.
type EvidenceProduced struct {
	By     string `json:"by"`
	At     string `json:"at"`
	AtMs   int64  `json:"at_ms"`
	Record int64  `json:"record"`
	Format string `json:"format"`
}
