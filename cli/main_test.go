package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const syncsJSONL = `{"topic":"events","partition":0,"upstream":100,"downstream":200}
{"topic":"events","partition":0,"upstream":150,"downstream":251}
{"topic":"my-topic","partition":12,"upstream":0,"downstream":0}

{"topic":"my-topic","partition":12,"upstream":500,"downstream":480}
`

func TestTranslateCLI(t *testing.T) {
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", syncsJSONL)
	offsets := writeFile(t, dir, "offsets.json", `{"events-0": 150, "my-topic-12": 600}`)

	r := runCLI(t, "", "translate", "--offsets", offsets, "--syncs", syncs)
	want := "{\n  \"events-0\": 251,\n  \"my-topic-12\": 481\n}\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, "", "translate", "--offsets", offsets, "--syncs", syncs, "--policy", "default", "--source-alias", "primary")
	if r.code != 0 || !strings.Contains(r.stdout, `"primary.events-0": 251`) || !strings.Contains(r.stdout, `"primary.my-topic-12": 481`) {
		t.Fatalf("default policy: exit %d %q %s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, `{"events-0": 120}`, "translate", "--offsets", "-", "--syncs", syncs, "--explain")
	if r.code != 0 || !strings.Contains(r.stdout, `"events-0": {"offset":201,"method":"conservative","sync":{"upstream":100,"downstream":200},"reread_max":19,"dr_key":"events-0","input":120}`) {
		t.Fatalf("explain: exit %d %q %s", r.code, r.stdout, r.stderr)
	}

	out := filepath.Join(dir, "out.json")
	partial := writeFile(t, dir, "partial.json", `{"events-0": 5, "orders-1": 9, "events-0x-1": 150}`)
	r = runCLI(t, "", "translate", "--offsets", partial, "--syncs", syncs, "--out", out)
	if r.code != 3 || !strings.Contains(r.stderr, "events-0: not translated: offset 5 is older than every stored sync") ||
		!strings.Contains(r.stderr, "orders-1: not translated: no offset syncs") {
		t.Fatalf("partial: exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a failed translation wrote --out")
	}
	r = runCLI(t, "", "translate", "--offsets", partial, "--syncs", syncs, "--out", out, "--allow-partial")
	got, _ := os.ReadFile(out)
	if r.code != 0 || string(got) != "{}\n" {
		t.Fatalf("allow-partial: exit %d, out %q, stderr %s", r.code, got, r.stderr)
	}
}

func TestTranslateCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", syncsJSONL)
	for _, tc := range []struct {
		name, offsets, syncs string
		args                 []string
		want                 string
	}{
		{"not an object", `[1,2]`, "", nil, "offsets.json:1: want a JSON object"},
		{"bad key", "{\n\"events\": 1}", "", nil, `offsets.json:2: key "events" is not topic-partition`},
		{"negative", "{\"events-0\": 1,\n\n \"events-1\": -4}", "", nil, `offsets.json:3: "events-1": offset -4 is not a non-negative whole number`},
		{"fraction", `{"events-0": 1.5}`, "", nil, `offset 1.5 is not a non-negative whole number`},
		{"string offset", `{"events-0": "12"}`, "", nil, `offset must be a number`},
		{"duplicate", `{"events-0": 1, "events-0": 2}`, "", nil, `"events-0" appears twice`},
		{"truncated", `{"events-0": 1`, "", nil, "offsets.json:1:"},
		{"trailing", `{"events-0": 1} {}`, "", nil, "unexpected data after the object"},
		{"empty", ``, "", nil, "empty file"},
		{"offset above the range", `{"events-0": 9223372036854775807}`, "", nil, `offset 9223372036854775807 is above 9223372036854775806`},
		{"syncs missing field", `{"events-0": 1}`, "{\"topic\":\"t\",\"partition\":0,\"upstream\":1,\"downstream\":1}\n{\"topic\":\"t\",\"partition\":0,\"upstream\":2}\n", nil, `syncs.jsonl:2: missing or negative "downstream"`},
		{"syncs unknown field", `{"events-0": 1}`, "{\"topic\":\"t\",\"partition\":0,\"up\":1}\n", nil, `syncs.jsonl:1: json: unknown field "up"`},
		{"default policy without alias", `{"events-0": 1}`, "", []string{"--policy", "default"}, "give --source-alias"},
		{"syncs downstream above the range", `{"events-0": 1}`, "{\"topic\":\"t\",\"partition\":0,\"upstream\":1,\"downstream\":9223372036854775807}\n", nil, `syncs.jsonl:1: offset above 9223372036854775806`},
		{"syncs trailing garbage", `{"events-0": 1}`, "{\"topic\":\"t\",\"partition\":0,\"upstream\":1,\"downstream\":1}\n{\"topic\":\"t\",\"partition\":0,\"upstream\":2,\"downstream\":2} trailing\n", nil, `syncs.jsonl:2: unexpected data after the sync object`},
		{"syncs two objects on a line", `{"events-0": 1}`, "{\"topic\":\"t\",\"partition\":0,\"upstream\":1,\"downstream\":1}{}\n", nil, `syncs.jsonl:1: unexpected data after`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off := writeFile(t, dir, "offsets.json", tc.offsets)
			s := syncs
			if tc.syncs != "" {
				s = writeFile(t, dir, "syncs.jsonl", tc.syncs)
			}
			r := runCLI(t, "", append([]string{"translate", "--offsets", off, "--syncs", s}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "goroutine") {
				t.Fatalf("exit %d, stderr %q, want exit 2 with %q", r.code, r.stderr, tc.want)
			}
		})
	}
	if r := runCLI(t, "", "translate", "--offsets", "x"); r.code != 2 || !strings.Contains(r.stderr, "exactly one of --syncs FILE or --config FILE") {
		t.Fatalf("no history source: %d %q", r.code, r.stderr)
	}
}

// --config translates from what the console stored, and export syncs
// writes it back out in the --syncs format.
// storedHistoryConfig writes a config with one flow primary->dr (policy
// as given) whose data directory is dir, and opens its store.
func storedHistoryConfig(t *testing.T, dir, policy string) (string, *storage.Store) {
	t.Helper()
	cfg := writeFile(t, dir, "drconsole.yaml", `
data_dir: `+dir+`
clusters:
  primary: {bootstrap: ["127.0.0.1:1"]}
  dr: {bootstrap: ["127.0.0.1:2"]}
flows:
  - {source: primary, target: dr, replication_policy: `+policy+`}
`)
	store, err := storage.Open(filepath.Join(dir, "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, store
}

func TestTranslateFromStoredHistoryAndExport(t *testing.T) {
	dir := t.TempDir()
	cfg, store := storedHistoryConfig(t, dir, "default")
	err := store.Apply(context.Background(), storage.Batch{Flow: "primary->dr", Topic: "syncs", NextOffset: 2, Syncs: []model.OffsetSync{
		{Topic: "events", Partition: 3, Upstream: 10, Downstream: 8, LogOffset: 0},
		{Topic: "events", Partition: 3, Upstream: 40, Downstream: 30, LogOffset: 1},
	}})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	off := writeFile(t, dir, "offsets.json", `{"events-3": 40}`)
	r := runCLI(t, "", "translate", "--offsets", off, "--config", cfg)
	if r.code != 0 || r.stdout != "{\n  \"primary.events-3\": 30\n}\n" {
		t.Fatalf("exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "export", "syncs", "--config", cfg)
	want := "{\"topic\":\"events\",\"partition\":3,\"upstream\":10,\"downstream\":8}\n{\"topic\":\"events\",\"partition\":3,\"upstream\":40,\"downstream\":30}\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("export: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// Round trip: the export is a valid --syncs file giving the same answer.
	exported := writeFile(t, dir, "exported.jsonl", r.stdout)
	r2 := runCLI(t, "", "translate", "--offsets", off, "--syncs", exported, "--policy", "default", "--source-alias", "primary")
	if r2.stdout != "{\n  \"primary.events-3\": 30\n}\n" {
		t.Fatalf("round trip: %q %s", r2.stdout, r2.stderr)
	}
}
