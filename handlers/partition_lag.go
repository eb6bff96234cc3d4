package handlers

import (
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// partitionLagPoints charts a partition's saved minutes. A caught-up
// minute (its topic saved, no row of its own) is a 0; an unknown lag is a
// gap, and so is a stretch where nothing was saved (the source unreachable,
// the console stopped): the line is broken there, never drawn through 0.
func partitionLagPoints(samples []storage.PartitionSample) []views.Point {
	every := flowstate.PartitionSampleEvery.Milliseconds()
	var out []views.Point
	for i, x := range samples {
		if i > 0 && x.AtMs-samples[i-1].AtMs > 2*every {
			out = append(out, views.Point{AtMs: samples[i-1].AtMs + every}) // nothing saved
		}
		pt := views.Point{AtMs: x.AtMs, Known: x.LagMs != nil}
		if x.LagMs != nil {
			pt.Y = float64(*x.LagMs)
		}
		out = append(out, pt)
	}
	return out
}
