package failover

import (
	"fmt"

	"github.com/drconsole/drconsole/model"
)

// reachedDR works out From from what the run recorded at the cut. MM2
// copies a partition in order, so the newest upstream offset known to be
// in DR bounds the cut from below; counting from there never understates
// what is lost. Known upstream offsets are an offset sync (the primary
// record at SyncUp is DR's record at SyncDown) and MirrorSourceConnector's
// committed position (Connect commits only what DR acknowledged).
func reachedDR(c model.CutPosition) model.Reached {
	end := c.CommittedEnd()
	if end == nil {
		return model.Reached{How: "DR's log end was not read when the mirror stopped"}
	}
	if *end == 0 {
		return model.Reached{Known: true, From: 0, How: "DR held no record of this partition when the mirror stopped"}
	}
	r := model.Reached{InDRAtMost: -1}
	// A sync at or past the committed end names a record of a transaction
	// that never committed in DR: it proves nothing copied.
	if c.SyncUp != nil && c.SyncDown != nil && *c.SyncDown < *end {
		r.Known, r.From = true, *c.SyncUp+1
		// DR's records after the sync's one came from upstream offsets
		// past SyncUp: each is perhaps one of the counted records.
		r.InDRAtMost = *end - 1 - *c.SyncDown
		if r.InDRAtMost == 0 {
			r.How = fmt.Sprintf("exact: DR's last record before the failover (offset %d) is the primary's offset %d (offset sync)", *c.SyncDown, *c.SyncUp)
		} else {
			r.How = fmt.Sprintf("bounded: the newest offset sync below DR's end maps DR offset %d to the primary's %d; DR's %d record(s) after it came from later primary offsets no sync names",
				*c.SyncDown, *c.SyncUp, r.InDRAtMost)
		}
	}
	// An exact sync needs nothing more (and outranks a connect offset that
	// may belong to an older log of the topic).
	if c.ConnectLast != nil && *c.ConnectLast+1 > r.From && r.InDRAtMost != 0 {
		if !r.Known {
			r.How = fmt.Sprintf("bounded: MirrorSourceConnector had committed the primary's offset %d; no offset sync below DR's end bounds what it copied after that", *c.ConnectLast)
		} else {
			r.How += fmt.Sprintf("; MirrorSourceConnector had committed the primary's offset %d", *c.ConnectLast)
		}
		r.Known, r.From = true, *c.ConnectLast+1
	}
	if !r.Known {
		r.How = "no offset sync below DR's log end and no MirrorSourceConnector position were known when the mirror stopped"
	}
	return r
}
