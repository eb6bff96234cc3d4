package effect

// The reverse MM2 flow of a failback, through Kafka Connect REST: create or
// update its three connectors, pause and delete them. Stopping them is
// StopConnector, like the forward ones. Under the identity policy the
// source connector must start at the failover's cut, not at the earliest
// offset: CreateConnectorStopped, AlterConnectorOffsets with
// mm2.ReverseStartOffsets, then ResumeConnector.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/mm2"
)

// PutConnectorConfig creates connector name with cfg, or updates it to cfg
// (PUT /connectors/{name}/config). PUT is Connect's idempotent form: a
// retried step finds the connector and rewrites the same config instead of
// creating a twin, which POST /connectors would refuse with 409 at best.
func PutConnectorConfig(ctx context.Context, w audit.Written, c *connect.Client, name string, cfg map[string]string) (connect.ConnectorInfo, error) {
	var info connect.ConnectorInfo
	path := "/connectors/" + url.PathEscape(name) + "/config"
	if err := connectRequest(ctx, w, c, http.MethodPut, path, "put config of "+name, cfg, &info); err != nil {
		return info, retryHint(err)
	}
	if info.Name != name {
		return info, fmt.Errorf("connect: PUT %s: the answer names connector %q", path, info.Name)
	}
	return info, nil
}

// PutReverseConnectors creates or updates the reverse flow's three
// connectors, source first, and stops at the first one Connect refuses:
// the ones before it are in place, and a retry rewrites them unchanged.
func PutReverseConnectors(ctx context.Context, w audit.Written, c *connect.Client, r mm2.ReverseConnectors) ([]connect.ConnectorInfo, error) {
	var out []connect.ConnectorInfo
	for _, name := range r.Names() {
		cfg, ok := r.Configs[name]
		if !ok {
			return out, fmt.Errorf("connect: no config for reverse connector %s", name)
		}
		info, err := PutConnectorConfig(ctx, w, c, name, cfg)
		if err != nil {
			return out, err
		}
		out = append(out, info)
	}
	return out, nil
}

// CreateConnectorStopped creates connector name with cfg in the STOPPED
// state (POST /connectors with initial_state, Kafka 3.7+, KIP-980), so
// that no task runs before its offsets are set. POST is not idempotent:
// Connect answers 409 for a connector that exists. A retried step finds it
// STOPPED with the same config and is done; one found running or with
// another config is refused, since starting it at the wrong place is what
// this exists to prevent. A 409 for a connector that does not exist is a
// rebalance, to retry.
func CreateConnectorStopped(ctx context.Context, w audit.Written, c *connect.Client, name string, cfg map[string]string) (connect.ConnectorInfo, error) {
	var info connect.ConnectorInfo
	body := map[string]any{"name": name, "config": cfg, "initial_state": "STOPPED"}
	err := connectRequest(ctx, w, c, http.MethodPost, "/connectors", "create "+name+" stopped", body, &info)
	var he *connect.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusConflict {
		return info, err
	}
	have, ierr := c.Info(ctx, name)
	if errors.As(ierr, &he) && he.Status == http.StatusNotFound {
		return info, retryHint(err)
	}
	if ierr != nil {
		return info, fmt.Errorf("%w; reading the existing connector: %w", err, ierr)
	}
	st, serr := c.Status(ctx, name)
	if serr != nil {
		return have, fmt.Errorf("%w; reading its status: %w", err, serr)
	}
	want := maps.Clone(cfg)
	want["name"] = name // Connect adds it (checkAndPutConnectorConfigName)
	if !maps.Equal(have.Config, want) || !st.Stopped() {
		return have, fmt.Errorf("connect: connector %s already exists (state %s, config %s): it is not the stopped connector this step creates; delete it, or check who made it",
			name, st.Connector.State, map[bool]string{true: "the same", false: "different"}[maps.Equal(have.Config, want)])
	}
	return have, nil
}

// AlterConnectorOffsets replaces a stopped connector's source offsets
// (PATCH /connectors/{name}/offsets, Kafka 3.6+, KIP-875) with body, e.g.
// mm2.ReverseStartOffsets. Connect refuses it for a running connector.
// Writing the same offsets twice leaves them as they were.
func AlterConnectorOffsets(ctx context.Context, w audit.Written, c *connect.Client, name string, body []byte) error {
	return retryHint(connectRequest(ctx, w, c, http.MethodPatch, "/connectors/"+url.PathEscape(name)+"/offsets", "alter offsets of "+name, json.RawMessage(body), nil))
}

// PauseConnector pauses a connector: tasks stay assigned but idle
// (PUT /connectors/{name}/pause, 202). Pausing a paused one is harmless.
func PauseConnector(ctx context.Context, w audit.Written, c *connect.Client, name string) error {
	return connectorPut(ctx, w, c, name, "pause")
}

// DeleteConnector deletes a connector (DELETE /connectors/{name}, 204).
// A connector already gone (404) is what a retried delete finds, so it
// reports false and no error.
func DeleteConnector(ctx context.Context, w audit.Written, c *connect.Client, name string) (bool, error) {
	err := connectRequest(ctx, w, c, http.MethodDelete, "/connectors/"+url.PathEscape(name), "delete "+name, nil, nil)
	var he *connect.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, retryHint(err)
	}
	return true, nil
}

// retryHint tells the operator that Connect's 409 (a rebalance or a
// concurrent config change, HerderRequestHandler.java) passes: the same
// step can be retried as is.
func retryHint(err error) error {
	var he *connect.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusConflict {
		return fmt.Errorf("%w (Connect is rebalancing or another change is in progress; retrying this step is safe)", err)
	}
	return err
}

// ResetConnectorOffsets removes a stopped connector's source offsets
// (DELETE /connectors/{name}/offsets, Kafka 3.6+, KIP-875): an MM2 source
// then starts every partition at its earliest offset. Connect refuses it
// for a running connector. Resetting twice leaves none, as once.
func ResetConnectorOffsets(ctx context.Context, w audit.Written, c *connect.Client, name string) error {
	return retryHint(connectRequest(ctx, w, c, http.MethodDelete, "/connectors/"+url.PathEscape(name)+"/offsets", "reset offsets of "+name, nil, nil))
}
