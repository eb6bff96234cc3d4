package switchover

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

const flow = "primary->dr"

// switchoverEnv is a sandbox flow with a switchover configured: fence
// principals, a short quiet period and catch-up timeout.
func switchoverEnv(t *testing.T, fence string, principals ...string) *runbooktest.Env {
	t.Helper()
	e := runbooktest.NewEnv(t, 1)
	e.OnConnect(t)
	e.Cfg.Flow(flow).Switchover = &config.Switchover{Fence: fence, Principals: principals,
		QuietPeriod: config.Duration(2 * time.Second), CatchUpTimeout: config.Duration(30 * time.Second), CommandTimeout: config.Duration(10 * time.Second)}
	return e
}

func plan(e *runbooktest.Env, groups ...string) runbook.Plan {
	return runbook.Request{Flow: flow, Kind: runbook.PlanSwitchover, Groups: groups}.Plan(e.Cfg)
}

// step begins and performs step idx as Alice, typing the flow name.
func step(t *testing.T, e *runbooktest.Env, id int64, idx int) error {
	t.Helper()
	x, err := e.RB.Begin(context.Background(), runbooktest.Alice, id, idx, flow, "")
	if err != nil {
		return err
	}
	return x.Perform(context.Background())
}

func result(t *testing.T, e *runbooktest.Env, id int64, idx int, v any) {
	t.Helper()
	r, err := e.RB.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(r.Steps[idx].Result), v); err != nil {
		t.Fatalf("step %d result %q: %v", idx+1, r.Steps[idx].Result, err)
	}
}

// verifyFence runs verify-fence; it may meet the end of a sandbox
// transaction the fence cut short (its abort marker moves an end once),
// and is run again then, as an operator would.
func verifyFence(t *testing.T, e *runbooktest.Env, id int64) {
	t.Helper()
	var err error
	for range 3 {
		if err = step(t, e, id, 1); err == nil {
			return
		}
		if !strings.Contains(err.Error(), "transaction") && !strings.Contains(err.Error(), "the fence does not hold") {
			break
		}
	}
	t.Fatalf("verify-fence: %v", err)
}

func writeAsSandbox(t *testing.T, e *runbooktest.Env, topic string) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.SB.PrimaryBootstrap()...), kgo.RecordRetries(1), kgo.UnknownTopicRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("after the fence")}).FirstErr()
}

func TestPlanShape(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, demo.WriterPrincipal)
	p := plan(e, "billing")
	var kinds []string
	for _, s := range p.Steps {
		kinds = append(kinds, string(s.Kind))
	}
	if got := strings.Join(kinds, ","); got != "fence,verify-fence,wait-caught-up,stop-mirror,translate-group,unfence-dr,verdict" {
		t.Fatalf("steps %s", got)
	}
	if f := p.Steps[0].Fence; f == nil || f.Method != config.FenceACL || f.Principals[0] != demo.WriterPrincipal || f.QuietPeriodMs != 2000 {
		t.Fatalf("fence %+v", f)
	}
	if err := p.Validate(e.Cfg); err != nil {
		t.Fatal(err)
	}
	// Stored and read back as a switchover, not a failover.
	b, _ := json.Marshal(p)
	var read runbook.Plan
	if err := json.Unmarshal(b, &read); err != nil || read.Kind != runbook.PlanSwitchover || read.Hash() != p.Hash() {
		t.Fatalf("read back %+v (%v) from %s", read.Kind, err, b)
	}
	// Out of order, or without the fence the flow configures: refused.
	swapped := p
	swapped.Steps = append([]runbook.Step{p.Steps[1], p.Steps[0]}, p.Steps[2:]...)
	if err := swapped.Validate(e.Cfg); err == nil {
		t.Error("a switchover with verify-fence first was accepted")
	}
	other := plan(e, "billing")
	other.Steps[0].Fence = &runbook.Fence{Method: config.FenceManual, QuietPeriodMs: 2000, CatchUpTimeoutMs: 30000}
	if err := other.Validate(e.Cfg); err == nil || !strings.Contains(err.Error(), "not the flow's configured one") {
		t.Errorf("a fence other than the configured one: %v", err)
	}
	e.Cfg.Flow(flow).Switchover = nil
	if err := plan(e).Validate(e.Cfg); err == nil || !strings.Contains(err.Error(), "no switchover configured") {
		t.Errorf("a flow without a switchover: %v", err)
	}
}

