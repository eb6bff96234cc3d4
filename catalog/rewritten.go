package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
)

// What the savepoint rewrite (failover's rewrite-savepoint step) needs of
// the catalog: every split of a savepoint's Kafka source, whether its
// destination exists, and the registration of the result.

// KafkaSplits reads every split of the Kafka source selected by uid (see
// flink.Savepoint.FindSourceOperator) of the savepoint at path, start
// markers included (the catalog's offsets leave those out), within the
// read timeout.
func (c *Catalog) KafkaSplits(ctx context.Context, path, uid string) (*flink.KafkaOffsets, error) {
	type result struct {
		k   *flink.KafkaOffsets
		err error
	}
	r, err := boundedRead(c, ctx, path, func() result {
		sp, err := openSavepoint(path, c.remote(), c.Config.SavepointDirs...)
		if err != nil {
			return result{err: err}
		}
		k, err := sp.KafkaSourceOffsets(uid)
		return result{k, err}
	})
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, fmt.Errorf("savepoint %s: %w", path, r.err)
	}
	return r.k, nil
}

// Files serves the savepoints that are not local (S3); nil when none is
// configured.
func (c *Catalog) Files() flink.Files { return c.remote() }

// DirExists reports whether anything exists at the savepoint directory
// path (a local directory or file, or an S3 object under the prefix).
func (c *Catalog) DirExists(ctx context.Context, path string) (bool, error) {
	if local, err := flink.LocalPath(path); err == nil {
		_, err := os.Lstat(local)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	if c.S3 == nil || !c.S3.Serves(path) {
		return false, fmt.Errorf("catalog: cannot look at %s: neither local nor on the configured S3", path)
	}
	dir, ok := flink.CleanS3(path)
	if !ok {
		return false, fmt.Errorf("catalog: %q is not an s3://bucket/path URI", path)
	}
	files, subdirs, err := c.S3.List(ctx, dir)
	return len(files)+len(subdirs) > 0, err
}

// RegisterRewritten registers the savepoint the rewrite wrote at path as
// rewritten from the catalog entry from, for flow, and reads its offsets
// (its DR positions) back into the catalog. The entry comes back as
// stored.
func (c *Catalog) RegisterRewritten(ctx context.Context, path string, from model.Savepoint, flow string) (model.Savepoint, error) {
	id, err := c.register(ctx, path, func(sp *model.Savepoint) {
		sp.Origin, sp.RewrittenFrom, sp.RewrittenFlow = model.OriginRewritten, from.Path, flow
		sp.Kind, sp.JobName = model.KindSavepoint, from.JobName
		if sp.JobName == "" {
			sp.JobName = "rewritten for " + flow
		}
	})
	if err != nil {
		return model.Savepoint{}, err
	}
	return c.Store.SavepointByID(ctx, id)
}
