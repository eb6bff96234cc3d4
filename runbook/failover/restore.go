package failover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// restoreJobID derives the restored job's id from the run and step, so a
// step resumed after a crash finds the job it already started.
func restoreJobID(r *runbook.Run, idx int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "drconsole-restore/%d/%d/%s", r.ID, idx, r.PlanHash))
	return hex.EncodeToString(sum[:16])
}

// RewrittenReady lets a restore from the run's rewritten savepoint go on
// only once its rewrite succeeded, whichever way the job is restored
// (checked again here: Begin's rule may be minutes old).
func (rb Book) RewrittenReady(ctx context.Context, r *runbook.Run, s runbook.Step) error {
	if j := RewriteOf(r.Plan, s.SavepointPath); j >= 0 {
		if ok, why := rb.rewriteDone(ctx, r, j); !ok || s.AllowNonRestoredState {
			return fmt.Errorf("not restoring the rewritten savepoint %s: %s (allowNonRestoredState %v)", s.SavepointPath, why, s.AllowNonRestoredState)
		}
	}
	return nil
}

func (rb Book) RestoreFlink(ctx context.Context, w audit.Written, r *runbook.Run, idx int, s runbook.Step) (any, error) {
	t := FlinkTarget(rb.Config, s.FlinkTarget)
	api := rb.Flink(t.RestURL)
	jobID := restoreJobID(r, idx)
	if j, err := api.Job(ctx, jobID); err == nil {
		return jobFound{JobID: jobID, State: string(j.State), Note: "already started by an earlier attempt"}, nil
	} else if re := (*flink.RESTError)(nil); !errors.As(err, &re) || re.Status != 404 {
		return nil, fmt.Errorf("checking for an earlier attempt's job: %w", err)
	}
	version, err := api.Version(ctx)
	if err != nil {
		return nil, err
	}
	req := flink.RunRequest{EntryClass: s.EntryClass, ProgramArgsList: kindOf(r.Plan).RestoreArgs(r, s), Parallelism: s.Parallelism, SavepointPath: s.SavepointPath,
		AllowNonRestoredState: s.AllowNonRestoredState, JobID: jobID}
	if s.SavepointPath != "" {
		mode := s.ClaimMode
		if mode == "" {
			mode = "NO_CLAIM" // never let the new job delete the savepoint
		}
		if flink.RestoreModeField(version) == "claimMode" {
			req.ClaimMode = mode
		} else {
			req.RestoreMode = mode
		}
	}
	started, err := effect.RunJar(ctx, w, api, s.JarID, req)
	return jobStarted{JobID: started, FlinkVersion: version, Target: t.Name, Savepoint: s.SavepointPath}, err
}

// restore-flink's results through Flink REST: the job it started
// (jobStarted), or the one an earlier attempt started (jobFound). Their
// fields are in the order the maps they replaced were written, so the
// stored bytes are the same; V is the shape's version (absent: the first).
type (
	jobStarted struct {
		FlinkVersion string `json:"flink_version"`
		JobID        string `json:"job_id"`
		Savepoint    string `json:"savepoint"`
		Target       string `json:"target"`
		V            int    `json:"v,omitempty"`
	}
	jobFound struct {
		JobID string `json:"job_id"`
		Note  string `json:"note"`
		State string `json:"state"`
		V     int    `json:"v,omitempty"`
	}
)

func (rb Book) PreviewRestore(ctx context.Context, r *runbook.Run, idx int, s runbook.Step) []string {
	t := FlinkTarget(rb.Config, s.FlinkTarget)
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
		"entry class: " + OrNone(s.EntryClass) + "; program arguments: " + OrNone(strings.Join(kindOf(r.Plan).RestoreArgs(r, s), " ")),
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

// RestoredJob is the id of the Flink job restore step idx of r started
// (or found started), as its result recorded it; "" before the step is
// done, for another kind of step, or for a result of a shape this binary
// does not know. Every shape of the restore's result names the job as
// job_id.
func RestoredJob(r *runbook.Run, idx int) string {
	if idx < 0 || idx >= len(r.Plan.Steps) || idx >= len(r.Steps) || r.Plan.Steps[idx].Kind != KindRestoreFlink || r.Steps[idx].Status != model.StepDone {
		return ""
	}
	var res struct {
		JobID string `json:"job_id"`
		V     int    `json:"v,omitempty"`
	}
	if json.Unmarshal([]byte(r.Steps[idx].Result), &res) != nil || res.V != 0 {
		return ""
	}
	return res.JobID
}
