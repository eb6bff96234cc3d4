package connect

import (
	"context"
	"encoding/json"
	"net/url"
)

// SourceOffset is one entry of GET /connectors/{name}/offsets (Kafka 3.5+,
// KIP-875): a source partition and its committed offset, both as the
// connector wrote them (for MM2, mm2.DecodeConnectOffset reads them).
type SourceOffset struct {
	Partition json.RawMessage `json:"partition"`
	Offset    json.RawMessage `json:"offset"`
}

// Offsets reads a connector's committed source offsets.
func (c *Client) Offsets(ctx context.Context, name string) ([]SourceOffset, error) {
	var out struct {
		Offsets []SourceOffset `json:"offsets"`
	}
	err := c.get(ctx, "/connectors/"+url.PathEscape(name)+"/offsets", &out)
	return out.Offsets, err
}
