package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/storage"
)

// send delivers the receiver's events one at a time, oldest first, until
// ctx ends. A failure holds back the events after it (order matters: a
// "completed" must not overtake its "approved") and is retried after
// 1 s, 2 s, 4 s ... up to MaxBackoff, for as long as it takes.
func (n *Notifier) send(ctx context.Context, r *config.Webhook) {
	for ctx.Err() == nil {
		d, err := n.Store.NextDelivery(ctx, r.Name)
		if err != nil {
			n.Log.Warn("notifications: reading the outbox failed", "receiver", r.Name, "err", err)
		}
		if d == nil {
			if !sleep(ctx, n.Poll, n.wake[r.Name]) {
				return
			}
			continue
		}
		if wait := time.UnixMilli(d.NextMs).Sub(n.Now()); wait > 0 {
			if !sleep(ctx, min(wait, n.MaxBackoff), nil) {
				return
			}
			continue
		}
		err = n.post(ctx, r, d)
		now := n.Now()
		if err == nil {
			// Accepted: record it even when shutdown began meanwhile, so
			// the receiver is not sent it again at the next start.
			rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err = n.Store.DeliveryDone(rec, r.Name, d.EventID, now.UnixMilli())
			cancel()
		} else if ctx.Err() != nil {
			return // cut off by shutdown: tried again at the next start
		} else {
			n.Log.Warn("notifications: delivery failed; will retry", "receiver", r.Name, "to", config.URLWhere(r.URL), "event", d.EventID, "attempt", d.Attempts+1, "err", err)
			err = n.Store.DeliveryFailed(ctx, r.Name, d.EventID, now.Add(n.backoff(d.Attempts)).UnixMilli(), err.Error())
		}
		if err != nil {
			n.Log.Warn("notifications: recording a delivery failed", "receiver", r.Name, "err", err)
			sleep(ctx, n.Poll, nil)
		}
	}
}

func (n *Notifier) backoff(attempts int) time.Duration {
	d := time.Second << min(attempts, 20)
	return min(d, n.MaxBackoff)
}

// post sends one event: the stored JSON to a generic webhook, signed; a
// text message to Slack. Any 2xx answer is taken as delivered.
func (n *Notifier) post(ctx context.Context, r *config.Webhook, d *storage.NotifyDelivery) error {
	body := d.Payload
	if r.Kind == config.WebhookSlack {
		var ev Event
		if err := json.Unmarshal(d.Payload, &ev); err != nil {
			return fmt.Errorf("stored event %d: %w", d.EventID, err)
		}
		body, _ = json.Marshal(map[string]string{"text": slackText(ev)})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: the receiver's URL (%s) is not usable", r.Name, config.URLWhere(r.URL))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "drconsole/"+n.Version)
	if r.Kind != config.WebhookSlack {
		ts := strconv.FormatInt(n.Now().Unix(), 10)
		req.Header.Set("X-Drconsole-Event", d.Kind)
		req.Header.Set("X-Drconsole-Delivery", strconv.FormatInt(d.EventID, 10))
		req.Header.Set("X-Drconsole-Timestamp", ts)
		req.Header.Set("X-Drconsole-Signature", Sign(r.Secret, ts, body))
	}
	resp, err := n.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Name, config.URLError(r.URL, err))
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %.200q", r.Name, resp.Status, reply)
	}
	return nil
}

// Sign is the X-Drconsole-Signature of a body sent at unix time ts:
// "sha256=" and the hex HMAC-SHA256, keyed with the receiver's secret, of
// ts + "." + body. A receiver recomputes it and rejects old timestamps to
// refuse replays.
func Sign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
