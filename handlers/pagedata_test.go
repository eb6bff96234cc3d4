package handlers

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/views"
)

// oldRPOPoints is how every request read the RPO history before pages.History.
func oldRPOPoints(tb testing.TB, rig *pagesRig, since time.Time) []views.Point {
	samples, err := rig.store.FlowSamples(context.Background(), rig.flow, since.UnixMilli())
	if err != nil {
		tb.Fatal(err)
	}
	return rpoPoints(samples)
}

// The flow page's chart and the overview's sparkline drawn from held
// history are what reading storage on every request drew, over refreshes
// that move both ends of the window, including views between a refresh's
// snapshot and its saved sample.
func TestRPOChartsMatchPerRequestReads(t *testing.T) {
	rig := newPagesRig(t, 2, 2, 6*time.Hour+time.Minute)
	ctx := context.Background()
	check := func(when string) {
		t.Helper()
		s := rig.mon.Snapshot(rig.flow)
		now := rig.now
		want := views.NewChart(900, 220, rig.h.lagAxis(), views.Series{Name: "RPO", Class: "rpo", Points: oldRPOPoints(t, rig, now.Add(-SparkWindow))})
		if got := rig.h.rpoChart(ctx, s, now); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: flow chart differs from a fresh read:\n got span %q, %d lines\nwant span %q", when, got.Span, len(got.Lines), want.Span)
		}
		end := views.SparkEnd(now)
		pts := oldRPOPoints(t, rig, end.Add(-SparkWindow))
		for len(pts) > 0 && pts[len(pts)-1].AtMs > end.UnixMilli() {
			pts = pts[:len(pts)-1]
		}
		if got := rig.h.overviewCard(ctx, s, now); !reflect.DeepEqual(got.RPO, pts) || !got.SparkEnd.Equal(end) || !reflect.DeepEqual(got.Snap, snapshotView(s)) ||
			!reflect.DeepEqual(got.Spark, views.NewSpark(pts, 300, 40, float64(rig.h.Monitor.Thresholds().Warning.Lag.D().Milliseconds()))) {
			t.Fatalf("%s: sparkline has %d points, a fresh read %d", when, len(got.RPO), len(pts))
		}
	}
	check("first view")
	for i := range 6 {
		rig.tick(5 * time.Second) // saves a sample at the new time
		check("after a refresh")
		rig.tick(time.Second) // a new sample, the same oldest one
		check("after a quick refresh")
		check("viewed again")
		// Views between the next snapshot and its sample: a sample at a
		// time the snapshot has not reached yet stands in for the save.
		rig.now = rig.now.Add(time.Duration(i+1) * 700 * time.Millisecond)
		check("clock moved, no new refresh")
	}
	if got := rig.h.rpoChart(ctx, rig.mon.Snapshot(rig.flow), rig.now); got.Empty || len(got.Lines) != 1 {
		t.Fatalf("chart is empty: %+v", got.Span)
	}
}

// Pages served from many goroutines while refreshes land: every view is
// whole (run with -race to check the held history's sharing).
func TestPagesConcurrentWithRefreshes(t *testing.T) {
	rig := newPagesRig(t, 20, 5, time.Hour)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 40 {
				url := views.FlowPath(rig.flow) + "?sort=topic&page=" + strconv.Itoa(1+i%2)
				if g%2 == 1 {
					url = "/"
				}
				if w := rig.get(t, url); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "</html>") {
					errs <- url + ": " + strconv.Itoa(w.Code)
					return
				}
			}
		})
	}
	for range 5 {
		rig.tick(5 * time.Second)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
