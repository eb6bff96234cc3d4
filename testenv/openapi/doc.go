// Package openapi holds the console's Cluster Linking client and the
// sandbox's stand-in to Confluent's published OpenAPI document of the
// Kafka REST API v3 (ccloud-sdk-go-v2's kafkarest module, Apache-2.0,
// which embeds it): a proxy between the two checks every request the
// console sends and every answer the stand-in gives against the
// document's operations and schemas, with kin-openapi.
//
// It also holds the console's own JSON API (/api/v1) to the OpenAPI
// document the console serves (handlers/api_openapi.json): a console on
// the sandbox is driven through every operation of it, through the same
// judging proxy (console_api_test.go).
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
