package openapi

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// send makes one request of the stand-in through the proxy, with the
// console's credentials, and returns the answer's body.
func (r *rig) send(t *testing.T, method, path, body string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, r.proxy.URL+"/kafka/v3/clusters/"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Where the stand-in disagreed with the document: a mirror action's answer
// carried metadata.resource_name, copied from the document's example; the
// schema (AlterMirrorStatusResponseDataList's ResourceCollectionMetadata)
// declares self and next only. Its entries keep their resource_name, which
// ResourceMetadata declares.
func TestStandInActionAnswerMetadata(t *testing.T) {
	r := newRig(t, map[string]int{"payments": 1})
	b := r.send(t, "POST", "dr-cluster/links/dr-link/mirrors:pause?validate_only=true", `{"mirror_topic_names":["payments"]}`)
	var answer struct {
		Metadata map[string]any
		Data     []struct{ Metadata map[string]any }
	}
	if err := json.Unmarshal(b, &answer); err != nil || len(answer.Data) != 1 {
		t.Fatalf("%s: %v", b, err)
	}
	if got := slices.Sorted(maps.Keys(answer.Metadata)); !slices.Equal(got, []string{"next", "self"}) {
		t.Errorf("the answer's metadata has %v, the document declares next and self", got)
	}
	if got := slices.Sorted(maps.Keys(answer.Data[0].Metadata)); !slices.Equal(got, []string{"resource_name", "self"}) {
		t.Errorf("an entry's metadata has %v, the document declares resource_name and self", got)
	}
	requireAgreement(t, r.proxy, []string{"updateKafkaMirrorTopicsPause 200 validate_only=true"})
}

// What else the stand-in serves, though the console never asks it (the
// sandbox, tests and operators' curl may): the all-links listing, the
// status filter, pause and resume, a name pattern, per-topic refusals
// inside a 200, and its own 400 and 404 answers. Every answer is the
// document's.
func TestStandInAnswersAgainstTheDocument(t *testing.T) {
	r := newRig(t, map[string]int{"payments": 2, "refunds": 1})
	const link = "dr-cluster/links/dr-link/mirrors"
	r.send(t, "GET", "dr-cluster/links/-/mirrors", "")
	r.send(t, "GET", link+"?mirror_status=ACTIVE", "")
	r.send(t, "POST", link+":pause", `{"mirror_topic_names":["payments"]}`)
	r.send(t, "POST", link+":resume", `{"mirror_topic_names":["payments"]}`)
	r.send(t, "POST", link+":promote?validate_only=true", `{"mirror_topic_name_pattern":"pay.*"}`)
	r.send(t, "POST", link+":failover", `{"mirror_topic_names":["refunds","nope"]}`)
	r.send(t, "POST", link+":failover", `{"mirror_topic_names":["refunds"]}`) // already stopping
	r.send(t, "POST", link+":truncate-and-restore?validate_only=true", `{"mirror_topic_names":["payments"]}`)
	r.send(t, "POST", link+":failover", `{"mirror_topic_names":[]}`)
	r.send(t, "GET", "elsewhere/links/dr-link/mirrors", "")
	if b := string(r.send(t, "GET", link+"?mirror_status=PENDING_STOPPED", "")); !strings.Contains(b, `"mirror_topic_name":"refunds"`) {
		t.Fatalf("refunds after its failover: %s", b)
	}
	requireAgreement(t, r.proxy, []string{"listKafkaMirrorTopics 200", "listKafkaMirrorTopicsUnderLink 200", "listKafkaMirrorTopicsUnderLink 404",
		"updateKafkaMirrorTopicsPause 200", "updateKafkaMirrorTopicsResume 200", "updateKafkaMirrorTopicsPromote 200 validate_only=true",
		"updateKafkaMirrorTopicsFailover 200", "updateKafkaMirrorTopicsFailover 400",
		"updateKafkaMirrorTopicsTruncateAndRestoreMirror 200 validate_only=true"})
}
