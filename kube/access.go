package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Access is one RBAC permission the console uses: a verb on a resource of
// the flink.apache.org group.
type Access struct{ Verb, Resource string }

// The console's accesses, each named where the code uses it.
var (
	GetDeployment   = Access{"get", FlinkDeployments.Resource}
	PatchDeployment = Access{"patch", FlinkDeployments.Resource}
	GetSnapshot     = Access{"get", FlinkStateSnapshots.Resource}
	CreateSnapshot  = Access{"create", FlinkStateSnapshots.Resource}
)

// Used is every access the console needs, and so what deploy/rbac.yaml
// grants (a test holds the two together, and the stand-in API server's
// tests that the code asks for nothing else). Status is read with the
// resource (GET returns it), so no status subresource access is needed;
// discovery is open to every signed-in account (system:discovery).
var Used = []Access{GetDeployment, PatchDeployment, GetSnapshot, CreateSnapshot}

func (a Access) String() string { return a.Verb + " " + a.Resource + "." + Group }

// Explain turns an API error of access a on resource name into a sentence
// an operator can act on, wrapping the original.
func (c *Client) Explain(err error, a Access, name string) error {
	if err == nil {
		return nil
	}
	kind := "FlinkDeployment"
	if a.Resource == FlinkStateSnapshots.Resource {
		kind = "FlinkStateSnapshot"
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the console's service account may not %s in namespace %s (grant it: deploy/rbac.yaml): %w", a, c.Namespace, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the Kubernetes API server %s refused the console's credentials (401: check the kubeconfig or the service account token): %w", c.Host, err)
	case apierrors.IsNotFound(err) && a.Verb != "create":
		return fmt.Errorf("%s %s/%s not found (flink_targets[].kubernetes names it; is the Flink Kubernetes Operator's CRD installed?): %w", kind, c.Namespace, name, err)
	}
	if u := c.unreachable(err); errors.Is(u, errUnreachable) {
		return u
	}
	return fmt.Errorf("kubernetes: %s %s/%s: %w", a, c.Namespace, name, err)
}

// unreachable names the API server when err is a network failure (the
// request never got an answer).
func (c *Client) unreachable(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // given up by the caller, not a network failure
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return fmt.Errorf("the Kubernetes API server %s is %w: %w", c.Host, errUnreachable, err)
	}
	return err
}
