package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/flink/flinktest"
	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/mm2"
)

// Savepoints written by real Flink 2.2.1 (see flink/testdata/savepoints).
var (
	spEvents = filepath.Join("..", "flink", "testdata", "savepoints", "flink-2.2.1-p2-events4-stop")
	spOrders = filepath.Join("..", "flink", "testdata", "savepoints", "flink-2.2.1-p1-orders2-users3-stop")
)

func TestSavepointInspectJSON(t *testing.T) {
	want := "{\n  \"events-0\": 800,\n  \"events-1\": 1300,\n  \"events-2\": 750,\n  \"events-3\": 1350\n}\n"
	for _, args := range [][]string{
		{"savepoint", "inspect", spEvents, "--json"},
		{"savepoint", "inspect", "--json", filepath.Join(spEvents, "_metadata")},
		{"savepoint", "inspect", "--uid", "kafka-source", spEvents, "--json"},
		{"savepoint", "inspect", spEvents, "--json", "--uid", "61252f73469d3ffba207c548d29a0267"},
	} {
		r := runCLI(t, "", args...)
		if r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Fatalf("%v: exit %d\nstdout %q\nstderr %s", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runCLI(t, "", "savepoint", "inspect", spOrders, "--json")
	offs, err := mm2.ParseOffsetsJSON("out", strings.NewReader(r.stdout))
	if r.code != 0 || err != nil || len(offs) != 5 || offs[0].Key != "orders-0" || offs[0].Offset != 300 || offs[4].Key != "users-2" || offs[4].Offset != 340 {
		t.Fatalf("orders: exit %d %v %+v\n%s", r.code, err, offs, r.stderr)
	}
}

func TestSavepointInspectHuman(t *testing.T) {
	r := runCLI(t, "", "savepoint", "inspect", spEvents)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, s := range []string{
		"version 6, checkpoint id 23", "Suspend Savepoint (CANONICAL)",
		"61252f73469d3ffba207c548d29a0267", "kafka-source", "Source: kafka-source", "SourceReaderState",
		"5b61d6019ab04da71a4e62533c1a8c40", "count-per-key", "keyed",
		"uid kafka-source, id 61252f73469d3ffba207c548d29a0267 (KafkaSource), 4 partition(s)",
		"events-1", "1300", "4 committed", "not positions",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("human output lacks %q:\n%s", s, r.stdout)
		}
	}
}

func TestSavepointInspectErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"savepoint"}, 2, "needs a subcommand"},
		{[]string{"savepoint", "dump"}, 2, `unknown subcommand "dump"`},
		{[]string{"savepoint", "inspect"}, 2, "needs PATH"},
		{[]string{"savepoint", "inspect", spEvents, spOrders}, 2, "unexpected argument"},
		{[]string{"savepoint", "inspect", "--bogus", spEvents}, 2, "bogus"},
		{[]string{"savepoint", "inspect", spEvents, "--uid", "no-such-uid"}, 2, `no operator has uid or id "no-such-uid"`},
		{[]string{"savepoint", "inspect", spEvents, "--uid", "count-per-key", "--json"}, 2, "not SourceReaderState"},
		{[]string{"savepoint", "inspect", filepath.Join(t.TempDir(), "nope")}, 2, "does not exist"},
		{[]string{"savepoint", "inspect", t.TempDir()}, 2, "no _metadata"},
		{[]string{"savepoint", "inspect", "cmd_savepoint.go"}, 2, "not a Flink _metadata file"},
	} {
		r := runCLI(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// A partition holding a start marker is left out of --json, named on
// stderr, and the exit is non-zero. The marker is patched into a copy of
// the real savepoint (events-0's split: next offset 800 -> -2 earliest).
func TestSavepointInspectMarkers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(spEvents, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	split := []byte{0, 6, 'e', 'v', 'e', 'n', 't', 's', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x20}
	if bytes.Count(b, split) != 1 {
		t.Fatalf("events-0 split found %d times", bytes.Count(b, split))
	}
	i := bytes.Index(b, split) + 12
	copy(b[i:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "savepoint", "inspect", dir, "--json")
	want := "{\n  \"events-1\": 1300,\n  \"events-2\": 750,\n  \"events-3\": 1350\n}\n"
	if r.code == 0 || r.stdout != want || !strings.Contains(r.stderr, "events-0: left out: the savepoint holds the earliest marker (-2)") {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "savepoint", "inspect", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "earliest (-2)") {
		t.Fatalf("human: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// s3Savepoint serves the events4 fixture at s3://flink/sp/savepoint-1 from
// an in-memory S3 and returns a config file whose s3 section names it.
func s3Savepoint(t *testing.T) string {
	t.Helper()
	srv := s3test.Start(t, "flink")
	meta, err := os.ReadFile(filepath.Join(spEvents, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Put(t, "sp/savepoint-1/_metadata", meta)
	cfg, _ := cliConfigWith(t, `s3: {endpoint: "`+srv.Config.Endpoint+`", region: us-east-1, path_style: true}`+"\n")
	return cfg
}

// An s3:// PATH is read through the config file's s3 section (here an
// in-memory S3, gofakes3) and prints what the local copy prints.
func TestSavepointInspectS3(t *testing.T) {
	cfg := s3Savepoint(t)
	noS3, _ := cliConfig(t)
	local := runCLI(t, "", "savepoint", "inspect", spEvents, "--json")
	r := runCLI(t, "", "savepoint", "inspect", "s3://flink/sp/savepoint-1", "--json", "--config", cfg)
	if r.code != 0 || r.stdout != local.stdout {
		t.Fatalf("s3: exit %d\nstdout %q (local %q)\nstderr %s", r.code, r.stdout, local.stdout, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"s3://flink/sp/savepoint-1"}, "--config FILE"},
		{[]string{"s3://flink/sp/savepoint-1", "--config", noS3}, "no s3 section"},
		{[]string{"s3://flink/sp/missing", "--config", cfg}, "no _metadata"},
	} {
		r := runCLI(t, "", append([]string{"savepoint", "inspect"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// The CLI answers at once, with exit 2 and a clear error, for a FIFO (as
// the path, or as _metadata), a device (/dev/zero: refused before reading,
// not after 256 MiB) and a scheme it cannot read; audit verify --db
// refuses a FIFO and a device instead of waiting on them.
func TestCLISpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	spDir := filepath.Join(dir, "sp")
	if err := os.Mkdir(spDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(spDir, "_metadata"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"savepoint", "inspect", fifo}, "named pipe (FIFO)"},
		{[]string{"savepoint", "inspect", spDir}, "named pipe (FIFO)"},
		{[]string{"savepoint", "inspect", "/dev/zero"}, "character device"},
		{[]string{"savepoint", "inspect", "hdfs://namenode:8020/flink/savepoints/sp-1"}, "is on hdfs://, which this reader cannot open (it reads local paths, file: URIs and, with an s3 section configured, s3://, s3a:// and s3p://)"},
		{[]string{"audit", "verify", "--db", fifo}, "not a regular file"},
		{[]string{"audit", "verify", "--db", "/dev/zero"}, "not a regular file"},
		{[]string{"audit", "export", "--db", fifo}, "not a regular file"},
	} {
		if c.want == "character device" {
			if _, err := os.Stat("/dev/zero"); err != nil {
				continue
			}
		}
		r := flinktest.Within(t, 10*time.Second, strings.Join(c.args, " "), func() result { return runCLI(t, "", c.args...) })
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// A savepoint whose operator name and uid carry terminal escapes (a
// window title, a screen clear) and BEL: inspect shows them escaped, on
// stdout and in errors on stderr, and never sends them to the terminal.
func TestSavepointInspectEscapesControlCharacters(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(spEvents, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	const evil = "\x1b]0;pw\a\x1b[2Jx" // as long as "kafka-source": the encoding stays valid
	if len(evil) != len("kafka-source") || bytes.Count(raw, []byte("kafka-source")) != 2 {
		t.Fatal("fixture changed")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "_metadata"), bytes.ReplaceAll(raw, []byte("kafka-source"), []byte(evil)), 0o600)

	r := runCLI(t, "", "savepoint", "inspect", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{`Source: \x1b]0;pw\a\x1b[2Jx`, `uid \x1b]0;pw\a\x1b[2Jx, id 61252f73469d3ffba207c548d29a0267`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// A uid that matches nothing is echoed in the error.
	r2 := runCLI(t, "", "savepoint", "inspect", dir, "--uid", "no\x1b[31msuch\a")
	for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr + r2.stdout + r2.stderr} {
		if strings.ContainsAny(out, "\x1b\a") {
			t.Errorf("%s holds ESC or BEL: %q", name, out)
		}
	}
	if r2.code == 0 || !strings.Contains(r2.stderr, "no") {
		t.Errorf("unknown uid: exit %d, %q", r2.code, r2.stderr)
	}
}
