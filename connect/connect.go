// Package connect reads a Kafka Connect cluster's REST API, where the MM2
// connectors run in most production setups: connector names and states.
// It sends only GET requests; stopping and resuming connectors is an effect
// and lives in runbook/internal/effect, which reads its answers through
// Answer.
package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to a Kafka Connect cluster's REST API, where the MM2
// connectors run in most production setups (dedicated-mode MirrorMaker has
// no public REST API).
type Client struct {
	Base string // e.g. http://connect:8083
	HTTP *http.Client
}

// New returns a client with a 15 s request timeout.
func New(base string) *Client {
	return &Client{Base: strings.TrimSuffix(base, "/"), HTTP: &http.Client{Timeout: 15 * time.Second}}
}

// State is a connector's or a task's state in Connect's status answers.
type State string

// Connector and task states.
const (
	Running    State = "RUNNING"
	Paused     State = "PAUSED"
	Stopped    State = "STOPPED" // a connector's only: its tasks are shut down, its config kept
	Failed     State = "FAILED"
	Unassigned State = "UNASSIGNED" // not yet placed on a worker
	Restarting State = "RESTARTING"
)

// ConnectorStatus is GET /connectors/{name}/status.
type ConnectorStatus struct {
	Name      string `json:"name"`
	Connector struct {
		State    State  `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace,omitempty"`
	} `json:"connector"`
	Tasks []TaskStatus `json:"tasks"`
}

// TaskStatus is one task's entry in a connector's status.
type TaskStatus struct {
	ID    int    `json:"id"`
	State State  `json:"state"`
	Trace string `json:"trace,omitempty"`
}

// Stopped reports a connector that is STOPPED with its tasks shut down:
// Connect removes them from the status only once they really stopped.
func (s ConnectorStatus) Stopped() bool { return s.Connector.State == Stopped && len(s.Tasks) == 0 }

// rebalanceRetry bounds how long a GET is repeated while Connect answers
// that a rebalance is under way: after a connector is created, resumed or
// deleted, Connect answers 409 ("a conflicting operation (e.g. worker
// rebalance)") or 500 ("a rebalance is expected") for a moment (seen
// against Kafka 4.3.1). A GET changes nothing, so repeating it is safe.
const rebalanceRetry = 10 * time.Second

// get sends a GET request and reads its answer into out, repeating it
// while Connect is rebalancing (at most rebalanceRetry).
func (c *Client) get(ctx context.Context, path string, out any) error {
	deadline := time.Now().Add(rebalanceRetry)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
		if err != nil {
			return err
		}
		resp, err := c.HTTP.Do(req)
		err = Answer(http.MethodGet, path, resp, err, out)
		if !Rebalancing(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Rebalancing reports an answer that says Connect's workers are
// rebalancing: the same request may succeed a moment later.
func Rebalancing(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusConflict || he.Status/100 == 5 && strings.Contains(he.Message, "rebalance"))
}

// Answer reads the outcome of one request to the Connect REST API (resp and
// err as http.Client.Do returned them) into out, turning a non-2xx answer
// into an error with Connect's message. It sends nothing.
func Answer(method, path string, resp *http.Response, err error, out any) error {
	if err != nil {
		return fmt.Errorf("connect: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode/100 != 2 {
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal(body, &e)
		return &HTTPError{Method: method, Path: path, Status: resp.StatusCode, Message: e.Message}
	}
	if out != nil && len(body) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("connect: %s %s: unexpected answer: %w", method, path, err)
		}
	}
	return nil
}

// HTTPError is a non-2xx answer of Connect REST with Connect's message,
// e.g. 409 "Cannot complete request because of a conflicting operation
// (e.g. worker rebalance)" (HerderRequestHandler.java).
type HTTPError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("connect: %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}

// Status returns a connector's status.
func (c *Client) Status(ctx context.Context, name string) (ConnectorStatus, error) {
	var s ConnectorStatus
	err := c.get(ctx, "/connectors/"+url.PathEscape(name)+"/status", &s)
	return s, err
}

// Connectors lists the connector names.
func (c *Client) Connectors(ctx context.Context) ([]string, error) {
	var names []string
	err := c.get(ctx, "/connectors", &names)
	return names, err
}

// WaitStopped polls until every named connector is stopped with no tasks.
func (c *Client) WaitStopped(ctx context.Context, names []string, interval time.Duration) (map[string]ConnectorStatus, error) {
	for {
		all, err := c.Statuses(ctx, names)
		if err != nil {
			return nil, err
		}
		stopped := true
		for _, s := range all {
			stopped = stopped && s.Stopped()
		}
		if stopped {
			return all, nil
		}
		select {
		case <-ctx.Done():
			return all, fmt.Errorf("connect: connectors %v not stopped: %w", names, ctx.Err())
		case <-time.After(interval):
		}
	}
}
