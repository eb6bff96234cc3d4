package handlers

import (
	"cmp"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// PageSize is how many rows a list (a flow's topics, a topic's
// partitions) shows at once.
const PageSize = 100

// paginate cuts rows to the listing's page (clamped to the pages there
// are) and notes the totals in l.
func paginate[T any](l *views.Listing, rows []T) []T {
	l.Total = len(rows)
	l.Pages = max((len(rows)+PageSize-1)/PageSize, 1)
	l.Page = min(max(l.Page, 1), l.Pages)
	return rows[(l.Page-1)*PageSize : min(l.Page*PageSize, len(rows))]
}

// topicPartitions is topic's run of s.Partitions (sorted by topic, then
// partition): two binary searches, no scan.
func topicPartitions(s *flowstate.FlowSnapshot, topic string) []model.PartitionLag {
	byTopic := func(p model.PartitionLag, t string) int { return strings.Compare(p.Topic.String(), t) }
	from, _ := slices.BinarySearchFunc(s.Partitions, topic, byTopic)
	rest := s.Partitions[from:]
	to := from + sort.Search(len(rest), func(i int) bool { return rest[i].Topic.String() != topic })
	return s.Partitions[from:to:to]
}

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
func cmpKnown(a, b model.Figure) int {
	switch {
	case !a.Known && !b.Known:
		return 0
	case !a.Known:
		return 1
	case !b.Known:
		return -1
	}
	return cmp.Compare(a.V, b.V)
}

// sortTopics is the indexes in s.TopicLags of the topics matching l's
// filter, in l's order.
func sortTopics(s *flowstate.FlowSnapshot, l views.Listing) []int32 {
	match := matcher(l.Query)
	var idx []int32
	for i, t := range s.TopicLags {
		if match(t.Topic) {
			idx = append(idx, int32(i))
		}
	}
	slices.SortStableFunc(idx, func(i, j int32) int {
		a, b := &s.TopicLags[i], &s.TopicLags[j]
		var c int
		switch l.Sort {
		case "partitions":
			c = cmp.Compare(a.Partitions, b.Partitions)
		case "lag":
			c = cmp.Compare(a.LagMessages, b.LagMessages)
		case "lagms":
			c = cmpKnown(model.FigureOf(a.MaxLagMs), model.FigureOf(b.MaxLagMs))
		default:
			c = cmp.Compare(a.Topic, b.Topic)
		}
		return ordered(c, l.Desc, cmp.Compare(a.Topic, b.Topic))
	})
	return idx
}

// sortPartitions orders a topic's partitions as l says.
func sortPartitions(parts []model.PartitionLag, l views.Listing) {
	slices.SortStableFunc(parts, func(a, b model.PartitionLag) int {
		var c int
		switch l.Sort {
		case "lag":
			c = cmpKnown(a.LagMessages, b.LagMessages)
		case "lagms":
			c = cmpKnown(a.LagMs, b.LagMs)
		default:
			c = cmp.Compare(a.Partition, b.Partition)
		}
		return ordered(c, l.Desc, cmp.Compare(a.Partition, b.Partition))
	})
}

// ordered is a comparison c in the listing's direction, ties broken by tie.
func ordered(c int, desc bool, tie int) int {
	if desc {
		c = -c
	}
	return cmp.Or(c, tie)
}

// Flow is GET /flows/{flow}: the flow's topics, sortable and filterable;
// rendered once per key (pagecache.go), so storage is read on a miss only.
func (h *Handlers) Flow(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	now := h.now()
	h.servePage(w, r, h.pageKey(r, "flow", now, s), now, func(r *http.Request) (templ.Component, bool) {
		l := listing(r, views.FlowPath(s.Flow.Name), "lag")
		var topics []model.TopicLag
		for _, i := range paginate(&l, h.sortedTopics(s, l)) {
			topics = append(topics, s.TopicLags[i])
		}
		chart := h.rpoChart(r.Context(), s, now)
		losses, lossErr := h.Store.LossIncidents(r.Context(), s.Flow.Name, false, lossHistoryRows)
		if lossErr != nil {
			h.Log.Error("reading data loss history", "flow", s.Flow.Name, "err", lossErr)
		}
		incs, err := h.Store.Incarnations(r.Context(), s.Flow.Name)
		if err != nil {
			h.Log.Error("reading internal topic incarnations", "flow", s.Flow.Name, "err", err)
		}
		return views.Flow(views.FlowPage{Chrome: h.chrome(s.Flow.Name), Now: now, Snap: snapshotView(s), Topics: topics, List: l, RPOChart: chart,
			Window: SparkWindow, Losses: losses, LossUnknown: lossErr != nil, CanAck: actorMayOperate(r), Incarnations: incs,
			Active: h.activeSide(r, s.Flow.Name)}), lossErr == nil && err == nil
	})
}

// Topic is GET /flows/{flow}/topics/{topic}: partitions, paginated;
// rendered once per key (pagecache.go).
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
	if len(topicPartitions(s, topic)) == 0 {
		h.fail(w, r, notFound("topic "+topic+" in flow "+s.Flow.Name))
		return
	}
	now := h.now()
	h.servePage(w, r, h.pageKey(r, "topic", now, s), now, func(r *http.Request) (templ.Component, bool) {
		parts := slices.Clone(topicPartitions(s, topic))
		l := listing(r, views.TopicPath(s.Flow.Name, topic), "partition")
		if r.URL.Query().Get("sort") == "" {
			l.Desc = false
		}
		sortPartitions(parts, l)
		return views.Topic(views.TopicPage{Chrome: h.chrome(topic), Now: now, Snap: snapshotView(s),
			Topic: topic, Partitions: paginate(&l, parts), List: l}), true
	})
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
	idx, found := slices.BinarySearchFunc(topicPartitions(s, topic), int32(n), func(p model.PartitionLag, n int32) int { return cmp.Compare(p.Partition, n) })
	if !found {
		h.fail(w, r, notFound("partition "+topic+"-"+strconv.Itoa(int(n))+" in flow "+s.Flow.Name))
		return
	}
	p := topicPartitions(s, topic)[idx]
	ctx := r.Context()
	now := h.now()
	window := 24 * time.Hour
	samples, err := h.Store.PartitionSamples(ctx, s.Flow.Name, topic, p.Partition, now.Add(-window).UnixMilli())
	if err != nil {
		h.Log.Error("loading partition lag history", "err", err)
	}
	lagMs := partitionLagPoints(samples)
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
		Chrome: h.chrome(topic + "-" + strconv.Itoa(int(n))), Now: now, Snap: snapshotView(s), P: p, Window: window,
		LagChart: views.NewChart(900, 200, h.lagAxis(), views.Series{Name: "lag (time)", Class: "lagms", Points: lagMs}),
		SyncChart: views.NewChart(900, 240, views.CountAxis,
			views.Series{Name: "upstream", Class: "upstream", Points: up},
			views.Series{Name: "downstream", Class: "downstream", Points: down},
			views.Series{Name: "drift", Class: "drift", Points: drift}),
		Syncs: newest, SyncCount: len(syncs), SyncTotal: total,
	}))
}
