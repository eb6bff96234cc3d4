package connect

import (
	"context"
	"net/url"
)

// ConnectorInfo is Connect's answer to PUT /connectors/{name}/config (201
// when created, 200 when updated) and GET /connectors/{name}.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []struct {
		Connector string `json:"connector"`
		Task      int    `json:"task"`
	} `json:"tasks"`
	Type string `json:"type"`
}

// Statuses reads the status of every named connector; the first failed
// read ends it.
func (c *Client) Statuses(ctx context.Context, names []string) (map[string]ConnectorStatus, error) {
	out := make(map[string]ConnectorStatus, len(names))
	for _, n := range names {
		s, err := c.Status(ctx, n)
		if err != nil {
			return out, err
		}
		out[n] = s
	}
	return out, nil
}

// Info returns a connector's config and tasks (GET /connectors/{name}).
func (c *Client) Info(ctx context.Context, name string) (ConnectorInfo, error) {
	var i ConnectorInfo
	err := c.get(ctx, "/connectors/"+url.PathEscape(name), &i)
	return i, err
}
