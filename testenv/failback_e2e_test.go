//go:build e2e

package testenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/testenv"
)

const (
	fbParts      = 3
	fbPre        = 300 // primary records before the failover (mirrored to DR)
	fbLost       = 12  // primary records after the cut (lost to DR)
	fbDR         = 150 // DR records after the failover, plain
	fbDRTxn      = 9   // DR records after them, in 3 committed transactions (each partition ends with a marker)
	fbGroup      = "fb-app"
	fbLagGroup   = "fb-lagging" // a DR group fbLagBy records past the cut: translated from inside the log
	fbLagBy      = 20
	fbReverse    = "dr-to-primary-MirrorSourceConnector"
	fbFlowName   = "primary->dr"
	fbFlinkGroup = "fb-flink"
	fbProbeTopic = "flink-probe"
)

// fbReadAll reads every record of topic on k, per partition in offset order: "offset:value".
func fbReadAll(t *testing.T, k *testenv.Kafka, topic string) map[int32][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ends, err := k.Admin(t).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]map[int32]kgo.Offset{topic: {}}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		parts[topic][o.Partition] = kgo.NewOffset().AtStart()
		want[o.Partition] = o.Offset
	})
	cl := k.Client(t, kgo.ConsumePartitions(parts))
	out := map[int32][]string{}
	// done: every partition read up to its end, less slack offsets (a
	// partition may end with a transaction marker, which is no record).
	done := func(slack int64) bool {
		for p, end := range want {
			next := int64(0)
			if n := len(out[p]); n > 0 {
				fmt.Sscanf(out[p][n-1], "%d:", &next)
				next++
			}
			if next < end-slack {
				return false
			}
		}
		return true
	}
	for !done(0) {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s: timed out with %d/%v", topic, len(out), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], fmt.Sprintf("%d:%s", r.Offset, r.Value))
		})
		if fs.Empty() && done(1) {
			break // nothing more within 5 s, at most a marker left
		}
	}
	cl.Close()
	return out
}

// fbCount counts the values (without offsets) per partition.
func fbCount(recs map[int32][]string) map[int32]map[string]int {
	out := map[int32]map[string]int{}
	for p, rs := range recs {
		out[p] = map[string]int{}
		for _, r := range rs {
			_, v, _ := strings.Cut(r, ":")
			out[p][v]++
		}
	}
	return out
}

