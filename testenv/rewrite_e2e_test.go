//go:build e2e

// End-to-end: a savepoint REWRITTEN by flink.Rewrite restores in real Flink in DR with the SAME
// source uid and WITHOUT allowNonRestoredState, and the job continues where it stopped (issue
// 14, "How to prove it").
//
// Per Flink version (2.2.1, 1.20.3; 2.3.0 once) and MM2 replication policy (identity: DR topic `events`;
// default: DR topic `primary.events`), on the shared DR rig (drrig_e2e_test.go: real primary and
// DR Kafka, real MM2, the console ingesting its offset syncs):
//
//  1. the job (testenv/flinkjob EventsJob: KafkaSource uid kafka-source -> keyBy(hash mod 8) ->
//     ValueState count) runs on a PRIMARY Flink MiniCluster against the primary while a producer
//     writes; every count update goes to flink-counts (--count-topic) and the first record read
//     per partition to flink-probe;
//
//  2. stop-with-savepoint; the savepoint's offsets U per partition (flink.ReadSavepoint);
//
//  3. more data, MM2 catches up, the console has every sync; the console's sync index
//     translates U to DR; one flink.SplitTarget per split (DR topic name by the policy);
//
//  4. default policy only, the negative: the ORIGINAL savepoint restored in a DR Flink cluster
//     with the same uid (no rewrite) does not resume the DR topic from the savepoint;
//
//  5. flink.Rewrite refuses a truncated `_metadata`, a missing split target and an existing Dest,
//     leaving nothing behind; then writes the rewritten savepoint (the source is not modified)
//     and its read-back holds the targets;
//
//  6. the DR group's committed offsets are moved to the DR end, so that only restored state can
//     start a partition at the translated offset; the rewritten savepoint is restored in the DR
//     Flink cluster (topics = DR names, bootstrap = DR Kafka, uid kafka-source,
//     allowNonRestoredState=false): RUNNING without failure, restored from that savepoint;
//
//  7. per partition the first DR record read == the translated offset, maps back to a source
//     offset <= U (no gap), re-reads <= RereadMax; the source emits exactly DR end - translated;
//
//  8. per key the first count after the restore == the count in the savepoint + 1 (= the last
//     count the primary job emitted; never reset to 1), counts stay consecutive, and the final
//     count == the primary records below U with that key + the DR records read.
//
//     go test -tags e2e -count=1 -run TestRewriteRestoreInDR -v ./testenv/
package testenv_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/testenv"
)

const (
	rwUID        = "kafka-source"
	rwCountTopic = "flink-counts"
	rwKeys       = 8 // EventsJob --keys default
)

func TestRewriteRestoreInDR(t *testing.T) {
	start := time.Now()
	// Each Flink version and each policy once with its state inline in `_metadata` (Flink's
	// default for small state) and once with every state chunk in its own file (relative
	// handles: the reader state re-encoded into a new file, the others copied).
	for _, c := range []struct {
		dist   testenv.FlinkDist
		policy string
		files  bool
	}{
		{testenv.FlinkDefault, "identity", false},
		{testenv.FlinkDefault, "default", true},
		{testenv.Flink1_20, "identity", true},
		{testenv.Flink1_20, "default", false},
		// The newest Flink once, in the scenario that exercises most: file state, renamed
		// topics, the negative.
		{testenv.Flink2_3, "default", true},
	} {
		name := "flink-" + c.dist.Version + "/" + c.policy + map[bool]string{false: "-inline", true: "-files"}[c.files]
		t.Run(name, func(t *testing.T) { rewriteRestoreInDR(t, c.dist, c.policy, c.files) })
	}
	t.Logf("TIMING TestRewriteRestoreInDR: %s", time.Since(start).Round(time.Millisecond))
}

// rwKey is EventsJob's ModKey: Math.floorMod(value.hashCode(), rwKeys), Java's String.hashCode
// over UTF-16 units.
func rwKey(v string) int {
	var h int32
	for _, c := range utf16.Encode([]rune(v)) {
		h = 31*h + int32(c)
	}
	return int(((h % rwKeys) + rwKeys) % rwKeys)
}

// rwReadCounts returns the job's count updates with key tag on k: key -> counts in order.
func rwReadCounts(t *testing.T, k *testenv.Kafka, tag string) map[int][]int64 {
	t.Helper()
	out := map[int][]int64{}
	for _, r := range readTopic(t, k, rwCountTopic) {
		if string(r.Key) != tag {
			continue
		}
		key, count, ok := strings.Cut(string(r.Value), ",")
		kn, err1 := strconv.Atoi(key)
		c, err2 := strconv.ParseInt(count, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("count record %q: want key,count", r.Value)
		}
		out[kn] = append(out[kn], c)
	}
	return out
}

