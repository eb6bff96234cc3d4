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

// Where the stand-in disagreed with the document: a mirror action's answer
// carried metadata.resource_name, copied from the document's example; the
// schema (AlterMirrorStatusResponseDataList's ResourceCollectionMetadata)
// declares self and next only. Its entries keep their resource_name, which
// ResourceMetadata declares.
func TestStandInActionAnswerMetadata(t *testing.T) {
	r := newRig(t, map[string]int{"payments": 1})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
		r.proxy.URL+"/kafka/v3/clusters/dr-cluster/links/dr-link/mirrors:pause?validate_only=true", strings.NewReader(`{"mirror_topic_names":["payments"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
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
