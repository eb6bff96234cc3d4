package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/safefile"
)

// Notifications says who is told about failover runs and flow trouble.
type Notifications struct {
	Webhooks []*Webhook `yaml:"webhooks"`
}

// Webhook is one receiver: a generic JSON webhook signed with HMAC-SHA256,
// or a Slack incoming webhook (Kind "slack").
type Webhook struct {
	// Name identifies the receiver in the outbox and on /metrics; renaming
	// it starts it afresh (undelivered events stay with the old name).
	Name string `yaml:"name"`
	// Kind is "webhook" (default) or "slack".
	Kind WebhookKind `yaml:"kind"`
	// URL receives a POST per event. URLFile is read at start-up instead
	// (a Slack webhook URL is a secret).
	URL     string `yaml:"url"`
	URLFile string `yaml:"url_file"`
	// Secret signs generic webhooks (X-Drconsole-Signature); SecretFile is
	// read at start-up instead. Required for kind webhook.
	Secret     string `yaml:"secret"`
	SecretFile string `yaml:"secret_file"`
	// Events are the kinds sent to this receiver; empty: all of them.
	Events []string `yaml:"events"`
}

// Notification event kinds.
const (
	EventRunRequested = "run.requested"
	EventRunApproved  = "run.approved"
	EventRunRejected  = "run.rejected"
	EventRunCancelled = "run.cancelled"
	EventStepFailed   = "run.step_failed"
	EventRunCompleted = "run.completed"
	EventFlowCritical = "flow.critical"
	EventFlowBroken   = "flow.broken"
	EventFlowDataLoss = "flow.data_loss"
	EventFlowOK       = "flow.recovered"
)

// NotificationEvents lists every event kind, in the order the README does.
var NotificationEvents = []string{EventRunRequested, EventRunApproved, EventRunRejected, EventRunCancelled, EventStepFailed,
	EventRunCompleted, EventFlowCritical, EventFlowBroken, EventFlowDataLoss, EventFlowOK}

// Wants reports whether the receiver takes events of kind.
func (w *Webhook) Wants(kind string) bool {
	return len(w.Events) == 0 || slices.Contains(w.Events, kind)
}

func (n *Notifications) applyDefaults() {
	for _, w := range n.Webhooks {
		if w != nil && w.Kind == "" {
			w.Kind = WebhookGeneric
		}
	}
}

func (n *Notifications) validate(bad func(key, format string, args ...any)) {
	names := map[string]bool{}
	for i, w := range n.Webhooks {
		key := fmt.Sprintf("notifications.webhooks[%d]", i)
		if w == nil {
			bad(key, "empty entry")
			continue
		}
		switch {
		case w.Name == "":
			bad(key+".name", "required")
		case names[w.Name]:
			bad(key+".name", "%q is used twice", w.Name)
		}
		names[w.Name] = true
		if w.Kind != WebhookGeneric && w.Kind != WebhookSlack {
			bad(key+".kind", "%q: want webhook or slack", w.Kind)
		}
		readSecret(&w.URL, w.URLFile, key, "url", bad)
		if u, err := url.Parse(w.URL); w.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			bad(key+".url", "not an http(s) URL")
		}
		if w.Kind == WebhookGeneric {
			readSecret(&w.Secret, w.SecretFile, key, "secret", bad)
		}
		for j, e := range w.Events {
			if !slices.Contains(NotificationEvents, e) {
				bad(fmt.Sprintf("%s.events[%d]", key, j), "%q is not an event (%s)", e, strings.Join(NotificationEvents, ", "))
			}
		}
	}
}

// readSecret fills *value from file (the "<name>_file" key) or requires
// the inline "<name>" key; exactly one of them. The value is never echoed.
func readSecret(value *string, file, key, name string, bad func(key, format string, args ...any)) {
	switch {
	case *value != "" && file != "":
		bad(key, "set %s or %s_file, not both", name, name)
	case file != "":
		b, err := safefile.ReadFile(file, safefile.SecretLimit)
		if err != nil {
			bad(key+"."+name+"_file", "cannot read: %v", errors.Unwrap(err))
			return
		}
		*value = strings.TrimRight(string(b), "\r\n")
		if *value == "" {
			bad(key+"."+name+"_file", "%s is empty", file)
		}
	case *value == "":
		bad(key+"."+name, "required (or %s_file)", name)
	}
}
