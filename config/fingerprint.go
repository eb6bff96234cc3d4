package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Fingerprint hashes each top-level section of the effective settings
// (defaults applied), by its key in the file: the console records them in
// the audit log at start, so a changed setting leaves a trace. Passwords
// are hashed only as set or unset.
func Fingerprint(c *Config) (map[string]string, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("config: fingerprint: %w", err)
	}
	var sections map[string]any
	if err := yaml.Unmarshal(b, &sections); err != nil {
		return nil, fmt.Errorf("config: fingerprint: %w", err)
	}
	out := map[string]string{}
	for key, v := range sections {
		js, err := json.Marshal(redact(v)) // maps marshal with sorted keys: stable
		if err != nil {
			return nil, fmt.Errorf("config: fingerprint %s: %w", key, err)
		}
		sum := sha256.Sum256(js)
		out[key] = hex.EncodeToString(sum[:8])
	}
	return out, nil
}

// redact replaces secret values with whether they are set.
func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			if k == "password" { // sasl.password, cluster_link.password (password_file is a path: kept)
				if s, ok := val.(string); ok {
					m[k] = s != ""
					continue
				}
			}
			m[k] = redact(val)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = redact(val)
		}
		return out
	}
	return v
}
