package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

// GroupsPage is a flow's consumer groups' failover quality: what each
// would read again if DR took over now.
type GroupsPage struct {
	Chrome Chrome
	Now    time.Time
	Snap   *FlowSnapshot
	// Groups are the page's rows, filtered, sorted and cut to its page.
	Groups []model.GroupQuality
	List   Listing
}

// GroupsPath is the URL of a flow's consumer groups page.
func GroupsPath(flow string) string { return FlowPath(flow) + "/groups" }

// GroupBound is what a group would reprocess, in words: "≤ 19 records", or
// unknown with why, never a smaller figure than the truth.
func GroupBound(g *model.GroupQuality) string {
	switch {
	case g.Problem != "":
		return Unknown + ": no offsets known"
	case g.OffsetsStale && g.Untranslated == 0:
		return fmt.Sprintf("%s: ≤ %s records as of the primary's last reading, plus what the group read after it", Unknown, Count(g.RereadKnown))
	case g.Reread == nil:
		s := fmt.Sprintf("%s: %s partition(s) not translated", Unknown, Count(int64(g.Untranslated)))
		if g.Untranslated < len(g.Partitions) {
			s += fmt.Sprintf("; ≤ %s on the others", Count(g.RereadKnown))
		}
		return s
	case *g.Reread == 0:
		return "0 records"
	}
	return "≤ " + Count(*g.Reread) + " records"
}

// PartitionBound is what one partition of a group would reprocess.
func PartitionBound(p model.GroupPartitionQuality) string {
	switch {
	case p.Reread == nil:
		return Unknown
	case *p.Reread == 0:
		return "0"
	}
	return "≤ " + Count(*p.Reread)
}

// GroupObjective is a group's objective in words.
func GroupObjective(g *model.GroupQuality) string {
	if g.Objective == 0 {
		return "none"
	}
	return Count(g.Objective)
}

// WorstGroup is the flow page's worst-group figure: the group and its
// bound, unknown when any group's is (or groups were left out, or a read
// failed), "no groups yet" when there are none.
func WorstGroup(f *model.FlowGroups) string {
	g, bound, ok := f.Worst()
	switch {
	case !ok:
		return "no consumer groups yet"
	case bound != nil:
		return g.Group + ": " + GroupBound(g)
	case f.Err != "":
		return Unknown + ": " + f.Err
	case g != nil && !g.Known():
		return Unknown + " (" + g.Group + ": " + GroupBound(g) + ")"
	}
	return fmt.Sprintf("%s: %d group(s) beyond the cap of %d not computed", Unknown, f.Over, f.Cap)
}

// StaleGroups counts groups whose primary offsets are the last known ones.
func StaleGroups(gs []model.GroupQuality) int {
	n := 0
	for i := range gs {
		if gs[i].OffsetsStale {
			n++
		}
	}
	return n
}

// OffsetFrom says where a partition's primary offset came from.
func OffsetFrom(p model.GroupPartitionQuality) string {
	if p.OffsetFrom == model.OffsetFromCheckpoint {
		return "MM2 checkpoint"
	}
	return "primary"
}

// TPName is "topic-partition".
func TPName(tp model.TP) string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// joinNames lists names, comma-separated.
func joinNames(names []string) string { return strings.Join(names, ", ") }
