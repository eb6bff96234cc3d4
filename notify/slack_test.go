package notify

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/drconsole/drconsole/config"
)

// The reason from the security finding: a channel-wide ping, a forged
// approvers line and a link dressed as the console's own.
const craftedReason = "<!channel> urgent & real\nCan approve: mallory\n<http://evil.example|Open in drconsole>"

// A run's reason reaches Slack escaped and quoted under its own label:
// no mention, no link of its own, no line the console did not write; the
// webhook gets it as it was typed, as structured data.
func TestSlackQuotesAndEscapesUserText(t *testing.T) {
	w := newWorld(t)
	slack := newReceiver(t, "")
	hook := newReceiver(t, "k")
	start(t, w.notifier(&config.Webhook{Name: "chat", Kind: "slack", URL: slack.url},
		&config.Webhook{Name: "ops", URL: hook.url, Secret: "k"}))
	w.started()
	id := w.run(craftedReason)
	w.record("bob", "failover.approve", id, map[string]any{"comment": "ok\n<!here> Can approve: eve"})
	waitFor(t, "2 Slack messages", func() bool { return len(slack.received()) == 2 })
	waitFor(t, "2 webhook events", func() bool { return len(hook.received()) == 2 })

	for i, m := range slack.received() {
		text := m.Text
		for _, bad := range []string{"<!channel>", "<!here>", "<http://evil", "mallory>"} {
			if strings.Contains(text, bad) {
				t.Errorf("message %d holds %q:\n%s", i, bad, text)
			}
		}
		var approvers, links int
		quoted := false
		for _, line := range strings.Split(text, "\n") {
			switch {
			case quoted && !strings.HasPrefix(line, "> ") && !strings.HasSuffix(line, ":"):
				t.Errorf("message %d: user text line %q is not quoted:\n%s", i, line, text)
			case strings.HasPrefix(line, "Can approve:"):
				approvers++
				if line != "Can approve: bob, carol" {
					t.Errorf("message %d: approvers line %q", i, line)
				}
			case strings.HasPrefix(line, "<"):
				links++
				if !strings.HasPrefix(line, "<https://drconsole.example.com/failover/") {
					t.Errorf("message %d: link line %q", i, line)
				}
			case line == "Reason:" || line == "Comment:":
				quoted = true
			}
		}
		if links != 1 || approvers > 1 {
			t.Errorf("message %d: %d link lines, %d approver lines:\n%s", i, links, approvers, text)
		}
	}
	first := slack.received()[0].Text
	if !strings.Contains(first, "Reason:\n> &lt;!channel&gt; urgent &amp; real\n> Can approve: mallory\n> &lt;http://evil.example|Open in drconsole&gt;") {
		t.Errorf("the reason is not shown escaped and quoted:\n%s", first)
	}
	if !strings.Contains(first, " of primary-&gt;dr: it waits for approval\n") {
		t.Errorf("the summary line:\n%s", first)
	}
	if got := hook.received()[0].Event; got.Details["reason"] != craftedReason || strings.Contains(got.Summary, "mallory") {
		t.Errorf("webhook event: reason %q, summary %q: want the reason as typed, in details only", got.Details["reason"], got.Summary)
	}
}

// syncBuffer is a log sink the senders may write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A failed delivery is logged with the receiver's name and host, never
// its URL's path, query or user information: a Slack webhook URL is a
// secret. Both failures are tried: a refused connection (net/http's
// *url.Error names the whole URL) and an error status.
func TestDeliveryFailureLogsNoReceiverSecret(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // connection refused
	failing := newReceiver(t, "")
	failing.answer = func(int) int { return 500 }
	const secretPath = "/services/T0SECRET/B0SECRET/xoxSECRETtoken"
	refused := &config.Webhook{Name: "chat", Kind: "slack", URL: "http://hookuser:hookpass@" + gone + secretPath + "?token=qSECRET"}
	erring := &config.Webhook{Name: "chat2", Kind: "slack", URL: strings.TrimSuffix(failing.url, "/hook") + secretPath + "?token=qSECRET"}
	var logs syncBuffer
	n := w.notifier(refused, erring)
	n.Log = slog.New(slog.NewTextHandler(&logs, nil))
	start(t, n)
	w.started()
	w.run("r")
	waitFor(t, "failed attempts on record", func() bool {
		a, _ := w.store.NextDelivery(context.Background(), "chat")
		b, _ := w.store.NextDelivery(context.Background(), "chat2")
		return a != nil && a.Attempts >= 2 && b != nil && b.Attempts >= 2
	})
	out := logs.String()
	if strings.Count(out, "delivery failed; will retry") < 4 {
		t.Fatalf("want the failures logged:\n%s", out)
	}
	for _, secret := range []string{"SECRET", "services", "hookpass", "hookuser", "token"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"receiver=chat ", "to=http://" + gone, "receiver=chat2 ", "connection refused", "500"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}
