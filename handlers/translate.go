package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// MaxOffsetsUpload bounds a pasted or uploaded offsets file (413 above),
// MaxOffsetsPartitions the partitions one preview translates and renders
// (400 above): what one request may cost. The CLI has no such limit.
const (
	MaxOffsetsUpload     = form.MaxOffsetsUpload
	MaxOffsetsPartitions = 20_000
)

// TranslatePage is GET /translate: the form, and a group preview when the
// query names one (a read: safe to bookmark and reload).
func (h *Handlers) TranslatePage(w http.ResponseWriter, r *http.Request) {
	h.translate(w, r, form.NewTranslateQuery(r))
}

// TranslatePost is POST /translate: a preview from pasted or uploaded
// offsets (or a group). It changes nothing.
func (h *Handlers) TranslatePost(w http.ResponseWriter, r *http.Request) {
	f, err := form.ReadTranslate(w, r)
	if err != nil {
		h.fail(w, r, unreadable(err))
		return
	}
	h.translate(w, r, f)
}

func (h *Handlers) translate(w http.ResponseWriter, r *http.Request, f form.Translate) {
	page := views.TranslatePage{Chrome: h.chrome("Translate offsets"),
		Form: views.TranslateForm{Flow: f.Flow, Source: f.Source, Group: f.Typed, Offsets: f.Offsets, TS: f.TS}}
	for _, s := range h.Monitor.Snapshots() {
		page.Form.Flows = append(page.Form.Flows, s.Flow.Name)
	}
	if page.Form.Flow == "" && len(page.Form.Flows) > 0 {
		page.Form.Flow = page.Form.Flows[0]
	}
	fail := func(err error) {
		page.Error = err.Error()
		h.render(w, r, statusFor(err), views.Translate(page))
	}
	flow := page.Form.Flow
	if h.Monitor.Snapshot(flow) == nil {
		fail(say(fmt.Sprintf("no flow named %q", page.Form.Flow), storage.ErrNotFound))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	var picked []string
	if f.Typed == "" && f.Group != "" {
		picked = []string{f.Group}
	}
	page.Form.Groups = h.groupChoices(ctx, flow, picked, false)
	if !f.Wanted() {
		if r.Method == http.MethodPost {
			err := f.Validate()
			fail(unreadable(err))
			return
		}
		h.render(w, r, http.StatusOK, views.Translate(page))
		return
	}
	res, err := h.preview(ctx, flow, f)
	if err != nil {
		fail(refused(err))
		return
	}
	page.Result = res
	h.render(w, r, http.StatusOK, views.Translate(page))
}

// preview computes the translation table for a form.
func (h *Handlers) preview(ctx context.Context, flow string, f form.Translate) (*views.TranslateResult, error) {
	res := &views.TranslateResult{At: h.now()}
	ms, err := f.Timestamp()
	if err != nil {
		return nil, err
	}
	res.TSMillis = ms
	if f.Source == "offsets" {
		in, err := mm2.ReadOffsetsJSON(ctx, "offsets", strings.NewReader(f.Offsets), MaxOffsetsPartitions)
		if errors.Is(err, mm2.ErrTooManyOffsets) {
			return nil, fmt.Errorf("more than %d partitions in one preview: %w; split the offsets, or use `drconsole translate` on the command line",
				MaxOffsetsPartitions, mm2.ErrTooManyOffsets)
		}
		if err != nil {
			return nil, err
		}
		res.From = "the pasted offsets"
		for _, po := range in {
			dr, t, err := h.Monitor.TranslateOffset(flow, po.TP, po.Offset)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, views.TranslateRow{Key: po.Key, DRKey: mm2.TPKey(dr), Offset: po.Offset, Translation: t})
		}
	} else {
		plan, err := h.Monitor.GroupPlan(ctx, flow, f.Group)
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
	aborted, err := h.Store.AbortedBatches(ctx, flow)
	if err != nil {
		return nil, err
	}
	for i, row := range res.Rows {
		if tp, err := mm2.ParseTPKey(row.Key); err == nil && row.Translation.Translated() {
			res.Rows[i].AbortedAfter = flowstate.AbortedInDRAfter(aborted, tp, row.Offset)
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
		seek, err := h.Monitor.SeekDR(ctx, flow, res.TSMillis, drTopics...)
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
