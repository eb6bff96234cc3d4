package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/safefile"
	"github.com/drconsole/drconsole/storage"
)

const backupUsage = `Usage:
  drconsole backup (--config FILE | --db FILE) --to DIR|s3://BUCKET/PREFIX [--key-file FILE]
  drconsole restore --from DIR|BACKUP.db|s3://BUCKET/PREFIX[/BACKUP.db] --db FILE [--config FILE]
                    (--key-file FILE | --unauthenticated) [--force]

backup writes a consistent copy of the console's database while it serves (SQLite's backup
API, one read transaction) to DIR/drconsole-<UTC time>.db, checks it (integrity, the audit
chain from its first record to its head) and then writes its manifest DIR/<same name>.json
(size, SHA-256, schema, audit head). A copy without a manifest is unfinished. With --key-file
(at least 32 random bytes, kept with the console's secrets and never in the backup store) the
manifest carries an HMAC-SHA256 under that key; without one the backup says it is unauthenticated.

restore takes the newest backup with a manifest in DIR (or the one named), checks it again
against its manifest and the manifest against the backup key, holds every account to its
audited history (an account added or changed in the copy is refused, by name), and puts it at
--db. A manifest without a MAC is restored only with --unauthenticated. The restore itself is
recorded in the restored audit log, and, with --config naming audit_anchor.file, marked there
(a "restore" line) so the console's start accepts the older head. It refuses while a console
serves that data directory, and refuses to replace an existing database without --force.

s3:// locations use the s3 section of --config (credentials from the environment, as for
savepoints); the copy is made locally first, uploaded, and its manifest uploaded last.
`

// backupPrefix and backupSuffix name the copies; the UTC time between
// them sorts lexicographically in time order.
const (
	backupPrefix = "drconsole-"
	backupSuffix = ".db"
	backupLayout = "20060102T150405.000Z"
)

// backupManifest is the JSON written next to each copy.
type backupManifest struct {
	File      string    `json:"file"`
	CreatedAt time.Time `json:"created_at"`
	Source    string    `json:"source"`
	Version   string    `json:"drconsole_version"`
	storage.Snapshot
	// MAC is the HMAC-SHA256 (hex) of this manifest without it, under the
	// backup key (backup_trust.go); "" when taken without one.
	MAC string `json:"hmac_sha256,omitempty"`
}

func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage) }
	cfgFile := fs.String("config", "", "")
	dbFile := fs.String("db", "", "")
	to := fs.String("to", "", "")
	keyFile := fs.String("key-file", "", "")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("backup: unexpected argument %q", fs.Arg(0))}
	case (*cfgFile == "") == (*dbFile == ""):
		return usageError{errors.New("backup needs exactly one of --config FILE or --db FILE")}
	case *to == "":
		return usageError{errors.New("backup needs --to DIR")}
	}
	src := *dbFile
	var cfg *config.Config
	if *cfgFile != "" {
		var err error
		if cfg, err = config.Load(*cfgFile); err != nil {
			return err
		}
		src = filepath.Join(cfg.DataDir, "drconsole.db")
	}
	if err := refuseSpecialFile(src); err != nil {
		return inputError{fmt.Errorf("backup: %w", err)}
	}
	var key []byte
	if *keyFile != "" {
		var err error
		if key, err = readBackupKey(*keyFile); err != nil {
			return inputError{fmt.Errorf("backup: %w", err)}
		}
	}
	var remote *s3.Store
	dir := *to
	if config.IsS3URI(*to) {
		var err error
		if remote, err = s3Store(cfg, "backup --to"); err != nil {
			return err
		}
		// The copy is made here first: an upload is not a snapshot.
		if dir, err = os.MkdirTemp("", "drconsole-backup-"); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, storage.PrivateDir); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	start := time.Now().UTC()
	name := backupPrefix + start.Format(backupLayout) + backupSuffix
	dst := filepath.Join(dir, name)
	snap, err := storage.BackupDatabase(ctx, src, dst)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	m := backupManifest{File: name, CreatedAt: start, Source: src, Version: version, Snapshot: snap}
	if key != nil {
		if m.MAC, err = manifestMAC(key, m); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// The manifest goes last: a copy cut short by a crash has none, and
	// restore never picks it.
	where := dst
	if remote != nil {
		where = strings.TrimRight(*to, "/") + "/" + name
		err = uploadBackup(ctx, remote, dst, where, b)
	} else if err = writeFileAtomic(dst+".json", b); err != nil {
		os.Remove(dst)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "backup: %s (%d bytes, schema %d) in %s\n", where, snap.Bytes, snap.SchemaVersion, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "backup: audit %d records, chain intact, head record %d hash %s\n", snap.AuditRecords, snap.AuditHeadID, snap.AuditHeadHash)
	if key == nil {
		fmt.Fprintln(stdout, "backup: WARNING the manifest is not authenticated (no --key-file): restore will need --unauthenticated")
	}
	return nil
}

