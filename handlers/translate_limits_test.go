package handlers

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A body past MaxOffsetsUpload is 413 with what to do, pasted or
// uploaded; it is refused before any flow or Kafka is consulted.
func TestTranslatePostTooLarge(t *testing.T) {
	big := strings.Repeat(" ", MaxOffsetsUpload) + "{}"
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("offsets_file", "offsets.json")
	fw.Write([]byte(big))
	mw.Close()
	for name, req := range map[string]*http.Request{
		"pasted":   httptest.NewRequest(http.MethodPost, "/translate", strings.NewReader(url.Values{"offsets": {big}}.Encode())),
		"uploaded": httptest.NewRequest(http.MethodPost, "/translate", &mp),
	} {
		if name == "pasted" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req.Header.Set("Content-Type", mw.FormDataContentType())
		}
		rec := httptest.NewRecorder()
		(&Handlers{}).TranslatePost(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "larger than 8 MiB") {
			t.Errorf("%s: %d %q, want 413", name, rec.Code, rec.Body.String())
		}
	}
}
