// Package openapi holds the console's Cluster Linking client and the
// sandbox's stand-in to Confluent's published OpenAPI document of the
// Kafka REST API v3 (ccloud-sdk-go-v2's kafkarest module, Apache-2.0,
// which embeds it): a proxy between the two checks every request the
// console sends and every answer the stand-in gives against the
// document's operations and schemas, with kin-openapi.
//
// It is a module of its own so that kin-openapi and Confluent's SDK stay
// out of the console's go.mod; `make test` runs it (the Makefile's e2e
// target).
package openapi

import (
	"bytes"
	"encoding/json"
)

// jsonDecode keeps numbers as written.
func jsonDecode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
