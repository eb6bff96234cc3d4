package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/drconsole/drconsole/config"
)

// Flows added at run time: a failback's reverse flow DR -> primary exists
// only while its connectors do, so it cannot be in the config. It is
// watched like a configured flow (ingestion, lag, RPO, status, samples,
// metrics) under a name no configured flow can have, and its history
// stays in the store when it is no longer watched.

// SetWatched makes want the flows watched besides the configured ones:
// each flow of want not watched yet starts (its history loaded from the
// store, its ingester started if Run is running), and each watched flow
// not in want stops. Flows are matched by name; a name of a configured
// flow is refused. The errors of flows that could not start are joined;
// the others start regardless.
func (m *Monitor) SetWatched(ctx context.Context, want []*config.Flow) error {
	var errs []error
	m.mu.RLock()
	var add []*config.Flow
	for _, f := range want {
		switch fm := m.findLocked(f.Name); {
		case fm == nil:
			add = append(add, f)
		case !fm.watched:
			errs = append(errs, fmt.Errorf("flow %s: a configured flow of that name exists", f.Name))
		}
	}
	m.mu.RUnlock()
	// Loading history reads the store: outside the lock, which the pages'
	// reads take.
	var built []*flowMonitor
	for _, f := range add {
		fm, err := m.newFlowMonitor(ctx, f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fm.watched = true
		built = append(built, fm)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	flows := slices.DeleteFunc(slices.Clone(m.flows), func(fm *flowMonitor) bool {
		gone := fm.watched && !slices.ContainsFunc(want, func(f *config.Flow) bool { return f.Name == fm.flow.Name })
		if gone && fm.stop != nil {
			fm.stop()
		}
		return gone
	})
	for _, fm := range built {
		if m.findIn(flows, fm.flow.Name) != nil {
			continue // a concurrent call added it meanwhile
		}
		flows = append(flows, fm)
		m.startIngest(fm)
	}
	// Ready stays as it is: it says the console has refreshed since it
	// started; a new flow shows "starting" until its first refresh.
	m.flows = flows
	return errors.Join(errs...)
}

// Watched names the flows watched besides the configured ones.
func (m *Monitor) Watched() []string {
	var out []string
	for _, fm := range m.flowList() {
		if fm.watched {
			out = append(out, fm.flow.Name)
		}
	}
	return out
}

// startIngest starts fm's ingester under Run's context; a no-op before
// Run, after it ended, and for flows without one. m.mu must be held.
func (m *Monitor) startIngest(fm *flowMonitor) {
	if fm.ingester == nil || m.bg == nil || m.bg.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(m.bg)
	fm.stop = cancel
	wg := m.bgWG
	wg.Add(1)
	go func() { defer wg.Done(); fm.ingester.Run(ctx) }()
}

// endIngests keeps SetWatched from starting ingesters once Run is ending.
func (m *Monitor) endIngests() {
	m.mu.Lock()
	m.bg, m.bgWG = nil, nil
	m.mu.Unlock()
}

// flowList is the flows now, a copy safe to range over unlocked.
func (m *Monitor) flowList() []*flowMonitor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.flows
}

func (m *Monitor) find(name string) *flowMonitor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.findLocked(name)
}

func (m *Monitor) findLocked(name string) *flowMonitor { return m.findIn(m.flows, name) }

func (m *Monitor) findIn(flows []*flowMonitor, name string) *flowMonitor {
	for _, fm := range flows {
		if fm.flow.Name == name {
			return fm
		}
	}
	return nil
}
