package effect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/demo"
)

// The console's Cluster Linking client against the stand-in. This proves
// the two agree with each other and with the shapes both were written from
// (Confluent's published OpenAPI spec); it does not prove either against a
// real Confluent Server.

func startLinkStandIn(t *testing.T) (*demo.ClusterLinkStandIn, *clusterlink.Client) {
	t.Helper()
	s, err := demo.StartClusterLinkStandIn("lkc-dr", "dr-link", map[string]int{"orders": 3, "payments": 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.SetPendingStopped(100 * time.Millisecond)
	return s, clusterlink.New(s.URL, "lkc-dr", "dr-link", "", "", nil)
}

func mirrorsByName(t *testing.T, c *clusterlink.Client) map[string]clusterlink.MirrorTopic {
	t.Helper()
	ms, err := c.Mirrors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]clusterlink.MirrorTopic{}
	for _, m := range ms {
		out[m.MirrorTopicName] = m
	}
	return out
}

func actionError(t *testing.T, err error) *clusterlink.MirrorActionError {
	t.Helper()
	var ae *clusterlink.MirrorActionError
	if !errors.As(err, &ae) {
		t.Fatalf("want a per-topic failure, got %T %v", err, err)
	}
	return ae
}

func TestClusterLinkStandInDescribes(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	l, err := c.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.LinkName != "dr-link" || l.ClusterLinkID == "" || l.SourceClusterID == "" || !l.Healthy() ||
		strings.Join(l.TopicNames, ",") != "orders,payments" || len(l.Tasks) == 0 || l.Tasks[0].State != "ACTIVE" {
		t.Fatalf("link %+v", l)
	}
	s.SetLag("orders", 2, 7)
	s.SetLastFetchOffset("orders", 2, 1234)
	ms := mirrorsByName(t, c)
	o := ms["orders"]
	if len(ms) != 2 || o.NumPartitions != 3 || len(o.MirrorLags) != 3 || o.SourceTopicName != "orders" || o.LinkName != "dr-link" ||
		o.MirrorStatus != clusterlink.MirrorActive || o.StateTimeMs == 0 || o.MaxLag() != 7 || o.Ready() {
		t.Fatalf("orders %+v", o)
	}
	if o.MirrorLags[2] != (clusterlink.MirrorLag{Partition: 2, Lag: 7, LastSourceFetchOffset: 1234}) {
		t.Fatalf("lags %+v", o.MirrorLags)
	}
	if !ms["payments"].Ready() {
		t.Fatalf("payments %+v", ms["payments"])
	}
	one, err := c.Mirror(ctx, "payments")
	if err != nil || one.NumPartitions != 2 || one.MirrorStatus != clusterlink.MirrorActive {
		t.Fatalf("mirror %+v %v", one, err)
	}

	// The REST Proxy layout (/v3 at the root) is served too.
	proxy := clusterlink.New(strings.TrimSuffix(s.URL, "/kafka"), "lkc-dr", "dr-link", "", "", nil)
	if _, err := proxy.Mirrors(ctx); err != nil {
		t.Fatal(err)
	}

	// A wrong link or cluster is a 404, an unknown topic a 404 too.
	var he *clusterlink.HTTPError
	if _, err := clusterlink.New(s.URL, "lkc-dr", "other", "", "", nil).Link(ctx); !errors.As(err, &he) || he.Status != 404 ||
		!strings.Contains(err.Error(), "links on cluster lkc-dr: dr-link") {
		t.Fatalf("other link: %v", err)
	}
	if links, err := c.Links(ctx); err != nil || len(links) != 1 || links[0].LinkName != "dr-link" || links[0].LinkState == "" {
		t.Fatalf("Links: %+v %v", links, err)
	}
	if _, err := clusterlink.New(s.URL, "lkc-x", "dr-link", "", "", nil).Mirrors(ctx); !errors.As(err, &he) || he.Status != 404 {
		t.Fatalf("other cluster: %v", err)
	}
	if _, err := c.Mirror(ctx, "nope"); !errors.As(err, &he) || he.Status != 404 {
		t.Fatalf("unknown mirror: %v", err)
	}
}

// Promote: ACTIVE -> PENDING_STOPPED -> STOPPED; a second promote is
// refused per topic inside a 200, with the spec's wording.
func TestClusterLinkStandInPromoteStateMachine(t *testing.T) {
	s, c := startLinkStandIn(t)
	// Long enough that the second promote below still finds the mirror
	// pending on a loaded machine (100 ms was not, under CI-like load).
	s.SetPendingStopped(2 * time.Second)
	ctx := context.Background()
	res, err := Promote(ctx, writtenT(t), c, []string{"orders"})
	if err != nil || len(res) != 1 || res[0].Failed() || len(res[0].MirrorLags) != 3 {
		t.Fatalf("promote: %+v %v", res, err)
	}
	if st := mirrorsByName(t, c)["orders"]; st.MirrorStatus != clusterlink.MirrorPendingStopped {
		t.Fatalf("after promote %s", st.MirrorStatus)
	}
	if st := mirrorsByName(t, c)["payments"]; st.MirrorStatus != clusterlink.MirrorActive {
		t.Fatalf("payments %s", st.MirrorStatus)
	}
	_, err = Promote(ctx, writtenT(t), c, []string{"orders"})
	if ae := actionError(t, err); len(ae.Failed) != 1 || !strings.Contains(ae.Failed[0].Message(), "already stopping") {
		t.Fatalf("promote while pending: %v", err)
	}

	waitStopped(t, c, "orders")
	if !mirrorsByName(t, c)["orders"].Stopped() {
		t.Fatal("Stopped() false")
	}
	res, err = Promote(ctx, writtenT(t), c, []string{"orders", "payments"})
	ae := actionError(t, err)
	if len(res) != 2 || len(ae.Failed) != 1 || ae.Failed[0].MirrorTopicName != "orders" || *ae.Failed[0].ErrorCode != 400 ||
		ae.Failed[0].Message() != "Topic 'orders' has already stopped its mirror from 'dr-link'" {
		t.Fatalf("promote of a stopped mirror: %+v", ae)
	}
	// The partial failure did not hold back the other topic.
	if st := s.State().Mirrors["payments"].Status; st != "PENDING_STOPPED" {
		t.Fatalf("payments %s", st)
	}
	if acts := s.State().Actions; len(acts) != 3 || acts[2].Failed["orders"] == "" || acts[2].Failed["payments"] != "" {
		t.Fatalf("actions %+v", acts)
	}
}

// Planned promote refuses a lagging mirror per topic; failover takes it.
func TestClusterLinkStandInPromoteNeedsZeroLag(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	s.SetLag("orders", 1, 5)
	res, err := Promote(ctx, writtenT(t), c, []string{"orders", "payments"})
	wantLagRefusal(t, ActionPromote, res, err)
	st := s.State()
	if st.Mirrors["orders"].Status != "ACTIVE" || st.Mirrors["payments"].Status != "PENDING_STOPPED" {
		t.Fatalf("states %+v", st.Mirrors)
	}

	res, err = Failover(ctx, writtenT(t), c, []string{"orders"})
	if err != nil || len(res) != 1 || res[0].Failed() {
		t.Fatalf("failover: %+v %v", res, err)
	}
	// The answer still shows the lag: the messages failover gave up.
	var lost int64
	for _, l := range res[0].MirrorLags {
		lost += l.Lag
	}
	if lost != 5 {
		t.Fatalf("lags in the failover answer %+v", res[0].MirrorLags)
	}
	if s.State().Mirrors["orders"].Status != "PENDING_STOPPED" {
		t.Fatal("failover did not stop the mirror")
	}
}

func TestClusterLinkStandInValidateOnlyChangesNothing(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	before := s.State().Mirrors
	for _, name := range []string{ActionPromote, ActionFailover, ActionPause, ActionResume} {
		if _, err := Validate(ctx, c, name, []string{"orders", "payments"}); err != nil {
			t.Fatalf("%s dry run: %v", name, err)
		}
	}
	// A dry run reports the same per-topic refusals as the real thing.
	s.SetLag("payments", 0, 1)
	_, err := Validate(ctx, c, ActionPromote, []string{"orders", "payments"})
	if ae := actionError(t, err); len(ae.Failed) != 1 || ae.Failed[0].MirrorTopicName != "payments" || !ae.ValidateOnly {
		t.Fatalf("dry run with lag: %v", err)
	}
	after := s.State()
	for n, m := range before {
		if after.Mirrors[n].Status != m.Status || !after.Mirrors[n].Since.Equal(m.Since) {
			t.Fatalf("%s changed by a dry run: %+v -> %+v", n, m, after.Mirrors[n])
		}
	}
	if len(after.Actions) != 5 || !after.Actions[0].ValidateOnly {
		t.Fatalf("actions %+v", after.Actions)
	}
}

func TestClusterLinkStandInPauseResume(t *testing.T) {
	_, c := startLinkStandIn(t)
	ctx := context.Background()
	if _, err := Pause(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if m := mirrorsByName(t, c)["orders"]; m.MirrorStatus != clusterlink.MirrorPaused || m.Ready() {
		t.Fatalf("paused %+v", m)
	}
	if _, err := Promote(ctx, writtenT(t), c, []string{"orders"}); err == nil {
		t.Fatal("promoted a paused mirror")
	}
	if _, err := Resume(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if m := mirrorsByName(t, c)["orders"]; m.MirrorStatus != clusterlink.MirrorActive || !m.Ready() {
		t.Fatalf("resumed %+v", m)
	}
	_, err := Pause(ctx, writtenT(t), c, []string{"orders", "ghost"})
	if ae := actionError(t, err); len(ae.Failed) != 1 || ae.Failed[0].MirrorTopicName != "ghost" || *ae.Failed[0].ErrorCode != 404 {
		t.Fatalf("unknown topic: %v", err)
	}
}

// The link stays ACTIVE while the source is gone; the mirrors say so.
func TestClusterLinkStandInSourceUnavailable(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	s.SetLag("orders", 0, 3)
	s.SetSourceUnavailable(true)
	l, err := c.Link(ctx)
	if err != nil || l.LinkState != "ACTIVE" || !l.Healthy() {
		t.Fatalf("link %+v %v", l, err)
	}
	ms := mirrorsByName(t, c)
	if ms["orders"].MirrorStatus != clusterlink.MirrorSourceUnavailable || ms["payments"].MirrorStatus != clusterlink.MirrorSourceUnavailable ||
		ms["payments"].Ready() || ms["orders"].MaxLag() != 3 {
		t.Fatalf("mirrors %+v", ms)
	}
	_, err = Promote(ctx, writtenT(t), c, []string{"payments"})
	if ae := actionError(t, err); !strings.Contains(ae.Failed[0].Message(), "source cluster is unavailable") {
		t.Fatalf("promote without source: %v", err)
	}
	if _, err := Failover(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatalf("failover without source: %v", err)
	}
	s.SetSourceUnavailable(false)
	ms = mirrorsByName(t, c)
	if ms["payments"].MirrorStatus != clusterlink.MirrorActive || ms["orders"].MirrorStatus == clusterlink.MirrorActive {
		t.Fatalf("after the source came back %+v", ms)
	}
}

func TestClusterLinkStandInAuth(t *testing.T) {
	s, _ := startLinkStandIn(t)
	s.SetAuth("api-key", "api-secret")
	ctx := context.Background()
	for _, creds := range [][2]string{{"", ""}, {"api-key", "wrong"}} {
		c := clusterlink.New(s.URL, "lkc-dr", "dr-link", creds[0], creds[1], nil)
		_, err := c.Mirrors(ctx)
		var he *clusterlink.HTTPError
		if !errors.As(err, &he) || he.Status != 401 || he.Code != 40101 || he.Message != "Authentication failed" || !he.AuthFailed() || he.Retriable() {
			t.Fatalf("creds %v: %v", creds, err)
		}
	}
	c := clusterlink.New(s.URL, "lkc-dr", "dr-link", "api-key", "api-secret", nil)
	if _, err := c.Mirrors(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestClusterLinkStandInFailuresAndDelay(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	s.FailNext(503, 50003, "Retriable Kafka error")
	s.FailNext(429, 0, "")
	var he *clusterlink.HTTPError
	if _, err := c.Mirrors(ctx); !errors.As(err, &he) || he.Status != 503 || he.Code != 50003 || !he.Retriable() {
		t.Fatalf("503: %v", err)
	}
	if _, err := Promote(ctx, writtenT(t), c, []string{"orders"}); !errors.As(err, &he) || he.Status != 429 || !he.Retriable() {
		t.Fatalf("429: %v", err)
	}
	if s.State().Mirrors["orders"].Status != "ACTIVE" {
		t.Fatal("a rejected promote changed the mirror")
	}
	if _, err := c.Mirrors(ctx); err != nil {
		t.Fatalf("the failure was not one-shot: %v", err)
	}

	s.Delay(time.Second)
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err := Failover(tctx, writtenT(t), c, []string{"orders"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "failover mirror topics on link dr-link") {
		t.Fatalf("timeout: %v", err)
	}
	s.Delay(0)
	if s.State().Mirrors["orders"].Status != "ACTIVE" {
		t.Fatal("the abandoned failover was applied")
	}
}

// wantLagRefusal checks the answer to action on orders (lagging) and
// payments: a 200 with orders refused for its lag and payments through.
func wantLagRefusal(t *testing.T, action string, res []clusterlink.MirrorActionResult, err error) {
	t.Helper()
	ae := actionError(t, err)
	if len(res) != 2 || len(ae.Failed) != 1 || ae.Failed[0].MirrorTopicName != "orders" || ae.Action != action ||
		!strings.Contains(ae.Failed[0].Message(), "lag") || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("%s with lag: %+v %v", action, res, err)
	}
}

// waitStopped waits until mirror topic reads STOPPED.
func waitStopped(t *testing.T, c *clusterlink.Client, topic string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for mirrorsByName(t, c)[topic].MirrorStatus != clusterlink.MirrorStopped {
		if time.Now().After(deadline) {
			t.Fatal("never STOPPED")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
