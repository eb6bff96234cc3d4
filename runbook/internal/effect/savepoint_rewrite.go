package effect

import (
	"context"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
)

// RewriteSavepoint writes req.Dest, a copy of the savepoint req.Source
// whose Kafka source state resumes at req.Targets (flink.Rewrite: the
// source is never modified, Dest must not exist and appears whole or not
// at all, and is read back before this returns). It writes to savepoint
// storage, so it is an effect: without a valid audit record nothing is
// written.
func RewriteSavepoint(ctx context.Context, w audit.Written, req flink.RewriteRequest) (*flink.RewriteResult, error) {
	if err := audited(w, "flink: rewrite savepoint "+req.Source+" into "+req.Dest); err != nil {
		return nil, err
	}
	return flink.Rewrite(ctx, req)
}
