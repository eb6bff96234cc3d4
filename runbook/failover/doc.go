// Package failover holds the failover to DR and the drill that rehearses
// it: their step kinds, their safety rules and previews, and the figures
// the pages show of them (which side is active, the cut, what was lost).
// It registers both with the engine (package runbook) from init, and lets
// another plan kind (runbook/failback) register its own and reuse these
// steps (RegisterKind, RegisterSteps); every effect goes through
// runbook/internal/effect, on the audit record of the step that makes it.
package failover
