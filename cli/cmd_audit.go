package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/safefile"
	"github.com/drconsole/drconsole/storage"
)

const auditUsage = `Usage:
  drconsole audit verify (--db FILE | --config FILE) [--anchor FILE]
  drconsole audit verify (--db FILE | --config FILE) --evidence PACK
  drconsole audit head (--db FILE | --config FILE) [--restore]
  drconsole audit export (--config FILE | --db FILE) [--format jsonl|csv] [--actor A] [--action X]

verify walks the hash chain of the audit log and exits 1 naming the first record that was
edited, deleted, inserted or reordered; 0 with "audit: N records, chain intact" and the head
hash. Removing the newest records, or rewriting the chain after an edit, leaves a consistent
chain: only a head kept elsewhere shows it. head prints one anchor line
("<time> record N hash H"); append it to a file outside the database (or let the console do it:
audit_anchor in the config), and verify --anchor FILE checks every anchor line against the log.
head --restore marks a deliberate restore of an older copy: anchor lines before it are not held
to the log (drconsole restore --config writes it to audit_anchor.file itself).
verify also holds every account (role, creator, creation time, password, provider link,
disabled) to the state its audit records left, and names each account that differs.
verify --evidence PACK checks a drill's evidence pack (its .json or its .html download) against
the log instead: each record's hash recomputed, each record the log's at its seq, none of the
run's records left out, the head it names in the log with the chain to it intact, its anchor,
and the request, approvals, steps and figures as the database holds them; it exits 1 naming the
first mismatch.
export writes the records, oldest first, to stdout. All three open the database read-only.
`

func auditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return usageError{errors.New("audit needs a subcommand: verify, head or export")}
	}
	fs := flag.NewFlagSet("audit "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, auditUsage) }
	cfgFile := fs.String("config", "", "")
	dbFile := fs.String("db", "", "")
	format := fs.String("format", "jsonl", "")
	actor := fs.String("actor", "", "")
	action := fs.String("action", "", "")
	anchor := fs.String("anchor", "", "")
	evidence := fs.String("evidence", "", "")
	restoreMark := fs.Bool("restore", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("audit %s: unexpected argument %q", args[0], fs.Arg(0))}
	}
	switch args[0] {
	case "verify", "export", "head":
	default:
		return usageError{fmt.Errorf("audit: unknown subcommand %q (verify, head, export)", args[0])}
	}
	if *anchor != "" && args[0] != "verify" {
		return usageError{fmt.Errorf("audit %s: --anchor goes with verify", args[0])}
	}
	if *evidence != "" && (args[0] != "verify" || *anchor != "") {
		return usageError{fmt.Errorf("audit %s: --evidence goes with verify, without --anchor", args[0])}
	}
	if *restoreMark && args[0] != "head" {
		return usageError{fmt.Errorf("audit %s: --restore goes with head", args[0])}
	}
	if args[0] == "export" && !slices.Contains(storage.AuditExportFormats, *format) {
		return usageError{fmt.Errorf("audit export: --format %q: want jsonl or csv", *format)}
	}
	if err := refuseSpecialFile(*dbFile); err != nil {
		return inputError{fmt.Errorf("audit %s: --db %w", args[0], err)}
	}
	store, err := openStoreFlag(*cfgFile, *dbFile, "audit "+args[0], true)
	if err != nil {
		return err
	}
	defer store.Close()

	if args[0] == "export" {
		_, err := store.ExportAudit(ctx, stdout, storage.AuditFilter{Actor: *actor, Action: *action}, *format)
		return err
	}
	if args[0] == "head" {
		id, head, err := store.AuditHead(ctx)
		if err != nil {
			return err
		}
		line := anchorLine(time.Now(), id, head)
		if *restoreMark {
			line += " restore"
		}
		fmt.Fprintln(stdout, line)
		return nil
	}
	if *evidence != "" {
		return verifyEvidence(ctx, store, *evidence, stdout)
	}
	v, err := audit.Verify(ctx, store)
	if err != nil {
		return err
	}
	if v.Broken != nil {
		return v.Err()
	}
	if *anchor != "" {
		checked, err := checkAnchors(ctx, store, *anchor, v.HeadID)
		if err != nil {
			return err
		}
		if checked == 0 {
			return inputError{fmt.Errorf("audit verify --anchor %s: no anchor lines in it", *anchor)}
		}
		fmt.Fprintf(stdout, "audit: %d anchor(s) in %s match the log\n", checked, *anchor)
	}
	for _, line := range v.Lines() {
		fmt.Fprintln(stdout, line)
	}
	return v.Err()
}

// evidenceFileLimit bounds an evidence pack read whole: a drill's records
// take a few hundred kilobytes.
const evidenceFileLimit = 256 << 20

// verifyEvidence checks the evidence pack in file against store's log.
func verifyEvidence(ctx context.Context, store *storage.Store, file string, stdout io.Writer) error {
	if file == "-" {
		return usageError{errors.New("audit verify --evidence: name the pack's file (not stdin)")}
	}
	b, err := readInput(file, nil, evidenceFileLimit)
	if err != nil {
		return err
	}
	p, err := audit.ParseEvidence(b)
	if err != nil {
		return inputError{fmt.Errorf("audit verify --evidence %s: %w", file, err)}
	}
	c, err := audit.VerifyEvidence(ctx, store, p, runbook.RunSubject(p.Run))
	if err != nil {
		return err
	}
	for _, line := range c.Lines(p) {
		fmt.Fprintln(stdout, line)
	}
	return nil
}

