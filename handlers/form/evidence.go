package form

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxEvidenceUpload bounds an uploaded drill evidence pack: a drill's
// records take a few hundred kilobytes.
const MaxEvidenceUpload = 32 << 20

// ReadEvidence reads POST /drills/evidence/verify: the bytes of the
// uploaded pack (field "pack"), at most MaxEvidenceUpload; past it the
// error wraps an *http.MaxBytesError and says what to do instead.
func ReadEvidence(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxEvidenceUpload)
	err := r.ParseMultipartForm(MaxEvidenceUpload)
	if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
		return nil, fmt.Errorf("the pack is larger than %d MiB: check it with `drconsole audit verify --evidence` on the command line%w",
			MaxEvidenceUpload>>20, quiet{err})
	}
	if err != nil {
		return nil, Errors{"pack": "choose the evidence pack's file (.html or .json) to upload"}
	}
	file, _, err := r.FormFile("pack")
	if err != nil {
		return nil, Errors{"pack": "choose the evidence pack's file (.html or .json) to upload"}
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, MaxEvidenceUpload))
	if err != nil {
		return nil, errors.New("the uploaded file could not be read")
	}
	return data, nil
}
