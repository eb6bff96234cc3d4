package notify

import (
	"fmt"
	"strings"
	"unicode"
)

// Slack's message text is mrkdwn: "<!channel>" pings everyone, "<url|label>"
// is a link, and every line looks alike. Nothing a user typed (a run's
// reason, an approval's comment) or a system answered (a step's error) may
// become any of those, so the text is built in two parts: the lines the
// console writes itself, each one line, escaped; then each piece of user
// text under its own label, escaped, every line of it quoted ("> "), so a
// newline in it cannot start a line that looks like the console's.

// slackUserText are the details shown as user text, in this order, with
// their labels.
var slackUserText = []struct{ key, label string }{
	{"reason", "Reason"},
	{"comment", "Comment"},
	{"error", "Error"},
}

// slackText is the message a Slack channel shows: the summary, who could
// approve, a link, then the user text quoted.
func slackText(ev Event) string {
	lines := []string{slackLine(ev.Summary)}
	if len(ev.CanApprove) > 0 {
		lines = append(lines, "Can approve: "+slackLine(strings.Join(ev.CanApprove, ", ")))
	}
	if slackURLSafe(ev.URL) {
		lines = append(lines, "<"+slackEscape(ev.URL)+"|Open in drconsole>")
	}
	for _, u := range slackUserText {
		v, ok := ev.Details[u.key]
		if !ok {
			continue
		}
		lines = append(lines, u.label+":")
		for l := range strings.Lines(fmt.Sprint(v)) {
			lines = append(lines, "> "+slackLine(strings.TrimRight(l, "\r\n")))
		}
	}
	return strings.Join(lines, "\n")
}

// slackEscape escapes what Slack's mrkdwn asks to be escaped.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// slackLine is s as one escaped line: line breaks and other control or
// invisible format characters become spaces.
func slackLine(s string) string {
	return slackEscape(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s))
}

// slackURLSafe: a link the console made (public_url + a path) goes into
// "<url|label>" only when nothing in it could end or split the link.
func slackURLSafe(u string) bool {
	return u != "" && !strings.ContainsAny(u, "<>| \t\r\n") && slackLine(u) == slackEscape(u)
}