// refuseSpecialFile refuses a path that exists and is not a regular file:
// SQLite would open a FIFO and wait for a writer forever, or read a device.
// A missing path is left to the caller.
func refuseSpecialFile(p string) error {
	if p == "" {
		return nil
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is not a regular file (mode %s: a named pipe, device or directory): give the database file", p, st.Mode())
}

// anchorLine is one line of an anchor file: "<RFC 3339 time> record <id>
// hash <hex>".
func anchorLine(at time.Time, id int64, hash string) string {
	return fmt.Sprintf("%s record %d hash %s", at.UTC().Format(time.RFC3339), id, hash)
}

// checkAnchors holds the log to every line of an anchor file: each named
// record must still exist with that hash. A record past the log's end
// means records were removed from the end; another hash, a rewritten
// chain. A line ending "restore" marks a deliberate restore of an older
// copy (drconsole restore, audit head --restore): the lines before the
// last such line vouched for the history the restore replaced and are not
// held to the log. Blank lines and # comments are skipped; anything else
// malformed is an input error with its line number.
func checkAnchors(ctx context.Context, store *storage.Store, name string, headID int64) (int, error) {
	f, err := openInput(name, streamedFileLimit)
	if err != nil {
		return 0, inputError{fmt.Errorf("audit verify --anchor: %w", err)}
	}
	defer f.Close()
	from := 0 // the last restore line
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if fs := strings.Fields(sc.Text()); len(fs) == 6 && fs[5] == "restore" {
			from = line
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	sc = bufio.NewScanner(f)
	line, checked := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") || line < from {
			continue
		}
		fs := strings.Fields(text)
		var id int64
		if len(fs) == 6 && fs[5] == "restore" {
			fs = fs[:5]
		}
		if len(fs) != 5 || fs[1] != "record" || fs[3] != "hash" || len(fs[4]) != 64 {
			return checked, inputError{fmt.Errorf("%s:%d: want \"<time> record <id> hash <64 hex>\" (and \"restore\" after a restore)", name, line)}
		}
		if id, err = strconv.ParseInt(fs[2], 10, 64); err != nil || id < 0 {
			return checked, inputError{fmt.Errorf("%s:%d: record %q is not a record number", name, line, fs[2])}
		}
		if id == 0 {
			checked++ // the anchor of an empty log vouches for nothing
			continue
		}
		hash, ok, err := store.AuditHashOf(ctx, id)
		switch {
		case err != nil:
			return checked, err
		case !ok && id > headID:
			return checked, fmt.Errorf("audit: %s:%d (%s) names record %d, but the log ends at record %d: "+
				"records were removed from the end (truncated)", name, line, fs[0], id, headID)
		case !ok:
			return checked, fmt.Errorf("audit: %s:%d (%s) names record %d, which is missing from the log", name, line, fs[0], id)
		case hash != fs[4]:
			return checked, fmt.Errorf("audit: %s:%d (%s): record %d has hash %s, the anchor says %s: the chain was rewritten",
				name, line, fs[0], id, hash, fs[4])
		}
		checked++
	}
	if err := sc.Err(); err != nil {
		return checked, fmt.Errorf("audit verify --anchor %s: %w", name, err)
	}
	return checked, nil
}

// startAuditAnchor records the audit head outside the database while the
// console runs (config audit_anchor): at start, then every interval when
// the head moved, appended to the file and/or POSTed as JSON to the URL.
// Failures are logged and retried next time; the console keeps serving.
// The returned function waits for it to finish after ctx ends.
func startAuditAnchor(ctx context.Context, store *storage.Store, a config.AuditAnchor, log *slog.Logger) (wait func()) {
	done := make(chan struct{})
	if a.File == "" && a.URL == "" {
		close(done)
		return func() {}
	}
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 10 * time.Second}
		var lastID int64 = -1
		var lastHash string
		tick := time.NewTicker(a.Interval.D())
		defer tick.Stop()
		for {
			id, hash, err := store.AuditHead(ctx)
			if err != nil && ctx.Err() == nil {
				log.Error("audit anchor: reading the head", "err", err)
			} else if err == nil && (id != lastID || hash != lastHash) {
				if err := writeAnchor(ctx, client, a, time.Now(), id, hash); err != nil {
					log.Error("audit anchor: not recorded; retrying next interval", "record", id, "err", err)
				} else {
					lastID, lastHash = id, hash
					log.Info("audit anchor recorded", "record", id, "hash", hash)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { <-done }
}

func writeAnchor(ctx context.Context, client *http.Client, a config.AuditAnchor, at time.Time, id int64, hash string) error {
	var errs []error
	line := anchorLine(at, id, hash)
	if a.File != "" {
		f, err := safefile.OpenAppend(a.File, 0o600)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			err = errors.Join(err, f.Sync(), f.Close())
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("file %s: %w", a.File, err))
		}
	}
	if a.URL != "" {
		body, _ := json.Marshal(map[string]any{"at": at.UTC().Format(time.RFC3339), "record": id, "hash": hash,
			"line": line})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					err = fmt.Errorf("answered %s", resp.Status)
				}
			}
		}
		if err != nil {
			errs = append(errs, config.URLError(a.URL, err)) // the URL may hold a token
		}
	}
	return errors.Join(errs...)
}
