package scale

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Seen is what the console reports of the estate on /metrics.
type Seen struct {
	Partitions int     // kafka_mirror_lag_messages series
	Lagging    int     // of which non-zero
	Heartbeat  float64 // kafka_mirror_heartbeat_age_ms; -1 when absent
}

// expectedLagging is how many partitions of sh lag (see lagging).
func (sh Shape) expectedLagging() int {
	n := 0
	for i := range sh.topics() {
		for p := range sh.partitionsOf(i) {
			if lagging(i, p) > 0 {
				n++
			}
		}
	}
	return n
}

// seen reads the console's /metrics.
func (l *loader) seen(ctx context.Context) (Seen, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+"/metrics", nil)
	if err != nil {
		return Seen{}, err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return Seen{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Seen{}, err
	}
	s := Seen{Heartbeat: -1}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, _ := strings.Cut(line, "{")
		_, val, _ := strings.Cut(rest, "} ")
		switch name {
		case "kafka_mirror_lag_messages":
			s.Partitions++
			if val != "0" {
				s.Lagging++
			}
		case "kafka_mirror_heartbeat_age_ms":
			s.Heartbeat, _ = strconv.ParseFloat(val, 64)
		}
	}
	return s, sc.Err()
}

// waitSeen waits until the console reports every partition of sh, the
// lagging ones as lagging, and a fresh heartbeat: the load then runs
// against the whole estate, not a console still catching up.
func (l *loader) waitSeen(ctx context.Context, sh Shape, d time.Duration) (Seen, error) {
	var last Seen
	want := Seen{Partitions: sh.Partitions, Lagging: sh.expectedLagging()}
	err := poll(ctx, d, fmt.Sprintf("/metrics to show %d partitions, %d lagging, and a heartbeat", want.Partitions, want.Lagging), func() (bool, error) {
		s, err := l.seen(ctx)
		if err != nil {
			return false, nil
		}
		last = s
		return s.Partitions == want.Partitions && s.Lagging == want.Lagging && s.Heartbeat >= 0 && s.Heartbeat < 10_000, nil
	})
	if err != nil {
		return last, fmt.Errorf("%w (last seen: %+v)", err, last)
	}
	return last, nil
}
