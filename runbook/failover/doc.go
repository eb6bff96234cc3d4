// Package failover holds the runbook's plan kinds: the failover to DR, the
// drill that rehearses it, and the failback to the primary; their step
// kinds, their safety rules and previews, and the figures the pages show of
// them. Each registers with the engine (package runbook) from init; every
// effect they have goes through runbook/internal/effect, on the audit
// record of the step that makes it.
package failover
