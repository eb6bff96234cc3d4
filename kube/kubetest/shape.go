package kubetest

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// The fields the console writes, with their types, as the published CRDs
// declare them (flinkdeployments.flink.apache.org-v1.yml spec.job,
// flinkstatesnapshots.flink.apache.org-v1.yml spec, operator 1.15.0).
// "enum:a|b" is a string with those values.
var shapes = map[string]map[string]string{
	"FlinkDeployment": {
		"spec.job.allowNonRestoredState": "boolean", "spec.job.args": "[]string", "spec.job.autoscalerResetNonce": "integer",
		"spec.job.checkpointTriggerNonce": "integer", "spec.job.entryClass": "string", "spec.job.initialSavepointPath": "string",
		"spec.job.jarURI": "string", "spec.job.parallelism": "integer", "spec.job.savepointRedeployNonce": "integer",
		"spec.job.savepointTriggerNonce": "integer", "spec.job.state": "enum:running|suspended",
		"spec.job.upgradeMode": "enum:last-state|savepoint|stateless",
	},
	"FlinkStateSnapshot": {
		"spec.backoffLimit": "integer", "spec.checkpoint": "object", "spec.jobReference.kind": "enum:FlinkDeployment|FlinkSessionJob",
		"spec.jobReference.name": "string", "spec.savepoint.alreadyExists": "boolean", "spec.savepoint.disposeOnDelete": "boolean",
		"spec.savepoint.formatType": "enum:CANONICAL|NATIVE|UNKNOWN", "spec.savepoint.path": "string",
	},
}

// checkShape refuses an unknown or mistyped field under the checked
// prefixes (spec.job for a deployment, spec for a snapshot).
func checkShape(kind string, o map[string]any) error {
	prefix := map[string]string{"FlinkDeployment": "spec.job", "FlinkStateSnapshot": "spec"}[kind]
	root := any(o)
	for _, p := range strings.Split(prefix, ".") {
		m, _ := root.(map[string]any)
		root = m[p]
	}
	var errs []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		want, known := shapes[kind][path]
		if m, ok := v.(map[string]any); ok && !known {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(path+"."+k, m[k])
			}
			return
		}
		if !known {
			errs = append(errs, path+": field not declared in the CRD")
			return
		}
		if !fits(want, v) {
			errs = append(errs, fmt.Sprintf("%s: %v does not fit %s", path, v, want))
		}
	}
	if m, ok := root.(map[string]any); ok {
		for k, v := range m {
			walk(prefix+"."+k, v)
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func fits(want string, v any) bool {
	switch {
	case want == "boolean":
		_, ok := v.(bool)
		return ok
	case want == "string":
		_, ok := v.(string)
		return ok
	case want == "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case want == "object":
		_, ok := v.(map[string]any)
		return ok
	case want == "[]string":
		l, ok := v.([]any)
		for _, e := range l {
			if _, s := e.(string); !s {
				return false
			}
		}
		return ok
	case strings.HasPrefix(want, "enum:"):
		s, ok := v.(string)
		return ok && slices.Contains(strings.Split(strings.TrimPrefix(want, "enum:"), "|"), s)
	}
	return false
}
