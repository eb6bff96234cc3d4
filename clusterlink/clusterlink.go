// Package clusterlink reads Confluent Cluster Linking through the Kafka REST
// API v3, the second offset-preserving mirroring technology the console
// drives (issue 7): links, mirror topics, their lags and states.
//
// It sends only GET requests. The mirror actions (promote, failover, pause,
// resume) are effects and live in runbook/internal/effect, which builds its
// own POST and uses the pieces here that cannot send anything themselves:
// LinkPath, Prepare, Answer and the answer types.
//
// Paths, bodies and field names follow Confluent's published OpenAPI spec
// (confluentinc/ccloud-sdk-go-v2, kafkarest/v3/api/openapi.yaml; the REST
// Proxy flavour in confluentinc/kafka-rest-sdk-go kafkarestv3/docs). The
// spec's key point for a DR console: mirror actions answer HTTP 200 even when
// single topics fail, with a per-topic error_code/error_message. This client
// turns every per-topic failure into an error, so a partial failure can never
// pass for a success.
package clusterlink

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MirrorState is a mirror topic's state (MirrorTopicStatus in the spec).
type MirrorState string

// Mirror topic states.
const (
	MirrorActive            MirrorState = "ACTIVE"
	MirrorPaused            MirrorState = "PAUSED"
	MirrorPendingStopped    MirrorState = "PENDING_STOPPED"
	MirrorStopped           MirrorState = "STOPPED"
	MirrorFailed            MirrorState = "FAILED"
	MirrorLinkFailed        MirrorState = "LINK_FAILED"
	MirrorLinkPaused        MirrorState = "LINK_PAUSED"
	MirrorSourceUnavailable MirrorState = "SOURCE_UNAVAILABLE"
	MirrorPendingMirror     MirrorState = "PENDING_MIRROR"
	MirrorPendingSync       MirrorState = "PENDING_SYNCHRONIZE"
	MirrorPendingSetup      MirrorState = "PENDING_SETUP_FOR_RESTORE"
	MirrorPendingRestore    MirrorState = "PENDING_RESTORE"
)

// LinkState is a cluster link's state; the spec calls it extensible.
type LinkState string

// The link state a healthy link is in, and the link error it reports.
const (
	LinkActive  LinkState = "ACTIVE"
	LinkNoError           = "NO_ERROR"
)

// Client talks to the destination cluster's REST API about one
// cluster link. Base is the REST root without the /v3: for Confluent Cloud
// and Confluent Server that is https://host[:port]/kafka, for the Confluent
// Platform REST Proxy http://proxy:8082. The client appends
// /v3/clusters/{cluster_id}/links/{link_name}/...
type Client struct {
	Base      string
	ClusterID string
	// LinkName is the cluster link's name (not "Link": that is the method).
	LinkName string
	// Username and Password are sent as HTTP basic auth when Username is
	// set: Confluent Cloud API key and secret, or Confluent Server basic
	// auth credentials.
	Username, Password string
	HTTP               *http.Client
}

// New returns a client with a 15 s request timeout. A nil
// tlsConfig uses the system defaults.
func New(base, clusterID, link, user, pass string, tlsConfig *tls.Config) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConfig != nil {
		tr.TLSClientConfig = tlsConfig.Clone()
	}
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.ResponseHeaderTimeout = 15 * time.Second
	return &Client{
		Base:      strings.TrimSuffix(base, "/"),
		ClusterID: clusterID,
		LinkName:  link,
		Username:  user,
		Password:  pass,
		HTTP:      &http.Client{Timeout: 15 * time.Second, Transport: tr},
	}
}

// LinkInfo is the link object (ListLinksResponseData). Nullable strings
// come back empty when null.
type LinkInfo struct {
	Kind                 string         `json:"kind"`
	LinkName             string         `json:"link_name"`
	ClusterLinkID        string         `json:"cluster_link_id"`
	LinkID               string         `json:"link_id,omitempty"` // deprecated by Confluent; cluster_link_id replaces it
	SourceClusterID      string         `json:"source_cluster_id"`
	DestinationClusterID string         `json:"destination_cluster_id"`
	RemoteClusterID      string         `json:"remote_cluster_id"`
	LinkState            LinkState      `json:"link_state"` // ACTIVE, FAILED, UNAVAILABLE, PAUSED, UNKNOWN (extensible)
	LinkError            string         `json:"link_error"` // NO_ERROR, AUTHENTICATION_ERROR, ..., TIMEOUT_ERROR
	LinkErrorMessage     string         `json:"link_error_message"`
	TopicNames           []string       `json:"topic_names"`
	Tasks                []LinkTask     `json:"tasks"`
	CategoryCounts       []LinkCategory `json:"category_counts"`
}

