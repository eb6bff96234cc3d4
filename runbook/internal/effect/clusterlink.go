package effect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
)

// Mirror actions, as the REST API names them (.../mirrors:{action}).
const (
	ActionPromote  = "promote"
	ActionFailover = "failover"
	ActionPause    = "pause"
	ActionResume   = "resume"
	// The failback pair (Confluent's OpenAPI spec, operationIds
	// updateKafkaMirrorTopicsReverseAndStartMirror / ...ReverseAndPauseMirror):
	// the local mirror topic becomes the source and the topic it mirrored,
	// on the link's other end, becomes its mirror, running or paused.
	ActionReverseAndStart = "reverse-and-start-mirror"
	ActionReverseAndPause = "reverse-and-pause-mirror"
	// ActionTruncateAndRestore (operationId
	// updateKafkaMirrorTopicsTruncateAndRestoreMirror), sent to the old
	// primary after a failover: its topics are truncated to the log ends
	// of DR's stopped mirrors and become mirrors of DR's topics. It deletes
	// the records the primary holds beyond them (the records lost to DR).
	ActionTruncateAndRestore = "truncate-and-restore"
)

// mirrorActions are the actions Validate accepts.
var mirrorActions = []string{ActionPromote, ActionFailover, ActionPause, ActionResume, ActionReverseAndStart, ActionReverseAndPause, ActionTruncateAndRestore}

// Promote is the planned switch: the cluster checks that the mirrors caught
// up (zero lag) and refuses topics that did not, per topic.
func Promote(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionPromote, topics)
}

// Failover stops mirroring immediately, whatever the lag: unreplicated
// messages are lost. Meant for an unreachable source.
func Failover(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionFailover, topics)
}

// Pause pauses mirroring of the topics.
func Pause(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionPause, topics)
}

// Resume resumes paused mirror topics.
func Resume(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionResume, topics)
}

// ReverseAndStart reverses the mirror topics (sent to the cluster where
// they are mirrors): they become writable sources, and their source topics
// on the other end become mirrors of them and start mirroring. Needs a
// bidirectional link; per-topic refusals come back as a
// *clusterlink.MirrorActionError.
func ReverseAndStart(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionReverseAndStart, topics)
}

// ReverseAndPause is ReverseAndStart with the new mirrors left paused, so
// nothing flows until they are resumed.
func ReverseAndPause(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionReverseAndPause, topics)
}

// TruncateAndRestore truncates the local topics (on the cluster c names)
// to the remote stopped mirrors' log ends and makes them mirrors of the
// remote topics. The answer carries, per topic and partition, what was
// truncated (include_partition_level_truncation_data is always asked).
func TruncateAndRestore(ctx context.Context, w audit.Written, c *clusterlink.Client, topics []string) ([]clusterlink.MirrorActionResult, error) {
	return auditedMirrors(ctx, w, c, ActionTruncateAndRestore, topics)
}

// Validate asks the cluster whether action would succeed for every topic
// (validate_only=true: the cluster changes nothing), which is why it needs
// no audit record: previews and safety rules call it before any approval.
func Validate(ctx context.Context, c *clusterlink.Client, action string, topics []string) ([]clusterlink.MirrorActionResult, error) {
	if !slices.Contains(mirrorActions, action) {
		return nil, fmt.Errorf("cluster link: unknown mirror action %q", action)
	}
	return alterMirrors(ctx, c, action, topics, true)
}

func auditedMirrors(ctx context.Context, w audit.Written, c *clusterlink.Client, action string, topics []string) ([]clusterlink.MirrorActionResult, error) {
	if err := audited(w, "cluster link "+c.LinkName+": "+action); err != nil {
		return nil, err
	}
	return alterMirrors(ctx, c, action, topics, false)
}

// alterMirrors posts {"mirror_topic_names":[...]} to
// .../mirrors:{action}?validate_only=... and checks every topic's result.
// On a partial failure it returns all results and a
// *clusterlink.MirrorActionError.
func alterMirrors(ctx context.Context, c *clusterlink.Client, action string, topics []string, validateOnly bool) ([]clusterlink.MirrorActionResult, error) {
	op := action + " mirror topics on link " + c.LinkName
	if validateOnly {
		op = "validate " + op
	}
	if len(topics) == 0 {
		return nil, fmt.Errorf("cluster link: %s: no mirror topics given", op)
	}
	for _, t := range topics {
		if t == "" {
			return nil, fmt.Errorf("cluster link: %s: empty mirror topic name", op)
		}
	}
	path := c.LinkPath() + "/mirrors:" + action + "?validate_only=" + strconv.FormatBool(validateOnly)
	if action == ActionTruncateAndRestore {
		// Without it the answer says only how many per topic, not where.
		path += "&include_partition_level_truncation_data=true"
	}
	body, err := json.Marshal(struct {
		MirrorTopicNames []string `json:"mirror_topic_names"`
	}{topics})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cluster link: %s: %w", op, err)
	}
	c.Prepare(req)
	resp, err := c.HTTPClient().Do(req)
	var l clusterlink.List[clusterlink.MirrorActionResult]
	if err := c.Answer(ctx, op, http.MethodPost, path, resp, err, &l); err != nil {
		return nil, err
	}
	e := &clusterlink.MirrorActionError{Action: action, Link: c.LinkName, ValidateOnly: validateOnly}
	seen := map[string]bool{}
	for _, r := range l.Data {
		seen[r.MirrorTopicName] = true
		if r.Failed() {
			e.Failed = append(e.Failed, r)
		}
	}
	var want []string
	for _, t := range topics {
		if !slices.Contains(want, t) {
			want = append(want, t)
		}
	}
	e.Requested = len(want)
	for _, t := range want {
		if !seen[t] {
			e.Missing = append(e.Missing, t)
		}
	}
	if len(e.Failed) > 0 || len(e.Missing) > 0 {
		return l.Data, e
	}
	return l.Data, nil
}
