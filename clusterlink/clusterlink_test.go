package clusterlink

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/clusterlink/clusterlinktest"
)

// The JSON bodies below follow the examples and schemas of Confluent's
// Kafka REST v3 OpenAPI spec (confluentinc/ccloud-sdk-go-v2,
// kafkarest/v3/api/openapi.yaml), written out by hand.

const linkJSON = `{
  "kind": "KafkaLinkData",
  "metadata": {"self": "https://pkc-00000.region.provider.confluent.cloud/kafka/v3/clusters/cluster-1/links/link-sb1", "resource_name": null},
  "source_cluster_id": "src-cluster-id",
  "destination_cluster_id": null,
  "remote_cluster_id": null,
  "link_name": "link-sb1",
  "link_id": "7840644d-f7d8-4844-a577-a10ef3df31df",
  "cluster_link_id": "eEBkTffYSESld6EO898x3w",
  "topic_names": ["topic-db-1", "topic-db-2"],
  "link_error": "NO_ERROR",
  "link_error_message": null,
  "link_state": "ACTIVE",
  "tasks": [
    {"task_name": "ConsumerOffsetSync", "state": "ACTIVE", "errors": []},
    {"task_name": "AclSync", "state": "IN_ERROR", "errors": [{"error_code": "AUTHORIZATION_FAILED", "error_message": "not allowed"}, {"error_code": 29, "error_message": "numeric code"}]}
  ],
  "category_counts": [{"state_category": "ACTIVE", "count": 2}]
}`

