package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/drconsole/drconsole/storage"
)

const auditUsage = `Usage:
  drconsole audit verify (--db FILE | --config FILE)
  drconsole audit export (--config FILE | --db FILE) [--format jsonl|csv] [--actor A] [--action X]

verify walks the hash chain of the audit log and exits 1 naming the first record that was
edited, deleted, inserted or reordered; 0 with "audit: N records, chain intact" and the head
hash, worth keeping elsewhere: removing the newest records or rewriting the whole chain after
an edit can only be caught by comparing against an earlier head.
export writes the records, oldest first, to stdout. Both open the database read-only.
`

func auditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return usageError{errors.New("audit needs a subcommand: verify or export")}
	}
	fs := flag.NewFlagSet("audit "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, auditUsage) }
	cfgFile := fs.String("config", "", "")
	dbFile := fs.String("db", "", "")
	format := fs.String("format", "jsonl", "")
	actor := fs.String("actor", "", "")
	action := fs.String("action", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("audit %s: unexpected argument %q", args[0], fs.Arg(0))}
	}
	switch args[0] {
	case "verify", "export":
	default:
		return usageError{fmt.Errorf("audit: unknown subcommand %q (verify, export)", args[0])}
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
	n, bad, err := store.VerifyAudit(ctx)
	if err != nil {
		return err
	}
	if bad != nil {
		return fmt.Errorf("audit: %w (the %d records before it are intact)", bad, n)
	}
	id, head, err := store.AuditHead(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "audit: %d records, chain intact\n", n)
	fmt.Fprintf(stdout, "audit: head record %d hash %s\n", id, head)
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
