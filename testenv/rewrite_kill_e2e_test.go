//go:build e2e

// End-to-end: a rewrite killed midway (issue 14: "kill the rewrite midway in a test: nothing
// registered, no partial directory visible as a savepoint"), on a REAL savepoint.
//
// Real Flink 2.2.1 writes a savepoint whose operator state lives in separate files
// (execution.checkpointing.data-inline-threshold 0, relative handles); one state file is then
// extended (sparse, zeros after Flink's bytes, which no handle points at) to 256 MiB so that the
// copy takes long enough to be interrupted. flink.Rewrite runs in a child process (this test
// binary, TestRewriteKillChild) and gets SIGKILL while it copies that file. Then: Dest does not
// exist, what is left is only the rewriter's hidden build directory without `_metadata` (not
// readable as a savepoint), the catalog's scan of the directory registers nothing, and the same
// rewrite run again succeeds, removes the killed one's build directory, and is the only entry the
// catalog finds.
//
//	go test -tags e2e -count=1 -run TestRewriteKilledMidway -v ./testenv/
package testenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

const (
	rkChildEnv = "DRCONSOLE_REWRITE_KILL_CHILD" // JSON rkRequest: run the rewrite, in the child
	rkPadSize  = 256 << 20
)

type rkRequest struct {
	Source, Dest, UID string
	Targets           map[string]flink.SplitTarget
}

// TestRewriteKillChild is the child process of TestRewriteKilledMidway; it does nothing
// unless started by it.
func TestRewriteKillChild(t *testing.T) {
	env := os.Getenv(rkChildEnv)
	if env == "" {
		t.Skip("the child of TestRewriteKilledMidway")
	}
	var req rkRequest
	if err := json.Unmarshal([]byte(env), &req); err != nil {
		t.Fatal(err)
	}
	res, err := flink.Rewrite(context.Background(), flink.RewriteRequest{Source: req.Source, Dest: req.Dest, SourceUID: req.UID, Targets: req.Targets})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrite completed: %+v", res)
}