func TestClusterLinkParsesLink(t *testing.T) {
	srv, seen := clusterlinktest.Server(t, 200, "application/json", linkJSON)
	c := New(srv.URL+"/kafka/", "cluster-1", "link-sb1", "key", "secret", nil)
	l, err := c.Link(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req := seen()[0]
	if req.Method != "GET" || req.Path != "/kafka/v3/clusters/cluster-1/links/link-sb1" || req.Query != "include_tasks=true" {
		t.Fatalf("request %+v", req)
	}
	if req.Auth != "Basic a2V5OnNlY3JldA==" { // key:secret
		t.Fatalf("auth %q", req.Auth)
	}
	if l.Kind != "KafkaLinkData" || l.LinkName != "link-sb1" || l.ClusterLinkID != "eEBkTffYSESld6EO898x3w" ||
		l.SourceClusterID != "src-cluster-id" || l.DestinationClusterID != "" || l.RemoteClusterID != "" ||
		l.LinkState != "ACTIVE" || l.LinkError != "NO_ERROR" || l.LinkErrorMessage != "" || !l.Healthy() {
		t.Fatalf("link %+v", l)
	}
	if len(l.TopicNames) != 2 || l.TopicNames[1] != "topic-db-2" {
		t.Fatalf("topics %v", l.TopicNames)
	}
	if len(l.Tasks) != 2 || l.Tasks[1].State != "IN_ERROR" || len(l.Tasks[1].Errors) != 2 ||
		l.Tasks[1].Errors[0].ErrorCode != "AUTHORIZATION_FAILED" || l.Tasks[1].Errors[1].ErrorCode != "29" ||
		l.Tasks[1].Errors[1].ErrorMessage != "numeric code" {
		t.Fatalf("tasks %+v", l.Tasks)
	}
	if len(l.CategoryCounts) != 1 || l.CategoryCounts[0].Count != 2 {
		t.Fatalf("categories %+v", l.CategoryCounts)
	}

	var failed LinkInfo
	json.Unmarshal([]byte(`{"link_name":"l","link_state":"FAILED","link_error":"AUTHENTICATION_ERROR","link_error_message":"bad creds"}`), &failed)
	if failed.Healthy() || failed.LinkErrorMessage != "bad creds" {
		t.Fatalf("failed link %+v", failed)
	}
}

const mirrorsJSON = `{
  "kind": "KafkaMirrorDataList",
  "metadata": {"self": "https://pkc-00000.region.provider.confluent.cloud/kafka/v3/clusters/cluster-1/link/link-1/mirrors", "resource_name": "crn:///kafka=cluster-1", "next": null},
  "data": [
    {"kind": "KafkaMirrorData",
     "metadata": {"self": "https://pkc-00000.region.provider.confluent.cloud/kafka/v3/clusters/cluster-1/links/link-1/mirrors/topic-1", "resource_name": "crn:///kafka=cluster-1"},
     "link_name": "link-1", "mirror_topic_name": "topic-1", "source_topic_name": "topic-1", "num_partitions": 3,
     "mirror_lags": [
       {"partition": 0, "lag": 0, "last_source_fetch_offset": 0},
       {"partition": 1, "lag": 10000, "last_source_fetch_offset": 1000},
       {"partition": 2, "lag": 40000, "last_source_fetch_offset": 12030}],
     "mirror_status": "ACTIVE", "state_time_ms": 1612550939300},
    {"kind": "KafkaMirrorData",
     "metadata": {"self": "x"},
     "link_name": "link-1", "mirror_topic_name": "topic-2", "source_topic_name": "topic-2", "num_partitions": 2,
     "mirror_lags": [
       {"partition": 0, "lag": 0, "last_source_fetch_offset": 5000000000},
       {"partition": 1, "lag": 0, "last_source_fetch_offset": 17}],
     "mirror_status": "ACTIVE", "state_time_ms": 1612550939301,
     "mirror_topic_error": "NO_ERROR"},
    {"kind": "KafkaMirrorData",
     "metadata": {"self": "x"},
     "link_name": "link-1", "mirror_topic_name": "topic-3", "source_topic_name": "topic-3", "num_partitions": 1,
     "mirror_lags": [{"partition": 0, "lag": 0, "last_source_fetch_offset": 9}],
     "mirror_status": "STOPPED", "state_time_ms": 1612550939302,
     "mirror_topic_error": "SOURCE_TOPIC_MAY_BE_DELETED",
     "mirror_state_transition_errors": [{"error_code": "STOPPED_FAILED", "error_message": "cannot stop"}]}
  ]
}`

func TestClusterLinkParsesMirrors(t *testing.T) {
	srv, seen := clusterlinktest.Server(t, 200, "application/json", mirrorsJSON)
	c := New(srv.URL+"/kafka", "cluster-1", "link-1", "", "", nil)
	ms, err := c.Mirrors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req := seen()[0]
	if req.Method != "GET" || req.Path != "/kafka/v3/clusters/cluster-1/links/link-1/mirrors" || req.Auth != "" {
		t.Fatalf("request %+v", req)
	}
	if len(ms) != 3 {
		t.Fatalf("%d mirrors", len(ms))
	}
	m := ms[0]
	if m.Kind != "KafkaMirrorData" || m.LinkName != "link-1" || m.MirrorTopicName != "topic-1" || m.SourceTopicName != "topic-1" ||
		m.NumPartitions != 3 || m.MirrorStatus != MirrorActive || m.StateTimeMs != 1612550939300 ||
		!m.StateTime().Equal(time.UnixMilli(1612550939300)) {
		t.Fatalf("mirror %+v", m)
	}
	if len(m.MirrorLags) != 3 || m.MirrorLags[2] != (MirrorLag{Partition: 2, Lag: 40000, LastSourceFetchOffset: 12030}) {
		t.Fatalf("lags %+v", m.MirrorLags)
	}
	if m.MaxLag() != 40000 || m.TotalLag() != 50000 || m.Ready() || m.Stopped() {
		t.Fatalf("topic-1 max %d total %d ready %v stopped %v", m.MaxLag(), m.TotalLag(), m.Ready(), m.Stopped())
	}
	if m := ms[1]; !m.Ready() || m.MaxLag() != 0 || m.MirrorLags[0].LastSourceFetchOffset != 5000000000 || m.MirrorTopicError != "NO_ERROR" {
		t.Fatalf("topic-2 %+v", m)
	}
	if m := ms[2]; !m.Stopped() || m.Ready() || m.MirrorTopicError != "SOURCE_TOPIC_MAY_BE_DELETED" ||
		len(m.MirrorStateTransitionErrors) != 1 || m.MirrorStateTransitionErrors[0].ErrorCode != "STOPPED_FAILED" {
		t.Fatalf("topic-3 %+v", m)
	}
	// Not ready: paused with zero lag, or without any lag entries.
	if (MirrorTopic{MirrorStatus: MirrorPaused, MirrorLags: []MirrorLag{{}}}).Ready() || (MirrorTopic{MirrorStatus: MirrorActive}).Ready() {
		t.Fatal("ready without being ACTIVE with lag entries")
	}
}

func TestClusterLinkParsesSingleMirror(t *testing.T) {
	one := `{"kind":"KafkaMirrorData","metadata":{"self":"x"},"link_name":"link-1","mirror_topic_name":"orders.v1","source_topic_name":"orders.v1","num_partitions":1,"mirror_lags":[{"partition":0,"lag":3,"last_source_fetch_offset":4}],"mirror_status":"PENDING_STOPPED","state_time_ms":1,"mirror_state_transition_errors":[]}`
	srv, seen := clusterlinktest.Server(t, 200, "application/json", one)
	c := New(srv.URL, "cluster-1", "link-1", "", "", nil)
	m, err := c.Mirror(context.Background(), "orders.v1")
	if err != nil {
		t.Fatal(err)
	}
	req := seen()[0]
	if req.Path != "/v3/clusters/cluster-1/links/link-1/mirrors/orders.v1" || req.Query != "include_state_transition_errors=true" {
		t.Fatalf("request %+v", req)
	}
	if m.MirrorStatus != MirrorPendingStopped || m.MaxLag() != 3 || m.Stopped() {
		t.Fatalf("mirror %+v", m)
	}
}

func TestClusterLinkPaginatedListRefused(t *testing.T) {
	srv, _ := clusterlinktest.Server(t, 200, "application/json", `{"kind":"KafkaMirrorDataList","metadata":{"self":"x","next":"https://h/kafka/v3/next"},"data":[]}`)
	c := New(srv.URL, "c", "l", "", "", nil)
	if _, err := c.Mirrors(context.Background()); err == nil || !strings.Contains(err.Error(), "paginated") {
		t.Fatalf("err %v", err)
	}
}

func TestClusterLinkHTTPErrors(t *testing.T) {
	for _, tc := range clusterlinktest.HTTPErrorCases {
		t.Run(tc.Name, func(t *testing.T) {
			srv, _ := clusterlinktest.Server(t, tc.Status, tc.ContentType, tc.Body)
			c := New(srv.URL, "c", "l", "", "", nil)
			for _, call := range []func() error{
				func() error { _, err := c.Link(context.Background()); return err },
				func() error { _, err := c.Mirrors(context.Background()); return err },
			} {
				err := call()
				var he *HTTPError
				if !errors.As(err, &he) {
					t.Fatalf("err %T %v", err, err)
				}
				tc.Check(t, err, he.Op, he.Status, he.Code, he.Message, he.Retriable(), he.AuthFailed())
			}
		})
	}
}

func TestClusterLinkTimeout(t *testing.T) {
	srv := clusterlinktest.Hanging(t)
	c := New(srv.URL, "c", "dr-link", "", "", nil)

	// The client's own timeout, without a context deadline (the action's
	// timeout is tested with the action, in runbook/internal/effect).
	c.HTTP.Timeout = 50 * time.Millisecond
	_, err := c.Mirrors(context.Background())
	if err == nil || !strings.Contains(err.Error(), "list mirror topics of link dr-link") || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v", err)
	}
}
