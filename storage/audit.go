package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/model"
)

// AuditGenesis is the PrevHash of the first record.
var AuditGenesis = strings.Repeat("0", 64)

// auditDomain separates these hashes from any other SHA-256 use; the "v1"
// changes if the encoding ever does.
const auditDomain = "drconsole-audit-v1"

// AuditHash computes a record's hash: the lowercase hex SHA-256 of its
// canonical encoding, which is the concatenation of, in this order,
//
//	"drconsole-audit-v1", id, at_ms, actor, action, client_ip, user_agent,
//	subject, details, prev_hash
//
// each written as an 8-byte big-endian unsigned length followed by that
// many bytes. Integers (id, at_ms) are their base-10 ASCII form ("42",
// "-1"); strings are their UTF-8 bytes; details is the compact JSON text
// exactly as stored; prev_hash is the previous record's hash in lowercase
// hex (AuditGenesis, 64 zeros, for the first record). Length prefixes make
// the encoding unambiguous: no two different records encode alike, however
// their fields are split. Any language can recompute it from an export.
func AuditHash(e model.AuditEntry) string {
	var b bytes.Buffer
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		b.Write(n[:])
		b.WriteString(s)
	}
	field(auditDomain)
	field(strconv.FormatInt(e.ID, 10))
	field(strconv.FormatInt(e.AtMs, 10))
	field(e.Actor)
	field(e.Action)
	field(e.ClientIP)
	field(e.UserAgent)
	field(e.Subject)
	field(string(e.Details))
	field(e.PrevHash)
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// AppendAudit adds e to the end of the chain and returns it with its ID,
// time (now when AtMs is zero), PrevHash and Hash filled in. Reading the
// last hash and inserting happen in one write transaction (BEGIN
// IMMEDIATE), so concurrent appends cannot fork the chain. Details must be
// valid JSON (empty means {}); it is stored compacted.
func (s *Store) AppendAudit(ctx context.Context, e model.AuditEntry) (model.AuditEntry, error) {
	e, err := prepareAudit(e)
	if err != nil {
		return e, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error { return insertAudit(ctx, tx, &e) })
	if err != nil {
		return e, fmt.Errorf("storage: appending audit record %s: %w", e.Action, err)
	}
	return e, nil
}

// prepareAudit checks and normalises a record before it is hashed.
func prepareAudit(e model.AuditEntry) (model.AuditEntry, error) {
	if e.Actor == "" || e.Action == "" {
		return e, errors.New("storage: audit record needs an actor and an action")
	}
	for _, f := range []*string{&e.Actor, &e.Action, &e.ClientIP, &e.Subject} {
		*f = strings.ToValidUTF8(*f, "\uFFFD")
	}
	e.UserAgent = truncate(strings.ToValidUTF8(e.UserAgent, "\uFFFD"), 512)
	if len(bytes.TrimSpace(e.Details)) == 0 {
		e.Details = json.RawMessage("{}")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, e.Details); err != nil {
		return e, fmt.Errorf("storage: audit %s: details are not valid JSON: %w", e.Action, err)
	}
	e.Details = json.RawMessage(bytes.ToValidUTF8(compact.Bytes(), []byte("\uFFFD")))
	if e.AtMs == 0 {
		e.AtMs = clock().UnixMilli()
	}
	return e, nil
}

