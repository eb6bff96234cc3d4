package failover

import (
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// The shared test set-up gives its runbooks this package's environment.
func init() {
	runbooktest.Equip = func(rb *runbook.Runbook, mon *monitor.Monitor) { Equip(rb, Env{Monitor: mon}) }
}
