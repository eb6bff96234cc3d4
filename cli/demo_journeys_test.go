package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// sandboxConsole is the sandbox exactly as `drconsole demo` starts it
// (startSandbox, its config), with the console's runbook, monitor and
// worker wired on it as runConsole wires them.
type sandboxConsole struct {
	world  *sandboxWorld
	cat    *catalog.Catalog
	rb     *runbook.Runbook
	worker *failover.Worker
	store  *storage.Store
	db     string // the store's file
}

// Each test on a sandbox of its own runs in parallel with the others: they
// wait on the sandbox, not the CPU. The browser journeys (startDemoConsole)
// stay serial: each runs two Chromiums.
func startSandboxConsole(t *testing.T) *sandboxConsole {
	return startSandboxConsoleWith(t, demo.Options{})
}

// startSandboxConsoleWith is startSandboxConsole on a sandbox started
// with opts (their Logger is set).
func startSandboxConsoleWith(t *testing.T, opts demo.Options) *sandboxConsole {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	opts.Logger = log
	world, err := startSandbox(ctx, opts, "127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(world.Close)
	cfg := world.Config
	db := filepath.Join(dir, "drconsole.db")
	store, mon := runbooktest.Monitored(ctx, t, cfg, db, log)
	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connect.New, Flink: flink.NewRESTClient}, failover.Env{Monitor: mon})
	failover.BookOf(rb).Catalog = &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}
	go failback.BookOf(rb).WatchReverseFlowsEvery(ctx, time.Second)
	c := &sandboxConsole{world: world, cat: failover.BookOf(rb).Catalog, rb: rb, worker: &failover.Worker{Runbook: rb, Log: log}, store: store, db: db}
	c.waitFor(t, time.Minute, "the sandbox flow healthy with checkpoints", func() (bool, string) {
		s := mon.Snapshot("primary->dr")
		cps, _ := store.Checkpoints(ctx, "primary->dr")
		return s.Status == model.FlowStatusOK && len(cps) > 0, fmt.Sprintf("%s %s, %d checkpoints", s.Status, s.Reason, len(cps))
	})
	return c
}

// waitFor polls cond until it holds, failing with its last word after d.
func (c *sandboxConsole) waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, d, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// approved creates plan as alice and approves it as bob.
func (c *sandboxConsole) approved(t *testing.T, plan runbook.Plan) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := c.rb.Create(ctx, runbooktest.Alice, plan, "sandbox tour")
	if err != nil {
		t.Fatalf("creating the %s plan: %v", plan.Kind, err)
	}
	r, err := c.rb.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.rb.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	return id
}

// step begins and performs step idx of run id as alice, typing the flow
// name where a step asks for it.
func (c *sandboxConsole) step(t *testing.T, id int64, idx int) {
	t.Helper()
	ctx := context.Background()
	r, _ := c.rb.Get(ctx, id)
	x, err := c.rb.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "")
	if err == nil {
		err = x.Perform(ctx)
	}
	if err != nil {
		t.Fatalf("step %d (%s) of run %d: %v", idx+1, r.Plan.Steps[idx].Kind, id, err)
	}
}

