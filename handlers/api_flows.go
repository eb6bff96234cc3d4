package handlers

import (
	"net/http"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// The API's flows: what the overview and flow pages show, as of the
// monitor's last refresh. Every figure comes with when it was read; an
// unknown one is null with the reason, never 0, and a lower bound says
// so (at_least).

// apiFigure is one figure: its value, whether it is only a lower bound,
// and why it is unknown when Value is null.
type apiFigure struct {
	Value         *int64  `json:"value"`
	AtLeast       bool    `json:"at_least"`
	UnknownReason *string `json:"unknown_reason"`
}

func figure(v *int64, atLeast bool, whyUnknown string) apiFigure {
	if v == nil {
		return apiFigure{UnknownReason: &whyUnknown}
	}
	return apiFigure{Value: v, AtLeast: atLeast}
}

type apiSide struct {
	Cluster   string  `json:"cluster"`
	Reachable *bool   `json:"reachable"` // null: not checked yet
	Since     *string `json:"since"`
	Error     string  `json:"error,omitempty"`
}

func side(cluster string, r model.Reachability) apiSide {
	s := apiSide{Cluster: cluster, Since: apiTime(r.Since)}
	if r.Checked {
		ok := r.OK
		s.Reachable = &ok
		if !ok {
			s.Error = r.Err
		}
	}
	return s
}

type apiFlow struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	Source      apiSide `json:"source"`
	Target      apiSide `json:"target"`
	Status      string  `json:"status"`
	StatusSince *string `json:"status_since"`
	Reason      string  `json:"reason"`
	// AsOf is the refresh this state is from; FiguresAt when the figures'
	// read reached the clusters, AgeSeconds how old that is now.
	AsOf       *string  `json:"as_of"`
	FiguresAt  *string  `json:"figures_at"`
	AgeSeconds *float64 `json:"age_seconds"`
	// Bound says why the figures are lower bounds ("" when they are not).
	Bound            string    `json:"bound"`
	Late             bool      `json:"late"`
	RPOMs            apiFigure `json:"rpo_ms"`
	MaxLagMessages   apiFigure `json:"max_lag_messages"`
	TotalLagMessages apiFigure `json:"total_lag_messages"`
	HeartbeatAgeMs   apiFigure `json:"heartbeat_age_ms"`
	Partitions       int       `json:"partitions"`
	UnknownLag       int       `json:"partitions_lag_unknown"`
	DataLost         int       `json:"partitions_data_lost"`
	LossSuspected    int       `json:"partitions_loss_suspected"`
	OpenLosses       int       `json:"open_loss_incidents"`
	// Topics and Partitions are on GET /flows/{flow} only.
	Topics         []apiTopic     `json:"topics,omitempty"`
	PartitionsLags []apiPartition `json:"partition_lags,omitempty"`
}

type apiTopic struct {
	Topic       string    `json:"topic"`
	RemoteTopic string    `json:"remote_topic"`
	Partitions  int       `json:"partitions"`
	LagMessages apiFigure `json:"lag_messages"`
	MaxLagMs    apiFigure `json:"max_lag_ms"`
	UnknownLag  int       `json:"partitions_lag_unknown"`
	DataLost    int       `json:"partitions_data_lost"`
}

type apiPartition struct {
	Topic       string    `json:"topic"`
	RemoteTopic string    `json:"remote_topic"`
	Partition   int32     `json:"partition"`
	LagMessages apiFigure `json:"lag_messages"`
	LagMs       apiFigure `json:"lag_ms"`
	AsOf        *string   `json:"as_of"`
	Stale       bool      `json:"stale"`
	DataLost    bool      `json:"data_lost"`
}

// flowUnknown says why s's figures are unknown.
func flowUnknown(s *flowstate.FlowSnapshot) string {
	switch {
	case s.At.IsZero():
		return "the console has not refreshed this flow yet"
	case s.Reason != "":
		return s.Reason
	}
	return "no partition's lag is known"
}

