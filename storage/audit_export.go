package storage

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

// auditJSON is one JSON Lines record. details is the stored JSON as is, so
// the hash can be recomputed from an export (see AuditHash).
type auditJSON struct {
	ID        int64           `json:"id"`
	At        string          `json:"at"`
	AtMs      int64           `json:"at_ms"`
	Actor     string          `json:"actor"`
	Action    string          `json:"action"`
	ClientIP  string          `json:"client_ip"`
	UserAgent string          `json:"user_agent"`
	Subject   string          `json:"subject"`
	Details   json.RawMessage `json:"details"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
}

// AuditExportFormats are the formats ExportAudit writes.
var AuditExportFormats = []string{"jsonl", "csv"}

// ExportAudit writes every record matching f (its Limit, AfterID and
// Oldest are ignored) in chain order as JSON Lines or CSV, reading 1,000
// records at a time so a long history never sits in memory. It returns the
// number of records written.
func (s *Store) ExportAudit(ctx context.Context, w io.Writer, f AuditFilter, format string) (int, error) {
	bw := bufio.NewWriter(w)
	var write func(model.AuditEntry) error
	var cw *csv.Writer
	switch format {
	case "jsonl":
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false) // keep details byte-identical to what was hashed
		write = func(e model.AuditEntry) error {
			return enc.Encode(auditJSON{e.ID, formatMs(e.AtMs), e.AtMs, e.Actor, e.Action, e.ClientIP, e.UserAgent, e.Subject, e.Details, e.PrevHash, e.Hash})
		}
	case "csv":
		cw = csv.NewWriter(bw)
		if err := cw.Write([]string{"id", "at", "actor", "action", "client_ip", "user_agent", "subject", "details", "prev_hash", "hash"}); err != nil {
			return 0, err
		}
		write = func(e model.AuditEntry) error {
			return cw.Write([]string{strconv.FormatInt(e.ID, 10), formatMs(e.AtMs), CSVCell(e.Actor), CSVCell(e.Action), CSVCell(e.ClientIP),
				CSVCell(e.UserAgent), CSVCell(e.Subject), CSVCell(string(e.Details)), e.PrevHash, e.Hash})
		}
	default:
		return 0, fmt.Errorf("storage: audit export format %q: want jsonl or csv", format)
	}
	f.Oldest, f.Limit, f.AfterID = true, 1000, 0
	n := 0
	for {
		page, err := s.AuditEntries(ctx, f)
		if err != nil {
			return n, err
		}
		for _, e := range page {
			if err := write(e); err != nil {
				return n, err
			}
			n++
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterID = int(page[len(page)-1].ID)
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

func formatMs(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// CSVCell defuses spreadsheet formulas: a user agent or user name starting
// with = + - @ (or a tab or CR) would otherwise run as a formula when the
// CSV is opened in a spreadsheet. Every CSV export of text someone typed or
// another system sent goes through it (the audit export, the drills
// export); the JSON exports keep every value verbatim.
func CSVCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
