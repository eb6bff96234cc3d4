package effect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
)

// flinkPost sends one POST with a JSON body to the JobManager.
func flinkPost(ctx context.Context, c *flink.RESTClient, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	return flink.Answer(http.MethodPost, path, resp, err, out)
}

// TriggerSavepoint starts a savepoint into dir (empty: the cluster's
// state.savepoints.dir) and returns the trigger id to poll
// (flink.RESTClient.WaitSavepoint). With stop, it is stop-with-savepoint:
// the job finishes after the savepoint.
func TriggerSavepoint(ctx context.Context, w audit.Written, c *flink.RESTClient, jobID, dir string, stop bool) (string, error) {
	if err := audited(w, "flink: savepoint of job "+jobID); err != nil {
		return "", err
	}
	var out struct {
		RequestID string `json:"request-id"`
	}
	var err error
	if stop {
		body := map[string]any{"drain": false}
		if dir != "" {
			body["targetDirectory"] = dir
		}
		err = flinkPost(ctx, c, "/jobs/"+url.PathEscape(jobID)+"/stop", body, &out)
	} else {
		body := map[string]any{"cancel-job": false}
		if dir != "" {
			body["target-directory"] = dir
		}
		err = flinkPost(ctx, c, "/jobs/"+url.PathEscape(jobID)+"/savepoints", body, &out)
	}
	if err == nil && out.RequestID == "" {
		err = errors.New("flink: savepoint trigger answered without a request-id")
	}
	return out.RequestID, err
}

// RunJar starts a job from an uploaded jar and returns its job id.
func RunJar(ctx context.Context, w audit.Written, c *flink.RESTClient, jarID string, r flink.RunRequest) (string, error) {
	if err := audited(w, "flink: run jar "+jarID); err != nil {
		return "", err
	}
	var out struct {
		JobID string `json:"jobid"`
	}
	err := flinkPost(ctx, c, "/jars/"+url.PathEscape(jarID)+"/run", r, &out)
	if err == nil && out.JobID == "" {
		err = errors.New("flink: jar run answered without a job id")
	}
	return out.JobID, err
}
