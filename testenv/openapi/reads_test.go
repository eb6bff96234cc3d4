package openapi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/demo"
)

// rig is the stand-in behind a judging proxy.
type rig struct {
	link  *demo.ClusterLinkStandIn
	proxy *Proxy
}

// The credentials every request carries: the document's operations all
// ask for HTTP basic (an API key) or OAuth.
const user, pass = "api-key", "api-secret"

func newRig(t *testing.T, topics map[string]int) *rig {
	t.Helper()
	spec, err := LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	link, err := demo.StartClusterLinkStandIn("dr-cluster", "dr-link", topics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	link.SetAuth(user, pass)
	p, stop, err := spec.NewProxy(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &rig{link: link, proxy: p}
}

// client is the console's client of the link on DR, through the proxy.
func (r *rig) client() *clusterlink.Client {
	return clusterlink.New(r.proxy.URL+"/kafka", "dr-cluster", "dr-link", user, pass, nil)
}

// documentGap reports the one objection that is the document's gap, not
// the stand-in's or the client's: it lists a 404 for no Cluster Linking
// operation, yet a cluster must answer a missing cluster, link or mirror
// topic somehow. The body is still held to the document's Error schema
// (judgeResponse).
func documentGap(problem string) bool {
	return strings.HasPrefix(problem, "answer: HTTP 404 is not documented for ")
}

// requireAgreement fails t on every objection of the document but its
// gap, and unless every operation and status in want
// ("operationId status validate_only") was seen.
func requireAgreement(t *testing.T, p *Proxy, want []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, x := range p.Exchanges() {
		key := fmt.Sprintf("%s %d", x.Op, x.Status)
		if strings.Contains(x.Query, "validate_only=") {
			key += " validate_only=" + strings.Split(strings.SplitAfter(x.Query, "validate_only=")[1], "&")[0]
		}
		seen[key] = true
		for _, pr := range x.Problems {
			if !documentGap(pr) {
				t.Errorf("%s", x)
				break
			}
		}
	}
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	sort.Strings(got)
	t.Logf("checked against the document (%d exchanges): %s", len(p.Exchanges()), strings.Join(got, ", "))
	for _, w := range want {
		if !seen[w] {
			t.Errorf("never exchanged: %s", w)
		}
	}
}

// The console's reads (clusterlink.Client: links, the link with its tasks,
// the mirrors, one mirror with its transition errors) and the stand-in's
// answers to them, in the states a console meets: a lagging mirror, the
// source gone, a failed link, a misspelt link or topic, a wrong secret, and
// each error answer the document lists (400, 401, 429 as HTML, 5XX).
func TestReadsAgainstTheDocument(t *testing.T) {
	r := newRig(t, map[string]int{"payments": 2, "refunds": 1})
	ctx := context.Background()
	c := r.client()
	r.link.SetLag("payments", 1, 7)
	r.link.SetLastFetchOffset("payments", 1, 120)
	read := func() {
		t.Helper()
		if _, err := c.Links(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Link(ctx); err != nil {
			t.Fatal(err)
		}
		ms, err := c.Mirrors(ctx)
		if err != nil || len(ms) != 2 {
			t.Fatalf("mirrors %+v: %v", ms, err)
		}
		if _, err := c.Mirror(ctx, "payments"); err != nil {
			t.Fatal(err)
		}
	}
	read()
	r.link.SetSourceUnavailable(true)
	r.link.SetLinkState("FAILED", "AUTHENTICATION_ERROR", "SASL authentication failed")
	read()
	r.link.SetSourceUnavailable(false)
	r.link.SetLinkState("ACTIVE", "NO_ERROR", "")

	if _, err := c.Mirror(ctx, "nope"); err == nil {
		t.Fatal("a mirror topic the link does not have")
	}
	misspelt := r.client()
	misspelt.LinkName = "nope"
	if _, err := misspelt.Link(ctx); err == nil || !strings.Contains(err.Error(), "links on cluster dr-cluster: dr-link") {
		t.Fatalf("a misspelt link: %v", err)
	}
	wrong := clusterlink.New(r.proxy.URL+"/kafka", "dr-cluster", "dr-link", user, "wrong", nil)
	if _, err := wrong.Mirrors(ctx); err == nil {
		t.Fatal("a wrong secret")
	}
	for _, f := range []struct{ status, code int }{{400, 40035}, {429, 0}, {503, 50003}, {500, 500}} {
		r.link.FailNext(f.status, f.code, "")
		if _, err := c.Mirrors(ctx); err == nil {
			t.Fatalf("HTTP %d passed", f.status)
		}
	}
	requireAgreement(t, r.proxy, []string{"listKafkaLinks 200", "getKafkaLink 200", "getKafkaLink 404",
		"listKafkaMirrorTopicsUnderLink 200", "readKafkaMirrorTopic 200", "readKafkaMirrorTopic 404",
		"listKafkaMirrorTopicsUnderLink 400", "listKafkaMirrorTopicsUnderLink 401", "listKafkaMirrorTopicsUnderLink 429",
		"listKafkaMirrorTopicsUnderLink 500", "listKafkaMirrorTopicsUnderLink 503"})
}
