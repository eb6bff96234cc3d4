package effect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
)

// FenceWrites adds a literal DENY WRITE ACL (host "*") on each topic for
// each principal on the primary, so the broker refuses their produce
// requests, and returns exactly the entries it asked for: the ones a
// rollback removes (UnfenceWrites). Adding an entry that exists already
// changes nothing in Kafka; the caller tells its own from an operator's
// before (kafka.DenyWriteACLs).
func FenceWrites(ctx context.Context, w audit.Written, primary *kgo.Client, topics, principals []string) ([]kafka.TopicACL, error) {
	if err := audited(w, "the write fence"); err != nil {
		return nil, err
	}
	if len(topics) == 0 || len(principals) == 0 {
		return nil, errors.New("a fence needs at least one topic and one principal")
	}
	res, err := kadm.NewClient(primary).CreateACLs(ctx, kafka.DenyWriteFilter(topics, principals))
	if err != nil {
		return nil, fmt.Errorf("adding the DENY WRITE ACLs: %w", err)
	}
	var added []kafka.TopicACL
	var errs []error
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("DENY WRITE on %s for %s: %w %s", r.Name, r.Principal, r.Err, r.ErrMessage))
			continue
		}
		added = append(added, kafka.TopicACL{Topic: r.Name, Principal: r.Principal, Host: r.Host, Operation: "WRITE", Deny: true})
	}
	return added, errors.Join(errs...)
}

// UnfenceWrites removes exactly the entries acls names (literal DENY
// WRITE, by topic, principal and host), and returns the ones Kafka
// deleted. Entries already gone are not an error: removing the fence
// twice leaves the same cluster.
func UnfenceWrites(ctx context.Context, w audit.Written, primary *kgo.Client, acls []kafka.TopicACL) ([]kafka.TopicACL, error) {
	if err := audited(w, "removing the write fence"); err != nil {
		return nil, err
	}
	adm := kadm.NewClient(primary)
	var removed []kafka.TopicACL
	var errs []error
	for _, a := range acls {
		if !a.Deny || a.Operation != "WRITE" || a.Host != "*" || a.Topic == "" || a.Principal == "" {
			errs = append(errs, fmt.Errorf("not a fence entry, left alone: %+v", a))
			continue
		}
		res, err := adm.DeleteACLs(ctx, kafka.DenyWriteFilter([]string{a.Topic}, []string{a.Principal}))
		if err != nil {
			errs = append(errs, fmt.Errorf("removing DENY WRITE on %s for %s: %w", a.Topic, a.Principal, err))
			continue
		}
		for _, r := range res {
			if r.Err != nil {
				errs = append(errs, fmt.Errorf("removing DENY WRITE on %s for %s: %w %s", a.Topic, a.Principal, r.Err, r.ErrMessage))
				continue
			}
			for _, d := range r.Deleted {
				if d.Err != nil {
					errs = append(errs, fmt.Errorf("removing DENY WRITE on %s for %s: %w %s", d.Name, d.Principal, d.Err, d.ErrMessage))
					continue
				}
				got := kafka.TopicACL{Topic: d.Name, Principal: d.Principal, Host: d.Host, Operation: "WRITE", Deny: true}
				if !slices.Contains(removed, got) {
					removed = append(removed, got)
				}
			}
		}
	}
	return removed, errors.Join(errs...)
}

// MaxCommandOutput bounds what a fence command's run keeps of its output.
const MaxCommandOutput = 16 << 10

// CommandRun is what a fence command did: its argv, exit code and
// output (the last MaxCommandOutput bytes of stdout and stderr each).
type CommandRun struct {
	Argv      []string `json:"argv"`
	ExitCode  int      `json:"exit_code"`
	Stdout    string   `json:"stdout"`
	Stderr    string   `json:"stderr"`
	Truncated bool     `json:"truncated,omitempty"`
	Took      string   `json:"took"`
}

// RunCommand runs an operator's configured command (argv: no shell)
// within timeout; an exit code other than 0, a timeout or a command that
// cannot start is an error, with what it wrote.
func RunCommand(ctx context.Context, w audit.Written, argv []string, timeout time.Duration) (CommandRun, error) {
	run := CommandRun{Argv: argv, ExitCode: -1}
	if err := audited(w, "the fence command"); err != nil {
		return run, err
	}
	if len(argv) == 0 {
		return run, errors.New("no command to run")
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	var out, errOut tail
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second // a child holding the pipes open does not hold the step
	start := time.Now()
	err := cmd.Run()
	run.Took = time.Since(start).Round(time.Millisecond).String()
	run.Stdout, run.Stderr, run.Truncated = out.String(), errOut.String(), out.cut || errOut.cut
	if cmd.ProcessState != nil {
		run.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case cctx.Err() == context.DeadlineExceeded:
		return run, fmt.Errorf("the fence command did not finish within %s", timeout)
	case err != nil:
		return run, fmt.Errorf("the fence command failed: %w", err)
	}
	return run, nil
}

// tail keeps the last MaxCommandOutput bytes written to it.
type tail struct {
	b   bytes.Buffer
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	t.b.Write(p)
	if over := t.b.Len() - MaxCommandOutput; over > 0 {
		t.b.Next(over)
		rest := bytes.Clone(t.b.Bytes())
		t.b.Reset()
		t.b.Write(rest)
		t.cut = true
	}
	return n, nil
}

func (t *tail) String() string { return t.b.String() }
