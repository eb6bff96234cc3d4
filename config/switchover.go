package config

import (
	"fmt"
	"strings"
	"time"
)

// Fence methods of a planned switchover: how writers to the mirrored
// topics on the primary are stopped before the mirror is.
const (
	// FenceACL: the runbook adds DENY WRITE ACLs on each mirrored topic
	// for each principal, and removes exactly those on rollback.
	FenceACL = "acl"
	// FenceCommand: the runbook runs an operator's command (argv, no
	// shell) that fences the writers.
	FenceCommand = "command"
	// FenceManual: the operator fences the writers by hand and confirms
	// with the typed flow name.
	FenceManual = "manual"
)

// Switchover is a flow's planned switchover: how its writers are fenced
// and how long the fence is watched before the mirror stops.
type Switchover struct {
	// Fence is acl, command or manual.
	Fence string `yaml:"fence"`
	// Principals are the producing principals the ACL fence denies
	// Write (User:app ...); fence acl only.
	Principals []string `yaml:"principals"`
	// Command is the fence's argv (fence command only): run without a
	// shell, its output kept (bounded) in the step's result.
	Command []string `yaml:"command"`
	// CommandTimeout bounds the command; default 1m.
	CommandTimeout Duration `yaml:"command_timeout"`
	// QuietPeriod is how long the primary's log ends of the mirrored
	// topics must stay put after the fence; default 10s.
	QuietPeriod Duration `yaml:"quiet_period"`
	// CatchUpTimeout bounds the wait until DR holds every record up to
	// the fenced ends; default 10m.
	CatchUpTimeout Duration `yaml:"catch_up_timeout"`
}

func (s *Switchover) applyDefaults() {
	setDefault(&s.QuietPeriod, 10*time.Second)
	setDefault(&s.CatchUpTimeout, 10*time.Minute)
	setDefault(&s.CommandTimeout, time.Minute)
}

// validate says what is wrong with s, one problem each, under key.
func (s *Switchover) validate(key string, f *Flow, bad func(key, format string, args ...any)) {
	if f.IsClusterLink() {
		bad(key, "a planned switchover with fence and verify is for MirrorMaker 2 flows; a Cluster Linking flow's planned promote already waits for zero lag")
	}
	switch s.Fence {
	case FenceACL:
		if len(s.Principals) == 0 {
			bad(key+".principals", "fence acl needs the producing principals to deny Write (e.g. User:app)")
		}
		for i, p := range s.Principals {
			typ, name, ok := strings.Cut(p, ":")
			if !ok || strings.TrimSpace(typ) == "" || strings.TrimSpace(name) == "" || name == "*" {
				bad(fmt.Sprintf("%s.principals[%d]", key, i), "%q: want Type:name, e.g. User:app (not a wildcard)", p)
			}
		}
		if len(s.Command) > 0 {
			bad(key+".command", "only for fence command")
		}
	case FenceCommand:
		if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
			bad(key+".command", "fence command needs the command to run, as a list: [program, arg, ...] (no shell)")
		}
		if len(s.Principals) > 0 {
			bad(key+".principals", "only for fence acl")
		}
	case FenceManual:
		if len(s.Principals) > 0 {
			bad(key+".principals", "only for fence acl")
		}
		if len(s.Command) > 0 {
			bad(key+".command", "only for fence command")
		}
	case "":
		bad(key+".fence", "required: acl, command or manual")
	default:
		bad(key+".fence", "%q: want acl, command or manual", s.Fence)
	}
	for k, d := range map[string]Duration{"quiet_period": s.QuietPeriod, "catch_up_timeout": s.CatchUpTimeout, "command_timeout": s.CommandTimeout} {
		if d < 0 {
			bad(key+"."+k, "must not be negative")
		}
	}
	if s.QuietPeriod > 0 && s.QuietPeriod.D() < time.Second {
		bad(key+".quiet_period", "%s is too short to tell a fenced topic from a quiet one (at least 1s)", s.QuietPeriod.D())
	}
}
