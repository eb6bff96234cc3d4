package handlers

import (
	"cmp"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/views"
)

// PageSize is how many partitions a topic page lists at once.
const PageSize = 100

// listing reads q, sort, dir and page from the URL.
func listing(r *http.Request, path, defaultSort string) views.Listing {
	q := r.URL.Query()
	l := views.Listing{Path: path, Query: strings.TrimSpace(q.Get("q")), Sort: q.Get("sort"), Desc: q.Get("dir") == "desc"}
	if l.Sort == "" {
		l.Sort, l.Desc = defaultSort, true
	}
	l.Page, _ = strconv.Atoi(q.Get("page"))
	return l
}

// matcher treats the filter as a case-insensitive regex, or as plain text
// when it does not compile (a stray "(" must not be an error at 3 a.m.).
func matcher(q string) func(string) bool {
	if q == "" {
		return func(string) bool { return true }
	}
	if re, err := regexp.Compile("(?i)" + q); err == nil {
		return re.MatchString
	}
	q = strings.ToLower(q)
	return func(s string) bool { return strings.Contains(strings.ToLower(s), q) }
}

// cmpKnown orders nil (unknown) before every known value, so unknowns
// surface at the top of a descending sort: they need a look.
func cmpKnown(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// Flow is GET /flows/{flow}: the flow's topics, sortable and filterable.
func (h *Handlers) Flow(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	now := h.now()
	l := listing(r, views.FlowPath(s.Flow.Name), "lag")
	match := matcher(l.Query)
	var topics []monitor.TopicLag
	for _, t := range s.TopicLags {
		if match(t.Topic) {
			topics = append(topics, t)
		}
	}
	slices.SortStableFunc(topics, func(a, b monitor.TopicLag) int {
		var c int
		switch l.Sort {
		case "partitions":
			c = cmp.Compare(a.Partitions, b.Partitions)
		case "lag":
			c = cmp.Compare(a.LagMessages, b.LagMessages)
		case "lagms":
			c = cmpKnown(a.MaxLagMs, b.MaxLagMs)
		default:
			c = cmp.Compare(a.Topic, b.Topic)
		}
		if l.Desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Topic, b.Topic))
	})
	l.Total, l.Page, l.Pages = len(topics), 1, 1
	chart := views.NewChart(900, 220, h.lagAxis(), views.Series{Name: "RPO", Class: "rpo",
		Points: h.rpoPoints(r.Context(), s.Flow.Name, now.Add(-SparkWindow))})
	losses, lossErr := h.Store.LossIncidents(r.Context(), s.Flow.Name, false, lossHistoryRows)
	if lossErr != nil {
		h.Log.Error("reading data loss history", "flow", s.Flow.Name, "err", lossErr)
	}
	incs, err := h.Store.Incarnations(r.Context(), s.Flow.Name)
	if err != nil {
		h.Log.Error("reading internal topic incarnations", "flow", s.Flow.Name, "err", err)
	}
	h.render(w, r, http.StatusOK, views.Flow(views.FlowPage{Chrome: h.chrome(s.Flow.Name), Now: now, Snap: s,
		Topics: topics, List: l, RPOChart: chart, Window: SparkWindow, Losses: losses, LossUnknown: lossErr != nil, CanAck: actorMayOperate(r), Incarnations: incs}))
}

