package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

const usersUsage = `Usage:
  drconsole users add NAME --role viewer|operator|admin [--password-stdin | --no-password] (--config FILE | --db FILE)
  drconsole users list (--config FILE | --db FILE)
  drconsole users passwd NAME [--password-stdin] (--config FILE | --db FILE)
  drconsole users role NAME viewer|operator|admin (--config FILE | --db FILE)
  drconsole users disable NAME (--config FILE | --db FILE)     also signs NAME out everywhere
  drconsole users enable NAME (--config FILE | --db FILE)

Passwords are asked twice without echo when stdin is a terminal; --password-stdin reads the first
line of stdin instead (scripts, secrets managers). At least 12 characters. --no-password makes an
account that can only sign in through the reverse proxy (auth.mode: proxy).
--db FILE must exist unless --create is given (a mistyped path would start an empty database).
Names are case-insensitive: Bob and bob are one account, stored as bob.
Every change is written to the audit log as cli:<your OS user name>.
`

func usersCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usersUsage)
		return usageError{errors.New("users needs a subcommand: add, list, passwd, role, disable, enable")}
	}
	fs := flag.NewFlagSet("users "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usersUsage) }
	cfgFile := fs.String("config", "", "")
	dbFile := fs.String("db", "", "")
	role := fs.String("role", "", "")
	pwStdin := fs.Bool("password-stdin", false, "")
	noPassword := fs.Bool("no-password", false, "")
	create := fs.Bool("create", false, "")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return usageError{err}
	}
	want := map[string]int{"add": 1, "list": 0, "passwd": 1, "role": 2, "disable": 1, "enable": 1}
	n, ok := want[args[0]]
	if ok && n > 0 && len(pos) == n {
		// "Bob" is bob: one canonical form everywhere.
		pos[0] = model.CanonicalName(pos[0])
	}
	switch {
	case !ok:
		return usageError{fmt.Errorf("users: unknown subcommand %q (add, list, passwd, role, disable, enable)", args[0])}
	case len(pos) != n:
		return usageError{fmt.Errorf("users %s: want %d argument(s), got %q", args[0], n, pos)}
	case n > 0 && identity.CheckName(pos[0]) != nil:
		return usageError{fmt.Errorf("users %s: %w", args[0], identity.CheckName(pos[0]))}
	case args[0] == "add" && identity.CheckNewName(pos[0]) != nil:
		return usageError{fmt.Errorf("users add: %w", identity.CheckNewName(pos[0]))}
	}

	// A mistyped --db must not quietly start an empty database (and an
	// account nobody's console reads): creating one is asked for.
	if *dbFile != "" && !*create {
		if _, err := os.Stat(*dbFile); errors.Is(err, iofs.ErrNotExist) {
			return usageError{fmt.Errorf("users %s: --db %s does not exist: check the path, or add --create to start a new database", args[0], *dbFile)}
		}
	}
	if err := refuseSpecialFile(*dbFile); err != nil {
		return inputError{fmt.Errorf("users %s: --db %w", args[0], err)}
	}
	store, err := openStoreFlag(*cfgFile, *dbFile, "users "+args[0], false)
	if err != nil {
		return err
	}
	defer store.Close()
	// The checks, the audit record and the change are identity's, shared
	// with the admin page; the actor is the person at the terminal.
	ctx = audit.WithClient(ctx, audit.Client{IP: "local", UserAgent: "drconsole-cli/" + version})
	auditor := identity.AuditAs(audit.New(store), cliActor())

	switch args[0] {
	case "list":
		users, err := store.Users(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tPASSWORD\tCREATED (UTC)")
		for _, u := range users {
			status, pw := "active", "set"
			if u.Disabled {
				status = "disabled"
			}
			if u.PasswordHash == "" {
				pw = "none (proxy only)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Name, u.Role, status, pw, time.UnixMilli(u.CreatedMs).UTC().Format("2006-01-02 15:04"))
		}
		return tw.Flush()

	case "add":
		name := pos[0]
		if err := identity.CheckRole(model.Role(*role)); err != nil {
			return usageError{fmt.Errorf("users add: --role %w", err)}
		}
		if *noPassword && *pwStdin {
			return usageError{errors.New("users add: --no-password and --password-stdin exclude each other")}
		}
		// Asked before the password is: identity.CreateUser checks again.
		if _, err := store.UserByName(ctx, name); err == nil {
			return fmt.Errorf("users add: %q already exists (users passwd or users role change it)", name)
		}
		hash := ""
		if !*noPassword {
			if hash, err = newPasswordHash(name, stdin, *pwStdin, stderr); err != nil {
				return err
			}
		}
		if err := identity.CreateUser(ctx, store, auditor, name, model.Role(*role), hash, cliActor()); err != nil {
			return fmt.Errorf("users add: %w", err)
		}
		fmt.Fprintf(stdout, "users: added %s (%s)\n", name, *role)

	case "passwd":
		name := pos[0]
		if _, err := store.UserByName(ctx, name); err != nil {
			return err
		}
		hash, err := newPasswordHash(name, stdin, *pwStdin, stderr)
		if err != nil {
			return err
		}
		if err := identity.SetPassword(ctx, store, auditor, name, hash); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "users: new password for %s; their sessions are signed out\n", name)

	case "role":
		name, to := pos[0], model.Role(pos[1])
		if err := identity.CheckRole(to); err != nil {
			return usageError{fmt.Errorf("users role: %w", err)}
		}
		from, err := identity.SetRole(ctx, store, auditor, name, to)
		if err != nil {
			return err
		}
		if from == to {
			fmt.Fprintf(stdout, "users: %s is already %s; nothing changed\n", name, to)
		} else {
			fmt.Fprintf(stdout, "users: %s is now %s (was %s)\n", name, to, from)
		}

	case "disable", "enable":
		name := pos[0]
		if err := identity.SetDisabled(ctx, store, auditor, name, args[0] == "disable"); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "users: %sd %s\n", args[0], name)
	}
	return nil
}

