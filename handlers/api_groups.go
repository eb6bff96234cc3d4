package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// The API's consumer groups of a MirrorMaker 2 flow: those the console
// knows (the translate page's list) and one group's translation to DR.

// errClusterLinkGroups: a Cluster Linking flow has no group translation
// to list groups for.
var errClusterLinkGroups = errors.New("a Cluster Linking flow keeps the primary's offsets (the link syncs its consumer groups): there is no group translation to list")

type apiGroup struct {
	Name string `json:"name"`
	// LastCheckpoint is the newest checkpoint MirrorMaker 2 stored for the
	// group (null: none yet, so it cannot be translated).
	LastCheckpoint *string `json:"last_checkpoint"`
	OnPrimary      bool    `json:"on_primary"`
}

// apiMM2Flow is the URL's flow when it is a MirrorMaker 2 flow; on nil
// the answer is sent (404, or 422 for a Cluster Linking flow).
func (h *Handlers) apiMM2Flow(w http.ResponseWriter, r *http.Request) *flowstate.FlowSnapshot {
	s := h.apiFlowParam(w, r)
	if s != nil && s.Flow.IsClusterLink() {
		h.apiFail(w, r, refused(errClusterLinkGroups))
		return nil
	}
	return s
}

// APIGroups is GET /api/v1/flows/{flow}/groups: the consumer groups the
// console knows of a MirrorMaker 2 flow (the translate page's list). When
// the primary could not be asked, the list is what MM2's checkpoints name
// and primary_error says why.
func (h *Handlers) APIGroups(w http.ResponseWriter, r *http.Request) {
	s := h.apiMM2Flow(w, r)
	if s == nil {
		return
	}
	groups, err := h.Monitor.KnownGroups(r.Context(), s.Flow.Name, primaryGroupsTimeout)
	out := map[string]any{"flow": s.Flow.Name, "at": h.now().UTC(), "primary_error": nil}
	if err != nil {
		if groups == nil {
			h.apiFail(w, r, say("cannot list the flow's consumer groups: "+err.Error(), err))
			return
		}
		out["primary_error"] = err.Error()
	}
	list := []apiGroup{}
	for _, g := range groups {
		list = append(list, apiGroup{Name: g.Name, LastCheckpoint: apiTimeMs(g.LastCheckpointMs), OnPrimary: g.OnPrimary})
	}
	out["groups"] = list
	writeJSON(w, http.StatusOK, out)
}

type apiGroupRow struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	DRTopic       string `json:"dr_topic"`
	DRPartition   int32  `json:"dr_partition"`
	PrimaryOffset int64  `json:"primary_offset"`
	// DRCurrent is the DR group's committed offset now (null: none).
	DRCurrent *int64 `json:"dr_current"`
	// Translated: DROffset is usable; else it is null and Method says why.
	Translated bool   `json:"translated"`
	DROffset   *int64 `json:"dr_offset"`
	Method     string `json:"method"`
	// RereadMax bounds the records a consumer may process twice there.
	RereadMax *int64 `json:"reread_max"`
	// MM2Checkpoint is MirrorMaker 2's own translation, for comparison.
	MM2Checkpoint *int64 `json:"mm2_checkpoint"`
}

