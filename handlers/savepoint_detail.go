package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// savepointParam resolves {id}; it has written the answer when ok is false.
func (h *Handlers) savepointParam(w http.ResponseWriter, r *http.Request) (model.Savepoint, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id < 1 {
		h.fail(w, r, badRequest("bad savepoint id"))
		return model.Savepoint{}, false
	}
	sp, err := h.Store.SavepointByID(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		h.fail(w, r, notFound(fmt.Sprintf("savepoint %d", id)))
		return sp, false
	}
	if err != nil {
		h.fail(w, r, say("cannot read the savepoint catalog", err))
		return sp, false
	}
	return sp, true
}

// offsetsFile renders a savepoint's offsets as the JSON translate takes;
// "" when they were not read.
func offsetsFile(sp model.Savepoint) (string, int) {
	offs, err := sp.Offsets()
	if err != nil || offs == nil {
		return "", 0
	}
	m := map[model.TP]int64{}
	for k, v := range offs {
		tp, err := mm2.ParseTPKey(k)
		if err != nil {
			return sp.OffsetsJSON, len(offs)
		}
		m[tp] = v
	}
	var b bytes.Buffer
	mm2.WriteOffsetsJSON(&b, m)
	return b.String(), len(offs)
}

// SavepointOffsets is GET /savepoints/{id}/offsets.json: the offsets file,
// as a download.
func (h *Handlers) SavepointOffsets(w http.ResponseWriter, r *http.Request) {
	sp, ok := h.savepointParam(w, r)
	if !ok {
		return
	}
	body, _ := offsetsFile(sp)
	if body == "" {
		h.fail(w, r, say("the offsets of this savepoint were not read: "+sp.ReadError, storage.ErrNotFound))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="savepoint-%d-offsets.json"`, sp.ID))
	w.Write([]byte(body))
}

// k8sNameRE: Kubernetes names (DNS-1123 subdomain, which covers labels).
var k8sNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// Savepoint is GET /savepoints/{id}: metadata, offsets with their
// usability for a flow, the translate form and the restore preview
// (with the Kubernetes patch for a typed namespace/name). Side-effect free.
func (h *Handlers) Savepoint(w http.ResponseWriter, r *http.Request) {
	sp, ok := h.savepointParam(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	now := h.now()
	p := views.SavepointDetailPage{Chrome: h.chrome(fmt.Sprintf("Savepoint #%d", sp.ID)), Now: now, SP: sp, CanOperate: actorMayOperate(r)}
	var snap *flowstate.FlowSnapshot
	p.Flows, p.Flow, snap = h.savepointFlows(q.Get("flow"))
	if snap != nil {
		p.ClusterLink = snap.Flow.IsClusterLink()
		p.FlowRPO, p.FlowRPOAtLeast = snap.RPOMs, snap.RPOAtLeast
	}
	p.AgeVsRPO, p.AgeVsRPOWarn = ageVsRPO(sp, p.FlowRPO, p.FlowRPOAtLeast, now)
	p.OffsetsJSON, p.Partitions = offsetsFile(sp)
	if p.Flow != "" {
		ctx, cancel := context.WithTimeout(r.Context(), model.UsabilityTimeout)
		start := time.Now()
		u, err := h.Catalog.Usability(ctx, sp, p.Flow)
		p.UsabilityAt = time.Since(start)
		cancel()
		if err != nil {
			p.UsabilityErr = err.Error()
		} else {
			p.Usability = &u
			rw := h.Catalog.RewriteStateOf(r.Context(), sp)
			p.Rewrite = &rw
		}
	} else {
		p.UsabilityErr = "no flow is configured"
	}
	p.Strategies, p.K8s.Strategy = restoreStrategies(p)
	if sp.SourceUID != "" && !form.JobIDRE.MatchString(sp.SourceUID) {
		p.SuggestedUID = sp.SourceUID + "-dr"
	}
	for _, t := range h.Runbook.Config.FlinkTargets {
		if t.Kubernetes != nil && t.Region == config.RegionDR {
			p.K8s.Through = append(p.K8s.Through, fmt.Sprintf("%s (%s/%s)", t.Name, t.Kubernetes.Namespace, t.Kubernetes.Deployment))
		}
	}
	if len(p.K8s.Through) > 0 { // the runbook does it: no text to hand over
		h.render(w, r, http.StatusOK, views.SavepointDetail(p))
		return
	}
	p.K8s.Namespace, p.K8s.Name = strings.TrimSpace(q.Get("ns")), strings.TrimSpace(q.Get("name"))
	if s, err := strconv.Atoi(q.Get("strategy")); err == nil && (s == 1 || s == 2) {
		p.K8s.Strategy = s
	}
	if p.K8s.Namespace != "" || p.K8s.Name != "" {
		switch {
		case len(p.K8s.Namespace) > 63 || !k8sNameRE.MatchString(p.K8s.Namespace) || strings.Contains(p.K8s.Namespace, "."):
			p.K8s.Error = fmt.Sprintf("namespace %q: want a Kubernetes namespace (lower-case letters, digits and '-', at most 63)", p.K8s.Namespace)
		case len(p.K8s.Name) > 253 || !k8sNameRE.MatchString(p.K8s.Name):
			p.K8s.Error = fmt.Sprintf("FlinkDeployment name %q: want a Kubernetes name (lower-case letters, digits, '-' and '.')", p.K8s.Name)
		default:
			k := flink.K8sRestore{Namespace: p.K8s.Namespace, Name: p.K8s.Name, SavepointPath: sp.Path, Nonce: now.UnixMilli(),
				AllowNonRestoredState: p.K8s.Strategy == 2}
			p.K8s.File = fmt.Sprintf("restore-%s-savepoint-%d.yaml", p.K8s.Name, sp.ID)
			p.K8s.Patch, p.K8s.Command = k.MergePatch(), k.KubectlCommand(p.K8s.File)
		}
	}
	h.render(w, r, http.StatusOK, views.SavepointDetail(p))
}

// restoreStrategies judges model.RestoreStrategies for the page's flow
// and the savepoint's usability against it.
func restoreStrategies(p views.SavepointDetailPage) ([]model.RestoreStrategy, int) {
	return model.RestoreStrategies(model.RestoreFor{Flow: p.Flow, ClusterLink: p.ClusterLink, Usability: p.Usability, Rewrite: p.Rewrite})
}
