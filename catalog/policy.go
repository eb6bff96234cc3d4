package catalog

import (
	"context"
	"fmt"
	"sync"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
)

// UsabilityOf judges sps against flow, a few at a time, all within
// model.UsabilityTimeout; entries not judged in time come back unknown (absent
// from the map). The error is the first judgement that failed.
func (c *Catalog) UsabilityOf(ctx context.Context, sps []model.Savepoint, flow string) (map[int64]model.Usability, error) {
	ctx, cancel := context.WithTimeout(ctx, model.UsabilityTimeout)
	defer cancel()
	out := make(map[int64]model.Usability, len(sps))
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, sp := range sps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				return
			}
			u, err := c.Usability(ctx, sp, flow)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			out[sp.ID] = u
		}()
	}
	wg.Wait()
	return out, firstErr
}

// Job looks a job up on a Flink target (for its name; a read).
func (c *Catalog) Job(ctx context.Context, target, jobID string) (flink.Job, error) {
	for _, ft := range c.Config.FlinkTargets {
		if ft.Name == target {
			cl := flink.NewRESTClient(ft.RestURL)
			if c.Flink != nil {
				cl = c.Flink(ft.RestURL)
			}
			return cl.Job(ctx, jobID)
		}
	}
	return flink.Job{}, fmt.Errorf("no Flink target %q", target)
}
