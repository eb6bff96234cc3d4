package effect

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
	return retryHint(connectRequest(ctx, w, c, http.MethodPut, "/connectors/"+url.PathEscape(name)+"/"+verb, verb+" "+name, nil, nil))
}

// connectRequest refuses what w does not prove audited, then sends one
// request to Connect REST (body, when not nil, as JSON) and reads its
// answer into out through connect.Answer.
func connectRequest(ctx context.Context, w audit.Written, c *connect.Client, method, path, what string, body, out any) error {
	if err := audited(w, "connect: "+what); err != nil {
		return err
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	return connect.Answer(method, path, resp, err, out)
}
