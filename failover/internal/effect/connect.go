package effect

import (
	"context"
	"net/http"
	"net/url"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/connect"
)

// StopConnector stops a connector (Kafka 3.5+, KIP-875): tasks shut down,
// offsets kept. Stopping a stopped connector is harmless, so the step is
// idempotent.
func StopConnector(ctx context.Context, w audit.Written, c *connect.Client, name string) error {
	return connectorPut(ctx, w, c, name, "stop")
}

// ResumeConnector resumes a stopped or paused connector.
func ResumeConnector(ctx context.Context, w audit.Written, c *connect.Client, name string) error {
	return connectorPut(ctx, w, c, name, "resume")
}

func connectorPut(ctx context.Context, w audit.Written, c *connect.Client, name, verb string) error {
	path := "/connectors/" + url.PathEscape(name) + "/" + verb
	if err := audited(w, "connect: "+verb+" "+name); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.Base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	return connect.Answer(http.MethodPut, path, resp, err, nil)
}
