package web_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/flink/flinktest"
)

// pageSecret holds no word the console's own pages use ("token" is in
// every page's link to /account/tokens): any 4 bytes of it on a page
// count as a leak.
const pageSecret = "db_password=Hunter2-TOPSECRET-7f3a9c\nqz_cred=ZXhmaWx0cmF0ZWQ\n"

// A crafted savepoint in a savepoint directory whose _metadata names a
// secret file elsewhere by absolute path, or is itself a link to it: the
// secret's bytes reach no page (register answer, catalog, detail, as
// operator and viewer); the handle is named.
func TestSavepointPagesShowNoForeignFile(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	secretFile := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(secretFile, []byte(pageSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	noLeak := func(what, body string) {
		t.Helper()
		if l := flinktest.Leaks(pageSecret, body); len(l) > 0 {
			t.Fatalf("%s shows the secret file's bytes %q", what, l)
		}
	}
	crafted := filepath.Join(c.Flink.SavepointDir, "crafted-absolute")
	if err := os.MkdirAll(crafted, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, 4, 13} {
		meta := flinktest.Metadata(flinktest.FileHandle(secretFile, int64(len(pageSecret))), off)
		if err := os.WriteFile(filepath.Join(crafted, "_metadata"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		resp, body := postAs(t, c, "operator", "/savepoints/register", url.Values{"path": {crafted}})
		noLeak("register answer", body)
		m := regexp.MustCompile(`^/savepoints/(\d+)$`).FindStringSubmatch(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || m == nil {
			t.Fatalf("register = %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		_, detail := getAs(t, c, "operator", "/savepoints/"+m[1], nil)
		noLeak("detail page", detail)
		mustContain(t, "detail page", detail, secretFile, "outside the savepoint")
		for _, role := range []string{"viewer", "operator"} {
			_, body := getAs(t, c, role, "/savepoints", nil)
			noLeak("catalog page as "+role, body)
		}
	}

	linked := filepath.Join(c.Flink.SavepointDir, "crafted-link")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretFile, filepath.Join(linked, "_metadata")); err != nil {
		t.Fatal(err)
	}
	resp, body := postAs(t, c, "operator", "/savepoints/register", url.Values{"path": {linked}})
	noLeak("register answer (linked _metadata)", body)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("linked _metadata: register = %d", resp.StatusCode)
	}
	mustContain(t, "linked _metadata", body, "not inside a configured savepoint directory")
}

// A FIFO as a savepoint's state file: registration answers at once with
// the FIFO named, and a sync still answers.
func TestSavepointRegisterFIFO(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	dir := filepath.Join(c.Flink.SavepointDir, "fifo-state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), flinktest.Metadata(flinktest.RelativeHandle("state", 10), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "state"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type answer struct {
		resp *http.Response
		body string
	}
	ask := func(path string, form url.Values) answer {
		t.Helper()
		return flinktest.Within(t, 20*time.Second, "POST "+path, func() answer { r, b := postAs(t, c, "operator", path, form); return answer{r, b} })
	}
	a := ask("/savepoints/register", url.Values{"path": {dir}})
	if a.resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("register = %d", a.resp.StatusCode)
	}
	_, detail := getAs(t, c, "operator", a.resp.Header.Get("Location"), nil)
	mustContain(t, "detail page", detail, "named pipe (FIFO)")
	if a = ask("/savepoints/sync", url.Values{}); a.resp.StatusCode != http.StatusOK || !strings.Contains(a.body, "ynced") {
		t.Fatalf("sync = %d", a.resp.StatusCode)
	}
}