// Topic is GET /flows/{flow}/topics/{topic}: partitions, paginated.
func (h *Handlers) Topic(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	topic, err := url.PathUnescape(chi.URLParam(r, "topic"))
	if err != nil {
		h.fail(w, r, badRequest("bad topic name in URL"))
		return
	}
	var parts []monitor.PartitionLag
	for _, p := range s.Partitions {
		if p.Topic == topic {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		h.fail(w, r, notFound("topic "+topic+" in flow "+s.Flow.Name))
		return
	}
	l := listing(r, views.TopicPath(s.Flow.Name, topic), "partition")
	if r.URL.Query().Get("sort") == "" {
		l.Desc = false
	}
	slices.SortStableFunc(parts, func(a, b monitor.PartitionLag) int {
		var c int
		switch l.Sort {
		case "lag":
			c = cmpKnown(a.LagMessages, b.LagMessages)
		case "lagms":
			c = cmpKnown(a.LagMs, b.LagMs)
		default:
			c = cmp.Compare(a.Partition, b.Partition)
		}
		if l.Desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Partition, b.Partition))
	})
	l.Total = len(parts)
	l.Pages = max((len(parts)+PageSize-1)/PageSize, 1)
	l.Page = min(max(l.Page, 1), l.Pages)
	parts = parts[(l.Page-1)*PageSize : min(l.Page*PageSize, len(parts))]
	h.render(w, r, http.StatusOK, views.Topic(views.TopicPage{Chrome: h.chrome(topic), Now: h.now(), Snap: s,
		Topic: topic, Partitions: parts, List: l}))
}

// SyncRows is how many syncs the partition page lists.
const SyncRows = 50

// Partition is GET /flows/{flow}/topics/{topic}/partitions/{partition}.
func (h *Handlers) Partition(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	topic, err := url.PathUnescape(chi.URLParam(r, "topic"))
	n, err2 := strconv.ParseInt(chi.URLParam(r, "partition"), 10, 32)
	if err != nil || err2 != nil {
		h.fail(w, r, badRequest("bad topic or partition in URL"))
		return
	}
	idx := slices.IndexFunc(s.Partitions, func(p monitor.PartitionLag) bool { return p.Topic == topic && p.Partition == int32(n) })
	if idx < 0 {
		h.fail(w, r, notFound("partition "+topic+"-"+strconv.Itoa(int(n))+" in flow "+s.Flow.Name))
		return
	}
	p := s.Partitions[idx]
	ctx := r.Context()
	now := h.now()
	window := 24 * time.Hour
	samples, err := h.Store.PartitionSamples(ctx, s.Flow.Name, topic, p.Partition, now.Add(-window).UnixMilli())
	if err != nil {
		h.Log.Error("loading partition lag history", "err", err)
	}
	var lagMs []views.Point
	for _, x := range samples {
		pt := views.Point{AtMs: x.AtMs, Known: x.LagMs != nil}
		if x.LagMs != nil {
			pt.Y = float64(*x.LagMs)
		}
		lagMs = append(lagMs, pt)
	}
	syncs, total := h.Monitor.SyncHistory(s.Flow.Name, model.TP{Topic: topic, Partition: p.Partition}, 2000)
	var up, down, drift []views.Point
	for _, x := range syncs {
		up = append(up, views.Point{AtMs: x.RecordMs, Y: float64(x.Upstream), Known: true})
		down = append(down, views.Point{AtMs: x.RecordMs, Y: float64(x.Downstream), Known: true})
		drift = append(drift, views.Point{AtMs: x.RecordMs, Y: float64(x.Upstream - x.Downstream), Known: true})
	}
	newest := slices.Clone(syncs[max(len(syncs)-SyncRows, 0):])
	slices.Reverse(newest)
	h.render(w, r, http.StatusOK, views.Partition(views.PartitionPage{
		Chrome: h.chrome(topic + "-" + strconv.Itoa(int(n))), Now: now, Snap: s, P: p, Window: window,
		LagChart: views.NewChart(900, 200, h.lagAxis(), views.Series{Name: "lag (time)", Class: "lagms", Points: lagMs}),
		SyncChart: views.NewChart(900, 240, views.CountAxis,
			views.Series{Name: "upstream", Class: "upstream", Points: up},
			views.Series{Name: "downstream", Class: "downstream", Points: down},
			views.Series{Name: "drift", Class: "drift", Points: drift}),
		Syncs: newest, SyncCount: len(syncs), SyncTotal: total,
	}))
}