// s3Store is the configured object store, for backups on s3://.
func s3Store(cfg *config.Config, what string) (*s3.Store, error) {
	if cfg == nil || cfg.S3 == nil {
		return nil, usageError{fmt.Errorf("%s s3://... needs --config FILE with an s3 section (endpoint, region)", what)}
	}
	return s3.New(cfg.S3)
}

// uploadBackup puts the local copy at uri, then its manifest; a failed
// upload removes what it wrote, manifest first.
func uploadBackup(ctx context.Context, st *s3.Store, local, uri string, manifest []byte) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	err = st.Upload(ctx, uri, f, info.Size())
	if err == nil {
		err = st.Upload(ctx, uri+".json", bytes.NewReader(manifest), int64(len(manifest)))
	}
	if err != nil {
		cleanup, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		st.Remove(cleanup, uri+".json")
		st.Remove(cleanup, uri)
	}
	return err
}

func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage) }
	from := fs.String("from", "", "")
	dbFile := fs.String("db", "", "")
	cfgFile := fs.String("config", "", "")
	force := fs.Bool("force", false, "")
	keyFile := fs.String("key-file", "", "")
	unauthenticated := fs.Bool("unauthenticated", false, "")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("restore: unexpected argument %q", fs.Arg(0))}
	case *from == "" || *dbFile == "":
		return usageError{errors.New("restore needs --from DIR|BACKUP.db and --db FILE")}
	}
	var key []byte
	if *keyFile != "" {
		var err error
		if key, err = readBackupKey(*keyFile); err != nil {
			return inputError{fmt.Errorf("restore: %w", err)}
		}
	}
	var cfg *config.Config
	if *cfgFile != "" {
		var err error
		if cfg, err = config.Load(*cfgFile); err != nil {
			return err
		}
	}
	source := *from
	if config.IsS3URI(*from) {
		remote, err := s3Store(cfg, "restore --from")
		if err != nil {
			return err
		}
		// Fetched beside the target, then checked like a local copy.
		staging, err := os.MkdirTemp(filepath.Dir(*dbFile), ".restore-")
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer os.RemoveAll(staging)
		if source, err = downloadBackup(ctx, remote, *from, staging); err != nil {
			return inputError{fmt.Errorf("restore: %w", err)}
		}
	}
	copyPath, m, err := pickBackup(source)
	if err == nil {
		err = checkInput(copyPath, backupFileLimit) // before SQLite opens it
	}
	if err != nil {
		return inputError{fmt.Errorf("restore: %w", err)}
	}
	snap, err := storage.CheckCopy(ctx, copyPath)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if snap.SHA256 != m.SHA256 || snap.AuditHeadHash != m.AuditHeadHash {
		return fmt.Errorf("restore: %s does not match its manifest (sha256 %s, manifest %s): changed or damaged since the backup", copyPath, snap.SHA256, m.SHA256)
	}
	authenticated, err := checkManifestMAC(key, m, *unauthenticated)
	if err != nil {
		return fmt.Errorf("restore: %s: %w", copyPath, err)
	}
	if err := checkCopyAccounts(ctx, copyPath); err != nil {
		return fmt.Errorf("restore: %s: %w; nothing was restored", copyPath, err)
	}

	dataDir := filepath.Dir(*dbFile)
	unlock, err := lockDataDir(dataDir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer unlock()
	if err := refuseSpecialFile(*dbFile); err != nil {
		return inputError{fmt.Errorf("restore: --db %w", err)}
	}
	if exists(*dbFile) && !*force {
		return fmt.Errorf("restore: %s exists: give --force to replace it (its WAL goes with it)", *dbFile)
	}
	// The restore is recorded in a staged copy beside the target, which
	// then replaces it: no restored database without its record.
	stage, err := os.MkdirTemp(dataDir, ".restore-stage-")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.RemoveAll(stage)
	staged := filepath.Join(stage, "drconsole.db")
	if err := placeCopy(copyPath, staged); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	headID, head, err := recordRestore(ctx, staged, copyPath, m, authenticated)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := placeCopy(staged, *dbFile); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restore: %s now holds the backup of %s (%s)\n", *dbFile, m.CreatedAt.Format(time.RFC3339), copyPath)
	fmt.Fprintf(stdout, "restore: audit %d records, chain intact, accounts match their audited history; backup head record %d hash %s\n", snap.AuditRecords, snap.AuditHeadID, snap.AuditHeadHash)
	if !authenticated {
		fmt.Fprintln(stdout, "restore: WARNING restored with --unauthenticated: the manifest had no MAC to check")
	}
	fmt.Fprintf(stdout, "restore: recorded as backup.restore, new head record %d hash %s\n", headID, head)
	if cfg != nil && cfg.AuditAnchor.File != "" {
		if err := markRestoreInAnchor(cfg.AuditAnchor.File, headID, head); err != nil {
			return fmt.Errorf("restore: marking the restore in the anchor file (the console will refuse to start until it is marked: drconsole audit head --restore): %w", err)
		}
		fmt.Fprintf(stdout, "restore: marked in the anchor file %s\n", cfg.AuditAnchor.File)
	}
	fmt.Fprintln(stdout, "restore: anything the console recorded after that time is not in it; a failover step it was running resumes as interrupted")
	return nil
}

