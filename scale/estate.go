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

// Seen is what the console reports of the estate on /metrics, from the
// per-topic series it exports by default.
type Seen struct {
	Topics      int     // kafka_mirror_topic_unknown_partitions series
	Unknown     int     // their sum: partitions whose lag is not known
	LagMessages int64   // sum of kafka_mirror_topic_lag_messages
	Heartbeat   float64 // kafka_mirror_heartbeat_age_ms; -1 when absent
}

// expectedLag is the summed lag in records of every partition of sh (see
// lagging).
func (sh Shape) expectedLag() int64 {
	var n int64
	for i := range sh.topics() {
		for p := range sh.partitionsOf(i) {
			n += int64(lagging(i, p))
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
		case "kafka_mirror_topic_unknown_partitions":
			s.Topics++
			n, _ := strconv.Atoi(val)
			s.Unknown += n
		case "kafka_mirror_topic_lag_messages":
			n, _ := strconv.ParseInt(val, 10, 64)
			s.LagMessages += n
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
	want := Seen{Topics: len(sh.topics()), LagMessages: sh.expectedLag()}
	err := poll(ctx, d, fmt.Sprintf("/metrics to show %d topics, every partition's lag known and %d records behind in all, and a heartbeat", want.Topics, want.LagMessages), func() (bool, error) {
		s, err := l.seen(ctx)
		if err != nil {
			return false, nil
		}
		last = s
		return s.Topics == want.Topics && s.Unknown == 0 && s.LagMessages == want.LagMessages && s.Heartbeat >= 0 && s.Heartbeat < 10_000, nil
	})
	if err != nil {
		return last, fmt.Errorf("%w (last seen: %+v)", err, last)
	}
	return last, nil
}
