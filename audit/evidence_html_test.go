package audit_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// The HTML pack is one self-contained file: no script to run, no
// stylesheet, image, frame or link to fetch, nothing pointing out of the
// file; it shows the figures as the JSON has them and embeds that JSON
// byte for byte, and the HTML itself verifies.
func TestEvidenceHTMLSelfContained(t *testing.T) {
	f := newDrillFixture(t)
	p, body := f.export(t)
	page := packHTML(t, p, body)
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	scripts := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "link", "img", "iframe", "object", "embed", "base", "form", "video", "audio", "source":
				t.Errorf("<%s> in the pack", n.Data)
			case "script":
				scripts++
				if attr(n, "type") != "application/json" || attr(n, "id") != "drconsole-evidence" || n.FirstChild == nil {
					t.Errorf("a script other than the embedded pack: %v", n.Attr)
				} else if got := strings.TrimSpace(n.FirstChild.Data); got != strings.TrimSpace(string(body)) {
					t.Errorf("the embedded JSON is not the pack's canonical JSON:\n%.300s", got)
				}
			case "style":
				if css := n.FirstChild.Data; strings.Contains(css, "url(") || strings.Contains(css, "@import") {
					t.Errorf("the style fetches something: %s", css)
				}
			}
			for _, a := range n.Attr {
				if a.Key == "src" || a.Key == "href" || a.Key == "action" || a.Key == "srcset" || strings.HasPrefix(a.Key, "on") ||
					strings.Contains(a.Val, "://") || strings.Contains(a.Key, "style") {
					t.Errorf("<%s %s=%q>: a reference out of the file", n.Data, a.Key, a.Val)
				}
			}
			if id := attr(n, "id"); id != "" {
				texts[id] = textOf(n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if scripts != 1 {
		t.Errorf("%d script elements, want the embedded pack's alone", scripts)
	}
	if got, want := texts["achieved-rto"], views.Millis(p.Drill.AchievedRTOMs)+" (2345 ms); objective 5 m"; !strings.HasPrefix(got, want) {
		t.Errorf("achieved RTO shown %q, want %q", got, want)
	}
	if got := texts["achieved-rpo"]; !strings.HasPrefix(got, "unknown;") {
		t.Errorf("an unknown RPO is shown as %q", got)
	}
	if got := texts["requested-by"]; !strings.HasPrefix(got, "alice at ") {
		t.Errorf("requested by %q", got)
	}
	if err := f.verify(t, page); err != nil {
		t.Fatalf("the HTML pack does not verify: %v", err)
	}
}

// packHTML is the HTML download of pack p, whose canonical JSON is body.
func packHTML(t testing.TB, p model.EvidencePack, body []byte) []byte {
	t.Helper()
	var page bytes.Buffer
	if err := views.Evidence(views.EvidencePage{Pack: p, JSON: string(body), Script: audit.EvidenceScript}).Render(context.Background(), &page); err != nil {
		t.Fatal(err)
	}
	return page.Bytes()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