// A DR drill in the sandbox as `drconsole demo` configures it: the copy
// of the job is restored on the Flink stand-in with the sandbox's drill
// arguments, timed, and cleaned up.
func TestSandboxDrill(t *testing.T) {
	t.Parallel()
	c := startSandboxConsole(t)
	ctx := context.Background()
	id := c.approved(t, runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanDrill, Steps: []runbook.Step{
		{Kind: failover.KindPreflight},
		{Kind: failover.KindTranslateGroup, Group: "billing", AllowPartial: true},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "sandbox-flink-dr", JarID: demo.FlinkJarID},
	}})
	if err := c.worker.RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err != nil {
		t.Fatal(err)
	}
	var d model.Drill
	c.waitFor(t, time.Minute, "the drill cleaned up", func() (bool, string) {
		var err error
		d, err = c.store.Drill(ctx, id)
		return err == nil && (d.Cleanup == model.CleanupDone || d.Cleanup == model.CleanupFailed), fmt.Sprintf("%+v %v", d, err)
	})
	if !d.Succeeded() || d.Cleanup != model.CleanupDone || d.RTOMs() == nil {
		t.Fatalf("drill %+v", d)
	}
	req := c.world.Flink.Jobs()[d.JobID]
	var args []string
	for _, a := range req["programArgsList"].([]any) {
		args = append(args, a.(string))
	}
	group := failover.DrillGroup(id, "billing")
	if want := []string{"--group-id", group, "--output-topic-suffix", fmt.Sprintf("-drill-%d", id)}; !slices.Equal(args, want) {
		t.Fatalf("drill job arguments %q, want %q", args, want)
	}
	t.Logf("sandbox drill: achieved RTO %d ms", *d.RTOMs())
	sandboxDrillEvidence(t, c, id, d)
}

