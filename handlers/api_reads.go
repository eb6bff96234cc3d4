package handlers

import (
	"net/http"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The API's other reads: the savepoint catalog, the drills and the RPO
// report, from the services the pages read them from.

type apiSavepoint struct {
	ID          int64   `json:"id"`
	FlinkTarget string  `json:"flink_target"`
	JobID       string  `json:"job_id"`
	JobName     string  `json:"job_name"`
	Path        string  `json:"path"`
	Kind        string  `json:"kind"`
	Origin      string  `json:"origin"`
	Status      string  `json:"status"`
	TriggeredAt *string `json:"triggered_at"`
	CompletedAt *string `json:"completed_at"`
	// AgeSeconds is the age of its position (since its trigger, else its
	// completion); null when neither is known.
	AgeSeconds *float64 `json:"age_seconds"`
	SizeBytes  *int64   `json:"size_bytes"`
	// OffsetsRead: the Kafka source's offsets were read from it;
	// ReadError says why not (or what they leave out).
	OffsetsRead bool   `json:"offsets_read"`
	ReadError   string `json:"read_error"`
	// Usable is the verdict against ?flow= (newest entries only): usable,
	// unusable or unknown with why; null when not judged.
	Usable *apiVerdict `json:"usable"`
}

type apiVerdict struct {
	Flow    string `json:"flow"`
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// APISavepoints is GET /api/v1/savepoints (?flow=NAME judges the newest
// UsabilityRows entries against the flow's clusters, as the page does).
func (h *Handlers) APISavepoints(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	now := h.now()
	flow := r.URL.Query().Get("flow")
	if flow != "" && h.Monitor.Snapshot(flow) == nil {
		h.apiFail(w, r, notFound("flow "+flow))
		return
	}
	all, err := h.Store.Savepoints(ctx, storage.SavepointFilter{})
	if err != nil {
		h.apiFail(w, r, say("cannot read the savepoint catalog", err))
		return
	}
	all = all[:min(len(all), savepointRowsShown)]
	var verdicts map[int64]model.Usability
	var judgeErr string
	judged := all[:min(len(all), UsabilityRows)]
	if flow != "" && len(judged) > 0 {
		if verdicts, err = h.Catalog.UsabilityOf(ctx, judged, flow); err != nil {
			judgeErr = err.Error()
		}
	}
	out := []apiSavepoint{}
	for i, sp := range all {
		a := apiSavepoint{ID: sp.ID, FlinkTarget: sp.FlinkTarget, JobID: sp.JobID, JobName: sp.JobName, Path: sp.Path, Kind: sp.Kind,
			Origin: sp.Origin, Status: sp.Status, SizeBytes: sp.SizeBytes, OffsetsRead: sp.OffsetsJSON != "", ReadError: sp.ReadError}
		if sp.TriggerMs != nil {
			a.TriggeredAt = apiTimeMs(*sp.TriggerMs)
		}
		if sp.CompletedMs != nil {
			a.CompletedAt = apiTimeMs(*sp.CompletedMs)
		}
		if age, ok := savepointAge(sp, now); ok {
			s := age.Seconds()
			a.AgeSeconds = &s
		}
		if flow != "" && i < len(judged) {
			v := apiVerdict{Flow: flow, Verdict: string(model.VerdictUnknown), Why: "not judged within " + model.UsabilityTimeout.String()}
			if u, ok := verdicts[sp.ID]; ok {
				v.Verdict, v.Why = string(u.Verdict), u.Why()
			} else if judgeErr != "" {
				v.Why = judgeErr
			}
			a.Usable = &v
		}
		out = append(out, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"savepoints": out, "at": now.UTC()})
}

// APIDrills is GET /api/v1/drills (?flow=NAME): the drill history, as
// the drills page's JSON export.
func (h *Handlers) APIDrills(w http.ResponseWriter, r *http.Request) {
	recs, err := h.drillRecords(r)
	if err != nil {
		h.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"drills": recs})
}

type apiWindow struct {
	Days       int     `json:"days"`
	From       *string `json:"from"`
	To         *string `json:"to"`
	Minutes    int64   `json:"minutes"`
	Within     int64   `json:"within"`
	Over       int64   `json:"over"`
	Unknown    int64   `json:"unknown"`
	FailedOver int64   `json:"failed_over"`
	NoData     int64   `json:"no_data"`
	// ShareWithinRecorded is within over the recorded (judged) minutes;
	// null when none was recorded.
	ShareWithinRecorded *float64 `json:"share_within_recorded"`
}

type apiFlowReport struct {
	Flow        string      `json:"flow"`
	ObjectiveMs int64       `json:"objective_ms"`
	At          *string     `json:"at"`
	HistoryFrom *string     `json:"history_from"`
	Windows     []apiWindow `json:"windows"`
	Episodes    int         `json:"episodes_over"`
	// LostOffsets is over the data-loss incidents of the longest window;
	// null with LossUnknownReason when they could not be read, a lower
	// bound (LostAtLeast) when there were more than the report reads.
	LostOffsets       *int64  `json:"lost_offsets"`
	LostAtLeast       bool    `json:"lost_offsets_at_least"`
	LossUnknownReason *string `json:"loss_unknown_reason"`
	LossIncidents     int     `json:"loss_incidents"`
}

// APIReport is GET /api/v1/report: each flow's RPO report (the report
// page's figures).
func (h *Handlers) APIReport(w http.ResponseWriter, r *http.Request) {
	reps, err := h.reports(r.Context(), h.now())
	if err != nil {
		h.apiFail(w, r, say("cannot read the RPO history", err))
		return
	}
	out := []apiFlowReport{}
	for _, fr := range reps {
		a := apiFlowReport{Flow: fr.Flow, ObjectiveMs: fr.Objective.Milliseconds(), At: apiTime(fr.At), HistoryFrom: apiTimeMs(fr.HistoryFromMs),
			Episodes: fr.EpisodeCount, LostAtLeast: fr.LossesAtLeast, LossIncidents: len(fr.Losses), Windows: []apiWindow{}}
		if fr.LossErr != nil {
			why := fr.LossErr.Error()
			a.LossUnknownReason = &why
		} else {
			n := fr.LostOffsets
			a.LostOffsets = &n
		}
		for _, wd := range fr.Windows {
			aw := apiWindow{Days: wd.Days(), From: apiTimeMs(wd.FromMs), To: apiTimeMs(wd.ToMs), Minutes: wd.Minutes, Within: wd.Within,
				Over: wd.Over, Unknown: wd.Unknown, FailedOver: wd.FailedOver, NoData: wd.NoData}
			if rec := wd.Recorded(); rec > 0 {
				s := float64(wd.Within) / float64(rec)
				aw.ShareWithinRecorded = &s
			}
			a.Windows = append(a.Windows, aw)
		}
		out = append(out, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"flows": out})
}
