package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// liveDB is a database a "console" keeps writing audit records to until
// stop is called; stop returns how many it wrote.
func liveDB(t *testing.T, path string) (store *storage.Store, stop func() int64) {
	t.Helper()
	store, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for i := 0; i < 100000; i++ { // bounded: the test stops it long before
			select {
			case <-done:
				return
			default:
			}
			if _, err := store.AppendAudit(context.Background(), model.AuditEntry{Actor: "alice", Action: "test.write", Subject: fmt.Sprint("n:", i)}); err != nil {
				t.Error(err)
				return
			}
			n.Add(1)
		}
	})
	var once sync.Once
	stop = func() int64 {
		once.Do(func() { close(done); wg.Wait() })
		return n.Load()
	}
	t.Cleanup(func() { stop(); store.Close() })
	return store, stop
}

// backupKeyFile is a file holding the tests' backup key (the same key
// every call).
func backupKeyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "backup.key")
	if err := os.WriteFile(p, []byte("test-backup-key-0123456789abcdef-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readManifest(t *testing.T, p string) backupManifest {
	t.Helper()
	b, err := os.ReadFile(p + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var m backupManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func onlyBackup(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "drconsole-*.db"))
	if err != nil || len(m) != 1 {
		t.Fatalf("backups in %s: %v %v", dir, m, err)
	}
	return m[0]
}

// A backup taken while the console writes is one consistent point in
// time: its chain verifies and its head is a record the writer made.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "drconsole.db")
	os.MkdirAll(filepath.Dir(db), 0o700)
	store, stop := liveDB(t, db)
	for { // some records before the copy
		if id, _, _ := store.AuditHead(context.Background()); id >= 50 {
			break
		}
	}
	r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--db", db, "--to", filepath.Join(dir, "backups"))
	written := stop()
	if r.code != 0 {
		t.Fatalf("backup: %d %s", r.code, r.stderr)
	}
	copyPath := onlyBackup(t, filepath.Join(dir, "backups"))
	m := readManifest(t, copyPath)
	if m.AuditRecords < 50 || int64(m.AuditRecords) > written || m.AuditHeadID != int64(m.AuditRecords) {
		t.Fatalf("manifest %+v, writer wrote %d", m, written)
	}
	if !strings.Contains(r.stdout, "chain intact") || !strings.Contains(r.stdout, m.AuditHeadHash) {
		t.Fatalf("stdout: %s", r.stdout)
	}
	// The copy's head is the very record the live database holds at that id.
	hash, ok, err := store.AuditHashOf(context.Background(), m.AuditHeadID)
	if err != nil || !ok || hash != m.AuditHeadHash {
		t.Fatalf("live record %d: %s %v %v, manifest %s", m.AuditHeadID, hash, ok, err, m.AuditHeadHash)
	}

	// Restored to a fresh place, audit verify agrees with the manifest.
	restored := filepath.Join(dir, "standby", "drconsole.db")
	os.MkdirAll(filepath.Dir(restored), 0o700)
	r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", filepath.Join(dir, "backups"), "--db", restored)
	if r.code != 0 {
		t.Fatalf("restore: %d %s", r.code, r.stderr)
	}
	// It holds the backup's chain, with its head, and then the record of
	// the restore.
	anchor := writeFile(t, t.TempDir(), "anchor", anchorLine(m.CreatedAt, m.AuditHeadID, m.AuditHeadHash)+"\n")
	r = runCLI(t, "", "audit", "verify", "--db", restored, "--anchor", anchor)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d records, chain intact", m.AuditRecords+1)) {
		t.Fatalf("verify restored: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, "", "audit", "export", "--db", restored, "--action", "backup.restore"); !strings.Contains(r.stdout, m.AuditHeadHash) {
		t.Fatalf("the restore's record: %s %s", r.stdout, r.stderr)
	}
}