// rwCheckCounts checks that every key's counts run from first to last without a gap or a
// repeat (no reset, no restart replaying counts).
func rwCheckCounts(t *testing.T, what string, counts map[int][]int64, first, last map[int]int64) {
	t.Helper()
	for key := range rwKeys {
		cs := counts[key]
		if len(cs) == 0 {
			t.Errorf("%s: key %d: no count emitted, want %d..%d", what, key, first[key], last[key])
			continue
		}
		if cs[0] != first[key] {
			t.Errorf("%s: key %d: first count %d, want %d", what, key, cs[0], first[key])
		}
		for i := 1; i < len(cs); i++ {
			if cs[i] != cs[i-1]+1 {
				t.Errorf("%s: key %d: count %d follows %d (index %d)", what, key, cs[i], cs[i-1], i)
				break
			}
		}
		if cs[len(cs)-1] != last[key] {
			t.Errorf("%s: key %d: last count %d, want %d", what, key, cs[len(cs)-1], last[key])
		}
	}
}

// rwWaitCounts waits until every key's last count with tag on k equals want.
func rwWaitCounts(t *testing.T, k *testenv.Kafka, tag string, want map[int]int64) map[int][]int64 {
	t.Helper()
	var got map[int][]int64
	err := testenv.Eventually(time.Minute, 250*time.Millisecond, func() error {
		got = rwReadCounts(t, k, tag)
		for key := range rwKeys {
			if cs := got[key]; len(cs) == 0 || cs[len(cs)-1] != want[key] {
				return fmt.Errorf("counts %s: key %d at %v, want last %d", tag, key, cs[max(0, len(cs)-3):], want[key])
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	return got
}

// rwDirSums returns sha256 per file under dir (to show a rewrite leaves its source alone).
func rwDirSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rwDirEntries lists dir (names), to show a refused rewrite leaves nothing behind.
func rwDirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func rewriteRestoreInDR(t *testing.T, dist testenv.FlinkDist, policy string, files bool) {
	testStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rig := startDRRig(t, ctx, policy, rwCountTopic)
	popts := testenv.FlinkOptions{Dist: &dist}
	if files {
		popts.Config = map[string]string{"execution.checkpointing.data-inline-threshold": "0"}
	}
	fp := testenv.StartFlinkWith(t, popts)
	st := rwRunAndStop(t, ctx, rig, fp, t.TempDir())
	spDir, sp, spOff, spSub, pEnd, translated := st.spDir, st.sp, st.spOff, st.spSub, st.pEnd, st.translated
	spCount, valueAt := st.spCount, st.valueAt
	targets := map[string]flink.SplitTarget{}
	for p, tl := range translated {
		targets[fmt.Sprintf("%s-%d", rsTopic, p)] = flink.SplitTarget{Topic: rig.remote, Offset: tl.Offset,
			Why: fmt.Sprintf("translated (%s via sync %d->%d)", tl.Method, tl.Sync.Upstream, tl.Sync.Downstream)}
	}

	// --- 4. the DR Flink cluster; the negative: the ORIGINAL savepoint under the default policy ----
	fd := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &dist})
	drJob := func(savepoint, tag string) testenv.FlinkJobOptions { return rwDRJob(rig, savepoint, tag) }
	if rig.remote != rsTopic {
		rwOriginalInDR(t, ctx, rig, fd, drJob(spDir, "original"), translated, spOff, pEnd, spCount, valueAt)
	}

	// --- 5. flink.Rewrite: refusals leave nothing, then the rewrite ------------------------------
	work := t.TempDir()
	before := rwDirSums(t, spDir)
	refusals := []struct {
		name    string
		src     string
		targets map[string]flink.SplitTarget
		dest    string
	}{
		{name: "truncated _metadata", src: filepath.Join(work, "truncated")},
		{name: "a split without a target"},
		{name: "Dest exists", dest: filepath.Join(work, "exists")},
	}
	flinkCopyDir(t, spDir, refusals[0].src)
	md := filepath.Join(refusals[0].src, "_metadata")
	if fi, err := os.Stat(md); err != nil || os.Truncate(md, fi.Size()/2) != nil {
		t.Fatalf("truncate %s: %v", md, err)
	}
	refusals[1].targets = map[string]flink.SplitTarget{}
	for k, v := range targets {
		if k != rsTopic+"-1" {
			refusals[1].targets[k] = v
		}
	}
	if err := os.MkdirAll(refusals[2].dest, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range refusals {
		parent := t.TempDir()
		dest := filepath.Join(parent, "rewritten")
		if r.dest != "" {
			parent, dest = work, r.dest
		}
		src, tg := cmp.Or(r.src, spDir), r.targets
		if tg == nil {
			tg = targets
		}
		was := rwDirEntries(t, parent)
		res, err := flink.Rewrite(ctx, flink.RewriteRequest{Source: src, Dest: dest, SourceUID: rwUID, Targets: tg})
		if !errors.Is(err, flink.ErrRewriteRefused) {
			t.Errorf("Rewrite with %s: %+v, %v; want ErrRewriteRefused", r.name, res, err)
		} else {
			t.Logf("Rewrite with %s refused: %v", r.name, err)
		}
		if now := rwDirEntries(t, parent); !slices.Equal(now, was) {
			t.Errorf("Rewrite with %s left %v in %s (was %v)", r.name, now, parent, was)
		}
		if r.dest != "" {
			if es := rwDirEntries(t, dest); len(es) != 0 {
				t.Errorf("Rewrite with %s wrote %v into the existing Dest", r.name, es)
			}
		}
	}
	rwDir := filepath.Join(work, "rewritten")
	t0 := time.Now()
	res, err := flink.Rewrite(ctx, flink.RewriteRequest{Source: spDir, Dest: rwDir, SourceUID: rwUID, Targets: targets})
	if err != nil {
		t.Fatalf("Rewrite(%s -> %s): %v", spDir, rwDir, err)
	}
	t.Logf("TIMING rewrite %s: %d splits, %d files (%d bytes) copied, renamed %v", time.Since(t0).Round(time.Microsecond),
		len(res.Splits), res.CopiedFiles, res.CopiedBytes, res.RenamedTopics)
	if after := rwDirSums(t, spDir); len(after) != len(before) || !func() bool {
		for k, v := range before {
			if after[k] != v {
				return false
			}
		}
		return true
	}() {
		t.Errorf("Rewrite modified its source %s", spDir)
	}
	stateFiles := 0
	if ents, err := os.ReadDir(spDir); err == nil {
		stateFiles = len(ents) - 1 // all but _metadata
	}
	if files != (stateFiles > 0) || res.CopiedFiles > stateFiles || (files && res.CopiedFiles == 0) {
		t.Errorf("savepoint with %d state files, %d copied by the rewrite; want state in files: %v", stateFiles, res.CopiedFiles, files)
	}
	if p, err := testenv.LocalPath(res.Path); err != nil || filepath.Clean(p) != rwDir {
		t.Errorf("RewriteResult.Path %q (%v), want %s", res.Path, err, rwDir)
	}
	wantRenamed := map[string]string{}
	if rig.remote != rsTopic {
		wantRenamed[rsTopic] = rig.remote
	}
	if len(res.RenamedTopics) != len(wantRenamed) || res.RenamedTopics[rsTopic] != wantRenamed[rsTopic] {
		t.Errorf("RenamedTopics %v, want %v", res.RenamedTopics, wantRenamed)
	}
	if len(res.Splits) != rsParts {
		t.Errorf("RewriteResult has %d splits, want %d: %+v", len(res.Splits), rsParts, res.Splits)
	}
	for _, s := range res.Splits {
		if want := targets[s.From.Key()]; s.To != want || s.From.Next != spOff[s.From.Partition] || s.From.Subtask != spSub[s.From.Partition] {
			t.Errorf("rewritten split %+v, want from %s@%d (subtask %d) to %+v", s, s.From.Key(), spOff[s.From.Partition], spSub[s.From.Partition], want)
		}
	}
	// Read back independently of the rewriter's own check.
	rsp, err := flink.ReadSavepoint(rwDir)
	if err != nil {
		t.Fatalf("ReadSavepoint(rewritten): %v", err)
	}
	rko, err := rsp.KafkaSourceOffsets(rwUID)
	if err != nil {
		t.Fatalf("KafkaSourceOffsets(rewritten): %v", err)
	}
	if rsp.Version != sp.Version || rsp.CheckpointID != sp.CheckpointID || len(rko.Partitions) != rsParts {
		t.Errorf("rewritten savepoint v%d checkpoint %d with %d splits, want v%d checkpoint %d with %d", rsp.Version, rsp.CheckpointID, len(rko.Partitions), sp.Version, sp.CheckpointID, rsParts)
	}
	for _, po := range rko.Sorted() {
		tl := translated[po.Partition]
		if po.Topic != rig.remote || po.Next != tl.Offset || po.Marker != "" || po.Stopping != nil || po.Subtask != spSub[po.Partition] {
			t.Errorf("rewritten split %+v, want %s-%d at %d (subtask %d, no stopping offset)", po, rig.remote, po.Partition, tl.Offset, spSub[po.Partition])
		}
	}

	// --- 6. only restored state can start a partition at the translated offset -------------------
	rig.commitDREnd(t, ctx, pEnd)
	t0 = time.Now()
	newJob := fd.SubmitJob(t, drJob(rwDir, "rewritten"))
	fd.WaitJobRunning(t, newJob)
	t.Logf("TIMING rewritten savepoint: submit -> RUNNING %s (same uid %s, allowNonRestoredState=false)", time.Since(t0).Round(time.Millisecond), rwUID)
	rsCheckRestored(t, ctx, fd, newJob, sp.CheckpointID, rwDir, rwUID)

	rwCheckContinues(t, ctx, rig, fd, newJob, "rewritten", st)
	fd.CancelJob(t, newJob)
	t.Logf("TIMING flink %s policy %s (state files: %v): whole scenario %s", dist.Version, policy, files, time.Since(testStart).Round(time.Millisecond))
}

// rwOriginalInDR restores the ORIGINAL savepoint (reader splits and enumerator name `events`)
// in DR, where the topic is `primary.events`: same uid, no allowNonRestoredState. Flink accepts
// it (the uid maps), but the savepoint's positions do not apply to the DR topic: the restored
// enumerator has finished its initial discovery, so it treats primary.events as newly
// discovered partitions and starts them at EARLIEST (the connector's
// newDiscoveryOffsetsInitializer), ignoring the group's committed offsets: the whole DR topic is
// read again and counted on top of the restored counts.
func rwOriginalInDR(t *testing.T, ctx context.Context, rig *drRig, fd *testenv.Flink, opts testenv.FlinkJobOptions,
	translated map[int32]mm2.Translation, spOff, drEnd map[int32]int64, spCount map[int]int64, valueAt map[int32]map[int64]string) {
	t.Helper()
	committed := flinkCommitted(t, rig.dadm, rsGroup)
	job := fd.SubmitJob(t, opts)
	fd.WaitJobRunning(t, job)
	probes := rsWaitProbes(t, rig.dr, rig.remote, opts.ProbeTag)
	for p := range int32(rsParts) {
		got := probes[p].offset
		if got != 0 || translated[p].Offset == 0 {
			t.Errorf("original savepoint in DR: %s-%d started at %d, want 0 (earliest: the savepoint names %s), translated offset %d",
				rig.remote, p, got, rsTopic, translated[p].Offset)
		}
		t.Logf("NEGATIVE %s-%d: the original savepoint (split %s-%d next %d) restored in DR starts at %d, not at the translated %d (DR group committed %d): %d records read again",
			rig.remote, p, rsTopic, p, spOff[p], got, translated[p].Offset, committed[fmt.Sprintf("%s-%d", rig.remote, p)], translated[p].Offset-got)
	}
	// The keyed state was restored (counts go on from the savepoint) and every DR record is
	// counted on top of it.
	first, final := map[int]int64{}, map[int]int64{}
	for key := range rwKeys {
		first[key], final[key] = spCount[key]+1, spCount[key]
	}
	for p := range int32(rsParts) {
		for off := range drEnd[p] { // DR offset = source offset (checked by waitMirrored)
			final[rwKey(valueAt[p][off])]++
		}
	}
	rwCheckCounts(t, "original savepoint in DR", rwWaitCounts(t, rig.dr, opts.ProbeTag, final), first, final)
	t.Logf("NEGATIVE counts per key after the original savepoint: %v (savepoint %v + every DR record)", final, spCount)
	if ex, err := fd.RootException(ctx, job); err != nil || ex != "" {
		t.Logf("original savepoint in DR: job exceptions %q (%v)", ex, err)
	}
	fd.CancelJob(t, job)
}

// rwDRJob is the job in DR: the DR topic name, DR Kafka, the SAME source uid, probe and counts
// with tag, from savepoint (a local directory) without allowNonRestoredState.
func rwDRJob(rig *drRig, savepoint, tag string) testenv.FlinkJobOptions {
	return testenv.FlinkJobOptions{Bootstrap: rig.dr.Bootstrap, Topics: []string{rig.remote}, GroupID: rsGroup,
		SourceUID: rwUID, Parallelism: 2, ProbeTopic: rsProbeTopic, ProbeTag: tag, CountTopic: rwCountTopic,
		SavepointPath: "file://" + savepoint, AllowNonRestoredState: false, Name: "drconsole-events-" + tag}
}

// rwStopped is the primary side of a rewrite scenario once done: the job stopped with a
// savepoint mid-stream, MM2 mirrored everything after it, and the console translated the
// savepoint's offsets.
type rwStopped struct {
	spDir      string // the savepoint's directory (holding _metadata)
	sp         *flink.Savepoint
	spOff      map[int32]int64 // rsTopic partition -> the savepoint's next offset U
	spSub      map[int32]int   // partition -> the reader subtask holding its split
	pEnd       map[int32]int64 // primary end offsets (= DR's, mirrored)
	drSrc      map[int32]map[int64]int64
	translated map[int32]mm2.Translation
	spCount    map[int]int64 // key -> its count in the savepoint (primary records below U)
	valueAt    map[int32]map[int64]string
}

// rwRunAndStop runs the job (uid rwUID, counts to rwCountTopic, probe tag "primary") on fp
// against the primary while the rig's producer writes, stops it with a savepoint into spRoot
// after two checkpoints, writes 40+ records more per partition, waits for MM2 and the console,
// and translates the savepoint's offsets (steps 1-3 of rewriteRestoreInDR).
func rwRunAndStop(t *testing.T, ctx context.Context, rig *drRig, fp *testenv.Flink, spRoot string) *rwStopped {
	t.Helper()
	stopProducer := rig.startProducer(t, ctx)
	defer stopProducer()

	// --- 1. the job on the primary ----------------------------------------------------------------
	jobID := fp.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: rig.primary.Bootstrap, Topics: []string{rsTopic}, GroupID: rsGroup,
		SourceUID: rwUID, Parallelism: 2, ProbeTopic: rsProbeTopic, ProbeTag: "primary", CountTopic: rwCountTopic})
	fp.WaitJobRunning(t, jobID)
	for p, pr := range rsWaitProbes(t, rig.primary, rsTopic, "primary") {
		if pr.offset != 0 {
			t.Errorf("primary job: first offset read in %s-%d is %d, want 0 (fresh start)", rsTopic, p, pr.offset)
		}
	}
	// Let it complete two checkpoints while the producer writes (so the group has commits that
	// MM2 syncs to DR, and the savepoint lands mid-stream).
	fp.WaitCheckpoint(t, jobID, fp.WaitCheckpoint(t, jobID, 0).ID)

	// --- 2. stop-with-savepoint ---------------------------------------------------------------------
	st := &rwStopped{spDir: fp.TriggerSavepoint(t, jobID, spRoot, true), spOff: map[int32]int64{}, spSub: map[int32]int{}}
	fp.WaitJobState(t, jobID, "FINISHED")
	var err error
	if st.sp, err = flink.ReadSavepoint(st.spDir); err != nil {
		t.Fatalf("ReadSavepoint: %v", err)
	}
	ko, err := st.sp.KafkaSourceOffsets(rwUID)
	if err != nil {
		t.Fatalf("KafkaSourceOffsets(%q): %v", rwUID, err)
	}
	for _, po := range ko.Sorted() {
		if po.Topic != rsTopic || po.Marker != "" || po.Next < 0 {
			t.Fatalf("savepoint partition %+v: want a real offset of %s", po, rsTopic)
		}
		st.spOff[po.Partition], st.spSub[po.Partition] = po.Next, po.Subtask
	}
	if len(st.spOff) != rsParts {
		t.Fatalf("savepoint has %d partitions %v, want %d", len(st.spOff), st.spOff, rsParts)
	}
	t.Logf("savepoint v%d checkpoint %d at %s: %s offsets %v (subtasks %v)", st.sp.Version, st.sp.CheckpointID, st.spDir, rsTopic, st.spOff, st.spSub)

	// --- 3. more data, MM2, the console's translation ---------------------------------------------
	stopProducer()
	rig.produce(t, ctx, 40) // DR holds data beyond every savepoint offset
	st.pEnd = rig.primaryEnd(t)
	for p := range int32(rsParts) {
		if u, e := st.spOff[p], st.pEnd[p]; u <= 0 || u >= e {
			t.Fatalf("%s-%d: savepoint offset %d not inside (0, end %d): the job did not stop mid-stream", rsTopic, p, u, e)
		}
	}
	st.drSrc = rig.waitMirrored(t, st.pEnd)
	st.translated = rig.translate(t, rig.waitSyncs(t, ctx), st.spOff)

	// What the savepoint's keyed state holds: per key, the primary records below U. And the
	// primary job's own count updates end exactly there (consecutive from 1).
	st.spCount, st.valueAt = map[int]int64{}, map[int32]map[int64]string{}
	one := map[int]int64{}
	rig.data.mu.Lock()
	for v, p := range rig.data.part {
		off := rig.data.off[v]
		if st.valueAt[p] == nil {
			st.valueAt[p] = map[int64]string{}
		}
		st.valueAt[p][off] = v
		if off < st.spOff[p] {
			st.spCount[rwKey(v)]++
		}
	}
	rig.data.mu.Unlock()
	for key := range rwKeys {
		one[key] = 1
		if st.spCount[key] == 0 {
			t.Fatalf("key %d has no record below the savepoint offsets: the count check would be empty", key)
		}
	}
	rwCheckCounts(t, "primary job", rwReadCounts(t, rig.primary, "primary"), one, st.spCount)
	t.Logf("count per key in the savepoint (primary records below U): %v", st.spCount)
	return st
}

// commitDREnd moves the DR group's committed offsets of the DR topic to the DR end (pEnd,
// mirrored), so that only restored state can start a partition at the translated offset: a
// partition the restored state does not cover would read nothing.
func (r *drRig) commitDREnd(t *testing.T, ctx context.Context, pEnd map[int32]int64) {
	t.Helper()
	commit := kadm.Offsets{}
	for p := range int32(rsParts) {
		commit.Add(kadm.Offset{Topic: r.remote, Partition: p, At: pEnd[p], LeaderEpoch: -1})
	}
	if res, err := r.dadm.CommitOffsets(ctx, rsGroup, commit); err != nil || res.Error() != nil {
		t.Fatalf("commit DR end offsets for %s: %v %v", rsGroup, err, res.Error())
	}
	t.Logf("dr group %s set to the DR end %v: a partition the restored state does not cover would read nothing", rsGroup, flinkCommitted(t, r.dadm, rsGroup))
}

// rwCheckContinues checks a job restored in DR from the rewritten savepoint (its probe and
// count tag): per partition the first DR record read == the translated offset, maps back to a
// source offset <= U, re-reads <= RereadMax, and the source emits exactly DR end - translated;
// per key the first count after the restore == the savepoint's count + 1, counts stay
// consecutive, and the final count == the savepoint's + the DR records read (steps 7-8 of
// rewriteRestoreInDR).
func rwCheckContinues(t *testing.T, ctx context.Context, rig *drRig, fd *testenv.Flink, job, tag string, st *rwStopped) {
	t.Helper()
	// --- 7. where it started, and that it reads exactly the rest ----------------------------------
	probes := rsWaitProbes(t, rig.dr, rig.remote, tag)
	rig.checkStarts(t, probes, st.translated, st.spOff, st.pEnd, st.drSrc)
	rest := map[string]int64{}
	for p := range int32(rsParts) {
		rest[fmt.Sprint(p)] = st.pEnd[p] - st.translated[p].Offset
	}
	flinkWaitSourceRecords(t, fd, job, rest)

	// --- 8. the keyed counts continue from the savepoint -----------------------------------------
	first, final := map[int]int64{}, map[int]int64{}
	for key := range rwKeys {
		first[key], final[key] = st.spCount[key]+1, st.spCount[key]
	}
	for p := range int32(rsParts) {
		for off := st.translated[p].Offset; off < st.pEnd[p]; off++ {
			final[rwKey(st.valueAt[p][st.drSrc[p][off]])]++
		}
	}
	counts := rwWaitCounts(t, rig.dr, tag, final)
	rwCheckCounts(t, "restored job", counts, first, final)
	for key := range rwKeys {
		if cs := counts[key]; len(cs) > 0 {
			t.Logf("RESULT key %d: savepoint count %d | first count after restore %d | final %d (want %d = %d + %d DR records read)",
				key, st.spCount[key], cs[0], cs[len(cs)-1], final[key], st.spCount[key], final[key]-st.spCount[key])
		}
	}
	if ex, err := fd.RootException(ctx, job); err != nil || ex != "" {
		t.Errorf("restored job %s: exceptions %q (%v)", job, ex, err)
	}
}
