package kafka

import "github.com/drconsole/drconsole/kafka/kafkatest"

// The cluster helpers are shared with package monitor's tests.
var (
	produce    = kafkatest.Produce
	newCluster = kafkatest.NewCluster
	waitFor    = kafkatest.WaitFor
)
