package switchover

import (
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

func init() {
	runbooktest.Equip = func(rb *runbook.Runbook, mon *monitor.Monitor) { failover.Equip(rb, failover.Env{Monitor: mon}) }
}
