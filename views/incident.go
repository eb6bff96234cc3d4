package views

import (
	"net/url"
	"strconv"
	"time"
)

// InIncident says whether the overview leads with s: its primary does not
// answer, or its replication is BROKEN, and it has not been failed over.
func InIncident(s *FlowSnapshot) bool {
	return s.FailedOver == nil && (primaryDown(s) || s.Status == "BROKEN")
}

func primaryDown(s *FlowSnapshot) bool { return s.Source.Checked && !s.Source.OK }

// incidentAtRisk is the data at risk as the incident panel states it: in
// an incident replication does not keep up (the primary does not answer,
// or the flow is BROKEN), so a figure read before can only have grown
// since (producers may still have written): it is always "≥". The flow
// can turn BROKEN before a read of the primary fails, so this does not
// wait for the primary's check. No figure is "unknown", never 0.
func incidentAtRisk(s *FlowSnapshot) string {
	if s.RPOMs == nil {
		return "unknown: the console has no lag figure for this flow"
	}
	text := "≥ " + Millis(s.RPOMs)
	if s.TotalLagMessages != nil {
		text += " (≥ " + Int(s.TotalLagMessages) + " offsets not in DR)"
	}
	return text
}

// drHolds sums the DR end offsets the console read for s's partitions and
// says how many it could not read: what DR holds, by offsets.
func drHolds(s *FlowSnapshot) (records int64, partitions, unknown int) {
	for _, p := range s.Partitions {
		if !p.TargetEnd.Known {
			unknown++
			continue
		}
		records += p.TargetEnd.V
		partitions++
	}
	return records, partitions, unknown
}

func drHoldsLine(partitions, unknown int, records int64) string {
	line := strconv.Itoa(partitions) + " partition(s), their end offsets totalling " + Count(records)
	if unknown > 0 {
		line += "; the end of " + strconv.Itoa(unknown) + " partition(s) unknown"
	}
	return line
}

// lastSyncRead is when the newest offset sync the console read was
// written (zero when none was read, or for a Cluster Linking flow).
func lastSyncRead(s *FlowSnapshot) time.Time {
	for _, in := range s.Ingest {
		if in.Topic == s.Topics.OffsetSyncs {
			return in.LastRecordAt
		}
	}
	return time.Time{}
}

// StartFailoverPath opens the failover plan form for flow, filled with
// what the console knows of it.
func StartFailoverPath(flow string) string {
	return "/failover?" + url.Values{"flow": {flow}, "from": {"incident"}}.Encode() + "#plan-form"
}

// whenAgo is "15:04:05 UTC (2 min ago)", or "unknown" for a zero time.
func whenAgo(t, now time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return Clock(t) + " (" + Ago(t, now) + ")"
}
