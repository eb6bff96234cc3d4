package catalog

import (
	"context"
	"sync"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
)

// TargetJobs is what one Flink target's /jobs/overview answered.
type TargetJobs struct {
	Target string
	Region config.Region
	Jobs   []flink.Job
	Err    string // why the target could not be asked; "" when it answered
}

// LiveJobs asks every Flink target for its jobs, all at once, each bounded
// by timeout: for the trigger form (a read; nothing is changed).
func (c *Catalog) LiveJobs(ctx context.Context, timeout time.Duration) []TargetJobs {
	out := make([]TargetJobs, len(c.Config.FlinkTargets))
	var wg sync.WaitGroup
	for i, ft := range c.Config.FlinkTargets {
		out[i] = TargetJobs{Target: ft.Name, Region: ft.Region}
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
