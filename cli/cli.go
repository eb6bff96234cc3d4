// Package cli is the drconsole command line: serve and demo (serve.go, the
// one place the console's parts are wired together), and the subcommands
// users, audit, translate, export, savepoint, backup and restore. The drconsole binary's
// main only hands it the build's version.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// version is the build's, handed over by Main.
var version = "dev"

const usage = `drconsole: Kafka disaster-recovery console

Usage:
  drconsole serve --config FILE          watch the clusters and flows of FILE
  drconsole demo [--addr HOST:PORT] [--data DIR]
                                         run the embedded sandbox: two in-process
                                         Kafka clusters, traffic and an MM2 mirror
  drconsole translate --offsets FILE (--syncs FILE | --config FILE)
                                         translate primary offsets to DR offsets
  drconsole export syncs --config FILE   write the stored offset syncs as JSON Lines
  drconsole users add|list|passwd|role|disable|enable ... (--config FILE | --db FILE)
                                         manage the console's accounts (audited)
  drconsole audit verify (--db FILE | --config FILE)
                                         check the audit log's hash chain
  drconsole audit export --config FILE [--format jsonl|csv]
                                         write the audit log
  drconsole savepoint rewrite SRC --offsets FILE --out DST [--rename-topics ...]
                                         write a copy of a savepoint whose Kafka source
                                         resumes in DR (DR topics and translated offsets)
  drconsole savepoint inspect PATH [--uid UID] [--json] [--config FILE]
                                         read the Kafka offsets out of a Flink savepoint
                                         (local, or s3:// with the config's s3 section)
  drconsole backup (--config FILE | --db FILE) --to DIR
                                         a checked copy of the console's database, online
  drconsole restore --from DIR|BACKUP.db --db FILE [--force]
                                         put the newest (or named) backup in place
  drconsole version                      print the version

Run "drconsole COMMAND -h" for a command's flags.
`

// Main runs the command line of build v and exits with its status.
func Main(v string) {
	version = v
	// Listen before any command starts: a signal that arrives while the
	// watcher goroutine is still starting would otherwise reach only the
	// command, which may be blocked in a read and never see it.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go exitWhenStuck(signals, os.Stderr)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stuckGrace is how long a command may take to stop after SIGINT or
// SIGTERM (serve's own bound is 15 s) before the process exits anyway: a
// command blocked in a system call, such as reading a named pipe given as
// --syncs or --config, never sees its context end. A second signal exits
// at once.
var stuckGrace = 20 * time.Second

func exitWhenStuck(c <-chan os.Signal, stderr io.Writer) {
	<-c
	select {
	case <-c:
	case <-time.After(stuckGrace):
	}
	fmt.Fprintln(stderr, "drconsole: still busy after the stop signal (a named pipe or stuck read?); exiting")
	os.Exit(1)
}

// run is Main without the exit, so tests can call it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Messages name things read from files: shown, never obeyed (terminal.go).
	stderr = newTerminalWriter(stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(ctx, args[1:], stderr)
	case "demo":
		err = demoCmd(ctx, args[1:], stdout, stderr)
	case "translate":
		err = translateCmd(ctx, args[1:], stdin, stdout, stderr)
	case "savepoint":
		err = savepointCmd(ctx, args[1:], stdin, stdout, stderr)
	case "export":
		err = exportCmd(ctx, args[1:], stdout, stderr)
	case "users":
		err = usersCmd(ctx, args[1:], stdin, stdout, stderr)
	case "audit":
		err = auditCmd(ctx, args[1:], stdout, stderr)
	case "backup":
		err = backupCmd(ctx, args[1:], stdout, stderr)
	case "restore":
		err = restoreCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "drconsole", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "drconsole: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var usageErr usageError
	var inErr inputError
	var partial partialError
	var markers savepointMarkerError
	var missing missingOffsetsError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usageErr), errors.As(err, &inErr):
		fmt.Fprintln(stderr, "drconsole:", err)
		return 2
	case errors.As(err, &partial), errors.As(err, &markers), errors.As(err, &missing):
		fmt.Fprintln(stderr, "drconsole:", err)
		return 3
	default:
		fmt.Fprintln(stderr, "drconsole:", err)
		return 1
	}
}

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