// fbConnectNext is connector name's committed next offset per partition (GET offsets, +1).
func fbConnectNext(t *testing.T, c *testenv.Connect, name string) map[model.TP]int64 {
	t.Helper()
	resp, err := http.Get(c.URL + "/connectors/" + name + "/offsets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		Offsets []struct {
			Partition struct {
				Cluster   string `json:"cluster"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("GET %s/offsets: %s: %v", name, b, err)
	}
	out := map[model.TP]int64{}
	for _, o := range body.Offsets {
		out[model.TP{Topic: o.Partition.Topic, Partition: o.Partition.Partition}] = o.Offset.Offset + 1
	}
	return out
}

// The failback runbook against real Kafka, MirrorMaker 2 on Kafka Connect and Flink 2.2.1: a
// failover records the cut; DR's producers write (plain and transactional records) while the
// primary gets records that never reach DR, and a Flink job in DR reads all of DR; the
// failback's nine steps run on the real Connect worker and Flink. Checked by payload: every DR
// record is on the primary exactly once, no primary record was copied back, the lost records
// are untouched, the group translated back and the Flink job restored on the primary from the
// DR job's rewritten savepoint both resume at the first record written after the failback,
// the restarted forward flow copies a new primary record to DR once and none of DR's own
// records again, and the primary is active. Every failback step is interrupted twice first: a
// console process killed (SIGKILL) right after claiming it, then one killed right after its
// effect; the step is resumed by the next and all of the above still holds.
func TestFailbackE2E(t *testing.T) {
	began := time.Now()
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": fbParts})
	ctx := context.Background()
	pcl := fbSeedPrimary(t, ctx, primary)
	createTopics(t, primary, map[string]int32{fbProbeTopic: 1})
	f := testenv.StartFlink(t)
	dbPath := filepath.Join(t.TempDir(), "drconsole.db")
	connect, cfg, store, mon, log := runbookOnConnectAt(t, ctx, primary, dr, dbPath)
	withFlink(cfg, f.URL, f.SavepointDir)
	rb := fbRunbook(cfg, store, mon, log)
	steps := fbSteps{t: t, ctx: ctx, rb: rb}
	approved := steps.approved

	// 1. MM2 caught up, then an approved failover: the stop-mirror step records the cut.
	if _, err := rb.Create(ctx, fbAlice, failback.FailbackPlan(fbFlowName, fbGroup), "too early"); err == nil {
		t.Fatal("a failback was planned while the primary is active")
	}
	fo := steps.failover(mon)
	cut, err := store.FailoverCut(ctx, fo)
	if err != nil || len(cut) != fbParts {
		t.Fatalf("cut %+v %v", cut, err)
	}
	cutAt := map[int32]int64{}
	for _, c := range cut {
		if c.DREnd == nil {
			t.Fatalf("cut without DR's end: %+v", c)
		}
		cutAt[c.Partition] = *c.DREnd
		if *c.DREnd != fbPre/fbParts {
			t.Fatalf("cut %s-%d at DR end %d, want %d", c.Topic, c.Partition, *c.DREnd, fbPre/fbParts)
		}
	}

	// 2. The writers after the failover: DR's producers (plain, then transactions, so every
	// DR partition ends with a commit marker), and some primary records DR never gets.
	fbProduce(t, ctx, pcl, "events", "lost", fbLost)
	fbWriteDR(t, ctx, dr)
	// A DR consumer group reads all of DR.
	drEnd := fbWaitCommitted(t, ctx, dr, "events")
	fbDrainGroup(t, ctx, dr, fbGroup, []string{"events"}, fbPre+fbDR+fbDRTxn)
	drCommitted, err := testenv.FetchCommitted(ctx, dr.Admin(t), fbGroup)
	if err != nil {
		t.Fatal(err)
	}
	for p, end := range drEnd {
		o, _ := drCommitted.Lookup("events", p)
		t.Logf("DR group %s events-%d committed %d, DR end %d", fbGroup, p, o.At, end)
	}
	// A DR consumer that lagged: fbLagBy records past the cut in every partition.
	lagAt := kadm.Offsets{}
	for p, c := range cutAt {
		lagAt.Add(kadm.Offset{Topic: "events", Partition: p, At: c + fbLagBy, LeaderEpoch: -1})
	}
	if resp, err := dr.Admin(t).CommitOffsets(ctx, fbLagGroup, lagAt); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	// The Flink job in DR reads all of DR: its checkpoints commit its offsets to DR (the last
	// record + 1, which under a transaction's commit marker is DR's end - 1).
	drJob := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: dr.Bootstrap, GroupID: fbFlinkGroup, Name: "fb-dr"})
	f.WaitJobRunning(t, drJob)
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		c, err := testenv.FetchCommitted(ctx, dr.Admin(t), fbFlinkGroup)
		if err != nil {
			return err
		}
		for p, end := range drEnd {
			if o, ok := c.Lookup("events", p); !ok || o.At < end-1 {
				return fmt.Errorf("the DR job's group at %+v on events-%d, DR's end %d", o, p, end)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// 3. The failback, planned by alice, approved by bob.
	primaryArgs := testenv.FlinkJobOptions{Bootstrap: primary.Bootstrap, GroupID: fbFlinkGroup, Name: "fb-primary",
		ProbeTopic: fbProbeTopic}.ProgramArgs()
	backTo := "file://" + f.SavepointDir + "/failback-for-primary"
	fb := approved(failback.WithFlinkBack(failback.FailbackPlan(fbFlowName, fbGroup, fbLagGroup), runbook.FlinkBack{DRTarget: "flink-dr", DRJob: drJob,
		RewriteTo: backTo, SourceUID: "kafka-source", Restore: runbook.Step{FlinkTarget: "flink-primary", JarID: f.JobJarID(t),
			EntryClass: testenv.FlinkJobEntryClass, Args: primaryArgs, Parallelism: 2}}), "e2e failback")
	if r, _ := rb.Get(ctx, fb); r.Plan.FailbackOf != fo {
		t.Fatalf("failback of run %d, want %d", r.Plan.FailbackOf, fo)
	}
	// Every failback step is first left behind by a console killed right after claiming it, then
	// by one killed right after its effect (before the outcome is recorded), then resumed here.
	child := fbConsole{Primary: primary.Bootstrap, DR: dr.Bootstrap, ConnectURL: connect.URL, OffsetTopic: connect.OffsetTopic,
		FlinkURL: f.URL, SavepointDir: f.SavepointDir, DB: dbPath, Run: fb}
	steps.killedThenRun(child, 0, 1) // set-up-reverse
	// The reverse source starts exactly at the cut (Connect's offsets, +1).
	if err := testenv.Eventually(30*time.Second, 500*time.Millisecond, func() error {
		next := fbConnectNext(t, connect, fbReverse)
		for p, c := range cutAt {
			if n, ok := next[model.TP{Topic: "events", Partition: p}]; !ok || n < c {
				return fmt.Errorf("reverse source next %v, cut %v", next, cutAt)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The run page's view of the reverse flow (ReverseFlow): every DR partition written since the
	// failover, copied up to DR's end, and a heartbeat emitted in DR carried to the primary.
	if err := testenv.Eventually(90*time.Second, time.Second, func() error {
		r, _ := rb.Get(ctx, fb)
		v := failback.BookOf(rb).ReverseFlow(ctx, r)
		switch {
		case v == nil:
			return fmt.Errorf("no reverse flow after set-up-reverse")
		case v.Err != "":
			return fmt.Errorf("%s", v.Err)
		case len(v.Rows) != fbParts || v.Unknown != 0 || v.Behind != 0: // each partition ends with a commit marker
			return fmt.Errorf("reverse rows %+v, behind %d, unknown %d", v.Rows, v.Behind, v.Unknown)
		case v.Heartbeat == nil:
			return fmt.Errorf("no heartbeat on the primary yet: %s", v.HeartbeatErr)
		}
		t.Logf("the reverse flow as the run page shows it: states %v, behind %d, heartbeat emitted %s ago", v.States, v.Behind, time.Since(*v.Heartbeat).Round(time.Millisecond))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The reverse flow as a flow of its own (the overview, its flow page, /metrics): every DR
	// partition known and copied, its RPO known and small, DR's heartbeat carried to the
	// primary, the reverse offset syncs ingested.
	rev := failback.ReverseFlowName(fbFlowName)
	if err := testenv.Eventually(90*time.Second, time.Second, func() error {
		s := mon.Snapshot(rev)
		if s == nil {
			return fmt.Errorf("the monitor does not watch %s (watched: %v)", rev, mon.Watched())
		}
		_, syncs := mon.Activity(rev)
		var unknown []string
		for _, p := range s.Partitions {
			if !p.LagMessages.Known || s.FiguresStale {
				unknown = append(unknown, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
			}
		}
		switch {
		case len(s.Partitions) != fbParts || len(unknown) > 0:
			return fmt.Errorf("reverse partitions %d (want %d), unknown %v: %s", len(s.Partitions), fbParts, unknown, s.Reason)
		case s.RPOMs == nil || s.RPOAtLeast || *s.RPOMs > 10_000:
			return fmt.Errorf("reverse RPO %v (at least: %v): %s", s.RPOMs, s.RPOAtLeast, s.Reason)
		case s.HeartbeatAge == nil || *s.HeartbeatAge > 15*time.Second:
			return fmt.Errorf("reverse heartbeat age %v", s.HeartbeatAge)
		case syncs == 0:
			return fmt.Errorf("no reverse offset syncs ingested")
		}
		t.Logf("the reverse flow %s as the monitor watches it: status %s (%s), RPO %d ms, %d records behind, heartbeat %s old, %d syncs",
			rev, s.Status, s.Reason, *s.RPOMs, *s.TotalLagMessages, s.HeartbeatAge.Round(time.Millisecond), syncs)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// wait-reverse-caught-up, stop-writers, stop-reverse, translate-group-back (2 groups),
	// savepoint-dr, rewrite-savepoint-back, restore-flink, restart-forward
	steps.killedThenRun(child, 1, 10)
	if w := mon.Watched(); len(w) != 0 || mon.Snapshot(rev) != nil {
		t.Fatalf("after stop-reverse the monitor still watches %v", w)
	}
	for _, n := range []string{fbReverse, "dr-to-primary-MirrorCheckpointConnector", "dr-to-primary-MirrorHeartbeatConnector"} {
		if _, err := connect.Status(ctx, n); err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("reverse connector %s after restart-forward: %v", n, err)
		}
	}
	if a, err := failover.ActiveSideOf(ctx, store, fbFlowName); err != nil || a.Side != model.SidePrimary {
		t.Fatalf("after the failback: %+v %v", a, err)
	}

	// 4a. The primary: every DR record exactly once, in DR's partition; every primary record
	// once (none copied back); the lost records untouched.
	onPrimary := fbCount(fbReadAll(t, primary, "events"))
	var bad []string
	for p := range int32(fbParts) {
		for i := p; i < fbPre; i += fbParts {
			if n := onPrimary[p][fmt.Sprintf("pre-%d", i)]; n != 1 {
				bad = append(bad, fmt.Sprintf("pre-%d on primary events-%d %d times", i, p, n))
			}
		}
		for i := p; i < fbLost; i += fbParts {
			if n := onPrimary[p][fmt.Sprintf("lost-%d", i)]; n != 1 {
				bad = append(bad, fmt.Sprintf("lost-%d on primary events-%d %d times", i, p, n))
			}
		}
		for i := p; i < fbDR; i += fbParts {
			if n := onPrimary[p][fmt.Sprintf("dr-%d", i)]; n != 1 {
				bad = append(bad, fmt.Sprintf("dr-%d on primary events-%d %d times", i, p, n))
			}
		}
		for i := p; i < fbDRTxn; i += fbParts {
			if n := onPrimary[p][fmt.Sprintf("drtxn-%d", i)]; n != 1 {
				bad = append(bad, fmt.Sprintf("drtxn-%d on primary events-%d %d times", i, p, n))
			}
		}
		total := 0
		for _, n := range onPrimary[p] {
			total += n
		}
		want := (fbPre + fbLost + fbDR + fbDRTxn) / fbParts
		if total != want {
			bad = append(bad, fmt.Sprintf("primary events-%d holds %d records, want %d", p, total, want))
		}
		by := map[string]int{}
		for v, n := range onPrimary[p] {
			k, _, _ := strings.Cut(v, "-")
			by[k] += n
		}
		t.Logf("primary events-%d: %d records (by payload prefix %v)", p, total, by)
	}
	if len(bad) > 0 {
		t.Fatalf("primary after the failback:\n%s", strings.Join(bad, "\n"))
	}

	// 4b. The group translated back resumes at the first record written after the failback.
	after := make([]*kgo.Record, fbParts)
	for p := range after {
		after[p] = &kgo.Record{Topic: "events", Partition: int32(p), Value: fmt.Appendf(nil, "after-%d", p)}
	}
	if err := pcl.ProduceSync(ctx, after...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pg := primary.Client(t, kgo.ConsumerGroup(fbGroup), kgo.ConsumeTopics("events"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
	for len(got) < fbParts && pctx.Err() == nil {
		pg.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%d:%s", r.Partition, r.Value)) })
	}
	pcancel()
	// Anything more would come within a poll or two.
	qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
	pg.PollFetches(qctx).EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%d:%s", r.Partition, r.Value)) })
	qcancel()
	pg.Close()
	if len(got) != fbParts {
		t.Fatalf("the group on the primary read %v, want exactly the %d records after the failback", got, fbParts)
	}
	for _, g := range got {
		p, v, _ := strings.Cut(g, ":")
		if v != "after-"+p {
			t.Fatalf("the group on the primary read %v, want after-<partition> each", got)
		}
	}
	// 4b''. The lagging group, moved back through the reverse flow's offset syncs, reads on the
	// primary the DR record it had not read yet and everything after, re-reads at most the
	// records since the sync it was translated with, and nothing the primary held before (no
	// pre- or lost- record): checked by payload against DR's own log.
	onDRBefore := fbReadAll(t, dr, "events")
	lg := primary.Client(t, kgo.ConsumerGroup(fbLagGroup), kgo.ConsumeTopics("events"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	lagRead := map[int32][]string{}
	lctx, lcancel := context.WithTimeout(ctx, 30*time.Second)
	for lctx.Err() == nil {
		lg.PollFetches(lctx).EachRecord(func(r *kgo.Record) { lagRead[r.Partition] = append(lagRead[r.Partition], string(r.Value)) })
		all := true
		for p := range int32(fbParts) {
			n := len(lagRead[p])
			all = all && n > 0 && lagRead[p][n-1] == fmt.Sprintf("after-%d", p)
		}
		if all {
			break
		}
	}
	lcancel()
	lg.Close()
	for p := range int32(fbParts) {
		var next string // DR's record at the lagging group's position
		for _, rec := range onDRBefore[p] {
			if o, v, _ := strings.Cut(rec, ":"); o == fmt.Sprint(cutAt[p]+fbLagBy) {
				next = v
			}
		}
		got := lagRead[p]
		at := slices.Index(got, next)
		switch {
		case next == "" || !strings.HasPrefix(next, "dr-"):
			t.Fatalf("DR events-%d at %d holds %q, want a dr- record", p, cutAt[p]+fbLagBy, next)
		case at < 0:
			t.Fatalf("the lagging group on the primary skipped %s on events-%d: read %v", next, p, got)
		case at >= fbLagBy:
			t.Fatalf("the lagging group re-read %d records before %s on events-%d, more than the %d since the cut", at, next, p, fbLagBy)
		}
		for _, v := range got {
			if strings.HasPrefix(v, "pre-") || strings.HasPrefix(v, "lost-") {
				t.Fatalf("the lagging group on the primary read %s on events-%d: before DR's records", v, p)
			}
		}
		t.Logf("the lagging group on primary events-%d: %d record(s) re-read before %s, %d read in all", p, at, next, len(got))
	}
	// 4b'. Flink: the DR job stopped with its savepoint; the job on the primary restored from the
	// rewritten copy (Flink says so) and its first record in each partition is after-<partition>.
	if o, err := f.JobOverview(ctx, drJob); err != nil || o.State != "FINISHED" {
		t.Fatalf("the DR job after savepoint-dr: %+v %v", o, err)
	}
	var restored struct {
		JobID string `json:"job_id"`
	}
	if r, _ := rb.Get(ctx, fb); json.Unmarshal([]byte(r.Steps[8].Result), &restored) != nil || restored.JobID == "" {
		t.Fatalf("restore-flink result %s", r.Steps[8].Result)
	}
	f.WaitJobRunning(t, restored.JobID)
	if h, err := flink.NewRESTClient(f.URL).Checkpoints(ctx, restored.JobID); err != nil || h.Latest.Restored == nil ||
		flink.CanonicalPath(h.Latest.Restored.ExternalPath) != flink.CanonicalPath(backTo) {
		t.Fatalf("the primary job's restore: %+v %v, want from %s", h, err, backTo)
	}
	var probes map[int32]rsProbe
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		probes = rsReadProbes(t, primary, "events", "fb-primary")
		if len(probes) < fbParts {
			return fmt.Errorf("probes %v", probes)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the Flink job on the primary, first record per partition: %+v", probes)
	for p, pr := range probes {
		if pr.value != fmt.Sprintf("after-%d", p) {
			t.Errorf("the Flink job on the primary read %q at events-%d:%d first, want after-%d", pr.value, p, pr.offset, p)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// 4c. The forward flow again: the new primary records reach DR once; nothing of DR's own
	// (nor the lost records) is copied to DR.
	onDR := fbForwardCopied(t, dr, "events")
	for p := range int32(fbParts) {
		total := 0
		for v, n := range onDR[p] {
			total += n
			if n != 1 {
				bad = append(bad, fmt.Sprintf("%s on DR events-%d %d times", v, p, n))
			}
			if strings.HasPrefix(v, "lost-") {
				bad = append(bad, fmt.Sprintf("%s (lost to DR) copied to DR events-%d after the failback", v, p))
			}
		}
		if want := (fbPre+fbDR+fbDRTxn)/fbParts + 1; total != want {
			bad = append(bad, fmt.Sprintf("DR events-%d holds %d records, want %d", p, total, want))
		}
		t.Logf("DR events-%d: %d records", p, total)
	}
	if len(bad) > 0 {
		t.Fatalf("DR after restart-forward:\n%s", strings.Join(bad, "\n"))
	}
	for _, n := range cfg.Flows[0].Connectors {
		if st, err := connect.Status(ctx, n); err != nil || !st.Running() {
			t.Fatalf("forward %s after restart-forward: %+v %v", n, st, err)
		}
	}
	if _, bad, err := store.VerifyAudit(ctx); err != nil || bad != nil {
		t.Fatalf("audit chain: %v %v", bad, err)
	}
	t.Logf("failback e2e: %d pre + %d lost + %d DR (+%d in transactions) records, %s", fbPre, fbLost, fbDR, fbDRTxn, time.Since(began).Round(time.Millisecond))
}

var (
	fbAlice = runbook.Actor{Name: "alice", Role: "operator"}
	fbBob   = runbook.Actor{Name: "bob", Role: "operator"}
)

// fbSteps plans, approves and runs the failback tests' runs: alice plans and runs, bob approves.
type fbSteps struct {
	t   *testing.T
	ctx context.Context
	rb  *runbook.Runbook
}

// run runs steps from..to-1 of run id, failing the test with the step's result on an error.
func (s fbSteps) run(id int64, from, to int) {
	s.t.Helper()
	for idx := from; idx < to; idx++ {
		start := time.Now()
		x, err := s.rb.Begin(s.ctx, fbAlice, id, idx, fbFlowName, "")
		if err != nil {
			s.t.Fatalf("run %d step %d: begin: %v", id, idx+1, err)
		}
		if err := x.Perform(s.ctx); err != nil {
			r, _ := s.rb.Get(s.ctx, id)
			s.t.Fatalf("run %d step %d (%s): %v\nresult: %s", id, idx+1, r.Plan.Steps[idx].Kind, err, r.Steps[idx].Result)
		}
		r, _ := s.rb.Get(s.ctx, id)
		s.t.Logf("run %d step %d %s done in %s: %s", id, idx+1, r.Plan.Steps[idx].Kind, time.Since(start).Round(time.Millisecond), r.Steps[idx].Result)
	}
}

// approved creates p and has it approved.
func (s fbSteps) approved(p runbook.Plan, why string) int64 {
	s.t.Helper()
	id, err := s.rb.Create(s.ctx, fbAlice, p, why)
	if err != nil {
		s.t.Fatal(err)
	}
	r, _ := s.rb.Get(s.ctx, id)
	if err := s.rb.Approve(s.ctx, fbBob, id, r.PlanHash, "ok"); err != nil {
		s.t.Fatal(err)
	}
	return id
}

// failover waits until MM2 caught up, then runs an approved failover (preflight, stop-mirror:
// the cut recorded) and checks DR is the active side.
func (s fbSteps) failover(mon *monitor.Monitor) int64 {
	s.t.Helper()
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		snap := mon.Snapshot(fbFlowName)
		if snap.Status != model.FlowStatusOK || snap.TotalLagMessages == nil || *snap.TotalLagMessages != 0 {
			return fmt.Errorf("%s", snapshotLine(snap))
		}
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
	fo := s.approved(runbook.Plan{Flow: fbFlowName, Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}}, "e2e failover")
	s.run(fo, 0, 2)
	if a, err := failover.ActiveSideOf(s.ctx, s.rb.Store, fbFlowName); err != nil || a.Side != model.SideDR || a.Run != fo {
		s.t.Fatalf("after the failover: %+v %v", a, err)
	}
	return fo
}

// fbWriteDR is DR's producers after the failover, into DR's events: fbDR plain records
// ("dr-<i>"), then fbDRTxn in committed transactions of one record per partition ("drtxn-<i>"),
// so every partition ends with a commit marker.
func fbWriteDR(t *testing.T, ctx context.Context, dr *testenv.Kafka) {
	t.Helper()
	dcl := dr.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	recs := make([]*kgo.Record, fbDR)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "events", Partition: int32(i % fbParts), Value: fmt.Appendf(nil, "dr-%d", i)}
	}
	if err := dcl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	txn := dr.Client(t, kgo.TransactionalID("dr-writer"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < fbDRTxn; i += fbParts {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := i; j < i+fbParts; j++ {
			txn.Produce(ctx, &kgo.Record{Topic: "events", Partition: int32(j % fbParts), Value: fmt.Appendf(nil, "drtxn-%d", j)}, nil)
		}
		if err := txn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
}

// fbWaitCommitted waits until topic's last stable offsets on k reach its log ends
// (EndTransaction returns before the markers are written) and returns the ends.
func fbWaitCommitted(t *testing.T, ctx context.Context, k *testenv.Kafka, topic string) map[int32]int64 {
	t.Helper()
	var end map[int32]int64
	if err := testenv.Eventually(30*time.Second, 200*time.Millisecond, func() error {
		ends, err := k.Admin(t).ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		lso, err := kadm.NewClient(k.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()))).ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		end = map[int32]int64{}
		var bad []string
		ends.Each(func(o kadm.ListedOffset) {
			end[o.Partition] = o.Offset
			if l, _ := lso.Lookup(topic, o.Partition); l.Offset != o.Offset {
				bad = append(bad, fmt.Sprintf("%d: LSO %d HWM %d", o.Partition, l.Offset, o.Offset))
			}
		})
		if len(bad) > 0 {
			return fmt.Errorf("%v", bad)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return end
}

// fbDrainGroup reads topics on k as group (read committed, from the start) until want records
// came, and commits.
func fbDrainGroup(t *testing.T, ctx context.Context, k *testenv.Kafka, group string, topics []string, want int) {
	t.Helper()
	gcl := k.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.DisableAutoCommit(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer gcl.Close()
	seen := 0
	gctx, gcancel := context.WithTimeout(ctx, 60*time.Second)
	defer gcancel()
	for seen < want && gctx.Err() == nil {
		gcl.PollFetches(gctx).EachRecord(func(*kgo.Record) { seen++ })
	}
	if seen != want {
		t.Fatalf("group %s read %d records of %v, want %d", group, seen, topics, want)
	}
	if err := gcl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
}

// fbForwardCopied waits until the restarted forward flow copied after-<partition> into topic on
// dr, then a few seconds more (anything copied twice would be there by then), and counts
// topic's values per partition.
func fbForwardCopied(t *testing.T, dr *testenv.Kafka, topic string) map[int32]map[string]int {
	t.Helper()
	if err := testenv.Eventually(90*time.Second, time.Second, func() error {
		on := fbCount(fbReadAll(t, dr, topic))
		for p := range int32(fbParts) {
			if on[p][fmt.Sprintf("after-%d", p)] == 0 {
				return fmt.Errorf("after-%d not in DR's %s yet", p, topic)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	return fbCount(fbReadAll(t, dr, topic))
}

// killedThenRun runs steps from..to-1 of run child.Run, each first left behind by a console
// killed right after claiming it, then by one killed right after its effect (before the outcome
// is recorded), then resumed here.
func (s fbSteps) killedThenRun(child fbConsole, from, to int) {
	s.t.Helper()
	for idx := from; idx < to; idx++ {
		for _, point := range []string{"started", "effect-done"} {
			q := child
			q.Step, q.Point = idx, point
			took := killedAt(s.t, q)
			r, _ := s.rb.Get(s.ctx, child.Run)
			if st := r.Steps[idx]; st.Status != model.StepRunning {
				s.t.Fatalf("step %d after a console killed at %s: %s, want running", idx+1, point, st.Status)
			}
			s.t.Logf("step %d (%s): a console killed at %s after %s", idx+1, r.Plan.Steps[idx].Kind, point, took.Round(time.Millisecond))
		}
		s.run(child.Run, idx, idx+1)
	}
}

// fbProduce writes n records "<prefix>-<i>" to topic on cl, record i to partition i mod fbParts.
func fbProduce(t *testing.T, ctx context.Context, cl *kgo.Client, topic, prefix string, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i % fbParts), Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// fbSeedPrimary writes the fbPre records mirrored before the failover to the primary's events
// and commits a group there (the checkpoint connector needs one with offsets to get a task); it
// returns the client it wrote with.
func fbSeedPrimary(t *testing.T, ctx context.Context, primary *testenv.Kafka) *kgo.Client {
	t.Helper()
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	fbProduce(t, ctx, pcl, "events", "pre", fbPre)
	commits := kadm.Offsets{}
	for p := range int32(fbParts) {
		commits.Add(kadm.Offset{Topic: "events", Partition: p, At: 50, LeaderEpoch: -1})
	}
	if err := primary.Admin(t).CommitAllOffsets(ctx, "orders-app", commits); err != nil {
		t.Fatal(err)
	}
	return pcl
}
