package form

import (
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/failover"
)

// The plan form takes groups one per line: a name with a comma stays one
// group, blank lines and line-end spaces (CRLF from browsers) are ignored.
func TestPlanFormGroupsOnePerLine(t *testing.T) {
	form := url.Values{"flow": {"primary->dr"}, "groups": {"a,b\r\n\r\n  billing  \n\n", "flink-events"}}
	req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p := NewPlan(req).Plan(&config.Config{})
	var groups []string
	for _, s := range p.Steps {
		if s.Kind == failover.KindTranslateGroup {
			groups = append(groups, s.Group)
		}
	}
	if want := []string{"a,b", "billing", "flink-events"}; !slices.Equal(groups, want) {
		t.Fatalf("groups %q, want %q", groups, want)
	}
}
