package effect

import (
	"context"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/clusterlink/clusterlinktest"
)

// The reverse actions against the stand-in: the DR mirror becomes the
// source (it leaves DR's mirrors list) and the primary's topic becomes its
// mirror, running or paused, as the link seen from the primary's end
// shows. Like the other stand-in tests, this proves the client and the
// stand-in agree with Confluent's published shapes, not with a real
// Confluent Server.
func TestClusterLinkStandInReverse(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	s.SetLastFetchOffset("orders", 1, 500)
	primary := clusterlink.New(s.URL, "standin-source-cluster", "dr-link", "", "", nil)
	if ms, err := primary.Mirrors(ctx); err != nil || len(ms) != 0 {
		t.Fatalf("the primary's end before any reverse: %+v %v", ms, err)
	}

	// A dry run changes nothing.
	if _, err := Validate(ctx, c, ActionReverseAndStart, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := mirrorsByName(t, c)["orders"]; !ok {
		t.Fatal("validate_only reversed the mirror")
	}

	res, err := ReverseAndStart(ctx, writtenT(t), c, []string{"orders"})
	if err != nil || len(res) != 1 || res[0].Failed() || res[0].MirrorTopicName != "orders" {
		t.Fatalf("reverse-and-start: %+v %v", res, err)
	}
	if ms := mirrorsByName(t, c); len(ms) != 1 || ms["payments"].MirrorStatus != clusterlink.MirrorActive {
		t.Fatalf("DR's mirrors after the reverse: %+v", ms)
	}
	ms, err := primary.Mirrors(ctx)
	if err != nil || len(ms) != 1 {
		t.Fatalf("the primary's mirrors: %+v %v", ms, err)
	}
	if m := ms[0]; m.MirrorTopicName != "orders" || m.SourceTopicName != "orders" || m.MirrorStatus != clusterlink.MirrorActive ||
		m.NumPartitions != 3 || m.MirrorLags[1].LastSourceFetchOffset != 500 || !m.Ready() {
		t.Fatalf("the primary's orders: %+v", m)
	}

	res, err = ReverseAndPause(ctx, writtenT(t), c, []string{"payments"})
	if err != nil || len(res) != 1 || res[0].Failed() {
		t.Fatalf("reverse-and-pause: %+v %v", res, err)
	}
	if m, err := primary.Mirror(ctx, "payments"); err != nil || m.MirrorStatus != clusterlink.MirrorPaused {
		t.Fatalf("the primary's payments: %+v %v", m, err)
	}
	st := s.State()
	if len(st.Mirrors) != 0 || len(st.RemoteMirrors) != 2 || st.Actions[len(st.Actions)-1].Action != ActionReverseAndPause {
		t.Fatalf("state %+v", st)
	}

	// Back again from the primary's end: the roles swap once more.
	if _, err := ReverseAndStart(ctx, writtenT(t), primary, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if m := mirrorsByName(t, c)["orders"]; m.MirrorStatus != clusterlink.MirrorActive {
		t.Fatalf("DR's orders after reversing back: %+v", m)
	}
}

// A topic that cannot be reversed is a failure, though the answer is a
// 200: a lagging mirror, and a topic that is no longer a mirror.
func TestClusterLinkStandInReverseRefused(t *testing.T) {
	ctx := context.Background()
	for action, reverse := range map[string]func(context.Context, audit.Written, *clusterlink.Client, []string) ([]clusterlink.MirrorActionResult, error){
		ActionReverseAndStart: ReverseAndStart, ActionReverseAndPause: ReverseAndPause,
	} {
		s, c := startLinkStandIn(t)
		s.SetLag("orders", 2, 9)
		res, err := reverse(ctx, writtenT(t), c, []string{"orders", "payments"})
		wantLagRefusal(t, action, res, err)
		if !strings.Contains(err.Error(), "cannot be reversed: mirror lag is 9 messages on 1 partition(s)") {
			t.Fatalf("%s lagging: %v", action, err)
		}
		if _, ok := mirrorsByName(t, c)["orders"]; !ok {
			t.Fatalf("%s: the refused topic was reversed", action)
		}
		// payments went through, so it is no longer a mirror on DR.
		_, err = reverse(ctx, writtenT(t), c, []string{"payments"})
		if ae := actionError(t, err); len(ae.Failed) != 1 || !strings.Contains(err.Error(), "is not a mirror topic of link") {
			t.Fatalf("%s again: %v", action, err)
		}
	}
}

// The request is the spec's: POST .../mirrors:reverse-and-start-mirror
// (and -pause-) with {"mirror_topic_names":[...]}.
func TestClusterLinkReverseRequests(t *testing.T) {
	srv, seen := clusterlinktest.Server(t, 200, "application/json", okAction("orders"))
	c := clusterlink.New(srv.URL+"/kafka", "lkc-1", "dr-link", "u", "p", nil)
	ctx := context.Background()
	if _, err := ReverseAndStart(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReverseAndPause(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	for i, action := range []string{"reverse-and-start-mirror", "reverse-and-pause-mirror"} {
		req := seen()[i]
		if req.Method != "POST" || req.Path != "/kafka/v3/clusters/lkc-1/links/dr-link/mirrors:"+action || req.Query != "validate_only=false" ||
			req.Body != `{"mirror_topic_names":["orders"]}` || req.Auth == "" {
			t.Fatalf("%s: %+v", action, req)
		}
	}
}

// truncate-and-restore is sent as the spec has it, always asking for the
// per-partition truncation data.
func TestTruncateAndRestoreRequest(t *testing.T) {
	srv, seen := clusterlinktest.Server(t, 200, "application/json", okAction("orders"))
	c := clusterlink.New(srv.URL+"/kafka", "lkc-primary", "dr-link", "u", "p", nil)
	ctx := context.Background()
	if _, err := Validate(ctx, c, ActionTruncateAndRestore, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if _, err := TruncateAndRestore(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	for i, validate := range []string{"true", "false"} {
		req := seen()[i]
		if req.Method != "POST" || req.Path != "/kafka/v3/clusters/lkc-primary/links/dr-link/mirrors:truncate-and-restore" ||
			req.Query != "validate_only="+validate+"&include_partition_level_truncation_data=true" || req.Body != `{"mirror_topic_names":["orders"]}` {
			t.Fatalf("validate_only=%s: %+v", validate, req)
		}
	}
}

// After a failover on DR, truncate-and-restore sent to the primary's end
// reports what it deletes per partition (at the stopped mirror's end),
// makes the primary's topic a mirror of DR's, and is refused for a topic
// whose DR mirror still runs or that is a mirror already.
func TestClusterLinkStandInTruncateAndRestore(t *testing.T) {
	s, c := startLinkStandIn(t)
	ctx := context.Background()
	primary := clusterlink.New(s.URL, "standin-source-cluster", "dr-link", "", "", nil)
	s.SetLastFetchOffset("orders", 2, 900)
	s.SetTruncatable("orders", []int64{0, 0, 4})
	if _, err := Validate(ctx, primary, ActionTruncateAndRestore, []string{"orders"}); err == nil || !strings.Contains(err.Error(), "not stopped") {
		t.Fatalf("while DR's mirror runs: %v", err)
	}
	if _, err := Failover(ctx, writtenT(t), c, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, c, "orders")
	res, err := Validate(ctx, primary, ActionTruncateAndRestore, []string{"orders"})
	if err != nil || len(res) != 1 || res[0].MessagesTruncated == nil || *res[0].MessagesTruncated != 4 || len(res[0].PartitionLevelTruncationData) != 3 ||
		res[0].PartitionLevelTruncationData[2] != (clusterlink.PartitionTruncation{PartitionID: 2, OffsetTruncatedTo: 900, MessagesTruncated: 4}) {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if ms, _ := primary.Mirrors(ctx); len(ms) != 0 {
		t.Fatalf("the dry run restored: %+v", ms)
	}
	if _, err := TruncateAndRestore(ctx, writtenT(t), primary, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	m, err := primary.Mirror(ctx, "orders")
	if err != nil || m.MirrorStatus != clusterlink.MirrorActive || m.SourceTopicName != "orders" || m.MirrorLags[2].LastSourceFetchOffset != 900 {
		t.Fatalf("the primary's orders: %+v %v", m, err)
	}
	if _, err := TruncateAndRestore(ctx, writtenT(t), primary, []string{"orders"}); err == nil || !strings.Contains(err.Error(), "already a mirror topic") {
		t.Fatalf("restored twice: %v", err)
	}
}