// sandboxDrillEvidence: the drill's evidence pack carries the figures the
// drill stored, and `drconsole audit verify --evidence` passes it (as
// JSON and as HTML) and names what was edited in it.
func sandboxDrillEvidence(t *testing.T, c *sandboxConsole, id int64, d model.Drill) {
	t.Helper()
	p, body, err := audit.New(c.store).Evidence(context.Background(), audit.EvidenceRequest{Run: id, Subject: runbook.RunSubject(id),
		Actor: "carol", Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	if *p.Drill.AchievedRTOMs != *d.RTOMs() || !reflect.DeepEqual(p.Drill.RPOMs, d.RPOMs) || p.Drill.RPOIsLowerBound != d.RPOAtLeast ||
		*p.Drill.ToRunningMs != *d.ToRunningMs() || p.Drill.Status != "succeeded" {
		t.Fatalf("the pack's figures %+v, the drill's %+v", p.Drill, d)
	}
	if p.RequestedBy != runbooktest.Alice.Name || len(p.Approvals) != 1 || p.Approvals[0].Approver != runbooktest.Bob.Name || len(p.Steps) != 3 {
		t.Fatalf("request by %s, approvals %+v, %d steps", p.RequestedBy, p.Approvals, len(p.Steps))
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "pack.json", string(body))
	if r := runCLI(t, "", "audit", "verify", "--db", c.db, "--evidence", file); r.code != 0 || !strings.Contains(r.stdout, "match the log") {
		t.Fatalf("verify --evidence of a fresh pack: %d %q %q", r.code, r.stdout, r.stderr)
	}
	var page strings.Builder
	if err := views.Evidence(views.EvidencePage{Pack: p, JSON: string(body), Script: audit.EvidenceScript}).Render(context.Background(), &page); err != nil {
		t.Fatal(err)
	}
	html := writeFile(t, dir, "pack.html", page.String())
	if r := runCLI(t, "", "audit", "verify", "--db", c.db, "--evidence", html); r.code != 0 {
		t.Fatalf("verify --evidence of the HTML pack: %d %q %q", r.code, r.stdout, r.stderr)
	}
	p.Drill.AchievedRTOMs = new(int64) // a drill made to look instant
	edited, _ := audit.EvidenceJSON(p)
	r := runCLI(t, "", "audit", "verify", "--db", c.db, "--evidence", writeFile(t, dir, "edited.json", string(edited)))
	if r.code != 1 || !strings.Contains(r.stderr, "drill figures: the pack says") {
		t.Fatalf("verify --evidence of an edited pack: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "", "audit", "verify", "--db", c.db, "--evidence", writeFile(t, dir, "other.html", "<html><body>a report</body></html>"))
	if r.code != 2 || !strings.Contains(r.stderr, "not a drconsole drill evidence pack") {
		t.Fatalf("verify --evidence of another file: %d %q", r.code, r.stderr)
	}
}

// An MM2 failover and failback in the sandbox as `drconsole demo`
// configures it, through the Connect stand-in: stop-mirror stops the
// sandbox's mirror; records written to DR afterwards are copied back to
// the primary by the reverse connectors the failback creates; both groups
// are moved back (the primary's consumers stopped meanwhile, as the
// applications were in DR); the forward mirror restarts at the primary's
// ends and the primary is active again.
func TestSandboxMM2Failback(t *testing.T) {
	t.Parallel()
	c := startSandboxConsole(t)
	ctx := context.Background()
	sb, cs := c.world.Sandbox, c.world.Connect

	// The newest savepoint, taken a moment ago, is usable.
	dir := triggerSavepoint(t, c.world.Flink)
	if err := c.cat.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sp, err := c.cat.NewestUsable(ctx, "primary->dr", 5)
	if err != nil || !strings.HasSuffix(sp.Path, dir) {
		t.Fatalf("newest usable savepoint %q %v, want the one just taken, %s", sp.Path, err, dir)
	}
	rewritten := "file:" + filepath.Join(c.world.Flink.SavepointDir, "failover")
	fo := c.approved(t, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: failover.KindStopMirror},
		{Kind: failover.KindTranslateGroup, Group: "flink-events"},
		{Kind: failover.KindTranslateGroup, Group: "billing"},
		{Kind: failover.KindRewriteSavepoint, RewriteFrom: sp.Path, SourceUID: "kafka-source", RewriteTo: rewritten},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "sandbox-flink-dr", JarID: demo.FlinkJarID, SavepointPath: rewritten},
	}})
	for idx := range 5 {
		c.step(t, fo, idx)
	}
	if r, _ := c.rb.Get(ctx, fo); r.Status != model.RunCompleted {
		t.Fatalf("failover run %s", r.Status)
	}
	restored := 0
	for _, req := range c.world.Flink.Jobs() {
		if req["savepointPath"] == rewritten {
			restored++
		}
	}
	if restored != 1 {
		t.Fatalf("%d jobs restored from %s: %v", restored, rewritten, c.world.Flink.Jobs())
	}
	if sb.State().MirrorRunning || cs.State("MirrorSourceConnector") != "STOPPED" {
		t.Fatalf("after stop-mirror: mirror running %v, source %s", sb.State().MirrorRunning, cs.State("MirrorSourceConnector"))
	}

	// The applications moved to DR: the primary's consumers stop.
	if err := sb.SetConsumersRunning(false); err != nil {
		t.Fatal(err)
	}
	// Applications now write to DR.
	dr, err := kgo.NewClient(kgo.SeedBrokers(sb.DRBootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer dr.Close()
	var written []string
	for i := range 5 {
		v := fmt.Sprintf("written-in-dr-%d-%d", time.Now().UnixNano(), i)
		if err := dr.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		written = append(written, v)
	}

	fb := c.approved(t, failback.FailbackPlan("primary->dr", "flink-events", "billing"))
	for idx := range 7 {
		c.step(t, fb, idx)
		if idx == 1 {
			// The reverse flow's card is a flow's like any other: its
			// heartbeats, syncs and Connect positions are there.
			c.waitFor(t, 30*time.Second, "the reverse flow OK", func() (bool, string) {
				s := failover.BookOf(c.rb).Monitor.Snapshot(failback.ReverseFlowName("primary->dr"))
				if s == nil {
					return false, "not watched"
				}
				return s.Status == model.FlowStatusOK, fmt.Sprintf("%s %s", s.Status, s.Reason)
			})
		}
		if idx == 0 {
			rev := "dr-to-primary-MirrorSourceConnector"
			if s := cs.State(rev); s != "RUNNING" {
				t.Fatalf("reverse source %s after set-up-reverse", s)
			}
		}
	}
	r, _ := c.rb.Get(ctx, fb)
	if r.Status != model.RunCompleted {
		t.Fatalf("failback run %s", r.Status)
	}
	// The records written in DR are on the primary.
	primary, err := kgo.NewClient(kgo.SeedBrokers(sb.PrimaryBootstrap()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	found := map[string]bool{}
	c.waitFor(t, 30*time.Second, "DR's records on the primary", func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		primary.PollFetches(pctx).EachRecord(func(rec *kgo.Record) {
			if strings.HasPrefix(string(rec.Value), "written-in-dr-") {
				found[string(rec.Value)] = true
			}
		})
		for _, v := range written {
			if !found[v] {
				return false, fmt.Sprintf("found %d of %d", len(found), len(written))
			}
		}
		return true, ""
	})
	// The reverse connectors are gone, the forward mirror copies again
	// and the primary is the active side.
	for _, n := range []string{"dr-to-primary-MirrorSourceConnector", "dr-to-primary-MirrorCheckpointConnector", "dr-to-primary-MirrorHeartbeatConnector"} {
		if s := cs.State(n); s != "" {
			t.Fatalf("reverse connector %s left %s", n, s)
		}
	}
	if !sb.State().MirrorRunning || cs.State("MirrorSourceConnector") != "RUNNING" {
		t.Fatalf("forward mirror running %v, source %s", sb.State().MirrorRunning, cs.State("MirrorSourceConnector"))
	}
	before := sb.State().Mirrored
	c.waitFor(t, 30*time.Second, "the forward mirror copying", func() (bool, string) {
		return sb.State().Mirrored > before, fmt.Sprint(sb.State().Mirrored)
	})
	if a, err := failover.ActiveSideOf(ctx, c.store, "primary->dr"); err != nil || a.Side != model.SidePrimary {
		t.Fatalf("active side %+v %v", a, err)
	}
	// The applications come back to the primary, where their groups
	// were moved back to.
	stoppedAt := sb.JobPositions()
	if err := sb.SetConsumersRunning(true); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, 30*time.Second, "the job's group reading on the primary again", func() (bool, string) {
		now := sb.JobPositions()
		for p, n := range now {
			if n > stoppedAt[p] {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%v, stopped at %v", now, stoppedAt)
	})
}

// triggerSavepoint asks the sandbox's Flink stand-in for a savepoint of
// its job, as the savepoints page does, and waits for its location.
func triggerSavepoint(t *testing.T, fl *demo.FlinkStandIn) string {
	t.Helper()
	resp, err := http.Post(fl.URL+"/jobs/"+demo.FlinkSandboxJobID+"/savepoints", "application/json", strings.NewReader(`{"cancel-job":false}`))
	if err != nil {
		t.Fatal(err)
	}
	var trig struct {
		ID string `json:"request-id"`
	}
	json.NewDecoder(resp.Body).Decode(&trig)
	resp.Body.Close()
	loc, err := flink.NewRESTClient(fl.URL).WaitSavepoint(context.Background(), demo.FlinkSandboxJobID, trig.ID, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(loc, "file:")
}

// splitOffsets reads a savepoint's events splits: next offset per partition.
func splitOffsets(t *testing.T, dir string) map[int32]int64 {
	t.Helper()
	out := map[int32]int64{}
	for key, p := range readBack(t, dir) {
		if p.Topic != "events" {
			t.Fatalf("split of %s", key)
		}
		out[p.Partition] = p.Next
	}
	return out
}

// The sandbox's savepoints hold its Flink job's positions when they were
// taken (the flink-events consumer's), moving as traffic flows, each
// with the checkpoint id Flink's history lists; and the stand-in takes
// them on its own, keeping Flink's bounded history.
func TestSandboxSavepointsHoldThePositions(t *testing.T) {
	t.Parallel()
	c := startSandboxConsole(t)
	sb, fl := c.world.Sandbox, c.world.Flink
	fl.SetSavepointDuration(50 * time.Millisecond)
	positions := func() map[int32]int64 {
		var p map[int32]int64
		c.waitFor(t, 30*time.Second, "the job reading events 0-3", func() (bool, string) {
			p = sb.JobPositions()
			return len(p) >= 4 && p[0] > 0 && p[1] > 0 && p[2] > 0 && p[3] > 0, fmt.Sprint(p)
		})
		return p
	}
	within := func(dir string, before, after map[int32]int64) map[int32]int64 {
		t.Helper()
		got := splitOffsets(t, dir)
		if len(got) != 4 {
			t.Fatalf("%d splits: %v", len(got), got)
		}
		for p, n := range got {
			if n < before[p] || n > after[p] {
				t.Fatalf("events-%d starts at %d: not the job's position when it was taken (between %d and %d)", p, n, before[p], after[p])
			}
		}
		return got
	}
	b1 := positions()
	first := within(triggerSavepoint(t, fl), b1, sb.JobPositions())
	c.waitFor(t, 30*time.Second, "the job reading further", func() (bool, string) {
		now := sb.JobPositions()
		for p, n := range first {
			if now[p] <= n {
				return false, fmt.Sprint(now)
			}
		}
		return true, ""
	})
	b2 := sb.JobPositions()
	dir := triggerSavepoint(t, fl)
	second := within(dir, b2, sb.JobPositions())
	for p, n := range second {
		if n <= first[p] {
			t.Fatalf("events-%d: the later savepoint starts at %d, the earlier at %d", p, n, first[p])
		}
	}
	sp, err := flink.ReadSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := sp.CheckpointID
	h, err := flink.NewRESTClient(fl.URL).Checkpoints(context.Background(), demo.FlinkSandboxJobID)
	if err != nil || len(h.History) == 0 || h.History[0].ID != id || h.History[0].ExternalPath != "file:"+dir {
		t.Fatalf("history %+v %v; the savepoint's checkpoint id %d", h, err, id)
	}

	// Periodic: more than the history holds, the newest listed first.
	fl.StartPeriodicSavepoints(20 * time.Millisecond)
	c.waitFor(t, 30*time.Second, "periodic savepoints", func() (bool, string) {
		h, err := flink.NewRESTClient(fl.URL).Checkpoints(context.Background(), demo.FlinkSandboxJobID)
		if err != nil {
			return false, err.Error()
		}
		return h.History[0].ID > id+12 && len(h.History) == 10, fmt.Sprintf("newest %d, %d listed", h.History[0].ID, len(h.History))
	})
}

// A savepoint taken early turns unusable once retention passes its
// offsets, as on a real cluster; the stand-in's periodic savepoints keep
// the newest one usable. Retention is seconds here, minutes in demo.
func TestSandboxNewestSavepointOutlivesRetention(t *testing.T) {
	t.Parallel()
	c := startSandboxConsoleWith(t, demo.Options{TrafficRate: 1000, Retention: 3 * time.Second, RetentionBytes: 64 << 10,
		CleanerInterval: 200 * time.Millisecond, CheckpointInterval: 200 * time.Millisecond})
	ctx := context.Background()
	fl := c.world.Flink
	fl.SetSavepointDuration(50 * time.Millisecond)
	dir := triggerSavepoint(t, fl)
	if err := c.cat.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := c.cat.NewestUsable(ctx, "primary->dr", 5)
	if err != nil || !strings.HasSuffix(first.Path, dir) {
		t.Fatalf("newest usable %q %v, want %s", first.Path, err, dir)
	}
	fl.StartPeriodicSavepoints(500 * time.Millisecond)
	c.waitFor(t, 90*time.Second, "the first savepoint unusable and a newer one usable", func() (bool, string) {
		if err := c.cat.Sync(ctx); err != nil {
			return false, err.Error()
		}
		u, err := c.cat.UsabilityOf(ctx, []model.Savepoint{first}, "primary->dr")
		if err != nil {
			return false, err.Error()
		}
		newest, err := c.cat.NewestUsable(ctx, "primary->dr", 5)
		if err != nil {
			return false, fmt.Sprintf("first %s; %v", u[first.ID].Verdict, err)
		}
		return u[first.ID].Verdict == model.VerdictUnusable && newest.ID != first.ID,
			fmt.Sprintf("first %s (%s); newest usable #%d", u[first.ID].Verdict, u[first.ID].Why(), newest.ID)
	})
}