// A clean switchover: the broker refuses the sandbox's writes once the
// fence is up, the fence holds, DR catches up, the mirror stops, the group
// moves, and the verdict is RPO 0, verified. DR is then the active side.
func TestSwitchoverCleanRun(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, demo.WriterPrincipal)
	ctx := context.Background()
	id := e.Approved(t, ctx, plan(e, "billing"))
	// A standby fence on DR's copies, which unfence-dr removes; an entry
	// of another principal stays.
	dr := runbooktest.DRClient(e.Mon, flow)
	standby, err := kadm.NewClient(dr).CreateACLs(ctx, kafka.DenyWriteFilter(demo.Topics, []string{demo.WriterPrincipal, "User:other"}))
	if err != nil || len(standby) != 6 {
		t.Fatalf("standby fence on DR: %v %v", standby, err)
	}
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	if err := writeAsSandbox(t, e, "events"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("a write behind the fence: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	var fr fenced
	result(t, e, id, 0, &fr)
	if len(fr.Added) != len(demo.Topics) || strings.Join(fr.Topics, ",") != "events,orders,users" {
		t.Fatalf("fence result %+v", fr)
	}
	verifyFence(t, e, id)
	for idx := 2; idx < 7; idx++ {
		if err := step(t, e, id, idx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	var u drUnfenced
	result(t, e, id, 5, &u)
	if len(u.Removed) != 3 {
		t.Fatalf("unfence-dr removed %+v", u)
	}
	if left, err := kafka.DenyWriteACLs(ctx, dr, demo.Topics, []string{demo.WriterPrincipal, "User:other"}); err != nil || len(left) != 3 || left[0].Principal != "User:other" {
		t.Fatalf("DR's entries after unfence-dr: %+v %v", left, err)
	}
	var v verdictOf
	result(t, e, id, 6, &v)
	if !v.Verified || !strings.HasPrefix(v.Verdict, "RPO 0, verified: DR held every record up to the fence") || v.Partitions != 12 {
		t.Fatalf("verdict %+v", v)
	}
	r, _ := e.RB.Get(ctx, id)
	if r.Status != model.RunCompleted {
		t.Fatalf("run %s", r.Status)
	}
	if a, err := failover.ActiveSideOf(ctx, e.Store, flow); err != nil || a.Side != model.SideDR {
		t.Fatalf("active side %+v %v", a, err)
	}
}

// A writer the fence does not cover fails verify-fence, naming the
// partitions and records; the rollback removes exactly the fence's ACLs,
// audited, and cancels the run.
func TestBypassingWriterFailsVerifyAndRollsBack(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, "User:not-the-writer")
	ctx := context.Background()
	id := e.Approved(t, ctx, plan(e))
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	err := step(t, e, id, 1)
	if err == nil || !strings.Contains(err.Error(), "the fence does not hold") || !strings.Contains(err.Error(), "record(s)") {
		t.Fatalf("verify-fence with a writer going on: %v", err)
	}
	var vr fenceVerified
	result(t, e, id, 1, &vr)
	if vr.Held || len(vr.Moved) == 0 {
		t.Fatalf("verify result %+v", vr)
	}
	// The next step is not reached: order holds.
	if err := step(t, e, id, 2); !errors.Is(err, runbook.ErrOrder) {
		t.Fatalf("wait-caught-up after a failed verify: %v", err)
	}
	r, _ := e.RB.Get(ctx, id)
	what, err := e.RB.Rollbackable(r)
	if err != nil || !strings.Contains(what, "3 DENY WRITE ACL(s)") {
		t.Fatalf("rollbackable %q %v", what, err)
	}
	primary := runbooktest.PrimaryClient(e.Mon, flow)
	if there, _ := kafka.DenyWriteACLs(ctx, primary, demo.Topics, []string{"User:not-the-writer"}); len(there) != 3 {
		t.Fatalf("before the rollback: %v", there)
	}
	if err := e.RB.Rollback(ctx, runbooktest.Vera, id, "writer not fenced"); !errors.Is(err, runbook.ErrRole) {
		t.Fatalf("a viewer's rollback: %v", err)
	}
	if err := e.RB.Rollback(ctx, runbooktest.Carol, id, "writer not fenced"); err != nil {
		t.Fatal(err)
	}
	if there, err := kafka.DenyWriteACLs(ctx, primary, demo.Topics, []string{"User:not-the-writer"}); err != nil || len(there) != 0 {
		t.Fatalf("after the rollback: %v %v", there, err)
	}
	if n, m := e.Audit.Count(string(audit.FailoverRollback)), e.Audit.Count(string(audit.FailoverRollbackDone)); n != 1 || m != 1 {
		t.Fatalf("rollback records %d, done %d", n, m)
	}
	r, _ = e.RB.Get(ctx, id)
	if r.Status != model.RunCancelled {
		t.Fatalf("run %s after the rollback", r.Status)
	}
}

// The sandbox's writer fenced, then its fence removed behind the run's
// back: the mirror's stop is refused, the fence not holding.
func TestStopRefusedWhenFenceBreached(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, demo.WriterPrincipal)
	ctx := context.Background()
	id := e.Approved(t, ctx, plan(e))
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	verifyFence(t, e, id)
	if err := step(t, e, id, 2); err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if _, err := (kind{}).Rollback(ctx, runbooktest.Written(t, e), e.RB, r); err != nil {
		t.Fatal(err)
	}
	if err := writeAsSandbox(t, e, "events"); err != nil {
		t.Fatalf("unfenced write: %v", err)
	}
	err := step(t, e, id, 3)
	if !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "the fence holds") {
		t.Fatalf("stop-mirror after the fence broke: %v", err)
	}
}

