package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// apiTokenOn signs name in to the sandbox with the sign-in form and makes
// an operate token on the tokens page, as a person would, without a
// browser.
func (s *demoConsole) apiTokenOn(t *testing.T, name string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.PostForm(s.base+"/login", url.Values{"username": {name}, "password": {s.passwords[name]}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = client.PostForm(s.base+"/account/tokens", url.Values{"name": {name + "'s script"}, "scope": {"operate"}, "days": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`value="(drc_[A-Za-z0-9_-]+)"`).FindSubmatch(page)
	if resp.StatusCode != http.StatusCreated || m == nil {
		t.Fatalf("%s making a token: %d\n%.2000s", name, resp.StatusCode, page)
	}
	return string(m[1])
}

// api calls the sandbox's API with token and decodes the answer.
func (s *demoConsole) api(t *testing.T, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+"/api/v1"+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// The sandbox's API journey (docs/api.md): alice and bob make tokens on
// the tokens page; the flow's RPO is there with its age; alice requests a
// run, her own approval is refused, bob's approves it, alice's step runs.
func TestDemoAPIJourney(t *testing.T) {
	s := startDemoConsole(t)
	alice, bob := s.apiTokenOn(t, "alice"), s.apiTokenOn(t, "bob")

	flow := "/flows/" + url.PathEscape("primary->dr")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		code, f := s.api(t, alice, "GET", flow, nil)
		rpo, _ := f["rpo_ms"].(map[string]any)
		if code != http.StatusOK || rpo == nil {
			t.Fatalf("GET %s: %d %v", flow, code, f)
		}
		if rpo["value"] == nil && rpo["unknown_reason"] == nil {
			t.Fatalf("an RPO neither known nor said to be unknown: %v", rpo)
		}
		// The pre-flight step's rules want the flow healthy: heartbeats
		// replicated, every partition's age known.
		if hb, _ := f["heartbeat_age_ms"].(map[string]any); rpo["value"] != nil && rpo["at_least"] == false && f["age_seconds"] != nil && f["status"] == "OK" && hb["value"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flow not healthy with its RPO and age in a minute: %v", f)
		}
	}

	code, run := s.api(t, alice, "POST", "/runs", map[string]any{"flow": "primary->dr", "preflight": true, "reason": "sandbox API journey"})
	if code != http.StatusCreated {
		t.Fatalf("alice requesting a run: %d %v", code, run)
	}
	path := fmt.Sprintf("/runs/%v", run["id"])
	if code, out := s.api(t, alice, "POST", path+"/approve", map[string]any{"plan_hash": run["plan_hash"]}); code != http.StatusForbidden ||
		!strings.Contains(fmt.Sprint(out["error"]), "different operator") {
		t.Fatalf("alice approving her own run: %d %v", code, out)
	}
	if code, out := s.api(t, bob, "POST", path+"/approve", map[string]any{"plan_hash": run["plan_hash"]}); code != http.StatusOK || out["approved"] != true {
		t.Fatalf("bob approving: %d %v", code, out)
	}
	if code, out := s.api(t, alice, "POST", path+"/steps/1/execute", map[string]any{}); code != http.StatusAccepted {
		t.Fatalf("alice executing the pre-flight step: %d %v\n%s", code, out, s.requests())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, r := s.api(t, bob, "GET", path, nil)
		if r["status"] == "completed" {
			break
		}
		if r["status"] == "failed" || time.Now().After(deadline) {
			t.Fatalf("the run: %v", r)
		}
	}
}
