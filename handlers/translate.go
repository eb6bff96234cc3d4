package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/views"
)

// MaxOffsetsUpload bounds a pasted or uploaded offsets file (413 above),
// MaxOffsetsPartitions the partitions one preview translates and renders
// (400 above): what one request may cost. The CLI has no such limit.
const (
	MaxOffsetsUpload     = 8 << 20
	MaxOffsetsPartitions = 20_000
)

// TranslatePage is GET /translate: the form, and a group preview when the
// query names one (a read: safe to bookmark and reload).
func (h *Handlers) TranslatePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	form := views.TranslateForm{Flow: q.Get("flow"), Source: "group", Group: strings.TrimSpace(q.Get("group")), TS: q.Get("ts")}
	h.translate(w, r, form)
}

// TranslatePost is POST /translate: a preview from pasted or uploaded
// offsets (or a group). It changes nothing.
func (h *Handlers) TranslatePost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxOffsetsUpload)
	// ParseForm first: ParseMultipartForm hides its error on a
	// urlencoded body behind ErrNotMultipart.
	err := r.ParseForm()
	if err == nil {
		err = r.ParseMultipartForm(MaxOffsetsUpload)
	}
	if err != nil && !errors.Is(err, http.ErrNotMultipart) {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("the offsets are larger than %d MiB: split them, or use `drconsole translate` on the command line",
				MaxOffsetsUpload>>20), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the form could not be read: "+err.Error(), http.StatusBadRequest)
		return
	}
	form := views.TranslateForm{Flow: r.FormValue("flow"), Source: r.FormValue("source"), Group: strings.TrimSpace(r.FormValue("group")),
		Offsets: r.FormValue("offsets"), TS: strings.TrimSpace(r.FormValue("ts"))}
	if f, hdr, err := r.FormFile("offsets_file"); err == nil {
		defer f.Close()
		if hdr.Size > 0 {
			data, err := io.ReadAll(f)
			if err != nil {
				http.Error(w, "the uploaded file could not be read", http.StatusBadRequest)
				return
			}
			form.Offsets, form.Source = string(data), "offsets"
		}
	}
	h.translate(w, r, form)
}

