package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// mirrorStop is how stop-mirror saw the mirror stop: its connectors'
// states through Connect, or a dedicated MM2's quiet window. Its fields
// are in the order the maps it replaced were written.
type mirrorStop struct {
	ConnectURL      string          `json:"connect_url,omitempty"`
	Connectors      connectorStates `json:"connectors,omitempty"`
	LastHeartbeatMs *int64          `json:"last_heartbeat_ms,omitempty"`
	Syncs           *int            `json:"syncs,omitempty"`
	Verified        string          `json:"verified,omitempty"`
}

// connectorStates are connectors' states by name; a failed stop records
// them as its result.
type connectorStates map[string]string

// stopMirror stops the flow's MM2 connectors through Kafka Connect and
// waits until they and their tasks are down; for dedicated MM2 it verifies
// that the operator's manual stop took: no new heartbeat and no new offset
// sync for a whole window.
func (rb Book) stopMirror(ctx context.Context, w audit.Written, flowName string) (*mirrorStop, connectorStates, error) {
	flow := rb.Config.Flow(flowName)
	if flow.ConnectURL != "" {
		api := rb.Connect(flow.ConnectURL)
		for _, name := range flow.Connectors {
			if err := effect.StopConnector(ctx, w, api, name); err != nil {
				return nil, nil, err
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		states := connectorStates{}
		for {
			stopped := true
			for _, name := range flow.Connectors {
				s, err := api.Status(wctx, name)
				if err != nil {
					return nil, states, err
				}
				states[name] = string(s.Connector.State)
				stopped = stopped && s.Stopped()
			}
			if stopped {
				return &mirrorStop{ConnectURL: flow.ConnectURL, Connectors: states}, nil, nil
			}
			select {
			case <-wctx.Done():
				return nil, states, fmt.Errorf("connectors not stopped within 2 minutes: %v", states)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	window := rb.StopVerifyWindow
	if window == 0 {
		window = 10 * time.Second
	}
	deadline := time.Now().Add(2*time.Minute + window)
	hb, syncs := rb.Monitor.Activity(flowName)
	quietSince := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		h, s := rb.Monitor.Activity(flowName)
		if h != hb || s != syncs {
			hb, syncs, quietSince = h, s, time.Now()
		}
		if time.Since(quietSince) >= window {
			return &mirrorStop{Verified: "no new heartbeat or offset sync for " + window.String(), LastHeartbeatMs: &hb, Syncs: &syncs}, nil, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, errors.New("MirrorMaker 2 is still writing heartbeats or offset syncs: it is not stopped")
		}
	}
}

func (rb Book) previewStop(ctx context.Context, flow *config.Flow) ([]string, error) {
	if flow.ConnectURL == "" {
		return []string{
			"MirrorMaker 2 runs in dedicated mode (no REST API): stop its process yourself (in the sandbox: Sandbox controls → Stop the mirror).",
			"Then run this step: the console watches the flow and passes when no heartbeat and no offset sync arrived for 10 s.",
			"Replication from the primary stops for good: records not yet copied stay behind.",
		}, nil
	}
	lines := []string{"PUT /connectors/{name}/stop on " + flow.ConnectURL + " for each connector, then wait until it reports STOPPED with no tasks:"}
	api := rb.Connect(flow.ConnectURL)
	for _, name := range flow.Connectors {
		s, err := api.Status(ctx, name)
		if err != nil {
			return lines, err
		}
		lines = append(lines, fmt.Sprintf("%s: now %s with %d task(s) → STOPPED", name, s.Connector.State, len(s.Tasks)))
	}
	return append(lines, "Replication from the primary stops for good: records not yet copied stay behind."), nil
}
