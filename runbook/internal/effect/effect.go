// Package effect holds the only code of the console that changes anything
// outside it: stopping and resuming MM2 connectors, and creating,
// pausing and deleting the reverse flow's (Kafka Connect REST); promoting,
// failing over, pausing, resuming and reversing mirror topics (Cluster
// Linking REST), committing consumer-group offsets and deleting a DR
// drill's temporary groups (Kafka), triggering savepoints,
// stop-with-savepoint, running jars and cancelling a drill's job (Flink
// REST), patching a
// FlinkDeployment and creating a FlinkStateSnapshot (Kubernetes API),
// writing rewritten savepoints (flink.Rewrite, to savepoint storage).
//
// Every exported function that changes something takes an audit.Written,
// the proof that its audit record reached the chain, and refuses a zero
// one before sending anything: an effect whose record could not be written
// does not happen. Being internal to failover, only the runbook can call
// it; boundary_test.go fails the build's tests when code elsewhere sends a
// mutating request or a franz-go write.
package effect

import (
	"errors"
	"fmt"

	"github.com/drconsole/drconsole/audit"
)

// ErrNotAudited refuses an effect without proof that its record was written.
var ErrNotAudited = errors.New("effect: no audit record was written for this, so it is not done")

// audited refuses what w does not prove was audited.
func audited(w audit.Written, what string) error {
	if !w.Valid() {
		return fmt.Errorf("%s: %w", what, ErrNotAudited)
	}
	return nil
}
