package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A translation into a DR partition that holds records of aborted
// transactions (MM2 copies them as ordinary records) says how many the DR
// consumer will read that the primary's readers never saw, counting only
// the topic's current incarnation.
func TestTranslateWarnsAboutAbortedRecords(t *testing.T) {
	dir := t.TempDir()
	cfg, store := storedHistoryConfig(t, dir, "identity")
	ctx := context.Background()
	err := store.Apply(ctx, storage.Batch{Flow: "primary->dr", Topic: "syncs", NextOffset: 1, Syncs: []model.OffsetSync{
		{Topic: "orders", Partition: 0, Upstream: 50, Downstream: 50, LogOffset: 0},
	}})
	for _, b := range []storage.AbortedBatch{
		{Topic: "orders", TopicID: "old", Partition: 0, First: 60, Last: 99, Records: 40, AtMs: 1}, // before the topic was recreated
		{Topic: "orders", TopicID: "new", Partition: 0, First: 51, Last: 60, Records: 10, AtMs: 2},
		{Topic: "orders", TopicID: "new", Partition: 0, First: 66, Last: 72, Records: 7, AtMs: 3},
		{Topic: "orders", TopicID: "new", Partition: 1, First: 0, Last: 4, Records: 5, AtMs: 3},
	} {
		if err == nil {
			err = store.AddAbortedBatch(ctx, "primary->dr", b)
		}
	}
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	off := writeFile(t, dir, "offsets.json", `{"orders-0": 50}`)
	r := runCLI(t, "", "translate", "--offsets", off, "--config", cfg, "--explain")
	if r.code != 0 || !strings.Contains(r.stdout, `"method":"exact"`) {
		t.Fatalf("exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "orders-0: warning: DR holds at least 17 record(s) of aborted transactions") {
		t.Errorf("no or wrong warning: %s", r.stderr)
	}
	// Past them, nothing to warn about.
	off = writeFile(t, dir, "offsets2.json", `{"orders-0": 73}`)
	if r := runCLI(t, "", "translate", "--offsets", off, "--config", cfg); r.code != 0 || strings.Contains(r.stderr, "aborted") {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}
