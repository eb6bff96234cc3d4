package kafka

import "github.com/drconsole/drconsole/internal/kfaketest"

// The cluster helpers are shared with package monitor's tests.
var (
	produce    = kfaketest.Produce
	newCluster = kfaketest.NewCluster
	waitFor    = kfaketest.WaitFor
)
