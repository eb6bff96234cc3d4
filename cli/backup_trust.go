package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/safefile"
	"github.com/drconsole/drconsole/storage"
)

// Backups are trusted through a key kept apart from them: the manifest
// beside a copy is authenticated with HMAC-SHA256 under the backup key
// (--key-file, at least 32 random bytes, e.g. `head -c 32 /dev/urandom`),
// which lives with the console's other secrets and never in the backup
// store. Whoever can write the backup store but not read the key cannot
// make a copy restore: an edited copy no longer matches its manifest, and
// a manifest recomputed for it no longer matches its MAC. A key derived
// from the copy itself (its audit head, say) would be no key: the copy
// carries it.

// minBackupKey is the shortest backup key accepted, in bytes.
const minBackupKey = 32

// readBackupKey reads the key file: a regular file of 32 bytes to 4 KiB
// (trailing newlines are not part of the key), opened without blocking.
func readBackupKey(name string) ([]byte, error) {
	b, err := safefile.ReadFile(name, 4096)
	if err != nil {
		return nil, fmt.Errorf("--key-file: %w (want a regular file of at most 4 KiB)", err)
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) < minBackupKey {
		return nil, fmt.Errorf("--key-file %s: the key has %d bytes, want at least %d random ones (head -c 32 /dev/urandom > FILE)", name, len(b), minBackupKey)
	}
	return b, nil
}

// manifestMAC is the HMAC-SHA256, hex, of m's JSON without its MAC.
func manifestMAC(key []byte, m backupManifest) (string, error) {
	m.MAC = ""
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, key)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// errUnauthenticated: a manifest without a MAC, restored without
// --unauthenticated.
var errUnauthenticated = errors.New("its manifest is not authenticated (the backup was taken without --key-file): " +
	"anyone who could write the backup store could have made it; give --unauthenticated to restore it all the same")

// checkManifestMAC holds m to key. No key and no MAC passes only when
// unauthenticated is allowed; a MAC needs the key.
func checkManifestMAC(key []byte, m backupManifest, unauthenticated bool) (authenticated bool, err error) {
	switch {
	case m.MAC == "" && unauthenticated:
		return false, nil
	case m.MAC == "":
		return false, errUnauthenticated
	case key == nil:
		return false, errors.New("its manifest is authenticated: give the backup key (--key-file FILE) to check it")
	}
	want, err := manifestMAC(key, m)
	if err != nil {
		return false, err
	}
	if !hmac.Equal([]byte(want), []byte(m.MAC)) {
		return false, errors.New("its manifest's MAC does not match under this backup key: the manifest was changed, or the key is another one; nothing was restored")
	}
	return true, nil
}

// checkCopyAccounts holds the accounts of the copy at p to its audit
// chain (which CheckCopy verified): a copy with an account added or
// changed behind the console's back is refused, naming the account.
func checkCopyAccounts(ctx context.Context, p string) error {
	s, err := storage.OpenReadOnly(p)
	if err != nil {
		return err
	}
	defer s.Close()
	return checkAccounts(ctx, s)
}

// recordRestore writes the restore into the restored database's audit
// log (opening it migrates it, as the console's start would) and returns
// its new head.
func recordRestore(ctx context.Context, db, from string, m backupManifest, authenticated bool) (int64, string, error) {
	s, err := storage.Open(db)
	if err != nil {
		return 0, "", err
	}
	defer s.Close()
	ctx = audit.WithClient(ctx, audit.Client{IP: "local", UserAgent: "drconsole-cli/" + version})
	_, err = audit.New(s).Record(ctx, cliActor(), audit.BackupRestore, "database", map[string]any{
		"from": from, "backup_created_at": m.CreatedAt.Format(time.RFC3339), "sha256": m.SHA256,
		"backup_head_id": m.AuditHeadID, "backup_head_hash": m.AuditHeadHash, "authenticated": authenticated})
	if err != nil {
		return 0, "", fmt.Errorf("recording the restore in its audit log: %w", err)
	}
	return s.AuditHead(ctx)
}

// markRestoreInAnchor appends the restored head as a restore line to the
// anchor file, so the console's start holds the log to it and to later
// lines only (anchorAtStart).
func markRestoreInAnchor(file string, id int64, hash string) error {
	f, err := safefile.OpenAppend(file, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, anchorLine(time.Now(), id, hash)+" restore")
	return errors.Join(err, f.Sync(), f.Close())
}