// pickBackup resolves --from: a directory's newest copy that has a
// manifest, or the named copy with its manifest.
func pickBackup(from string) (string, backupManifest, error) {
	st, err := os.Stat(from)
	if err != nil {
		return "", backupManifest{}, err
	}
	p := from
	if st.IsDir() {
		entries, err := os.ReadDir(from)
		if err != nil {
			return "", backupManifest{}, err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		newest, err := newestFinished(from, names)
		if err != nil {
			return "", backupManifest{}, err
		}
		p = filepath.Join(from, newest)
	}
	b, err := safefile.ReadFile(p+".json", safefile.SmallLimit)
	if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
		return "", backupManifest{}, err
	}
	if err != nil {
		return "", backupManifest{}, fmt.Errorf("%s has no manifest (%s.json): an unfinished backup is not restored", p, p)
	}
	var m backupManifest
	if err := json.Unmarshal(b, &m); err != nil || m.SHA256 == "" {
		return "", backupManifest{}, fmt.Errorf("%s.json is not a backup manifest", p)
	}
	return p, m, nil
}

// newestFinished picks, among the names in dir, the newest backup that
// has its manifest.
func newestFinished(dir string, names []string) (string, error) {
	var finished []string
	for _, n := range names {
		if strings.HasPrefix(n, backupPrefix) && strings.HasSuffix(n, backupSuffix) && slices.Contains(names, n+".json") {
			finished = append(finished, n)
		}
	}
	if len(finished) == 0 {
		return "", fmt.Errorf("%s holds no finished backup (%s*%s with its .json manifest)", dir, backupPrefix, backupSuffix)
	}
	return slices.Max(finished), nil
}

// downloadBackup fetches the backup at uri (a copy, or the newest
// finished one under a prefix) and its manifest into dir, and returns the
// local copy's path.
func downloadBackup(ctx context.Context, st *s3.Store, uri, dir string) (string, error) {
	uri = strings.TrimRight(uri, "/")
	if !strings.HasSuffix(uri, backupSuffix) {
		files, _, err := st.List(ctx, uri)
		if err != nil {
			return "", err
		}
		var names []string
		for _, f := range files {
			names = append(names, path.Base(f.URI))
		}
		newest, err := newestFinished(uri, names)
		if err != nil {
			return "", err
		}
		uri += "/" + newest
	}
	local := filepath.Join(dir, path.Base(uri))
	for _, u := range []string{uri + ".json", uri} {
		f, err := os.OpenFile(filepath.Join(dir, path.Base(u)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return "", err
		}
		_, err = st.Download(ctx, u, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
	}
	return local, nil
}

// placeCopy copies the checked backup to dst. The old database's -wal
// and -shm go just before the rename: SQLite would replay a leftover WAL
// into the new file and corrupt it.
func placeCopy(src, dst string) error {
	in, _, err := safefile.Open(src, backupFileLimit)
	if err != nil {
		return safefile.Named(src, err)
	}
	defer in.Close()
	return writeAtomic(dst, in, func() error {
		for _, side := range []string{dst + "-wal", dst + "-shm"} {
			if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
