//go:build e2e

package testenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/testenv"
)

// The failback under MM2's default replication policy, against real Kafka, MirrorMaker 2 on
// Kafka Connect and Flink. DR holds primary.events (the forward copy, frozen at the cut) and
// its own events, written after the failover (plain and transactional records). The reverse
// flow copies DR's events into dr.events on the primary, from the earliest offset, and never
// primary.events back. Checked by payload: every DR record is in the primary's dr.events exactly
// once; the primary's events hold its own records only, once; a DR group at DR's ends resumes
// on the primary at the first record written after the failback in both topics; a group that
// lagged in DR's events is moved into dr.events through the reverse syncs and skips nothing; one
// inside primary.events (it lagged since before the failover) is moved into the primary's events
// through the forward syncs read backwards, skips nothing and reads the records lost to DR next;
// the Flink job restored on the primary from the DR
// savepoint, its splits moved to the other topics, reads the new records first; the restarted
// forward flow copies a new primary record to DR once and dr.events not at all.
func TestFailbackDefaultPolicyE2E(t *testing.T) {
	const fbBehindGroup, fbBehindAt = "fb-behind", fbPre/fbParts - 10
	began := time.Now()
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": fbParts, fbProbeTopic: 1})
	createTopics(t, dr, map[string]int32{"events": fbParts}) // DR's own, written after the failover
	ctx := context.Background()
	pcl := fbSeedPrimary(t, ctx, primary)
	f := testenv.StartFlink(t)
	dbPath := filepath.Join(t.TempDir(), "drconsole.db")
	connect, cfg, store, mon, log := runbookOnConnectPolicy(t, ctx, "default", primary, dr, dbPath)
	withFlink(cfg, f.URL, f.SavepointDir)
	rb := fbRunbook(cfg, store, mon, log)
	steps := fbSteps{t: t, ctx: ctx, rb: rb}
	approved := steps.approved

	// 1. MM2 caught up (primary.events in DR), then the failover records the cut.
	fo := steps.failover(mon)
	cut, err := store.FailoverCut(ctx, fo)
	if err != nil || len(cut) != fbParts {
		t.Fatalf("cut %+v %v", cut, err)
	}
	for _, c := range cut {
		if c.RemoteTopic != "primary.events" || c.DREnd == nil || *c.DREnd != fbPre/fbParts {
			t.Fatalf("cut %+v, want primary.events at %d", c, fbPre/fbParts)
		}
	}

	// 2. After the failover: primary records DR never gets; DR's producers write to DR's own
	// events, plain then in transactions (every partition ends with a commit marker).
	fbProduce(t, ctx, pcl, "events", "lost", fbLost)
	fbWriteDR(t, ctx, dr)
	// The DR application reads both topics to their ends.
	topics := []string{"primary.events", "events"}
	fbWaitCommitted(t, ctx, dr, "events")
	fbDrainGroup(t, ctx, dr, fbGroup, topics, fbPre+fbDR+fbDRTxn)
	// A DR consumer that lagged in DR's own events (fbLagBy records in), at the end of the
	// forward copy; and one still inside the forward copy (it lagged since before the failover).
	lagAt, behindAt := kadm.Offsets{}, kadm.Offsets{}
	for p := range int32(fbParts) {
		lagAt.Add(kadm.Offset{Topic: "events", Partition: p, At: fbLagBy, LeaderEpoch: -1})
		lagAt.Add(kadm.Offset{Topic: "primary.events", Partition: p, At: fbPre / fbParts, LeaderEpoch: -1})
		behindAt.Add(kadm.Offset{Topic: "primary.events", Partition: p, At: fbBehindAt, LeaderEpoch: -1})
	}
	for g, o := range map[string]kadm.Offsets{fbLagGroup: lagAt, fbBehindGroup: behindAt} {
		if resp, err := dr.Admin(t).CommitOffsets(ctx, g, o); err != nil || resp.Error() != nil {
			t.Fatal(err, resp.Error())
		}
	}
	// The Flink job in DR reads both topics; its checkpoints commit its offsets to DR.
	drJob := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: dr.Bootstrap, Topics: topics, GroupID: fbFlinkGroup, Name: "fb-dr"})
	f.WaitJobRunning(t, drJob)
	drEnds := map[string]map[int32]int64{}
	for _, topic := range topics {
		ends, err := dr.Admin(t).ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		drEnds[topic] = map[int32]int64{}
		ends.Each(func(o kadm.ListedOffset) { drEnds[topic][o.Partition] = o.Offset })
	}
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		c, err := testenv.FetchCommitted(ctx, dr.Admin(t), fbFlinkGroup)
		if err != nil {
			return err
		}
		for topic, ends := range drEnds {
			for p, end := range ends {
				if o, ok := c.Lookup(topic, p); !ok || o.At < end-1 {
					return fmt.Errorf("the DR job's group at %+v on %s-%d, DR's end %d", o, topic, p, end)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// 3. The failback: the job on the primary reads the primary's events and dr.events.
	primaryArgs := testenv.FlinkJobOptions{Bootstrap: primary.Bootstrap, Topics: []string{"events", "dr.events"}, GroupID: fbFlinkGroup,
		Name: "fb-primary", ProbeTopic: fbProbeTopic}.ProgramArgs()
	backTo := "file://" + f.SavepointDir + "/failback-default-for-primary"
	fb := approved(failback.WithFlinkBack(failback.FailbackPlan(fbFlowName, fbGroup, fbLagGroup, fbBehindGroup), runbook.FlinkBack{DRTarget: "flink-dr", DRJob: drJob,
		RewriteTo: backTo, SourceUID: "kafka-source", Restore: runbook.Step{FlinkTarget: "flink-primary", JarID: f.JobJarID(t),
			EntryClass: testenv.FlinkJobEntryClass, Args: primaryArgs, Parallelism: 2}}), "e2e failback, default policy")
	// Every failback step is first left behind by a console killed (SIGKILL) right after
	// claiming it, then by one killed right after its effect, then resumed.
	child := fbConsole{Primary: primary.Bootstrap, DR: dr.Bootstrap, ConnectURL: connect.URL, OffsetTopic: connect.OffsetTopic,
		FlinkURL: f.URL, SavepointDir: f.SavepointDir, DB: dbPath, Run: fb, Policy: "default"}
	steps.killedThenRun(child, 0, 1) // set-up-reverse
	// The reverse flow, as the monitor watches it: DR's own events only, known and copied.
	rev := failback.ReverseFlowName(fbFlowName)
	if err := testenv.Eventually(90*time.Second, time.Second, func() error {
		s := mon.Snapshot(rev)
		if s == nil {
			return fmt.Errorf("the monitor does not watch %s", rev)
		}
		var names []string
		for _, p := range s.Partitions {
			if p.Topic.String() != "events" || p.RemoteTopic.String() != "dr.events" || !p.LagMessages.Known || s.FiguresStale {
				names = append(names, fmt.Sprintf("%s-%d as %s (lag %v, stale %v)", p.Topic, p.Partition, p.RemoteTopic, p.LagMessages, s.FiguresStale))
			}
		}
		if len(s.Partitions) != fbParts || len(names) > 0 || s.TotalLagMessages == nil || *s.TotalLagMessages != 0 {
			return fmt.Errorf("reverse partitions %d, unexpected %v, lag %v: %s", len(s.Partitions), names, s.TotalLagMessages, s.Reason)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The reverse source started at the earliest offset: every DR record of events is copied.
	// Connect commits the source's offsets once a second (offset.flush.interval.ms), after the
	// records it copied are already visible to the monitor, so its offsets are waited for.
	if err := testenv.Eventually(30*time.Second, 500*time.Millisecond, func() error {
		next := fbConnectNext(t, connect, fbReverse)
		for p := range int32(fbParts) {
			if _, ok := next[model.TP{Topic: "primary.events", Partition: p}]; ok {
				return fmt.Errorf("the reverse source copies primary.events back: %v", next)
			}
			if n := next[model.TP{Topic: "events", Partition: p}]; n < drEnds["events"][p]-1 {
				return fmt.Errorf("reverse source at %d on events-%d, DR's end %d", n, p, drEnds["events"][p])
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	steps.killedThenRun(child, 1, 11) // wait-reverse-caught-up … restart-forward
	if a, err := failover.ActiveSideOf(ctx, store, fbFlowName); err != nil || a.Side != model.SidePrimary {
		t.Fatalf("after the failback: %+v %v", a, err)
	}

	// 4a. The primary: every DR record once in dr.events, in DR's partition; its own events
	// hold its own records once, none of DR's.
	var bad []string
	onPrimary := fbCount(fbReadAll(t, primary, "events"))
	onCopy := fbCount(fbReadAll(t, primary, "dr.events"))
	for p := range int32(fbParts) {
		for prefix, n := range map[string]int{"pre": fbPre, "lost": fbLost} {
			for i := int(p); i < n; i += fbParts {
				if c := onPrimary[p][fmt.Sprintf("%s-%d", prefix, i)]; c != 1 {
					bad = append(bad, fmt.Sprintf("%s-%d on primary events-%d %d times", prefix, i, p, c))
				}
			}
		}
		for prefix, n := range map[string]int{"dr": fbDR, "drtxn": fbDRTxn} {
			for i := int(p); i < n; i += fbParts {
				if c := onCopy[p][fmt.Sprintf("%s-%d", prefix, i)]; c != 1 {
					bad = append(bad, fmt.Sprintf("%s-%d on primary dr.events-%d %d times", prefix, i, p, c))
				}
			}
		}
		if n, want := fbTotal(onPrimary[p]), (fbPre+fbLost)/fbParts; n != want {
			bad = append(bad, fmt.Sprintf("primary events-%d holds %d records, want %d", p, n, want))
		}
		if n, want := fbTotal(onCopy[p]), (fbDR+fbDRTxn)/fbParts; n != want {
			bad = append(bad, fmt.Sprintf("primary dr.events-%d holds %d records, want %d", p, n, want))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("primary after the failback:\n%s", strings.Join(bad, "\n"))
	}

	// 4b. New records in both topics; the group translated back reads exactly those.
	var after []*kgo.Record
	for p := range int32(fbParts) {
		after = append(after, &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "after-%d", p)},
			&kgo.Record{Topic: "dr.events", Partition: p, Value: fmt.Appendf(nil, "afterdr-%d", p)})
	}
	if err := pcl.ProduceSync(ctx, after...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	primaryTopics := []string{"events", "dr.events"}
	got := fbGroupRead(t, primary, fbGroup, primaryTopics, 2*fbParts)
	slices.Sort(got)
	var want []string
	for p := range fbParts {
		want = append(want, fmt.Sprintf("dr.events-%d:afterdr-%d", p, p), fmt.Sprintf("events-%d:after-%d", p, p))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the group on the primary read %v, want exactly %v", got, want)
	}
	// 4c. The lagging group: in dr.events from DR's record at fbLagBy on (through the reverse
	// syncs: nothing skipped, at most fbLagBy re-read), in events only the new record.
	onDR := fbReadAll(t, dr, "events")
	lagRead := fbGroupRead(t, primary, fbLagGroup, primaryTopics, 0)
	for p := range int32(fbParts) {
		next := fbValueAt(onDR[p], fbLagBy)
		inCopy, inEvents := fbValuesOf(lagRead, fmt.Sprintf("dr.events-%d", p)), fbValuesOf(lagRead, fmt.Sprintf("events-%d", p))
		at := slices.Index(inCopy, next)
		switch {
		case !strings.HasPrefix(next, "dr-"):
			t.Fatalf("DR events-%d at %d holds %q, want a dr- record", p, fbLagBy, next)
		case at < 0:
			t.Fatalf("the lagging group skipped %s on dr.events-%d: read %v", next, p, inCopy)
		case at > fbLagBy:
			t.Fatalf("the lagging group re-read %d records before %s on dr.events-%d", at, next, p)
		case len(inCopy) == 0 || inCopy[len(inCopy)-1] != fmt.Sprintf("afterdr-%d", p):
			t.Fatalf("the lagging group on dr.events-%d read %v, want it to end with afterdr-%d", p, inCopy, p)
		case !slices.Equal(inEvents, []string{fmt.Sprintf("after-%d", p)}):
			t.Fatalf("the lagging group on events-%d read %v, want after-%d only", p, inEvents, p)
		}
		t.Logf("the lagging group on primary dr.events-%d: %d record(s) re-read before %s", p, at, next)
	}

	// 4c'. The group inside the forward copy, moved through the forward flow's syncs read
	// backwards: on the primary's events it reads DR's next record for it (primary.events at
	// fbBehindAt) and everything after, the lost records too; nothing skipped.
	onDRCopy := fbReadAll(t, dr, "primary.events")
	behindRead := fbGroupRead(t, primary, fbBehindGroup, []string{"events"}, 0)
	for p := range int32(fbParts) {
		next := fbValueAt(onDRCopy[p], fbBehindAt)
		got := fbValuesOf(behindRead, fmt.Sprintf("events-%d", p))
		at := slices.Index(got, next)
		switch {
		case !strings.HasPrefix(next, "pre-"):
			t.Fatalf("DR primary.events-%d at %d holds %q, want a pre- record", p, fbBehindAt, next)
		case at < 0:
			t.Fatalf("the group inside the forward copy skipped %s on events-%d: read %v", next, p, got)
		case at > fbBehindAt:
			t.Fatalf("the group inside the forward copy re-read %d records before %s on events-%d", at, next, p)
		case len(got)-at != fbPre/fbParts-fbBehindAt+fbLost/fbParts+1:
			t.Fatalf("the group inside the forward copy read %d records from %s on events-%d, want the %d left of the forward copy, the %d lost and after-%d: %v",
				len(got)-at, next, p, fbPre/fbParts-fbBehindAt, fbLost/fbParts, p, got[at:])
		}
		t.Logf("the group inside the forward copy on primary events-%d: %d record(s) re-read before %s, %d read from it", p, at, next, len(got)-at)
	}

	// 4d. Flink: restored on the primary from the rewritten savepoint (Flink says so); its first
	// record in every partition of both topics is the new one.
	var restored struct {
		JobID string `json:"job_id"`
	}
	if r, _ := rb.Get(ctx, fb); json.Unmarshal([]byte(r.Steps[9].Result), &restored) != nil || restored.JobID == "" {
		t.Fatalf("restore-flink result %s", r.Steps[9].Result)
	}
	f.WaitJobRunning(t, restored.JobID)
	if h, err := flink.NewRESTClient(f.URL).Checkpoints(ctx, restored.JobID); err != nil || h.Latest.Restored == nil ||
		flink.CanonicalPath(h.Latest.Restored.ExternalPath) != flink.CanonicalPath(backTo) {
		t.Fatalf("the primary job's restore: %+v %v, want from %s", h, err, backTo)
	}
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		first := map[string]string{}
		for _, rec := range readTopic(t, primary, fbProbeTopic) {
			if string(rec.Key) != "fb-primary" {
				continue
			}
			fs := strings.SplitN(string(rec.Value), ",", 4)
			if len(fs) != 4 {
				return fmt.Errorf("probe %q", rec.Value)
			}
			if k := fs[0] + "-" + fs[1]; first[k] == "" {
				first[k] = fs[3]
			}
		}
		if len(first) < 2*fbParts {
			return fmt.Errorf("probes %v", first)
		}
		for p := range fbParts {
			if v := first[fmt.Sprintf("events-%d", p)]; v != fmt.Sprintf("after-%d", p) {
				t.Errorf("the Flink job on the primary read %q first on events-%d, want after-%d", v, p, p)
			}
			if v := first[fmt.Sprintf("dr.events-%d", p)]; v != fmt.Sprintf("afterdr-%d", p) {
				t.Errorf("the Flink job on the primary read %q first on dr.events-%d, want afterdr-%d", v, p, p)
			}
		}
		t.Logf("the Flink job on the primary, first record per partition: %v", first)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	// 4e. The forward flow again: the new primary records reach DR's primary.events once, the
	// lost ones not (as under the identity policy), and dr.events is not copied to DR.
	onCopyDR := fbForwardCopied(t, dr, "primary.events")
	for p := range int32(fbParts) {
		for v, n := range onCopyDR[p] {
			if n != 1 || strings.HasPrefix(v, "lost-") || strings.HasPrefix(v, "dr") {
				bad = append(bad, fmt.Sprintf("%s on DR primary.events-%d %d times", v, p, n))
			}
		}
		if n, want := fbTotal(onCopyDR[p]), fbPre/fbParts+1; n != want {
			bad = append(bad, fmt.Sprintf("DR primary.events-%d holds %d records, want %d", p, n, want))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("DR after restart-forward:\n%s", strings.Join(bad, "\n"))
	}
	if ts, err := dr.Admin(t).ListTopics(ctx); err != nil || ts.Has("primary.dr.events") {
		t.Fatalf("DR's topics after restart-forward: %v %v", ts.Names(), err)
	}
	if _, bad, err := store.VerifyAudit(ctx); err != nil || bad != nil {
		t.Fatalf("audit chain: %v %v", bad, err)
	}
	t.Logf("failback e2e, default policy: %d pre + %d lost + %d DR (+%d in transactions) records, %s", fbPre, fbLost, fbDR, fbDRTxn, time.Since(began).Round(time.Millisecond))
}

func fbTotal(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// fbGroupRead reads topics on k as group from its committed offsets until want records came
// (0: until nothing more comes), then a few seconds more: "topic-partition:value" each.
func fbGroupRead(t *testing.T, k *testenv.Kafka, group string, topics []string, want int) []string {
	t.Helper()
	cl := k.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	quiet := 0
	for time.Now().Before(deadline) && quiet < 2 {
		pctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		n := len(got)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%s-%d:%s", r.Topic, r.Partition, r.Value)) })
		switch {
		case want > 0 && len(got) >= want:
			quiet++ // once more: anything beyond would come within a poll
		case want == 0 && len(got) > 0 && len(got) == n:
			quiet++
		}
	}
	return got
}

// fbValueAt is the value of the record at offset in recs ("offset:value", as fbReadAll reads them).
func fbValueAt(recs []string, offset int) string {
	for _, rec := range recs {
		if o, v, _ := strings.Cut(rec, ":"); o == strconv.Itoa(offset) {
			return v
		}
	}
	return ""
}

// fbValuesOf are the values read from partition tp ("topic-partition") in read
// ("topic-partition:value", as fbGroupRead reads them), in order.
func fbValuesOf(read []string, tp string) []string {
	var out []string
	for _, g := range read {
		if k, v, _ := strings.Cut(g, ":"); k == tp {
			out = append(out, v)
		}
	}
	return out
}