// parseInterleaved parses flags that may come before, between or after
// positional arguments ("users add alice --role operator"), which
// flag.Parse alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// openStoreFlag opens the database named by --db, or the one in the data
// directory of --config. readOnly opens it without migrating or writing
// (audit verify and export must not change the evidence).
func openStoreFlag(cfgFile, dbFile, cmd string, readOnly bool) (*storage.Store, error) {
	if (cfgFile == "") == (dbFile == "") {
		return nil, usageError{fmt.Errorf("%s needs exactly one of --config FILE or --db FILE", cmd)}
	}
	path := dbFile
	if cfgFile != "" {
		cfg, err := config.Load(cfgFile)
		if err != nil {
			return nil, err
		}
		path = filepath.Join(cfg.DataDir, "drconsole.db")
	}
	if readOnly {
		return storage.OpenReadOnly(path)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("%s: data directory: %w", cmd, err)
	}
	return storage.Open(path)
}

// cliActor names the person at the terminal in the audit log.
func cliActor() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return "cli:" + name
}

// newPasswordHash reads a new password, from stdin's first line or asked
// twice on the terminal without echo, and hashes it.
func newPasswordHash(name string, stdin io.Reader, fromStdin bool, stderr io.Writer) (string, error) {
	var pw string
	if fromStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading the password from stdin: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	} else {
		f, ok := stdin.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return "", usageError{errors.New("no terminal to ask for the password: pass it on stdin with --password-stdin")}
		}
		ask := func(prompt string) (string, error) {
			fmt.Fprint(stderr, prompt)
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(stderr)
			return string(b), err
		}
		var err error
		if pw, err = ask("New password for " + name + ": "); err != nil {
			return "", err
		}
		again, err := ask("Again: ")
		if err != nil {
			return "", err
		}
		if again != pw {
			return "", inputError{errors.New("the two passwords differ; nothing was changed")}
		}
	}
	if err := identity.CheckPasswordRules(pw); err != nil {
		return "", inputError{err}
	}
	return identity.HashPassword(pw)
}
