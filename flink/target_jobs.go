package flink

import "github.com/drconsole/drconsole/config"

// TargetJobs is what one Flink target's /jobs/overview answered.
type TargetJobs struct {
	Target string
	Region config.Region
	Jobs   []Job
	Err    string // why the target could not be asked; "" when it answered
}