func (h *Handlers) apiFlow(s *flowstate.FlowSnapshot, now time.Time, detail bool) apiFlow {
	why := flowUnknown(s)
	kind := "mirrormaker2"
	if s.Flow.IsClusterLink() {
		kind = "cluster-link"
	}
	// Unknown partitions make every total a lower bound, never "about".
	partial := s.Unknown > 0 || s.Bound != ""
	f := apiFlow{Name: s.Flow.Name, Kind: kind, Source: side(s.Flow.Source, s.Source), Target: side(s.Flow.Target, s.Target),
		Status: string(s.Status), StatusSince: apiTime(s.StatusSince), Reason: s.Reason, AsOf: apiTime(s.At), FiguresAt: apiTime(s.FiguresAt),
		Bound: s.Bound, Late: s.Late != nil,
		RPOMs:            figure(s.RPOMs, s.RPOAtLeast || partial, why),
		MaxLagMessages:   figure(s.MaxLagMessages, partial, why),
		TotalLagMessages: figure(s.TotalLagMessages, partial, why),
		Partitions:       len(s.Partitions), UnknownLag: s.Unknown, DataLost: s.DataLost, LossSuspected: s.LossSuspected, OpenLosses: len(s.LossOpen)}
	if !s.FiguresAt.IsZero() {
		age := max(now.Sub(s.FiguresAt), 0).Seconds()
		f.AgeSeconds = &age
	}
	if s.HeartbeatAge != nil {
		ms := s.HeartbeatAge.Milliseconds()
		f.HeartbeatAgeMs = figure(&ms, false, "")
	} else {
		f.HeartbeatAgeMs = figure(nil, false, "no replicated heartbeat has been read")
	}
	if !detail {
		return f
	}
	f.Topics = []apiTopic{}
	for _, t := range s.TopicLags {
		n := t.LagMessages
		f.Topics = append(f.Topics, apiTopic{Topic: t.Topic, RemoteTopic: t.RemoteTopic, Partitions: t.Partitions,
			LagMessages: figure(&n, t.Unknown > 0, ""), MaxLagMs: figure(t.MaxLagMs, t.MaxLagAtLeast || t.Unknown > 0, "no partition's age is known"),
			UnknownLag: t.Unknown, DataLost: t.DataLost})
	}
	f.PartitionsLags = []apiPartition{}
	for _, p := range s.Partitions {
		age := figure(p.LagMs.Ptr(), false, "the age of the oldest unreplicated record is unknown")
		if !p.LagMs.Known && p.LagMsAtLeast.Known {
			age = figure(p.LagMsAtLeast.Ptr(), true, "")
		}
		f.PartitionsLags = append(f.PartitionsLags, apiPartition{Topic: p.Topic.String(), RemoteTopic: p.RemoteTopic.String(), Partition: p.Partition,
			LagMessages: figure(p.LagMessages.Ptr(), false, "the partition's replicated position or end is unknown"), LagMs: age,
			AsOf: apiTime(p.AsOf.Time()), Stale: s.FiguresStale, DataLost: p.DataLost})
	}
	return f
}

// APIFlows is GET /api/v1/flows.
func (h *Handlers) APIFlows(w http.ResponseWriter, r *http.Request) {
	now := h.now()
	out := []apiFlow{}
	for _, s := range configuredFlows(h.Monitor.Snapshots()) {
		out = append(out, h.apiFlow(s, now, false))
	}
	writeJSON(w, http.StatusOK, map[string]any{"flows": out, "at": now.UTC()})
}

// APIFlow is GET /api/v1/flows/{flow}: the flow with its topics and
// partitions.
func (h *Handlers) APIFlow(w http.ResponseWriter, r *http.Request) {
	s := h.apiFlowParam(w, r)
	if s == nil {
		return
	}
	writeJSON(w, http.StatusOK, h.apiFlow(s, h.now(), true))
}

// apiFlowParam is flowParam answering in JSON.
func (h *Handlers) apiFlowParam(w http.ResponseWriter, r *http.Request) *flowstate.FlowSnapshot {
	return h.flowParamWith(w, r, h.apiFail)
}