// APIGroupPlan is GET /api/v1/flows/{flow}/groups/{group}: the group's
// translation to DR as of now (the translate page's preview; reads
// only, nothing is committed).
func (h *Handlers) APIGroupPlan(w http.ResponseWriter, r *http.Request) {
	s := h.apiMM2Flow(w, r)
	if s == nil {
		return
	}
	group, err := url.PathUnescape(chi.URLParam(r, "group"))
	if err != nil || group == "" {
		h.apiFail(w, r, badRequest("bad group name in URL"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	plan, err := h.Monitor.GroupPlan(ctx, s.Flow.Name, group)
	if err != nil {
		h.apiFail(w, r, refused(err))
		return
	}
	rows := []apiGroupRow{}
	for _, row := range plan.Rows {
		a := apiGroupRow{Topic: row.Source.Topic, Partition: row.Source.Partition, DRTopic: row.DR.Topic, DRPartition: row.DR.Partition,
			PrimaryOffset: row.Offset, DRCurrent: row.Current, Translated: row.Translation.Translated(), Method: string(row.Translation.Method),
			MM2Checkpoint: row.Checkpoint}
		if a.Translated {
			off, reread := row.Translation.Offset, row.Translation.RereadMax
			a.DROffset, a.RereadMax = &off, &reread
		}
		rows = append(rows, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"flow": plan.Flow, "group": plan.Group, "from": plan.From, "at": apiTime(plan.At),
		"dr_state": plan.DRState, "dr_members": plan.DRMembers, "untranslatable": plan.Untranslatable(), "partitions": rows})
}

// apiBound is a consumer group's reprocessing bound: at most AtMost
// records; null with a reason when it cannot be established.
type apiBound struct {
	AtMost        *int64  `json:"at_most"`
	UnknownReason *string `json:"unknown_reason"`
}

func bound(v *int64, why string) apiBound {
	if v == nil {
		return apiBound{UnknownReason: &why}
	}
	return apiBound{AtMost: v}
}

type apiQualityPartition struct {
	Topic        string   `json:"topic"`
	Partition    int32    `json:"partition"`
	DRTopic      string   `json:"dr_topic"`
	DRPartition  int32    `json:"dr_partition"`
	Offset       int64    `json:"primary_offset"`
	OffsetAt     *string  `json:"primary_offset_at"`
	OffsetFrom   string   `json:"primary_offset_from"`
	DROffset     *int64   `json:"dr_offset"`
	Reprocess    apiBound `json:"reprocess"`
	Problem      string   `json:"problem"`
	Note         string   `json:"note"`
	SyncAt       *string  `json:"newest_usable_sync_at"`
	CheckpointAt *string  `json:"checkpoint_at"`
}

type apiGroupQuality struct {
	Group         string                `json:"group"`
	Configured    bool                  `json:"configured"`
	Critical      bool                  `json:"critical"`
	Objective     *int64                `json:"reprocess_objective"`
	OverObjective bool                  `json:"over_objective"`
	Reprocess     apiBound              `json:"reprocess"`
	Untranslated  int                   `json:"untranslated_partitions"`
	SyncAt        *string               `json:"newest_usable_sync_at"`
	CheckpointAt  *string               `json:"checkpoint_at"`
	OffsetsAt     *string               `json:"primary_offsets_at"`
	OffsetsStale  bool                  `json:"primary_offsets_stale"`
	Problem       string                `json:"problem"`
	Partitions    []apiQualityPartition `json:"partitions"`
}

// APIGroupQuality is GET /api/v1/flows/{flow}/group-quality: what each
// consumer group would reprocess if DR took over now, as of the monitor's
// last refresh (the groups page's figures), worst first, with the flow's
// worst group.
func (h *Handlers) APIGroupQuality(w http.ResponseWriter, r *http.Request) {
	s := h.apiMM2Flow(w, r)
	if s == nil {
		return
	}
	out := map[string]any{"flow": s.Flow.Name, "at": apiTime(s.At), "groups": []apiGroupQuality{}, "worst_group": nil,
		"worst": bound(nil, "no refresh has computed the flow's groups yet"), "cap": 0, "over_cap": 0, "over_cap_names": []string{}, "error": ""}
	fg := s.Groups
	if fg == nil {
		writeJSON(w, http.StatusOK, out)
		return
	}
	groups := make([]apiGroupQuality, 0, len(fg.Groups))
	for i := range fg.Groups {
		groups = append(groups, apiQuality(&fg.Groups[i]))
	}
	out["groups"], out["cap"], out["over_cap"], out["error"] = groups, fg.Cap, fg.Over, fg.Err
	if fg.OverNames != nil {
		out["over_cap_names"] = fg.OverNames
	}
	if g, b, ok := fg.Worst(); ok {
		why := "some group's bound is unknown, groups were left out beyond the cap, or a read failed"
		out["worst"] = bound(b, why)
		if g != nil {
			out["worst_group"] = g.Group
		}
	} else {
		out["worst"] = bound(nil, "the flow has no consumer groups yet")
	}
	writeJSON(w, http.StatusOK, out)
}

func apiQuality(g *model.GroupQuality) apiGroupQuality {
	a := apiGroupQuality{Group: g.Group, Configured: g.Configured, Critical: g.Critical, OverObjective: g.OverObjective(),
		Reprocess: bound(g.Reread, groupUnknown(g)), Untranslated: g.Untranslated, SyncAt: apiTime(g.OldestSyncAt),
		CheckpointAt: apiTime(g.CheckpointAt), OffsetsAt: apiTime(g.OffsetsAt), OffsetsStale: g.OffsetsStale, Problem: g.Problem,
		Partitions: make([]apiQualityPartition, 0, len(g.Partitions))}
	if g.Objective > 0 {
		a.Objective = &g.Objective
	}
	for _, p := range g.Partitions {
		ap := apiQualityPartition{Topic: p.Source.Topic, Partition: p.Source.Partition, DRTopic: p.DR.Topic, DRPartition: p.DR.Partition,
			Offset: p.Offset, OffsetAt: apiTime(p.OffsetAt), OffsetFrom: p.OffsetFrom, Reprocess: bound(p.Reread, p.Problem),
			Problem: p.Problem, Note: p.Note(), SyncAt: apiTime(p.SyncAt), CheckpointAt: apiTime(p.CheckpointAt)}
		if p.Reread != nil {
			off := p.DROffset
			ap.DROffset = &off
		}
		a.Partitions = append(a.Partitions, ap)
	}
	return a
}

// groupUnknown says why g's bound is unknown.
func groupUnknown(g *model.GroupQuality) string {
	switch {
	case g.Problem != "":
		return g.Problem
	case g.OffsetsStale:
		return "the primary does not answer: the group may have read past the offsets last seen, and those records are read again too"
	}
	return "some partition could not be translated (see its problem)"
}
