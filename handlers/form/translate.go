package form

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxOffsetsUpload bounds a pasted or uploaded offsets file: what one
// request may cost (the CLI has no such limit).
const MaxOffsetsUpload = 8 << 20

// Translate is the translate form: a flow, and a consumer group (Source
// "group") or an offsets JSON (Source "offsets"), with an optional
// timestamp to seek DR by. Group is the typed group ("group", as typed
// in Typed) or else the picked one ("group_pick").
type Translate struct {
	Flow, Source, Group, Typed, Offsets, TS string
}

// NewTranslateQuery reads GET /translate's query (a group preview).
func NewTranslateQuery(r *http.Request) Translate {
	q := r.URL.Query()
	typed := strings.TrimSpace(q.Get("group"))
	return Translate{Flow: q.Get("flow"), Source: "group", Group: firstOf(typed, q.Get("group_pick")), Typed: typed, TS: q.Get("ts")}
}

// ReadTranslate reads POST /translate, pasted or uploaded, at most
// MaxOffsetsUpload bytes: past it the error is an *http.MaxBytesError
// (wrapped, saying what to do instead); an unreadable form is any other error.
func ReadTranslate(w http.ResponseWriter, r *http.Request) (Translate, error) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxOffsetsUpload)
	// ParseForm first: ParseMultipartForm hides its error on a
	// urlencoded body behind ErrNotMultipart.
	err := r.ParseForm()
	if err == nil {
		err = r.ParseMultipartForm(MaxOffsetsUpload)
	}
	if err != nil && !errors.Is(err, http.ErrNotMultipart) {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			return Translate{}, fmt.Errorf("the offsets are larger than %d MiB: split them, or use `drconsole translate` on the command line%w",
				MaxOffsetsUpload>>20, quiet{err})
		}
		return Translate{}, fmt.Errorf("the form could not be read: %w", err)
	}
	typed := strings.TrimSpace(r.FormValue("group"))
	f := Translate{Flow: r.FormValue("flow"), Source: r.FormValue("source"), Group: firstOf(typed, r.FormValue("group_pick")), Typed: typed,
		Offsets: r.FormValue("offsets"), TS: strings.TrimSpace(r.FormValue("ts"))}
	if file, hdr, err := r.FormFile("offsets_file"); err == nil {
		defer file.Close()
		if hdr.Size > 0 {
			data, err := io.ReadAll(file)
			if err != nil {
				return Translate{}, errors.New("the uploaded file could not be read")
			}
			f.Offsets, f.Source = string(data), "offsets"
		}
	}
	return f, nil
}

// quiet wraps an error without adding its text to the message.
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

// Wanted reports whether the form asks for a preview: a group, or offsets.
func (f Translate) Wanted() bool {
	return (f.Source == "offsets" && strings.TrimSpace(f.Offsets) != "") || (f.Source != "offsets" && f.Group != "")
}

// Validate: a posted form must ask for something.
func (f Translate) Validate() error {
	if !f.Wanted() {
		return Errors{"group": "give a consumer group, or paste or upload an offsets JSON"}
	}
	return nil
}

// Timestamp reads the form's timestamp: RFC 3339 or epoch milliseconds;
// 0 when none is given.
func (f Translate) Timestamp() (int64, error) {
	if f.TS == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(f.TS, 10, 64); err == nil && ms > 0 {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339, f.TS)
	if err != nil {
		return 0, Errors{"ts": fmt.Sprintf("timestamp %q: use RFC 3339 (2026-11-29T03:00:00Z) or epoch milliseconds", f.TS)}
	}
	return t.UnixMilli(), nil
}