// The mirror stopped behind the fence: DR cannot catch up, and the wait
// says which partitions lack how many records, never passing.
func TestWaitCaughtUpFailsClosed(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, demo.WriterPrincipal)
	e.Cfg.Flow(flow).Switchover.CatchUpTimeout = config.Duration(3 * time.Second)
	ctx := context.Background()
	id := e.Approved(t, ctx, plan(e))
	e.SB.SetMirrorRunning(false)
	// Records the mirror has not copied.
	kafkatest.WaitFor(t, "records behind", func() bool {
		s := e.Mon.Snapshot(flow)
		return s.TotalLagMessages != nil && *s.TotalLagMessages > 0
	})
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	verifyFence(t, e, id)
	err := step(t, e, id, 2)
	if err == nil || !strings.Contains(err.Error(), "DR does not hold every record up to the fence") || !strings.Contains(err.Error(), "behind") {
		t.Fatalf("wait with the mirror stopped: %v", err)
	}
}

// A transaction left open across the fence: its outcome would still move
// an end, so verify-fence fails naming the partition; once it ends, the
// check passes.
func TestOpenTransactionIsNotVerified(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, demo.WriterPrincipal)
	ctx := context.Background()
	id := e.Approved(t, ctx, plan(e))
	txn, err := kgo.NewClient(kgo.SeedBrokers(e.SB.PrimaryBootstrap()...), kgo.TransactionalID("left-open"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "users", Partition: 1, Value: []byte("in an open transaction")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	var err1 error
	for range 3 { // the sandbox's own transactions the fence cut short end first
		if err1 = step(t, e, id, 1); err1 != nil && strings.Contains(err1.Error(), "a transaction is open") {
			break
		}
	}
	if err1 == nil || !strings.Contains(err1.Error(), "a transaction is open on users-1") {
		t.Fatalf("verify-fence with a transaction open: %v", err1)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	verifyFence(t, e, id)
}

// A fence by command runs the configured argv, its output kept; a fence
// by hand asks for the typed flow name. Neither can be rolled back by the
// console: verify-fence still judges what the primary's ends do.
func TestCommandAndManualFences(t *testing.T) {
	e := switchoverEnv(t, config.FenceCommand)
	ctx := context.Background()
	e.Cfg.Flow(flow).Switchover.Command = []string{"sh", "-c", "echo fenced the writers"}
	id := e.Approved(t, ctx, plan(e))
	if p, _ := e.RB.Get(ctx, id); len(p.Plan.Steps) != 5 {
		t.Fatalf("a command fence's plan: %d steps (no unfence-dr)", len(p.Plan.Steps))
	}
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	var fr fenced
	result(t, e, id, 0, &fr)
	if fr.Command == nil || fr.Command.Stdout != "fenced the writers\n" || fr.Command.ExitCode != 0 {
		t.Fatalf("command fence result %+v", fr)
	}
	// The command fenced nothing: the sandbox's traffic goes on.
	if err := step(t, e, id, 1); err == nil || !strings.Contains(err.Error(), "the fence does not hold") {
		t.Fatalf("verify-fence after a command that fenced nothing: %v", err)
	}
	r, _ := e.RB.Get(ctx, id)
	if _, err := e.RB.Rollbackable(r); !errors.Is(err, runbook.ErrNoRollback) || !strings.Contains(err.Error(), "by a command") {
		t.Fatalf("rollback of a command's fence: %v", err)
	}

	sw := e.Cfg.Flow(flow).Switchover
	sw.Fence, sw.Command = config.FenceManual, nil
	id = e.Approved(t, ctx, plan(e))
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", "")
	if !errors.Is(err, runbook.ErrConfirmation) {
		t.Fatalf("a manual fence without the flow name: %v %v", x, err)
	}
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	result(t, e, id, 0, &fr)
	if !strings.Contains(fr.Confirmed, "alice confirmed") {
		t.Fatalf("manual fence result %+v", fr)
	}
}

// A partition added to a fenced topic while the fence is watched is not
// taken as fenced: verify-fence fails naming it.
func TestPartitionAddedDuringVerifyFails(t *testing.T) {
	e := switchoverEnv(t, config.FenceACL, demo.WriterPrincipal)
	e.Cfg.Flow(flow).Switchover.QuietPeriod = config.Duration(4 * time.Second)
	ctx := context.Background()
	id := e.Approved(t, ctx, plan(e))
	if err := step(t, e, id, 0); err != nil {
		t.Fatal(err)
	}
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 1, flow, "")
	if err != nil {
		t.Fatal(err)
	}
	sampled := make(chan struct{})
	var once sync.Once
	x.Progress = func(string) { once.Do(func() { close(sampled) }) } // told after the first sample
	done := make(chan error, 1)
	go func() { done <- x.Perform(ctx) }()
	<-sampled // the topic grows once the step has taken its first sample
	if _, err := kadm.NewClient(runbooktest.PrimaryClient(e.Mon, flow)).CreatePartitions(ctx, 1, "users"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "users-3: a partition that was not there") {
		t.Fatalf("verify-fence with a partition added: %v", err)
	}
}
