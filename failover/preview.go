package failover

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
)

// StepPreview says exactly what a step will change, computed now. It reads
// and never writes.
type StepPreview struct {
	Idx          int
	Title        string
	Irreversible bool
	Lines        []string
	Rules        []RuleResult
	Err          string // the preview itself failed (e.g. a cluster unreachable)
}

// Preview dry-runs every step of a run, now. A page shows the cached
// previews instead (Runbook.Previews): each step may ask Kafka, Connect or
// Flink, with a 10 s timeout apiece.
func (rb *Runbook) Preview(ctx context.Context, r *Run) []StepPreview {
	out := make([]StepPreview, len(r.Plan.Steps))
	for i := range r.Plan.Steps {
		out[i] = rb.previewStep(ctx, r, i)
	}
	return out
}

// previewStep dry-runs step i of r.
func (rb *Runbook) previewStep(ctx context.Context, r *Run, i int) StepPreview {
	flow := rb.Config.Flow(r.Flow)
	s := r.Plan.Steps[i]
	p := StepPreview{Idx: i, Title: r.Plan.StepTitle(i, flow), Irreversible: s.Irreversible()}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	p.Rules, p.Lines, err = r.Plan.kind().Preview(pctx, rb, r, i)
	if err != nil {
		p.Err = err.Error()
	}
	return p
}

func (rb *Runbook) previewStop(ctx context.Context, flow *config.Flow) ([]string, error) {
	if flow.ConnectURL == "" {
		return []string{
			"MirrorMaker 2 runs in dedicated mode (no REST API): stop its process yourself (in the sandbox: Sandbox controls → Stop the mirror).",
			"Then run this step: the console watches the flow and passes when no heartbeat and no offset sync arrived for 10 s.",
			"Replication from the primary stops for good: records not yet copied stay behind.",
		}, nil
	}
	lines := []string{"PUT /connectors/{name}/stop on " + flow.ConnectURL + " for each connector, then wait until it reports STOPPED with no tasks:"}
	api := rb.Connect(flow.ConnectURL)
	for _, name := range flow.Connectors {
		s, err := api.Status(ctx, name)
		if err != nil {
			return lines, err
		}
		lines = append(lines, fmt.Sprintf("%s: now %s with %d task(s) → STOPPED", name, s.Connector.State, len(s.Tasks)))
	}
	return append(lines, "Replication from the primary stops for good: records not yet copied stay behind."), nil
}

func (rb *Runbook) previewGroup(ctx context.Context, flow string, s Step) ([]string, error) {
	plan, err := rb.groupPlan(ctx, flow, s)
	if err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("Primary offsets from %s. DR group %s is %s with %d member(s).", plan.From, s.Group, plan.DRState, plan.DRMembers)}
	var reread int64
	for _, row := range plan.Rows {
		now := "none"
		if row.Current != nil {
			now = fmt.Sprint(*row.Current)
		}
		if row.Translation.Translated() {
			reread += row.Translation.RereadMax
			lines = append(lines, fmt.Sprintf("%s: %s → %d (%s, primary %d, may re-read ≤ %d)", mm2.TPKey(row.DR), now,
				row.Translation.Offset, row.Translation.Method, row.Offset, row.Translation.RereadMax))
		} else {
			verdict := "NOT MOVED"
			if !s.AllowPartial {
				verdict = "THE STEP WILL FAIL"
			}
			lines = append(lines, fmt.Sprintf("%s: %s, cannot translate primary %d (%s): %s", mm2.TPKey(row.DR), now, row.Offset, row.Translation.Method, verdict))
		}
	}
	return append(lines, fmt.Sprintf("At most %d record(s) in all may be processed twice; none is skipped. The previous offsets are recorded for undo.", reread)), nil
}

func (rb *Runbook) PreviewRestore(ctx context.Context, r *Run, idx int, s Step) []string {
	t := FlinkTargetNamed(rb.Config, s.FlinkTarget)
	if t.Kubernetes != nil {
		return rb.previewKubernetes(ctx, r, idx, s, t)
	}
	version, err := rb.Flink(t.RestURL).Version(ctx)
	if err != nil {
		version = "unknown (" + err.Error() + ")"
	}
	mode := s.ClaimMode
	if mode == "" {
		mode = "NO_CLAIM"
	}
	lines := []string{
		fmt.Sprintf("POST %s/jars/%s/run on %s (Flink %s)", t.RestURL, s.JarID, t.Name, version),
		"entry class: " + OrNone(s.EntryClass) + "; program arguments: " + OrNone(strings.Join(r.Plan.kind().RestoreArgs(r, s), " ")),
		"savepoint: " + OrNone(s.SavepointPath) + fmt.Sprintf("; %s=%s; allowNonRestoredState=%v", flink.RestoreModeField(version), mode, s.AllowNonRestoredState),
		"job id " + restoreJobID(r, idx) + " (fixed: a resumed step finds this job instead of starting a second one)",
	}
	if j := RewriteOf(r.Plan, s.SavepointPath); j >= 0 {
		lines = append(lines, fmt.Sprintf("This is the savepoint step %d rewrites: the job keeps its Kafka source uid and resumes from the split state "+
			"(DR topics and offsets), not from consumer-group offsets; the step refuses unless step %d succeeded and registered it.", j+1, j+1))
	}
	return lines
}

func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
