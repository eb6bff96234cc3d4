package form

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// upload is a POST of content as the multipart file field.
func upload(t *testing.T, field string, content []byte) *http.Request {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile(field, "pack.json")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(content)
	mw.Close()
	r := httptest.NewRequest(http.MethodPost, "/drills/evidence/verify", &b)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	return r
}

// The uploaded pack comes back as uploaded; no file is a field error;
// one past the bound says to use the command line, as a MaxBytesError.
func TestReadEvidence(t *testing.T) {
	data, err := ReadEvidence(httptest.NewRecorder(), upload(t, "pack", []byte(`{"version":1}`)))
	if err != nil || string(data) != `{"version":1}` {
		t.Fatalf("%q %v", data, err)
	}
	var fields Errors
	if _, err := ReadEvidence(httptest.NewRecorder(), upload(t, "other", []byte("x"))); !errors.As(err, &fields) || fields["pack"] == "" {
		t.Fatalf("no pack: %v", err)
	}
	_, err = ReadEvidence(httptest.NewRecorder(), upload(t, "pack", bytes.Repeat([]byte("x"), MaxEvidenceUpload+1)))
	var tooBig *http.MaxBytesError
	if !errors.As(err, &tooBig) || !strings.Contains(err.Error(), "drconsole audit verify --evidence") {
		t.Fatalf("a pack past the bound: %v", err)
	}
}