func TestRewriteKilledMidway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := testenv.StartKafka(t, "primary")
	f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Config: map[string]string{
		"execution.checkpointing.data-inline-threshold": "0", // every state chunk in its own file
	}})
	createTopics(t, k, map[string]int32{rsTopic: rsParts})
	produceN(t, k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)), rsTopic, rsParts, rsParts*800)
	job := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Topics: []string{rsTopic}, GroupID: rsGroup,
		SourceUID: rwUID, Parallelism: 2})
	f.WaitJobRunning(t, job)
	end := map[string]int64{}
	for p := range rsParts {
		end[fmt.Sprint(p)] = 800
	}
	flinkWaitSourceRecords(t, f, job, end) // every split holds a real position
	spDir := f.TriggerSavepoint(t, job, t.TempDir(), true)
	f.WaitJobState(t, job, "FINISHED")

	sp, err := flink.ReadSavepoint(spDir)
	if err != nil {
		t.Fatal(err)
	}
	ko, err := sp.KafkaSourceOffsets(rwUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ko.Partitions) != rsParts {
		t.Fatalf("savepoint %s: source splits %+v, want %d", spDir, ko, rsParts)
	}
	targets := map[string]flink.SplitTarget{}
	for _, po := range ko.Sorted() {
		if po.Marker != "" || po.Next != 800 {
			t.Fatalf("savepoint split %+v, want next offset 800", po)
		}
		targets[po.Key()] = flink.SplitTarget{Topic: "primary." + po.Topic, Offset: po.Next, Why: "kill test"}
	}
	// The file to pad: a keyed-state file of count-per-key, which the rewrite copies as it is
	// (the source's reader state is re-encoded, not copied).
	padded := ""
	for _, op := range sp.Operators {
		if op.ID != flink.OperatorIDFromUID("count-per-key") {
			continue
		}
		for _, st := range op.Subtasks {
			if st.ManagedKeyed == nil {
				continue
			}
			for _, h := range st.ManagedKeyed.Streams {
				if h.Kind == flink.HandleRelative && padded == "" {
					padded = filepath.Join(spDir, filepath.FromSlash(h.Path))
				}
			}
		}
	}
	ents, _ := os.ReadDir(spDir)
	if padded == "" {
		t.Fatalf("savepoint %s (%d entries) has no keyed state file of count-per-key: the inline threshold did not apply", spDir, len(ents))
	}
	if err := os.Truncate(padded, rkPadSize); err != nil {
		t.Fatal(err)
	}
	if sp2, err := flink.ReadSavepoint(spDir); err != nil {
		t.Fatalf("the padded savepoint no longer reads: %v", err)
	} else if ko2, err := sp2.KafkaSourceOffsets(rwUID); err != nil || len(ko2.Partitions) != len(targets) {
		t.Fatalf("the padded savepoint reads %+v, %v; before %+v", ko2, err, ko)
	}
	t.Logf("savepoint %s: %d entries, state file %s extended to %d MiB", spDir, len(ents), filepath.Base(padded), rkPadSize>>20)

	// --- the rewrite in a child process, SIGKILLed while it copies the big file --------------------
	parent := t.TempDir()
	dest := filepath.Join(parent, "rewritten")
	req, _ := json.Marshal(rkRequest{Source: spDir, Dest: dest, UID: rwUID, Targets: targets})
	child := exec.Command(os.Args[0], "-test.run", "^TestRewriteKillChild$", "-test.v")
	child.Env = append(os.Environ(), rkChildEnv+"="+string(req))
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	var building string
	var inBuild int64
	var ended error
	err = testenv.Eventually(time.Minute, 2*time.Millisecond, func() error {
		select {
		case ended = <-exited:
			return nil // too early: reported below
		default:
		}
		building, inBuild = "", 0
		dirs, _ := filepath.Glob(filepath.Join(parent, "*"))
		hidden, _ := filepath.Glob(filepath.Join(parent, ".*"))
		for _, h := range append(dirs, hidden...) {
			building = h
			files, _ := os.ReadDir(h)
			for _, e := range files {
				if info, err := e.Info(); err == nil && e.Type().IsRegular() {
					inBuild += info.Size()
				}
			}
		}
		if inBuild < 1<<20 {
			return fmt.Errorf("build directory %q holds %d bytes", building, inBuild)
		}
		return nil
	})
	if err != nil || ended != nil || child.ProcessState != nil {
		_ = child.Process.Kill()
		t.Fatalf("never saw the rewrite copying (%v; child ended: %v)\nchild output:\n%s", err, ended, out.String())
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the rewrite was not killed midway (exit %v, %d bytes in %s): make the state file bigger\n%s", err, inBuild, building, out.String())
	}
	t.Logf("rewrite SIGKILLed with %d MiB copied into %s", inBuild>>20, building)

	// --- what is left: no Dest, no savepoint -----------------------------------------------------
	if _, err := os.Lstat(dest); err == nil {
		t.Errorf("Dest %s exists after the kill", dest)
	}
	left, _ := os.ReadDir(parent)
	var builds []string
	for _, e := range left {
		p := filepath.Join(parent, e.Name())
		builds = append(builds, p)
		if !strings.HasPrefix(e.Name(), ".rewritten.rewrite-") {
			t.Errorf("the killed rewrite left %s, not its hidden build directory", p)
		}
		if _, err := os.Stat(filepath.Join(p, flink.MetadataFileName)); err == nil {
			t.Errorf("the killed rewrite left %s holding a _metadata", p)
		}
		if _, err := flink.ReadSavepoint(p); err == nil {
			t.Errorf("%s, left by the killed rewrite, reads as a savepoint", p)
		}
		t.Logf("left by the killed rewrite: %s (no _metadata; not a savepoint)", p)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cat := &catalog.Catalog{Store: store, Config: &config.Config{SavepointDirs: []string{parent}},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return time.Now().Add(time.Minute) }} // past the scan's settle time
	scan := func() []string {
		t.Helper()
		if err := cat.Sync(ctx); err != nil {
			t.Fatalf("catalog sync: %v", err)
		}
		all, err := store.Savepoints(ctx, storage.SavepointFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, s := range all {
			paths = append(paths, s.Path)
		}
		return paths
	}
	if got := scan(); len(got) != 0 {
		t.Errorf("after the kill the catalog's scan of %s registers %v, want nothing", parent, got)
	}

	// --- the same rewrite again: it completes, and is all the catalog finds -----------------------
	res, err := flink.Rewrite(ctx, flink.RewriteRequest{Source: spDir, Dest: dest, SourceUID: rwUID, Targets: targets})
	if err != nil {
		t.Fatalf("the rewrite after the kill: %v", err)
	}
	// It removed the killed rewrite's build directory (nobody held its lock any more).
	if !slices.Equal(res.RemovedLeftovers, builds) || len(builds) == 0 {
		t.Errorf("the rewrite after the kill removed %v, want the killed rewrite's build directory %v", res.RemovedLeftovers, builds)
	}
	if es, _ := os.ReadDir(parent); len(es) != 1 || es[0].Name() != filepath.Base(dest) {
		t.Errorf("after the second rewrite %s holds %v, want only %s", parent, es, filepath.Base(dest))
	}
	rsp, err := flink.ReadSavepoint(dest)
	if err != nil {
		t.Fatal(err)
	}
	if rko, err := rsp.KafkaSourceOffsets(rwUID); err != nil || len(rko.Partitions) != len(targets) {
		t.Errorf("rewritten savepoint: %v, %v", rko, err)
	}
	if got := scan(); len(got) != 1 || got[0] != flink.CanonicalPath(dest) {
		t.Errorf("after the second rewrite the catalog registers %v, want only %s", got, dest)
	}
	t.Logf("second rewrite: %d files (%d MiB) copied to %s; the catalog registers it alone", res.CopiedFiles, res.CopiedBytes>>20, res.Path)

	// A kill in the last milliseconds cannot be hit by timing; what it leaves is built by hand
	// from the finished rewrite, as the rewriter lays it out: its `_metadata` keeps a pending
	// name (flink/rewrite_dest.go pendingMetadata) until the directory is at Dest. Killed before
	// the rename: the hidden build directory holds everything under that name; killed between
	// the rename and naming `_metadata`: Dest does. Neither is a savepoint, for the reader or the
	// catalog's scan.
	const pending = flink.MetadataFileName + ".rewrite"
	late := map[string]string{"before the rename": filepath.Join(parent, ".late.rewrite-0"), "after the rename": filepath.Join(parent, "late")}
	for when, dir := range late {
		flinkCopyDir(t, dest, dir)
		if err := os.Rename(filepath.Join(dir, flink.MetadataFileName), filepath.Join(dir, pending)); err != nil {
			t.Fatal(err)
		}
		if _, err := flink.ReadSavepoint(dir); err == nil {
			t.Errorf("killed %s: %s reads as a savepoint", when, dir)
		}
	}
	if got := scan(); len(got) != 1 || got[0] != flink.CanonicalPath(dest) {
		t.Errorf("with what late kills leave, the catalog registers %v, want only %s", got, dest)
	}
	// After the rename the directory is at Dest: the rewrite is refused there until someone
	// removes it (it never writes over anything).
	if _, err := flink.Rewrite(ctx, flink.RewriteRequest{Source: spDir, Dest: late["after the rename"], SourceUID: rwUID, Targets: targets}); !errors.Is(err, flink.ErrRewriteRefused) {
		t.Errorf("rewrite onto what a kill after the rename left: %v, want refused", err)
	}
}
