package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kafka/kafkatest"
)

// drOffsets is what "drconsole translate" writes for the events4 fixture
// under the default policy with alias "primary".
const drOffsets = `{"primary.events-0": 900, "primary.events-1": 1400, "primary.events-2": 850, "primary.events-3": 1450, "primary.other-0": 1}`

func readBack(t *testing.T, dir string) map[string]flink.PartitionOffset {
	t.Helper()
	sp, err := flink.ReadSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets("")
	if err != nil {
		t.Fatal(err)
	}
	return k.Partitions
}

func TestSavepointRewriteCLI(t *testing.T) {
	dir := t.TempDir()
	offs := writeFile(t, dir, "dr.json", drOffsets)
	out := filepath.Join(dir, "sp-dr")
	r := runCLI(t, "", "savepoint", "rewrite", spEvents, "--offsets", offs, "--out", out, "--rename-topics", "default", "--source-alias", "primary")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, s := range []string{"events-0", "800", "primary.events-0", "900", "translated", "events -> primary.events", "state files copied: 0"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, r.stdout)
		}
	}
	got := readBack(t, out)
	for k, want := range map[string]int64{"primary.events-0": 900, "primary.events-1": 1400, "primary.events-2": 850, "primary.events-3": 1450} {
		if got[k].Next != want {
			t.Errorf("%s: %+v, want %d", k, got[k], want)
		}
	}

	// A split without a DR offset: exit 3, each named, nothing written;
	// --choose covers it.
	partial := writeFile(t, dir, "partial.json", `{"primary.events-0": 900, "primary.events-2": 850}`)
	out2 := filepath.Join(dir, "sp-partial")
	r = runCLI(t, "", "savepoint", "rewrite", spEvents, "--offsets", partial, "--out", out2, "--rename-topics", "default", "--source-alias", "primary")
	if r.code != 3 || !strings.Contains(r.stderr, "events-1: no DR offset for primary.events-1") || !strings.Contains(r.stderr, "events-3: no DR offset") {
		t.Fatalf("partial: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Fatal("partial rewrite wrote its output")
	}
	r = runCLI(t, "", "savepoint", "rewrite", spEvents, "--offsets", partial, "--out", out2, "--rename-topics", "default", "--source-alias", "primary",
		"--choose", "events-1=earliest", "--choose", "events-3=latest", "--json")
	if r.code != 0 {
		t.Fatalf("chosen: exit %d: %s", r.code, r.stderr)
	}
	var res flink.RewriteResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Splits) != 4 || res.RenamedTopics["events"] != "primary.events" {
		t.Fatalf("--json: %v %+v", err, res)
	}
	got = readBack(t, out2)
	if got["primary.events-1"].Next != flink.OffsetEarliest || got["primary.events-3"].Next != flink.OffsetLatest || got["primary.events-0"].Next != 900 {
		t.Fatalf("chosen: %+v", got)
	}

	// Identity policy (the default): DR keys are the primary names.
	ident := writeFile(t, dir, "ident.json", `{"events-0": 1, "events-1": 2, "events-2": 3, "events-3": 4}`)
	if r := runCLI(t, "", "savepoint", "rewrite", "--offsets", ident, spEvents, "--out", filepath.Join(dir, "sp-ident")); r.code != 0 {
		t.Fatalf("identity: exit %d: %s", r.code, r.stderr)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{spEvents, "--offsets", offs}, 2, "--out DST"},
		{[]string{spEvents, "--out", filepath.Join(dir, "x")}, 2, "--offsets FILE"},
		{[]string{spEvents, "--offsets", offs, "--out", filepath.Join(dir, "x"), "--rename-topics", "default"}, 2, "--source-alias"},
		{[]string{spEvents, "--offsets", offs, "--out", filepath.Join(dir, "x"), "--rename-topics", "prefix"}, 2, "want identity or default"},
		{[]string{spEvents, "--offsets", offs, "--out", filepath.Join(dir, "x"), "--choose", "events-1=soon"}, 2, "want earliest, latest or timestamp"},
		{[]string{spEvents, "--offsets", offs, "--out", filepath.Join(dir, "x"), "--choose", "events-1=timestamp:2026-12-01T07:00:00Z"}, 2, "need --config FILE"},
		{[]string{spEvents, "--offsets", offs, "--out", filepath.Join(dir, "x"), "--choose", "events-1=timestamp:yesterday"}, 2, "not an RFC 3339 time"},
		{[]string{spEvents, "--offsets", ident, "--out", filepath.Join(dir, "x"), "--choose", "events-9=earliest"}, 2, "no split events-9"},
		{[]string{spEvents, "--offsets", ident, "--out", filepath.Join(dir, "x"), "--choose", "events-1=earliest"}, 2, "has a DR offset"},
		{[]string{spEvents, "--offsets", offs, "--out", out, "--rename-topics", "default", "--source-alias", "primary"}, 2, "exists"},
		{[]string{spEvents, "--offsets", offs, "--out", "s3://flink/x", "--rename-topics", "default", "--source-alias", "primary"}, 2, "--config FILE"},
	} {
		r := runCLI(t, "", append([]string{"savepoint", "rewrite"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, r.code, c.code, c.want, r.stderr)
		}
	}
}

