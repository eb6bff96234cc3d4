// Package panel connects the embedded sandbox (demo) to the console's
// sandbox control panel (handlers.DemoControls), so that handlers need not
// import the sandbox and the sandbox need not know the views.
package panel

import (
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/views"
)

// SandboxControls adapts the embedded sandbox to DemoControls.
type SandboxControls struct{ Sandbox *demo.Sandbox }

func (c SandboxControls) SetMirrorRate(n int)      { c.Sandbox.SetMirrorRate(n) }
func (c SandboxControls) SetMirrorRunning(r bool)  { c.Sandbox.SetMirrorRunning(r) }
func (c SandboxControls) SetPrimaryDown(down bool) { c.Sandbox.SetPrimaryDown(down) }
func (c SandboxControls) SetConsumersRunning(running bool) error {
	return c.Sandbox.SetConsumersRunning(running)
}

// State converts the sandbox's counters for the control panel.
func (c SandboxControls) State() views.DemoState {
	s := c.Sandbox.State()
	return views.DemoState{MirrorRate: s.MirrorRate, MirrorRunning: s.MirrorRunning, PrimaryDown: s.PrimaryDown,
		ConsumersRunning: c.Sandbox.ConsumersRunning(),
		Produced:         s.Produced, Mirrored: s.Mirrored, SyncsWritten: s.SyncsWritten, CheckpointsWritten: s.CheckpointsWritten,
		HeartbeatsEmitted: s.HeartbeatsEmitted, Since: s.Since}
}
