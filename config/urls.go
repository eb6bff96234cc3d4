package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// A URL the console posts to (a webhook or Slack receiver, the audit
// anchor's witness) may hold a secret in its path (a Slack incoming-webhook
// URL is one), its query or its user information. Logs and errors name it
// by URLWhere only.

// URLWhere is raw as it may be logged or stored: scheme and host only.
func URLWhere(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

// URLError is a failed request's error without the URL it went to:
// net/http's *url.Error names the whole URL. The result wraps nothing that
// holds it, any copy of the URL's secret parts left in the text is cut out,
// and it reads "POST <scheme://host>: <cause>".
func URLError(raw string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if u, perr := url.Parse(raw); perr == nil {
		for _, secret := range []string{raw, u.String(), u.Redacted(), u.EscapedPath(), u.Path, u.RawQuery, u.User.String()} {
			if len(secret) > 1 {
				msg = strings.ReplaceAll(msg, secret, "…")
			}
		}
	}
	return fmt.Errorf("POST %s: %s", URLWhere(raw), msg)
}