// An S3 savepoint rewritten to S3 through the config's s3 section.
func TestSavepointRewriteCLIS3(t *testing.T) {
	cfg := s3Savepoint(t)
	offs := writeFile(t, t.TempDir(), "dr.json", drOffsets)
	r := runCLI(t, "", "savepoint", "rewrite", "s3://flink/sp/savepoint-1", "--offsets", offs, "--out", "s3://flink/dr/savepoint-1",
		"--rename-topics", "default", "--source-alias", "primary", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "savepoint", "inspect", "s3://flink/dr/savepoint-1", "--json", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, `"primary.events-3": 1450`) {
		t.Fatalf("inspect the rewritten savepoint: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// A timestamp choice is looked up in the flow's DR cluster (kfake here):
// the first record at or after the time, the end offset when none is.
func TestSavepointRewriteCLITimestamp(t *testing.T) {
	dr, cl := kafkatest.NewCluster(t, "dr", "primary.events")
	for i, ms := range []int64{1000, 2000, 3000} {
		kafkatest.Produce(t, cl, &kgo.Record{Topic: "primary.events", Partition: 1, Value: []byte{byte(i)}, Timestamp: time.UnixMilli(ms)})
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "drconsole.yaml", `
data_dir: `+dir+`
clusters:
  primary: {bootstrap: ["127.0.0.1:9"]}
  dr: {bootstrap: ["`+dr.ListenAddrs()[0]+`"]}
flows:
  - {name: events, source: primary, target: dr, replication_policy: default}
`)
	partial := writeFile(t, dir, "partial.json", `{"primary.events-0": 900, "primary.events-2": 850, "primary.events-3": 1}`)
	out := filepath.Join(dir, "sp")
	r := runCLI(t, "", "savepoint", "rewrite", spEvents, "--offsets", partial, "--out", out, "--config", cfg,
		"--choose", "events-1=timestamp:1970-01-01T00:00:01.5Z")
	if r.code != 0 || !strings.Contains(r.stdout, "timestamp 1970-01-01T00:00:01.5Z (chosen): DR offset 1") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readBack(t, out); got["primary.events-1"].Next != 1 || got["primary.events-0"].Next != 900 {
		t.Fatalf("%+v", got)
	}
	out2 := filepath.Join(dir, "sp2")
	r = runCLI(t, "", "savepoint", "rewrite", spEvents, "--offsets", partial, "--out", out2, "--config", cfg, "--flow", "events",
		"--choose", "events-1=timestamp:2030-01-01T00:00:00Z")
	if r.code != 0 || !strings.Contains(r.stdout, "no record at or after it, DR end offset 3") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readBack(t, out2); got["primary.events-1"].Next != 3 {
		t.Fatalf("%+v", got)
	}
	r = runCLI(t, "", "savepoint", "rewrite", spEvents, "--offsets", partial, "--out", filepath.Join(dir, "x"), "--config", cfg,
		"--choose", "events-1=timestamp:2030-01-01T00:00:00Z", "--rename-topics", "identity")
	if r.code != 2 || !strings.Contains(r.stderr, "come from the flow") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}
