package config

import (
	"fmt"
	"strings"
)

// Group is a consumer group a flow names in its groups: list, so the
// console reports its failover quality (the records it would reprocess if
// DR took over now) even before MM2 checkpoints it, and holds it to an
// objective.
type Group struct {
	// Name is the consumer group's id on the primary (and in DR).
	Name string `yaml:"name"`
	// Critical groups page: the shipped alert rule fires when their
	// reprocessing bound exceeds ReprocessObjective, or cannot be
	// established.
	Critical bool `yaml:"critical"`
	// ReprocessObjective is the most records the group may reprocess after
	// a failover (0: none set). Required for a critical group.
	ReprocessObjective int64 `yaml:"reprocess_objective"`
}

// GroupNamed is f's configured group name, nil when f names none such.
func (f *Flow) GroupNamed(name string) *Group {
	for i := range f.Groups {
		if f.Groups[i].Name == name {
			return &f.Groups[i]
		}
	}
	return nil
}

// GroupsPerFlow is the most consumer groups whose failover quality the
// console computes per flow each refresh: the configured ones first (so a
// flow may name at most this many), then those MM2 checkpointed. It also
// bounds the per-group /metrics series.
const GroupsPerFlow = 200

// maxGroupNameLen is Kafka's own bound on a group id's length in practice
// (it is a string of at most 32767 bytes on the wire, but a name this long
// is a mistake, and it becomes a /metrics label).
const maxGroupNameLen = 249

// validateGroups checks a flow's groups: list, one problem per mistake.
func (f *Flow) validateGroups(key string, bad func(key, format string, args ...any)) {
	if len(f.Groups) > GroupsPerFlow {
		bad(key+".groups", "%d groups: at most %d per flow", len(f.Groups), GroupsPerFlow)
	}
	seen := map[string]bool{}
	for i, g := range f.Groups {
		k := fmt.Sprintf("%s.groups[%d]", key, i)
		if g.Name != "" {
			k = fmt.Sprintf("%s.groups[%d] (%s)", key, i, g.Name)
		}
		switch {
		case strings.TrimSpace(g.Name) == "":
			bad(k+".name", "required: the consumer group's id")
		case g.Name != strings.TrimSpace(g.Name):
			bad(k+".name", "%q has leading or trailing spaces", g.Name)
		case len(g.Name) > maxGroupNameLen:
			bad(k+".name", "%d characters: at most %d", len(g.Name), maxGroupNameLen)
		case seen[g.Name]:
			bad(k+".name", "duplicate group %q in this flow", g.Name)
		}
		seen[g.Name] = true
		if g.ReprocessObjective < 0 {
			bad(k+".reprocess_objective", "%d is negative (records the group may reprocess after a failover)", g.ReprocessObjective)
		}
		if g.Critical && g.ReprocessObjective == 0 {
			bad(k+".reprocess_objective", "required for a critical group: the most records it may reprocess after a failover, which its alert holds it to")
		}
	}
	if f.Kind == FlowClusterLink && len(f.Groups) > 0 {
		bad(key+".groups", "only for MM2 flows: Cluster Linking keeps the primary's offsets, so a group resumes where it committed and reprocesses nothing through translation")
	}
}
