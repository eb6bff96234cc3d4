package config

import (
	"fmt"
	"strings"
	"time"
)

// Drill shapes DR drills: a copy of the Flink job restored in DR with a
// temporary consumer group, measured, then cleaned up.
type Drill struct {
	// JobArgs are appended to the drill job's program arguments so its
	// output stays apart from production's (an output-topic suffix, a
	// sink switched off). {run} is the run id, {group} the drill's
	// temporary consumer group (the plan's only translate-group step).
	// Copied into the plan when it is created, so the approval covers them.
	JobArgs []string `yaml:"job_args"`
	// Timeout bounds the wait for the drill job to be RUNNING and to
	// process its first record; default 10m.
	Timeout Duration `yaml:"timeout"`
	// CleanupRetry is the first pause before a failed cleanup is tried
	// again (doubling up to 10 min); default 30s.
	CleanupRetry Duration `yaml:"cleanup_retry"`
}

func (d *Drill) applyDefaults() {
	setDefault(&d.Timeout, 10*time.Minute)
	setDefault(&d.CleanupRetry, 30*time.Second)
}

// drillPlaceholders are the only {…} words JobArgs may hold.
var drillPlaceholders = []string{"{run}", "{group}"}

func (c *Config) validateDrill(bad func(key, format string, args ...any)) {
	if c.Drill.Timeout < 0 {
		bad("drill.timeout", "must not be negative")
	}
	if c.Drill.CleanupRetry < 0 {
		bad("drill.cleanup_retry", "must not be negative")
	}
	for i, a := range c.Drill.JobArgs {
		rest := a
		for _, p := range drillPlaceholders {
			rest = strings.ReplaceAll(rest, p, "")
		}
		if strings.ContainsAny(rest, "{}") {
			bad(fmt.Sprintf("drill.job_args[%d]", i), "%q: only {run} and {group} are replaced", a)
		}
	}
}