// insertAudit chains e to the last record inside tx, a write transaction
// (BEGIN IMMEDIATE): callers that change state put the change and its
// record in the same transaction.
func insertAudit(ctx context.Context, tx *sql.Tx, e *model.AuditEntry) error {
	var lastID int64
	prev := AuditGenesis
	err := tx.QueryRowContext(ctx, "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").Scan(&lastID, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	e.ID, e.PrevHash = lastID+1, prev
	e.Hash = AuditHash(*e)
	_, err = tx.ExecContext(ctx, `INSERT INTO audit(id, at_ms, actor, action, client_ip, user_agent, subject, details, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.AtMs, e.Actor, e.Action, e.ClientIP, e.UserAgent, e.Subject, string(e.Details), e.PrevHash, e.Hash)
	return err
}

// auditedTx makes a change and writes its audit record in one write
// transaction: the change happens only with its record, and the record is
// written only when the change was made.
func (s *Store) auditedTx(ctx context.Context, records []model.AuditEntry, change func(*sql.Tx) error) error {
	for i := range records {
		e, err := prepareAudit(records[i])
		if err != nil {
			return err
		}
		records[i] = e
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		for i := range records {
			if err := insertAudit(ctx, tx, &records[i]); err != nil {
				return &auditWriteError{action: records[i].Action, err: err}
			}
		}
		return nil
	})
}

// auditedChange is auditedTx for one record; it returns the record as
// written (with its ID), what audit.Recorder.With's write func hands back.
func (s *Store) auditedChange(ctx context.Context, rec model.AuditEntry, change func(*sql.Tx) error) (model.AuditEntry, error) {
	return written(rec, func(records []model.AuditEntry) error { return s.auditedTx(ctx, records, change) })
}

// written hands write rec (as a one-record slice it fills in) and returns
// it as written, or nothing when write fails.
func written(rec model.AuditEntry, write func([]model.AuditEntry) error) (model.AuditEntry, error) {
	records := []model.AuditEntry{rec}
	if err := write(records); err != nil {
		return model.AuditEntry{}, err
	}
	return records[0], nil
}

// ErrAuditWrite: a change's audit record could not be written, so the
// change was not made either (callers tell it from the change's own
// refusals, such as ErrConflict or ErrUnknownUser).
var ErrAuditWrite = errors.New("the audit record cannot be written")

type auditWriteError struct {
	action string
	err    error
}

func (e *auditWriteError) Error() string {
	return fmt.Sprintf("storage: audit record %s cannot be written, so nothing was changed: %v", e.action, e.err)
}

func (e *auditWriteError) Unwrap() []error { return []error{ErrAuditWrite, e.err} }

// AuditFilter selects audit records. Zero fields do not filter.
type AuditFilter struct {
	Actor, Action string // exact match
	Subject       string // substring
	// SinceMs <= at_ms < UntilMs.
	SinceMs, UntilMs int64
	// Limit caps the number of records; 0 or less: all.
	Limit int
	// AfterID pages: only records after this id in listing order (ids below
	// it newest first, above it with Oldest).
	AfterID int
	// Oldest lists in chain order (oldest first) instead of newest first.
	Oldest bool
}

// AuditEntries lists records matching f, newest first unless f.Oldest.
func (s *Store) AuditEntries(ctx context.Context, f AuditFilter) ([]model.AuditEntry, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.Actor != "" {
		add("actor = ?", f.Actor)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if f.Subject != "" {
		add("instr(subject, ?) > 0", f.Subject)
	}
	if f.SinceMs != 0 {
		add("at_ms >= ?", f.SinceMs)
	}
	if f.UntilMs != 0 {
		add("at_ms < ?", f.UntilMs)
	}
	order := "DESC"
	if f.Oldest {
		order = "ASC"
		if f.AfterID > 0 {
			add("id > ?", f.AfterID)
		}
	} else if f.AfterID > 0 {
		add("id < ?", f.AfterID)
	}
	q := "SELECT id, at_ms, actor, action, client_ip, user_agent, subject, details, prev_hash, hash FROM audit"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id " + order
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	return s.auditRecords(ctx, "audit records", q, args...)
}

// auditRecords runs q, a SELECT of whole audit rows, and scans them; what
// names the records in an error.
func (s *Store) auditRecords(ctx context.Context, what, q string, args ...any) ([]model.AuditEntry, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: reading %s: %w", what, err)
	}
	defer rows.Close()
	var out []model.AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scanAudit(rows *sql.Rows) (model.AuditEntry, error) {
	var e model.AuditEntry
	var details string
	err := rows.Scan(&e.ID, &e.AtMs, &e.Actor, &e.Action, &e.ClientIP, &e.UserAgent, &e.Subject, &details, &e.PrevHash, &e.Hash)
	e.Details = json.RawMessage(details)
	return e, err
}

// AuditProblem is the first record that breaks the chain, and why.
type AuditProblem struct {
	ID  int64
	Why string
}

func (p *AuditProblem) Error() string { return fmt.Sprintf("record %d: %s", p.ID, p.Why) }

// VerifyAudit walks the whole chain in id order and returns how many
// records it checked and the first bad one, if any. It finds a record that
// was edited (its hash no longer matches its contents), deleted (a gap in
// the ids, or a prev_hash naming a record that is not the one before),
// inserted or reordered (prev_hash or hash mismatch, since the id is
// hashed). Limits of any unkeyed hash chain: removing records from the
// end, or rewriting a record and re-hashing everything after it, leaves a
// consistent chain; compare the head hash with a copy kept elsewhere
// (`drconsole audit verify` prints it) to catch those.
func (s *Store) VerifyAudit(ctx context.Context) (checked int, firstBad *AuditProblem, err error) {
	rows, err := s.r.QueryContext(ctx,
		"SELECT id, at_ms, actor, action, client_ip, user_agent, subject, details, prev_hash, hash FROM audit ORDER BY id")
	if err != nil {
		return 0, nil, fmt.Errorf("storage: reading the audit chain: %w", err)
	}
	defer rows.Close()
	var prevID int64
	prevHash := AuditGenesis
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return checked, nil, fmt.Errorf("storage: reading the audit chain: %w", err)
		}
		switch {
		case e.ID != prevID+1:
			missing := fmt.Sprintf("record %d is missing (deleted)", prevID+1)
			if e.ID > prevID+2 {
				missing = fmt.Sprintf("records %d to %d are missing (deleted)", prevID+1, e.ID-1)
			}
			return checked, &AuditProblem{e.ID, missing}, nil
		case e.PrevHash != prevHash:
			why := "prev_hash is not the genesis value: records before it were removed or replaced"
			if prevID > 0 {
				why = fmt.Sprintf("prev_hash does not match the hash of record %d: a record was edited and re-hashed, removed, inserted or reordered", prevID)
			}
			return checked, &AuditProblem{e.ID, why}, nil
		case AuditHash(e) != e.Hash:
			return checked, &AuditProblem{e.ID, "contents do not match the record's hash: it was edited"}, nil
		}
		checked++
		prevID, prevHash = e.ID, e.Hash
	}
	return checked, nil, rows.Err()
}

// AuditHead is the id and hash of the newest record (0 and AuditGenesis
// for an empty chain): worth keeping outside the database to detect a
// truncated or wholly rewritten chain later.
func (s *Store) AuditHead(ctx context.Context) (int64, string, error) {
	var id int64
	h := AuditGenesis
	err := s.r.QueryRowContext(ctx, "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").Scan(&id, &h)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return id, h, err
}

// AuditActions lists the distinct actions recorded, for the audit page's
// filter.
func (s *Store) AuditActions(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT DISTINCT action FROM audit ORDER BY action")
	if err != nil {
		return nil, fmt.Errorf("storage: reading audit actions: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
