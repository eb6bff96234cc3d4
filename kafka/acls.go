package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicACL is one literal topic ACL entry: a principal allowed or denied
// an operation on a topic from a host.
type TopicACL struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
	Host      string `json:"host"`
	Operation string `json:"operation"` // WRITE, ...
	Deny      bool   `json:"deny"`
}

// DenyWriteFilter is the ACL builder that matches exactly the literal
// DENY WRITE entries of principals on topics from any host ("*"): the
// entries a fence adds, and no other.
func DenyWriteFilter(topics, principals []string) *kadm.ACLBuilder {
	return kadm.NewACLs().Topics(topics...).Deny(principals...).DenyHosts("*").
		Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)
}

// ErrNoAuthorizer: the cluster runs no authorizer, so it holds no ACL
// and enforces none.
var ErrNoAuthorizer = errors.New("the cluster runs no authorizer (SECURITY_DISABLED): it holds and enforces no ACL")

// DenyWriteACLs reads which of the literal DENY WRITE entries of
// principals on topics (host "*") exist on the cluster. An empty topics
// or principals list reads nothing: it would match every entry.
func DenyWriteACLs(ctx context.Context, cl *Client, topics, principals []string) ([]TopicACL, error) {
	if len(topics) == 0 || len(principals) == 0 {
		return nil, nil
	}
	res, err := kadm.NewClient(cl).DescribeACLs(ctx, DenyWriteFilter(topics, principals))
	if errors.Is(err, kerr.SecurityDisabled) {
		return nil, ErrNoAuthorizer
	}
	if err != nil {
		return nil, fmt.Errorf("reading the topics' ACLs: %w", err)
	}
	var out []TopicACL
	for _, r := range res {
		if errors.Is(r.Err, kerr.SecurityDisabled) {
			return nil, ErrNoAuthorizer
		}
		if r.Err != nil {
			return nil, fmt.Errorf("reading the topics' ACLs: %w %s", r.Err, r.ErrMessage)
		}
		for _, d := range r.Described {
			if d.Type != kmsg.ACLResourceTypeTopic || d.Pattern != kadm.ACLPatternLiteral || d.Operation != kadm.OpWrite ||
				d.Permission != kmsg.ACLPermissionTypeDeny || d.Host != "*" ||
				!slices.Contains(topics, d.Name) || !slices.Contains(principals, d.Principal) {
				continue
			}
			a := TopicACL{Topic: d.Name, Principal: d.Principal, Host: d.Host, Operation: "WRITE", Deny: true}
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out, nil
}
