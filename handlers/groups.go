package handlers

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/a-h/templ"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// Groups is GET /flows/{flow}/groups: the flow's consumer groups' failover
// quality as the monitor's last refresh computed it (no read of its own),
// filterable, sortable (worst first by default) and paginated; rendered
// once per key (pagecache.go).
func (h *Handlers) Groups(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	now := h.now()
	h.servePage(w, r, h.pageKey(r, "groups", now, s), now, func(r *http.Request) (templ.Component, bool) {
		l := listing(r, views.GroupsPath(s.Flow.Name), "worst")
		var rows []model.GroupQuality
		if s.Groups != nil {
			rows = sortGroups(s.Groups.Groups, l)
		}
		return views.Groups(views.GroupsPage{Chrome: h.chrome(s.Flow.Name + " groups"), Now: now, Snap: snapshotView(s),
			Groups: paginate(&l, rows), List: l}), true
	})
}

// sortGroups is the groups matching l's filter in l's order: "worst" is
// the monitor's order (unknown bounds first, then the largest), reversed
// when ascending; "sync" puts the oldest newest-usable sync (or none)
// first when descending.
func sortGroups(gs []model.GroupQuality, l views.Listing) []model.GroupQuality {
	match := matcher(l.Query)
	var out []model.GroupQuality
	for _, g := range gs {
		if match(g.Group) {
			out = append(out, g)
		}
	}
	if l.Sort == "worst" {
		if !l.Desc {
			slices.Reverse(out)
		}
		return out
	}
	slices.SortStableFunc(out, func(a, b model.GroupQuality) int {
		var c int
		switch l.Sort {
		case "untranslated":
			c = cmp.Compare(a.Untranslated, b.Untranslated)
		case "sync": // older (or none) is worse: larger
			c = cmp.Compare(syncAgeKey(b), syncAgeKey(a))
		default:
			c = strings.Compare(a.Group, b.Group)
		}
		return ordered(c, l.Desc, strings.Compare(a.Group, b.Group))
	})
	return out
}

// syncAgeKey orders groups by their oldest usable sync: none (unknown)
// sorts as the oldest.
func syncAgeKey(g model.GroupQuality) int64 {
	if g.OldestSyncAt.IsZero() {
		return -1 << 62
	}
	return g.OldestSyncAt.UnixMilli()
}
