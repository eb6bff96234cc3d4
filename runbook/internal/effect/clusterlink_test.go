package effect

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/clusterlink/clusterlinktest"
)

// The mirror actions against answers written from Confluent's Kafka REST v3
// OpenAPI spec (moved here from the client's reads in clusterlink).

func okAction(topics ...string) string {
	var data []string
	for _, t := range topics {
		data = append(data, `{"kind":"AlterMirrorsData","metadata":{"self":"x"},"mirror_topic_name":"`+t+`","error_code":null,"error_message":null,"mirror_lags":[{"partition":0,"lag":0,"last_source_fetch_offset":42}],"messages_truncated":null,"partition_level_truncation_data":[]}`)
	}
	return `{"kind":"KafkaPromoteMirror","metadata":{"self":"x"},"data":[` + strings.Join(data, ",") + `]}`
}

func TestClusterLinkActionRequests(t *testing.T) {
	srv, seen := clusterlinktest.Server(t, 200, "application/json", okAction("orders", "payments"))
	c := clusterlink.New(srv.URL+"/kafka", "lkc-1", "dr-link", "u", "p", nil)
	ctx := context.Background()
	type action func(context.Context, audit.Written, *clusterlink.Client, []string) ([]clusterlink.MirrorActionResult, error)
	cases := []struct {
		name string
		fn   action
	}{{"promote", Promote}, {"failover", Failover}, {"pause", Pause}, {"resume", Resume}}
	n := 0
	for _, tc := range cases {
		for _, validate := range []bool{true, false} {
			var res []clusterlink.MirrorActionResult
			var err error
			if validate {
				res, err = Validate(ctx, c, tc.name, []string{"orders", "payments"})
			} else {
				res, err = tc.fn(ctx, writtenT(t), c, []string{"orders", "payments"})
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if len(res) != 2 || res[0].MirrorTopicName != "orders" || res[0].Failed() || res[0].MirrorLags[0].LastSourceFetchOffset != 42 || res[0].Kind != "AlterMirrorsData" {
				t.Fatalf("%s: results %+v", tc.name, res)
			}
			req := seen()[n]
			n++
			want := map[bool]string{true: "validate_only=true", false: "validate_only=false"}[validate]
			if req.Method != "POST" || req.Path != "/kafka/v3/clusters/lkc-1/links/dr-link/mirrors:"+tc.name || req.Query != want {
				t.Fatalf("%s: request %+v", tc.name, req)
			}
			if req.ContentType != "application/json" || req.Body != `{"mirror_topic_names":["orders","payments"]}` || req.Auth == "" {
				t.Fatalf("%s: request %+v", tc.name, req)
			}
		}
	}
	// No topics: refused before anything is sent.
	if _, err := Promote(ctx, writtenT(t), c, nil); err == nil {
		t.Fatal("promote of no topics accepted")
	}
	if len(seen()) != n {
		t.Fatal("a request went out for an empty topic list")
	}
}

// The spec's promote example: one topic succeeds, one fails with 400
// inside the 200 answer.
const mixedAction = `{
  "kind": "KafkaPromoteMirror",
  "metadata": {"self": "https://pkc-00000.region.provider.confluent.cloud/kafka/v3/clusters/cluster-1/links/link-1/mirrors", "resource_name": "crn:///kafka=cluster-1"},
  "data": [
    {"kind": "AlterMirrorsData", "metadata": {"self": "x", "resource": "crn:///kafka=cluster-1"},
     "mirror_topic_name": "topic-sb", "error_code": null, "error_message": null,
     "mirror_lags": [{"partition": 0, "lag": 0, "last_source_fetch_offset": 0}, {"partition": 1, "lag": 10000, "last_source_fetch_offset": 1000}],
     "messages_truncated": null,
     "partition_level_truncation_data": [{"partition_id": 0, "offset_truncated_to": 10000, "messages_truncated": 10000}]},
    {"kind": "AlterMirrorsData", "metadata": {"self": "x", "resource": "crn:///kafka=cluster-1"},
     "mirror_topic_name": "topic-2", "error_code": 400, "error_message": "Topic 'topic-2' has already stopped its mirror from 'my-new-link-1'",
     "mirror_lags": [{"partition": 0, "lag": 0, "last_source_fetch_offset": 0}],
     "messages_truncated": 7,
     "partition_level_truncation_data": []}
  ]
}`

func TestClusterLinkPartialFailureIsAFailure(t *testing.T) {
	srv, _ := clusterlinktest.Server(t, 200, "application/json", mixedAction)
	c := clusterlink.New(srv.URL, "cluster-1", "my-new-link-1", "", "", nil)
	res, err := Promote(context.Background(), writtenT(t), c, []string{"topic-sb", "topic-2"})
	if len(res) != 2 {
		t.Fatalf("results %+v", res)
	}
	var ae *clusterlink.MirrorActionError
	if !errors.As(err, &ae) {
		t.Fatalf("err %T %v", err, err)
	}
	if len(ae.Failed) != 1 || ae.Failed[0].MirrorTopicName != "topic-2" || *ae.Failed[0].ErrorCode != 400 || len(ae.Missing) != 0 || ae.Requested != 2 {
		t.Fatalf("action error %+v", ae)
	}
	msg := err.Error()
	for _, want := range []string{"promote", "1 of 2", "topic-2", "error_code 400", "has already stopped its mirror"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "topic-sb") {
		t.Errorf("message %q names the topic that succeeded", msg)
	}
	if res[0].Failed() || !res[1].Failed() || res[1].Message() == "" || *res[1].MessagesTruncated != 7 {
		t.Fatalf("results %+v", res)
	}
	if tr := res[0].PartitionLevelTruncationData; len(tr) != 1 || tr[0] != (clusterlink.PartitionTruncation{PartitionID: 0, OffsetTruncatedTo: 10000, MessagesTruncated: 10000}) {
		t.Fatalf("truncation %+v", tr)
	}
	if got := ae.Topics(); len(got) != 1 || got[0] != "topic-2" {
		t.Fatalf("topics %v", got)
	}

	// A message without a code is not taken for a success either.
	var r clusterlink.MirrorActionResult
	json.Unmarshal([]byte(`{"mirror_topic_name":"t","error_code":null,"error_message":"something went wrong"}`), &r)
	if !r.Failed() {
		t.Fatal("an error message without a code passed as success")
	}
}

func TestClusterLinkMissingTopicIsAFailure(t *testing.T) {
	srv, _ := clusterlinktest.Server(t, 200, "application/json", okAction("orders"))
	c := clusterlink.New(srv.URL, "c", "l", "", "", nil)
	res, err := Validate(context.Background(), c, ActionFailover, []string{"orders", "payments"})
	var ae *clusterlink.MirrorActionError
	if !errors.As(err, &ae) || len(ae.Missing) != 1 || ae.Missing[0] != "payments" || len(ae.Failed) != 0 || !ae.ValidateOnly {
		t.Fatalf("err %v", err)
	}
	if len(res) != 1 || !strings.Contains(err.Error(), "no result for payments") || !strings.Contains(err.Error(), "validate only") {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestMirrorActionHTTPErrors(t *testing.T) {
	for _, tc := range clusterlinktest.HTTPErrorCases {
		t.Run(tc.Name, func(t *testing.T) {
			srv, _ := clusterlinktest.Server(t, tc.Status, tc.ContentType, tc.Body)
			c := clusterlink.New(srv.URL, "c", "l", "", "", nil)
			for _, call := range []func() error{
				func() error { _, err := Promote(context.Background(), writtenT(t), c, []string{"t"}); return err },
			} {
				err := call()
				var he *clusterlink.HTTPError
				if !errors.As(err, &he) {
					t.Fatalf("err %T %v", err, err)
				}
				tc.Check(t, err, he.Op, he.Status, he.Code, he.Message, he.Retriable(), he.AuthFailed())
			}
		})
	}
}

func TestMirrorActionTimeout(t *testing.T) {
	srv := clusterlinktest.Hanging(t)
	c := clusterlink.New(srv.URL, "c", "dr-link", "", "", nil)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Promote(ctx, writtenT(t), c, []string{"orders"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"promote mirror topics on link dr-link", "timed out", "may or may not have been applied"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}