// LinkTask is one of the link's background tasks (offset sync, ACL sync...).
type LinkTask struct {
	TaskName string          `json:"task_name"`
	State    string          `json:"state"` // ACTIVE, IN_ERROR, NOT_CONFIGURED, LINK_FAILED, LINK_UNAVAILABLE, LINK_PAUSED, UNKNOWN
	Errors   []LinkTaskError `json:"errors"`
}

// LinkCategory counts mirror topics per state category.
type LinkCategory struct {
	StateCategory string `json:"state_category"`
	Count         int    `json:"count"`
}

// LinkTaskError is the spec's LinkTaskError, used for task errors and for
// mirror state transition errors. The spec types error_code as a string;
// a number is accepted too.
type LinkTaskError struct {
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message"`
}

// UnmarshalJSON accepts error_code as a string or a number.
func (e *LinkTaskError) UnmarshalJSON(b []byte) error {
	var raw struct {
		ErrorCode    json.RawMessage `json:"error_code"`
		ErrorMessage *string         `json:"error_message"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = LinkTaskError{}
	if raw.ErrorMessage != nil {
		e.ErrorMessage = *raw.ErrorMessage
	}
	c := bytes.TrimSpace(raw.ErrorCode)
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		return json.Unmarshal(c, &e.ErrorCode)
	default:
		e.ErrorCode = string(c)
	}
	return nil
}

// Healthy reports a link that is ACTIVE without a link error. It says
// nothing about the source: a link can stay ACTIVE while the source cluster
// is gone, so watch the mirrors' lag and status too.
func (l LinkInfo) Healthy() bool {
	return l.LinkState == LinkActive && (l.LinkError == "" || l.LinkError == LinkNoError)
}

// MirrorLag is one partition's entry in mirror_lags.
type MirrorLag struct {
	Partition             int   `json:"partition"`
	Lag                   int64 `json:"lag"`
	LastSourceFetchOffset int64 `json:"last_source_fetch_offset"`
}

// MirrorTopic is a mirror topic (ListMirrorTopicsResponseData).
type MirrorTopic struct {
	Kind                        string          `json:"kind"`
	LinkName                    string          `json:"link_name"`
	MirrorTopicName             string          `json:"mirror_topic_name"`
	SourceTopicName             string          `json:"source_topic_name"`
	NumPartitions               int             `json:"num_partitions"`
	MirrorLags                  []MirrorLag     `json:"mirror_lags"`
	MirrorStatus                MirrorState     `json:"mirror_status"`
	StateTimeMs                 int64           `json:"state_time_ms"`
	MirrorTopicError            string          `json:"mirror_topic_error,omitempty"`
	MirrorStateTransitionErrors []LinkTaskError `json:"mirror_state_transition_errors,omitempty"`
}

// MaxLag is the largest per-partition lag in messages, 0 without entries.
func (m MirrorTopic) MaxLag() int64 {
	var most int64
	for _, l := range m.MirrorLags {
		most = max(most, l.Lag)
	}
	return most
}

// TotalLag sums the per-partition lags: the messages at risk if the mirror
// were failed over now.
func (m MirrorTopic) TotalLag() int64 {
	var sum int64
	for _, l := range m.MirrorLags {
		sum += l.Lag
	}
	return sum
}

// Ready reports a mirror that a planned promote can take: ACTIVE and every
// partition's lag is zero. A mirror with no lag entries at all is not ready:
// nothing proves it caught up.
func (m MirrorTopic) Ready() bool {
	if m.MirrorStatus != MirrorActive || len(m.MirrorLags) == 0 {
		return false
	}
	for _, l := range m.MirrorLags {
		if l.Lag != 0 {
			return false
		}
	}
	return true
}

// Stopped reports a mirror that was promoted or failed over: it is a normal,
// writable topic now.
func (m MirrorTopic) Stopped() bool { return m.MirrorStatus == MirrorStopped }

// StateTime is state_time_ms as a time, zero when unset.
func (m MirrorTopic) StateTime() time.Time {
	if m.StateTimeMs <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(m.StateTimeMs)
}

// PartitionTruncation is one entry of partition_level_truncation_data.
type PartitionTruncation struct {
	PartitionID       int   `json:"partition_id"`
	OffsetTruncatedTo int64 `json:"offset_truncated_to"`
	MessagesTruncated int64 `json:"messages_truncated"`
}

// MirrorActionResult is one topic's entry in an action's answer
// (AlterMirrorStatusResponseData). ErrorCode is nil on success.
type MirrorActionResult struct {
	Kind                         string                `json:"kind"`
	MirrorTopicName              string                `json:"mirror_topic_name"`
	ErrorCode                    *int                  `json:"error_code"`
	ErrorMessage                 *string               `json:"error_message"`
	MirrorLags                   []MirrorLag           `json:"mirror_lags"`
	MessagesTruncated            *int64                `json:"messages_truncated"`
	PartitionLevelTruncationData []PartitionTruncation `json:"partition_level_truncation_data"`
}

// Failed reports a per-topic failure: any error_code, or an error message
// without a code (treated as a failure rather than guessed to be harmless).
func (r MirrorActionResult) Failed() bool {
	return r.ErrorCode != nil || (r.ErrorMessage != nil && strings.TrimSpace(*r.ErrorMessage) != "")
}

// Message is the per-topic error message, "" when none.
func (r MirrorActionResult) Message() string {
	if r.ErrorMessage == nil {
		return ""
	}
	return *r.ErrorMessage
}

// MirrorActionError says which topics of an action failed although the
// HTTP answer was 200, and which requested topics the answer did not
// mention at all. Either counts as a failure of the whole action.
type MirrorActionError struct {
	Action       string // promote, failover, pause, resume, reverse-and-start-mirror, reverse-and-pause-mirror
	Link         string
	ValidateOnly bool
	Requested    int
	Failed       []MirrorActionResult
	Missing      []string
}

func (e *MirrorActionError) Error() string {
	var b strings.Builder
	op := e.Action
	if e.ValidateOnly {
		op += " (validate only)"
	}
	fmt.Fprintf(&b, "cluster link %s: %s: ", e.Link, op)
	var parts []string
	if len(e.Failed) > 0 {
		fails := make([]string, 0, len(e.Failed))
		for _, f := range e.Failed {
			code := "error"
			if f.ErrorCode != nil {
				code = "error_code " + strconv.Itoa(*f.ErrorCode)
			}
			msg := f.Message()
			if msg == "" {
				msg = "(no message)"
			}
			fails = append(fails, fmt.Sprintf("%s: %s: %s", f.MirrorTopicName, code, msg))
		}
		parts = append(parts, fmt.Sprintf("%d of %d mirror topics failed: %s", len(e.Failed), e.Requested, strings.Join(fails, "; ")))
	}
	if len(e.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("no result for %s", strings.Join(e.Missing, ", ")))
	}
	b.WriteString(strings.Join(parts, "; "))
	return b.String()
}

// Topics lists the failed and missing topic names.
func (e *MirrorActionError) Topics() []string {
	var out []string
	for _, f := range e.Failed {
		out = append(out, f.MirrorTopicName)
	}
	return append(out, e.Missing...)
}

// ClusterLinkHTTPError is a non-2xx answer. Code is the error_code of
// Confluent's error body ({"error_code":40101,"message":"..."}), 0 when the
// body was not that shape (a 429 from Jetty's DoSFilter is HTML).
type HTTPError struct {
	Op      string
	Method  string
	Path    string
	Status  int
	Code    int
	Message string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("cluster link: %s: %s %s: HTTP %d", e.Op, e.Method, e.Path, e.Status)
	if e.Code != 0 {
		s += fmt.Sprintf(" (error_code %d)", e.Code)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Retriable() {
		s += " (retriable)"
	}
	return s
}

// Retriable reports answers worth retrying later: 429 rate limiting, any
// 5xx, and Confluent's retriable Kafka error code 50003.
func (e *HTTPError) Retriable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500 || e.Code == 50003
}

// AuthFailed reports a rejected credential (401, error_code 40101 for Kafka
// authentication failures).
func (e *HTTPError) AuthFailed() bool {
	return e.Status == http.StatusUnauthorized || e.Code == 40101
}

// LinkPath is the link's path under Base.
func (c *Client) LinkPath() string {
	return "/v3/clusters/" + url.PathEscape(c.ClusterID) + "/links/" + url.PathEscape(c.LinkName)
}

// do sends one GET request; op names the operation in errors.
func (c *Client) do(ctx context.Context, op, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return fmt.Errorf("cluster link: %s: %w", op, err)
	}
	c.Prepare(req)
	resp, err := c.HTTPClient().Do(req)
	return c.Answer(ctx, op, http.MethodGet, path, resp, err, out)
}

// Prepare sets the headers and credentials every request to the REST API
// carries. It sends nothing.
func (c *Client) Prepare(req *http.Request) {
	req.Header.Set("Accept", "application/json")
	if req.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Username != "" {
		req.SetBasicAuth(c.Username, c.Password)
	}
}

// HTTPClient is the client requests go through (http.DefaultClient when
// HTTP is nil).
func (c *Client) HTTPClient() *http.Client {
	if c.HTTP == nil {
		return http.DefaultClient
	}
	return c.HTTP
}

// Answer reads the outcome of one request (resp and err as
// http.Client.Do returned them) into out: a transport failure, a non-2xx
// answer as *HTTPError, an empty or unexpected body. It sends nothing.
func (c *Client) Answer(ctx context.Context, op, method, path string, resp *http.Response, err error, out any) error {
	if err != nil {
		return c.transportError(ctx, op, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return c.transportError(ctx, op, method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return parseClusterLinkError(op, method, path, resp.StatusCode, data)
	}
	if out != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return fmt.Errorf("cluster link: %s: %s %s: empty answer (HTTP %d)", op, method, path, resp.StatusCode)
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("cluster link: %s: %s %s: unexpected answer: %w", op, method, path, err)
		}
	}
	return nil
}

// transportError names the operation and, for timeouts, says so plainly:
// for an action, a timeout leaves it unknown whether the cluster applied it.
func (c *Client) transportError(ctx context.Context, op, method, path string, err error) error {
	var ne net.Error
	timedOut := errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || (errors.As(err, &ne) && ne.Timeout())
	if timedOut {
		hint := ""
		if method != http.MethodGet {
			hint = "; the action may or may not have been applied, read the mirror states before retrying"
		}
		return fmt.Errorf("cluster link: %s: %s %s%s: timed out waiting for the REST API%s: %w", op, method, c.Base, path, hint, err)
	}
	return fmt.Errorf("cluster link: %s: %s %s%s: %w", op, method, c.Base, path, err)
}

func parseClusterLinkError(op, method, path string, status int, body []byte) error {
	e := &HTTPError{Op: op, Method: method, Path: path, Status: status}
	var eb struct {
		ErrorCode json.Number `json:"error_code"`
		Message   *string     `json:"message"`
	}
	if json.Unmarshal(body, &eb) == nil && (eb.ErrorCode != "" || eb.Message != nil) {
		if n, err := eb.ErrorCode.Int64(); err == nil {
			e.Code = int(n)
		}
		if eb.Message != nil {
			e.Message = *eb.Message
		}
		return e
	}
	text := strings.TrimSpace(string(body))
	switch {
	case text == "", strings.HasPrefix(text, "<"):
		// Jetty answers 429 and some gateway errors with HTML.
		e.Message = http.StatusText(status)
	default:
		if len(text) > 200 {
			text = text[:200] + "..."
		}
		e.Message = text
	}
	return e
}

// Link describes the link: GET /v3/clusters/{cluster_id}/links/{link_name}
// with include_tasks=true. When the cluster has no such link, the error
// (still a 404 ClusterLinkHTTPError) names the links it has: a misspelt
// link name in the config is then plain.
func (c *Client) Link(ctx context.Context) (LinkInfo, error) {
	var l LinkInfo
	err := c.do(ctx, "describe link "+c.LinkName, c.LinkPath()+"?include_tasks=true", &l)
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		if links, lerr := c.Links(ctx); lerr == nil {
			names := make([]string, 0, len(links))
			for _, x := range links {
				names = append(names, x.LinkName)
			}
			return l, fmt.Errorf("%w (links on cluster %s: %s)", err, c.ClusterID, cmp.Or(strings.Join(names, ", "), "none"))
		}
	}
	return l, err
}

// Links lists the destination cluster's links:
// GET /v3/clusters/{cluster_id}/links.
func (c *Client) Links(ctx context.Context) ([]LinkInfo, error) {
	var l List[LinkInfo]
	if err := c.do(ctx, "list links", "/v3/clusters/"+url.PathEscape(c.ClusterID)+"/links", &l); err != nil {
		return nil, err
	}
	return l.Data, nil
}

// List is the envelope of every list answer, mirror actions' included.
type List[T any] struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Self string  `json:"self"`
		Next *string `json:"next"`
	} `json:"metadata"`
	Data []T `json:"data"`
}

// Mirrors lists the link's mirror topics with their per-partition lags:
// GET /v3/clusters/{cluster_id}/links/{link_name}/mirrors.
func (c *Client) Mirrors(ctx context.Context) ([]MirrorTopic, error) {
	op := "list mirror topics of link " + c.LinkName
	var l List[MirrorTopic]
	if err := c.do(ctx, op, c.LinkPath()+"/mirrors", &l); err != nil {
		return nil, err
	}
	if l.Metadata.Next != nil && *l.Metadata.Next != "" {
		// The spec allows a next page but documents none for mirrors;
		// a silently shortened list would hide topics, so refuse.
		return l.Data, fmt.Errorf("cluster link: %s: the answer is paginated (metadata.next=%q), which this client does not follow", op, *l.Metadata.Next)
	}
	return l.Data, nil
}

// Mirror describes one mirror topic including its state transition errors:
// GET .../links/{link_name}/mirrors/{mirror_topic_name}.
func (c *Client) Mirror(ctx context.Context, topic string) (MirrorTopic, error) {
	var m MirrorTopic
	err := c.do(ctx, "describe mirror topic "+topic,
		c.LinkPath()+"/mirrors/"+url.PathEscape(topic)+"?include_state_transition_errors=true", &m)
	return m, err
}
