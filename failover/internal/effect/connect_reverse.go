package effect

// The reverse MM2 flow of a failback, through Kafka Connect REST: create or
// update its three connectors, pause and delete them. Stopping them is
// StopConnector, like the forward ones.

import (
	"context"
	"errors"
	"fmt"
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