func (h *Handlers) translate(w http.ResponseWriter, r *http.Request, form views.TranslateForm) {
	for _, s := range h.Monitor.Snapshots() {
		form.Flows = append(form.Flows, s.Flow.Name)
	}
	if form.Flow == "" && len(form.Flows) > 0 {
		form.Flow = form.Flows[0]
	}
	page := views.TranslatePage{Chrome: h.chrome("Translate offsets"), Form: form}
	tr := h.Monitor.Translator(form.Flow)
	if tr == nil {
		page.Error = fmt.Sprintf("no flow named %q", form.Flow)
		h.render(w, r, http.StatusNotFound, views.Translate(page))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	page.Form.Groups = h.knownGroups(ctx, tr)
	wanted := (form.Source == "offsets" && strings.TrimSpace(form.Offsets) != "") || (form.Source != "offsets" && form.Group != "")
	if !wanted {
		if r.Method == http.MethodPost {
			page.Error = "give a consumer group, or paste or upload an offsets JSON"
			h.render(w, r, http.StatusBadRequest, views.Translate(page))
			return
		}
		h.render(w, r, http.StatusOK, views.Translate(page))
		return
	}
	res, err := h.preview(ctx, tr, form)
	if err != nil {
		page.Error = err.Error()
		status := http.StatusUnprocessableEntity
		if errors.Is(err, mm2.ErrTooManyOffsets) {
			status = http.StatusBadRequest
		}
		h.render(w, r, status, views.Translate(page))
		return
	}
	page.Result = res
	h.render(w, r, http.StatusOK, views.Translate(page))
}

// preview computes the translation table for a form.
func (h *Handlers) preview(ctx context.Context, tr *kafka.GroupTranslator, form views.TranslateForm) (*views.TranslateResult, error) {
	res := &views.TranslateResult{At: h.now()}
	if form.TS != "" {
		ms, err := parseTimestamp(form.TS)
		if err != nil {
			return nil, err
		}
		res.TSMillis = ms
	}
	if form.Source == "offsets" {
		in, err := mm2.ReadOffsetsJSON(ctx, "offsets", strings.NewReader(form.Offsets), MaxOffsetsPartitions)
		if errors.Is(err, mm2.ErrTooManyOffsets) {
			return nil, fmt.Errorf("more than %d partitions in one preview: %w; split the offsets, or use `drconsole translate` on the command line",
				MaxOffsetsPartitions, mm2.ErrTooManyOffsets)
		}
		if err != nil {
			return nil, err
		}
		res.From = "the pasted offsets"
		for _, po := range in {
			dr := model.TP{Topic: tr.Policy.RemoteTopic(tr.Alias, po.TP.Topic), Partition: po.TP.Partition}
			res.Rows = append(res.Rows, views.TranslateRow{Key: po.Key, DRKey: mm2.TPKey(dr), Offset: po.Offset,
				Translation: tr.Index.Translate(po.TP, po.Offset)})
		}
	} else {
		plan, err := tr.Plan(ctx, form.Group)
		if err != nil {
			return nil, err
		}
		res.From, res.DRState, res.DRMembers = plan.From, plan.DRState, plan.DRMembers
		for _, row := range plan.Rows {
			res.Rows = append(res.Rows, views.TranslateRow{Key: mm2.TPKey(row.Source), DRKey: mm2.TPKey(row.DR), Offset: row.Offset,
				Current: row.Current, Translation: row.Translation, Checkpoint: row.Checkpoint})
		}
	}
	// Records of aborted transactions MM2 copied after each offset: DR
	// consumers read them, the primary's readers never did.
	aborted, err := h.Store.AbortedBatches(ctx, tr.Flow)
	if err != nil {
		return nil, err
	}
	for i, row := range res.Rows {
		if tp, err := mm2.ParseTPKey(row.Key); err == nil && row.Translation.Translated() {
			res.Rows[i].AbortedAfter = monitor.AbortedInDRAfter(aborted, tp, row.Offset)
		}
	}
	translated := map[model.TP]int64{}
	var drTopics []string
	for _, row := range res.Rows {
		dr, _ := mm2.ParseTPKey(row.DRKey)
		if !slices.Contains(drTopics, dr.Topic) {
			drTopics = append(drTopics, dr.Topic)
		}
		if row.Translation.Translated() {
			res.Translated++
			res.RereadMax += row.Translation.RereadMax
			translated[dr] = row.Translation.Offset
		} else {
			res.Untranslatable++
		}
	}
	if res.TSMillis > 0 {
		seek, err := kafka.SeekByTimestamp(ctx, tr.TargetClient(), res.TSMillis, drTopics...)
		if err != nil {
			return nil, err
		}
		for i, row := range res.Rows {
			dr, _ := mm2.ParseTPKey(row.DRKey)
			if s, ok := seek[dr]; ok {
				res.Rows[i].Seek = &s
			}
		}
	}
	var buf bytes.Buffer
	mm2.WriteOffsetsJSON(&buf, translated)
	res.DownloadURL = "data:application/json;charset=utf-8," + url.PathEscape(buf.String())
	return res, nil
}

// parseTimestamp accepts RFC 3339 or epoch milliseconds.
func parseTimestamp(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: use RFC 3339 (2026-11-29T03:00:00Z) or epoch milliseconds", s)
	}
	return t.UnixMilli(), nil
}

// knownGroups lists groups MM2 checkpointed, plus the primary's groups when
// it answers quickly.
func (h *Handlers) knownGroups(ctx context.Context, tr *kafka.GroupTranslator) []string {
	var out []string
	if cps, err := h.Store.Checkpoints(ctx, tr.Flow); err == nil {
		for _, c := range cps {
			if !slices.Contains(out, c.Group) {
				out = append(out, c.Group)
			}
		}
	}
	if tr.SourceClient() != nil {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if groups, err := kadm.NewClient(tr.SourceClient()).ListGroups(lctx); err == nil {
			for _, g := range groups.Groups() {
				if !slices.Contains(out, g) {
					out = append(out, g)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