func backupOf(t *testing.T, records int) (dir, copyPath string) {
	t.Helper()
	dir = t.TempDir()
	db := filepath.Join(dir, "src.db")
	store, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range records {
		if _, err := store.AppendAudit(context.Background(), model.AuditEntry{Actor: "bob", Action: "test.write", Subject: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	if r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--db", db, "--to", filepath.Join(dir, "backups")); r.code != 0 {
		t.Fatalf("backup: %s", r.stderr)
	}
	return dir, onlyBackup(t, filepath.Join(dir, "backups"))
}

func TestRestoreRefusesToReplaceWithoutForce(t *testing.T) {
	dir, copyPath := backupOf(t, 3)
	target := filepath.Join(dir, "live.db")
	other, err := storage.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	// The old database's uncheckpointed WAL must not be replayed into the
	// restored file: keep records only in the WAL while restoring.
	for i := range 20 {
		if _, err := other.AppendAudit(context.Background(), model.AuditEntry{Actor: "mallory", Action: "old.write", Subject: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(target + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("want a non-empty WAL beside the old database: %v", err)
	}
	walCopy, _ := os.ReadFile(target + "-wal")
	other.Close() // closing checkpoints; put the WAL back as a crash would leave it
	if err := os.WriteFile(target+"-wal", walCopy, 0o600); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", copyPath, "--db", target)
	if r.code == 0 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("restore over an existing database without --force: %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", copyPath, "--db", target, "--force")
	if r.code != 0 {
		t.Fatalf("restore --force: %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "audit", "verify", "--db", target)
	if r.code != 0 || !strings.Contains(r.stdout, "4 records, chain intact") { // and the restore's
		t.Fatalf("restored database: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestRestoreRefusesWhileAConsoleServes(t *testing.T) {
	dir, copyPath := backupOf(t, 1)
	dataDir := filepath.Join(dir, "data")
	os.MkdirAll(dataDir, 0o700)
	unlock, err := lockDataDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	r := runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", copyPath, "--db", filepath.Join(dataDir, "drconsole.db"))
	if r.code == 0 || !strings.Contains(r.stderr, "another drconsole is serving") {
		t.Fatalf("restore under a serving console: %d %s", r.code, r.stderr)
	}
	if exists(filepath.Join(dataDir, "drconsole.db")) {
		t.Fatal("a database was written under a serving console")
	}
}

func TestRestoreRefusesDamagedOrUnfinishedBackups(t *testing.T) {
	dir, copyPath := backupOf(t, 5)
	target := filepath.Join(dir, "standby.db")

	// A byte changed after the backup: the checksum no longer matches.
	b, _ := os.ReadFile(copyPath)
	damaged := filepath.Join(dir, "damaged", filepath.Base(copyPath))
	os.MkdirAll(filepath.Dir(damaged), 0o700)
	b[len(b)-1] ^= 0xff // the last page: free space SQLite's check may not read
	os.WriteFile(damaged, b, 0o600)
	m, _ := os.ReadFile(copyPath + ".json")
	os.WriteFile(damaged+".json", m, 0o600)
	r := runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", damaged, "--db", target)
	if r.code == 0 || !strings.Contains(r.stderr, "does not match its manifest") {
		t.Fatalf("damaged copy: %d %s", r.code, r.stderr)
	}

	// An audit record edited in the copy (and the manifest rewritten to
	// match the file): the chain check refuses it.
	edited := filepath.Join(dir, "edited.db")
	raw, _ := os.ReadFile(copyPath)
	os.WriteFile(edited, raw, 0o600)
	db, err := sql.Open("sqlite3", edited)
	if err != nil {
		t.Fatal(err)
	}
	// Someone with the file drops the guard first, as an attacker would.
	if _, err := db.Exec("DROP TRIGGER audit_no_update; UPDATE audit SET actor = 'eve' WHERE id = 3"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", edited+"x", "--db", target) // no such file
	if r.code != 2 {
		t.Fatalf("missing backup: %d %s", r.code, r.stderr)
	}
	os.WriteFile(edited+".json", m, 0o600)
	r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", edited, "--db", target)
	if r.code == 0 || !strings.Contains(r.stderr, "audit chain broken at record 3") {
		t.Fatalf("edited copy: %d %s", r.code, r.stderr)
	}

	// A copy without its manifest (cut short) is never picked.
	unfinished := filepath.Join(dir, "unfinished")
	os.MkdirAll(unfinished, 0o700)
	os.WriteFile(filepath.Join(unfinished, "drconsole-20991231T000000.000Z.db"), raw, 0o600)
	r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", unfinished, "--db", target)
	if r.code != 2 || !strings.Contains(r.stderr, "no finished backup") {
		t.Fatalf("unfinished: %d %s", r.code, r.stderr)
	}
	if exists(target) {
		t.Fatal("a refused restore left a database behind")
	}
}

// To S3 and back: the copy goes up before its manifest, and a restore
// picks the newest finished copy under the prefix.
func TestBackupToS3AndRestore(t *testing.T) {
	srv := s3test.Start(t, "backups")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	store, err := storage.Open(filepath.Join(data, "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if _, err := store.AppendAudit(context.Background(), model.AuditEntry{Actor: "bob", Action: "test.write", Subject: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	cfg := writeFile(t, dir, "drconsole.yaml", fmt.Sprintf(`
data_dir: %s
clusters:
  primary: {bootstrap: ["127.0.0.1:9092"]}
  dr: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: primary, target: dr}
s3: {endpoint: %q, region: us-east-1, path_style: true}
`, data, srv.Config.Endpoint))

	if r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--db", filepath.Join(data, "drconsole.db"), "--to", "s3://backups/drconsole"); r.code != 2 || !strings.Contains(r.stderr, "needs --config FILE with an s3 section") {
		t.Fatalf("s3 without config: %d %s", r.code, r.stderr)
	}
	r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--config", cfg, "--to", "s3://backups/drconsole")
	if r.code != 0 || !strings.Contains(r.stdout, "backup: s3://backups/drconsole/drconsole-") {
		t.Fatalf("backup: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// A later copy whose upload was cut short (no manifest) is not picked.
	srv.Put(t, "drconsole/drconsole-20991231T000000.000Z.db", []byte("half a database"))

	target := filepath.Join(dir, "standby", "drconsole.db")
	os.MkdirAll(filepath.Dir(target), 0o700)
	r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", "s3://backups/drconsole", "--config", cfg, "--db", target)
	if r.code != 0 {
		t.Fatalf("restore: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, "", "audit", "verify", "--db", target); r.code != 0 || !strings.Contains(r.stdout, "8 records, chain intact") { // and the restore's
		t.Fatalf("restored: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "standby", ".restore-*")); len(left) != 0 {
		t.Fatalf("staging left behind: %v", left)
	}
}
