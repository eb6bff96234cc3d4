//go:build e2e

package testenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	connectrest "github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

// Issue 28 against real Kafka and MirrorMaker 2 on Connect, driven over
// HTTP: the primary is SIGKILLed while a producer keeps writing; alice
// (signed in with her own session) plans the failover on the page's form,
// bob approves it on the approval page that states the data at risk as a
// lower bound ("≥") with its read's age, and each step is run from the
// run page's forms. The figure is checked against the truth the console
// could know (acknowledged records not in DR, acknowledged before its
// read), the read's stated age against its last successful read of the
// primary, and the whole loss is logged beside it. A real Flink job's
// savepoint (taken through the catalog before the outage) whose
// translated position DR deleted after the approval (as retention does)
// is refused when its step starts and runs on bob's override, and the
// job is restored from it on the DR Flink target; the flow
// page, the run page, the report and /metrics then show the failed-over
// state; once the primary is back, the lost-to-DR page's headline is
// never less than the records really missing in DR.
func TestFailoverOutageOnRealMM2(t *testing.T) {
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": 3})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 3, 900)
	ctx := context.Background()
	// A consumer group on the primary: MirrorCheckpointConnector runs a
	// task only once there is a group to checkpoint.
	commits := kadm.Offsets{}
	for p := range int32(3) {
		commits.Add(kadm.Offset{Topic: "events", Partition: p, At: 100, LeaderEpoch: -1})
	}
	if err := primary.Admin(t).CommitAllOffsets(ctx, "events-app", commits); err != nil {
		t.Fatal(err)
	}
	connect, cfg, store, mon, log := runbookOnConnect(t, ctx, primary, dr)
	// One real Flink MiniCluster, the console's target "flink-dr": the
	// job reads the primary first, and the failover restores it in DR.
	f := testenv.StartFlink(t)
	cfg.FlinkTargets = []*config.FlinkTarget{{Name: "flink-dr", RestURL: f.URL, Region: "dr"}}
	cfg.SavepointDirs = []string{f.SavepointDir}
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}
	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connectrest.New, Flink: flink.NewRESTClient, StopVerifyWindow: time.Second}, failover.Env{Monitor: mon, Catalog: cat})
	srv := httpConsole(t, cfg, store, mon, log, rb, cat)
	alice := signedIn(t, srv, store, "alice", model.RoleOperator)
	bob := signedIn(t, srv, store, "bob", model.RoleOperator)
	const flow = "primary->dr"
	// The job reads the 900 records, then stops with a savepoint taken
	// through the catalog: its positions are the primary's ends.
	job := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: primary.Bootstrap, Topics: []string{"events"}, GroupID: "flink-events",
		SourceUID: "kafka-source", Parallelism: 2})
	f.WaitJobRunning(t, job)
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		if got := flinkCommitted(t, primary.Admin(t), "flink-events"); len(got) != 3 || got["events-0"] != 300 || got["events-1"] != 300 || got["events-2"] != 300 {
			return fmt.Errorf("flink-events committed %v", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	entry, err := failover.TriggerSavepoint(ctx, e2eWritten(t, store), cat, "flink-dr", job, true, func(time.Duration) {})
	if err != nil {
		t.Fatalf("stop-with-savepoint through the catalog: %v", err)
	}
	f.WaitJobState(t, job, "FINISHED")
	spPath := entry.Path
	spOffs, err := entry.Offsets()
	if err != nil || spOffs["events-0"] != 300 {
		t.Fatalf("savepoint %s offsets %v (%v, %q)", spPath, spOffs, err, entry.ReadError)
	}
	spDir, err := testenv.LocalPath(spPath)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := flink.ReadSavepoint(spDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("savepoint %s (checkpoint %d): %v", spPath, sp.CheckpointID, spOffs)
	// DR gets more than the savepoint read, so its translated position
	// lies inside DR's log.
	more := make([]*kgo.Record, 300)
	for i := range more {
		more[i] = &kgo.Record{Topic: "events", Partition: int32(i % 3), Value: fmt.Appendf(nil, "more-%d", i)}
	}
	if err := pcl.ProduceSync(ctx, more...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		s := mon.Snapshot(flow)
		if s.Status != model.FlowStatusOK || s.TotalLagMessages == nil || *s.TotalLagMessages != 0 {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		if tl := mon.Translator(flow).Index.Translate(model.TP{Topic: "events", Partition: 0}, spOffs["events-0"]); !tl.Translated() {
			return fmt.Errorf("events-0 at %d: %+v", spOffs["events-0"], tl)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The console's last successful read of the primary, as it published
	// it: the newest partition read of a refresh the primary answered.
	lastRead := watchPrimaryReads(t, mon, flow)

	// MM2 falls behind (its source connector paused), so the failover
	// loses records; a producer keeps writing; the primary dies under it
	// (SIGKILL).
	putConnector(t, connect, "MirrorSourceConnector", "pause")
	if err := testenv.Eventually(60*time.Second, 250*time.Millisecond, func() error {
		st, err := connect.Status(ctx, "MirrorSourceConnector")
		if err != nil || st.Connector.State != "PAUSED" {
			return fmt.Errorf("%+v %v", st, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[string]time.Time{} // value -> when the primary's ack reached the producer
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	cl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(2*time.Second))
	go func() {
		for i := 0; pctx.Err() == nil; i++ {
			v := fmt.Sprintf("live-%d", i)
			if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "events", Partition: int32(i % 3), Value: []byte(v)}).FirstErr(); err == nil {
				mu.Lock()
				acked[v] = time.Now()
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(3 * time.Second)
	primary.Kill()
	if err := testenv.Eventually(60*time.Second, 250*time.Millisecond, func() error {
		if s := mon.Snapshot(flow); !s.Source.Checked || s.Source.OK {
			return fmt.Errorf("primary still reads reachable: %s", snapshotLine(s))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	readAt := lastRead()

	// alice plans on the plan form: pre-flight, stop the mirror, the
	// group translated from the savepoint, the job restored from it on
	// the DR Flink reading DR under a new source uid.
	drJob := testenv.FlinkJobOptions{Bootstrap: dr.Bootstrap, Topics: []string{"events"}, GroupID: "outage-app",
		SourceUID: "kafka-source-dr", Parallelism: 2, Name: "drconsole-events-dr"}
	code, page := alice.post("/failover", url.Values{"flow": {flow}, "preflight": {"on"}, "stop": {"auto"}, "groups": {"outage-app"},
		"translate_from_savepoint": {"on"}, "savepoint_path": {spPath}, "flink_target": {"flink-dr"}, "jar_id": {f.JobJarID(t)},
		"entry_class": {testenv.FlinkJobEntryClass}, "args": {strings.Join(drJob.ProgramArgs(), "\n")}, "parallelism": {"2"},
		"allow_non_restored_state": {"on"}, "reason": {"e2e: primary region down"}})
	run, ok := strings.CutPrefix(alice.lastURL, "/failover/")
	id, err := strconv.ParseInt(run, 10, 64)
	if code != http.StatusOK || !ok || err != nil {
		t.Fatalf("planning: %d at %s\n%s", code, alice.lastURL, page)
	}
	runPath := alice.lastURL
	mustHave(t, "alice's run page", page, `data-testid="self-approval-note"`, `data-testid="at-risk"`, "this failover loses ≥ ")

	// bob's approval page states the data at risk, flagged "≥", with the
	// read's time and age.
	_, page = bob.get(runPath)
	m := regexp.MustCompile(`Approving this plan accepts losing (≥ [^<]*?) \(read ([0-9TZ:-]+), ([0-9hms.]+) before ([0-9TZ:-]+)\); a lower bound: ([^<]*)\.</p>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("bob's approval page does not state the data at risk as a lower bound with its age:\n%s", page)
	}
	t.Logf("approval page: accepts losing %s (read %s, %s before %s); a lower bound: %s", m[1], m[2], m[3], m[4], m[5])
	pageRead, err1 := time.Parse(time.RFC3339, m[2])
	pageAge, err2 := time.ParseDuration(m[3])
	pageNow, err3 := time.Parse(time.RFC3339, m[4])
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	// Times on the page are whole seconds (truncated): the stated read is
	// never after the last successful one, its age never shorter (less a
	// second of rounding) than the time since.
	if pageRead.After(readAt) || pageAge < pageNow.Sub(readAt)-time.Second {
		t.Fatalf("the page's read %s (%s old at %s) is newer than the console's last read of the primary %s", pageRead, pageAge, pageNow, readAt.UTC())
	}
	hash := regexp.MustCompile(`name="plan_hash" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if hash == nil {
		t.Fatalf("no plan hash on bob's approval form:\n%s", page)
	}
	if code, page := bob.post(runPath+"/approve", url.Values{"plan_hash": {hash[1]}, "comment": {"accepting the loss"}}); code != http.StatusOK || !strings.Contains(page, "Approved.") {
		t.Fatalf("bob approving: %d\n%s", code, page)
	}

	// The truth: records the primary acknowledged that DR does not hold,
	// and those of them acknowledged before the read the figure rests on
	// (the most the console could have seen).
	inDR := map[string]bool{}
	for _, recs := range fbReadAll(t, dr, "events") {
		for _, r := range recs {
			inDR[r[strings.IndexByte(r, ':')+1:]] = true
		}
	}
	risk := approvalRisk(t, ctx, store)
	asOf, err := time.Parse(time.RFC3339Nano, fmt.Sprint(risk["as_of"]))
	if err != nil {
		t.Fatalf("the approval's at_risk has no read time: %v (%v)", risk, err)
	}
	ageMs, _ := risk["age_ms"].(float64)
	mu.Lock()
	lost, knowable := 0, 0
	for v, at := range acked {
		if !inDR[v] {
			lost++
			if at.Before(asOf) {
				knowable++
			}
		}
	}
	mu.Unlock()
	offs, _ := risk["offsets"].(float64)
	t.Logf("approval record: %v; truth: %d acknowledged record(s) not in DR, %d of them acknowledged before the read at %s (last read of the primary %s, killed after)",
		risk["text"], lost, knowable, asOf.UTC().Format(time.RFC3339Nano), readAt.UTC().Format(time.RFC3339Nano))
	if risk["at_least"] != true || !strings.HasPrefix(fmt.Sprint(risk["text"]), "≥ ") {
		t.Fatalf("the approval's data at risk %v is not stated as a lower bound while the primary is down", risk)
	}
	// The read's age is never less than the real time since the console's
	// last successful read of the primary.
	if approvedAt := asOf.Add(time.Duration(ageMs) * time.Millisecond); asOf.After(readAt) || time.Duration(ageMs)*time.Millisecond < approvedAt.Sub(readAt) {
		t.Fatalf("the approval's read %s (age %v ms) is newer than the console's last read of the primary %s", asOf, ageMs, readAt)
	}
	// The figure is never less than what the console could know; the
	// whole loss may be larger (records acknowledged after its read).
	if knowable == 0 || offs < float64(knowable) {
		t.Fatalf("the approval states %v offsets at risk; %d acknowledged record(s) not in DR were acknowledged before its read", offs, knowable)
	}

	// alice runs steps 1 and 2 from the run page.
	for n := 1; n <= 2; n++ {
		if code, page := runStep(alice, runPath, n, flow, ""); code != http.StatusOK || !strings.Contains(page, fmt.Sprintf("Step %d started.", n)) {
			t.Fatalf("step %d: %d\n%s", n, code, page)
		}
		waitStepDone(t, alice, runPath, n)
	}
	// DR deletes the savepoint's records (as retention does) after the
	// approval: the translate step, when it starts, refuses.
	tl := mon.Translator(flow).Index.Translate(model.TP{Topic: "events", Partition: 0}, spOffs["events-0"])
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "events", Partition: 0, At: tl.Offset + 10})
	if res, err := dr.Admin(t).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting DR records: %v %v", err, res.Error())
	}
	code, page = runStep(alice, runPath, 3, flow, "")
	if code < 400 || !strings.Contains(page, "data deleted in DR") {
		t.Fatalf("translate from a savepoint whose DR position was deleted: %d\n%s", code, page)
	}
	if i := strings.Index(page, "data deleted in DR"); i >= 0 {
		t.Logf("refused at step start (%d): …%s…", code, page[max(i-300, 0):min(i+200, len(page))])
	}
	if code, page := runStep(bob, runPath, 3, flow, "e2e: re-reading from DR's log start is acceptable"); code != http.StatusOK || !strings.Contains(page, "Step 3 started.") {
		t.Fatalf("bob's override: %d\n%s", code, page)
	}
	waitStepDone(t, bob, runPath, 3)
	t.Log("step 3 ran on the second operator's override")
	// The restore rests on the same savepoint: bob runs it, overriding
	// its verdict where the page asks for it.
	override := ""
	if _, page := bob.get(runPath); strings.Contains(page, `id="inputs-override-4"`) {
		override = "e2e: the job re-reads from DR's log start"
	}
	if code, page := runStep(bob, runPath, 4, flow, override); code != http.StatusOK || !strings.Contains(page, "Step 4 started.") {
		t.Fatalf("the restore step: %d\n%s", code, page)
	}
	waitStepDone(t, bob, runPath, 4)
	done, err := rb.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var restored struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(done.Steps[3].Result), &restored); err != nil || restored.JobID == "" {
		t.Fatalf("restore step result %q: %v", done.Steps[3].Result, err)
	}
	f.WaitJobRunning(t, restored.JobID)
	rsCheckRestored(t, ctx, f, restored.JobID, sp.CheckpointID, spDir, drJob.SourceUID)
	t.Logf("step 4 restored job %s from %s in DR (inputs override %q)", restored.JobID, spPath, override)
	// The producer stops (a produce stuck on the dead primary may still
	// land once it is back: a record written after the cut, counted on
	// both sides below).
	stop()

	// After the run: failed over on the run page, the flow page, the
	// report and /metrics; no "if the primary died now" anywhere.
	_, page = alice.get(runPath)
	mustHave(t, "run page", page, "Lost at the cut: ≥ ")
	link := fmt.Sprintf(`href="/failover/%d"`, id)
	if err := testenv.Eventually(30*time.Second, 500*time.Millisecond, func() error {
		_, page = alice.get("/flows/" + url.PathEscape(flow))
		if !strings.Contains(page, `data-testid="failed-over"`) || !strings.Contains(page, "FAILED_OVER") {
			return errors.New("the flow page does not say failed over")
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, page)
	}
	mustHave(t, "flow page", page, link, "Not replicated when the mirror stopped: at least ", "<strong>DR is active</strong>")
	_, overview := alice.get("/")
	for what, p := range map[string]string{"flow page": page, "overview": overview} {
		if strings.Contains(p, "If the primary died now") {
			t.Fatalf("the %s shows the hypothetical loss of a failed-over flow:\n%s", what, p)
		}
	}
	_, page = alice.get("/report")
	mustHave(t, "report", page, `data-testid="report-failed-over-spans"`, link, "DR is active")
	_, page = alice.get("/metrics")
	mustHave(t, "/metrics", page, `kafka_mirror_failed_over{flow="primary->dr"} 1`)
	if !regexp.MustCompile(`(?m)^kafka_mirror_status\{[^}]*FAILED_OVER[^}]*\} 1$`).MatchString(page) {
		t.Fatalf("/metrics does not say FAILED_OVER:\n%s", page)
	}

	// The primary comes back: the headline is never less than the records
	// really missing in DR.
	primary.Restart()
	t.Log("primary restarted")
	// inDR is what DR held at the cut (read after the kill, before the
	// deletion above, which removed records that had reached DR).
	missing := 0
	for _, recs := range fbReadAll(t, primary, "events") {
		for _, r := range recs {
			if !inDR[r[strings.IndexByte(r, ':')+1:]] {
				missing++
			}
		}
	}
	missing = max(missing, lost) // every acknowledged record DR lacks counts, on the primary or not
	var total string
	if err := testenv.Eventually(90*time.Second, time.Second, func() error {
		_, page = alice.get("/flows/" + url.PathEscape(flow) + "/lost")
		m := regexp.MustCompile(`data-testid="lost-total">([^<]*)<`).FindStringSubmatch(page)
		if m == nil || strings.Contains(page, `data-testid="lost-primary-error"`) || strings.Contains(m[1], "unknown") {
			return errors.New("no complete lost-to-DR total")
		}
		total = m[1]
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, page)
	}
	mm := regexp.MustCompile(`^(?:at most )?([0-9]+)`).FindStringSubmatch(total)
	if mm == nil {
		t.Fatalf("lost-to-DR total %q", total)
	}
	atMost, _ := strconv.Atoi(mm[1])
	t.Logf("after the primary came back: lost to DR %q; truth: %d record(s) not in DR", total, missing)
	if atMost < missing {
		t.Fatalf("lost-to-DR headline %q is less than the %d records really missing in DR", total, missing)
	}
	if _, bad, err := store.VerifyAudit(ctx); err != nil || bad != nil {
		t.Fatalf("audit chain: %v %v", bad, err)
	}
}

// watchPrimaryReads follows the monitor's snapshots of flow until the
// test ends; the function it returns is the newest read of the primary a
// snapshot published while the primary answered.
func watchPrimaryReads(t *testing.T, mon *monitor.Monitor, flow string) func() time.Time {
	var mu sync.Mutex
	var last time.Time
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if s := mon.Snapshot(flow); s.Source.Checked && s.Source.OK {
				at := s.At
				for _, p := range s.Partitions {
					if p.AsOf.Time().After(at) {
						at = p.AsOf.Time()
					}
				}
				mu.Lock()
				if at.After(last) {
					last = at
				}
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() time.Time { mu.Lock(); defer mu.Unlock(); return last }
}

// runStep posts step n's execute form of the run page as o, filled as a
// person would: the flow name where the page asks for it, an inputs
// override where given (and offered).
func runStep(o *operator, runPath string, n int, flow, inputsOverride string) (int, string) {
	o.t.Helper()
	_, page := o.get(runPath)
	if !strings.Contains(page, fmt.Sprintf(`id="execute-%d"`, n)) {
		o.t.Fatalf("no form to run step %d for %s:\n%s", n, o.name, page)
	}
	f := url.Values{"override": {""}}
	if strings.Contains(page, fmt.Sprintf(`id="confirm-%d"`, n)) {
		f.Set("confirmation", flow)
	}
	if inputsOverride != "" {
		if !strings.Contains(page, fmt.Sprintf(`id="inputs-override-%d"`, n)) {
			o.t.Fatalf("step %d offers no inputs override:\n%s", n, page)
		}
		f.Set("inputs_override", inputsOverride)
	}
	return o.post(fmt.Sprintf("%s/steps/%d/execute", runPath, n), f)
}

// waitStepDone polls the run page until step n is done; a failed step
// fails the test at once.
func waitStepDone(t *testing.T, o *operator, runPath string, n int) {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`data-testid="step-status-%d">([a-z-]+)<`, n))
	var page string
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		_, page = o.get(runPath)
		m := re.FindStringSubmatch(page)
		switch {
		case m == nil:
			return errors.New("no such step on the page")
		case m[1] == string(model.StepFailed):
			t.Fatalf("step %d failed:\n%s", n, page)
		case m[1] != string(model.StepDone):
			return fmt.Errorf("step %d %s", n, m[1])
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, page)
	}
}

// mustHave fails the test unless page holds every one of wants.
func mustHave(t *testing.T, what, page string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, page)
		}
	}
}

// approvalRisk is the data at risk the newest approval recorded.
func approvalRisk(t *testing.T, ctx context.Context, store *storage.Store) map[string]any {
	t.Helper()
	es, err := store.AuditEntries(ctx, storage.AuditFilter{Action: "failover.approve", Limit: 1})
	if err != nil || len(es) == 0 {
		t.Fatalf("approval record: %v", err)
	}
	var d struct {
		Evidence struct {
			AtRisk map[string]any `json:"at_risk"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(es[0].Details), &d); err != nil {
		t.Fatal(err)
	}
	return d.Evidence.AtRisk
}
