package handlers

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/views"
)

// rowLinks are the row links of a page to paths under prefix, in order.
func rowLinks(body, prefix string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="([^"?]+)"`).FindAllStringSubmatch(body, -1) {
		if rest, ok := strings.CutPrefix(m[1], prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	return out
}

// pagesOf reads every page of a listing from its first page's URL by
// following its rel="next" links, as a keyboard user would, and returns the
// rows in order.
func pagesOf(t *testing.T, rig *pagesRig, url, prefix string) (rows []string, pages int) {
	t.Helper()
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next"`)
	for url != "" {
		w := rig.get(t, url)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", url, w.Code, w.Body)
		}
		body := w.Body.String()
		got := rowLinks(body, prefix)
		if len(got) > PageSize {
			t.Fatalf("%s lists %d rows, more than a page (%d)", url, len(got), PageSize)
		}
		rows, pages, url = append(rows, got...), pages+1, ""
		if m := next.FindStringSubmatch(body); m != nil {
			url = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if pages > 100 {
			t.Fatal("pager never ends")
		}
	}
	return rows, pages
}

// The flow page's topics and a topic page's partitions come a page at a
// time; sort and filter hold across pages (the pages put together are the
// whole sorted list), the URL of a page is the bookmark, and a page past
// the end shows the last one.
func TestListsPaginateAcrossSortAndFilter(t *testing.T) {
	rig := newPagesRig(t, 250, 1, time.Minute)
	flowPath := views.FlowPath(rig.flow)
	var all []string
	for i := range 250 {
		all = append(all, "t-"+pad4(i))
	}
	desc := slices.Clone(all)
	slices.Reverse(desc)
	for _, c := range []struct {
		query string
		want  []string
		pages int
	}{
		{"?sort=topic", all, 3},
		{"?sort=topic&dir=desc", desc, 3},
		{"?sort=topic&q=t-01", all[100:200], 1},
		{"?sort=topic&dir=desc&q=t-0%5B01%5D", desc[50:], 2}, // t-0[01]: 200 topics
	} {
		rows, pages := pagesOf(t, rig, flowPath+c.query, flowPath+"/topics/")
		if pages != c.pages || !slices.Equal(rows, c.want) {
			t.Errorf("%s: %d pages, rows %v…, want %d pages, %v…", c.query, pages, head(rows), c.pages, head(c.want))
		}
	}
	// A bookmarked page 2 is page 2; past the end is the last page.
	if got := rowLinks(rig.get(t, flowPath+"?sort=topic&page=2").Body.String(), flowPath+"/topics/"); !slices.Equal(got, all[100:200]) {
		t.Errorf("page 2 lists %v…", head(got))
	}
	body := rig.get(t, flowPath+"?sort=topic&page=99").Body.String()
	if got := rowLinks(body, flowPath+"/topics/"); !slices.Equal(got, all[200:]) || !strings.Contains(body, "page 3 of 3") {
		t.Errorf("page 99 lists %v…", head(got))
	}
	if !strings.Contains(body, `rel="first"`) || !strings.Contains(body, `rel="prev"`) || strings.Contains(body, `rel="next"`) {
		t.Error("the last page's pager lacks first/previous links or has a next one")
	}

	rig = newPagesRig(t, 2, 250, time.Minute)
	topicPath := views.TopicPath(rig.flow, "t-0001")
	var parts []string
	for i := range 250 {
		parts = append(parts, strconv.Itoa(i))
	}
	rows, pages := pagesOf(t, rig, topicPath, topicPath+"/partitions/")
	if pages != 3 || !slices.Equal(rows, parts) {
		t.Errorf("topic page: %d pages, %v…", pages, head(rows))
	}
	slices.Reverse(parts)
	rows, pages = pagesOf(t, rig, topicPath+"?sort=partition&dir=desc", topicPath+"/partitions/")
	if pages != 3 || !slices.Equal(rows, parts) {
		t.Errorf("topic page, descending: %d pages, %v…", pages, head(rows))
	}
}

// A topic and a partition are found by binary search over the sorted
// snapshot, at both ends of it; what is not there is a 404.
func TestTopicAndPartitionLookups(t *testing.T) {
	rig := newPagesRig(t, 3, 4, time.Minute)
	for _, tc := range []struct {
		path string
		code int
	}{
		{views.TopicPath(rig.flow, "t-0000"), 200},
		{views.TopicPath(rig.flow, "t-0002"), 200},
		{views.TopicPath(rig.flow, "t-0003"), 404},
		{views.TopicPath(rig.flow, "t-00"), 404},
		{views.PartitionPath(rig.flow, "t-0000", 0), 200},
		{views.PartitionPath(rig.flow, "t-0002", 3), 200},
		{views.PartitionPath(rig.flow, "t-0001", 4), 404},
		{views.PartitionPath(rig.flow, "t-0003", 0), 404},
	} {
		if w := rig.get(t, tc.path); w.Code != tc.code {
			t.Errorf("%s: %d, want %d", tc.path, w.Code, tc.code)
		}
	}
	s := rig.mon.Snapshot(rig.flow)
	for _, p := range s.Partitions {
		got := topicPartitions(s, p.Topic.String())
		if len(got) != 4 || got[0].Topic != p.Topic || got[3].Topic != p.Topic {
			t.Fatalf("topic %s: %d partitions", p.Topic, len(got))
		}
	}
}

func pad4(i int) string { s := strconv.Itoa(i); return strings.Repeat("0", 4-len(s)) + s }

func head(xs []string) []string { return xs[:min(len(xs), 3)] }
