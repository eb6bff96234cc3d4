package catalog

import (
	"context"
	"sync"
	"time"

	"github.com/drconsole/drconsole/flink"
)

// LiveJobs asks every Flink target for its jobs, all at once, each bounded
// by timeout: for the trigger form (a read; nothing is changed).
func (c *Catalog) LiveJobs(ctx context.Context, timeout time.Duration) []flink.TargetJobs {
	out := make([]flink.TargetJobs, len(c.Config.FlinkTargets))
	var wg sync.WaitGroup
	for i, ft := range c.Config.FlinkTargets {
		out[i] = flink.TargetJobs{Target: ft.Name, Region: ft.Region}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			jobs, err := c.client(ft.RestURL).Jobs(tctx)
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].Jobs = jobs
		}()
	}
	wg.Wait()
	return out
}
