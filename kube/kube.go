// Package kube reads the Flink Kubernetes Operator's resources
// (FlinkDeployment, FlinkStateSnapshot) through the Kubernetes API with
// client-go's dynamic client: no generated types, every field of an answer
// checked before use. It builds the client from a kubeconfig file or the
// pod's service account, lists the access the console needs (Used: the
// source of deploy/rbac.yaml) and turns API errors into sentences that
// name the missing permission or resource. It changes nothing: the patch
// and the create live in runbook/internal/effect.
package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/drconsole/drconsole/config"
)

// Group and Version of the operator's resources (CRDs under
// helm/flink-kubernetes-operator/crds/, served as v1beta1 since 1.0).
const (
	Group   = "flink.apache.org"
	Version = "v1beta1"
)

var (
	// FlinkDeployments is the FlinkDeployment resource.
	FlinkDeployments = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "flinkdeployments"}
	// FlinkStateSnapshots is the FlinkStateSnapshot resource (operator 1.10+).
	FlinkStateSnapshots = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "flinkstatesnapshots"}
)

// Client reaches one FlinkDeployment (Namespace/Deployment) and the
// snapshots beside it.
type Client struct {
	Namespace, Deployment string
	// Host is the API server, for error messages.
	Host string
	dyn  dynamic.Interface
	disc discovery.DiscoveryInterface
}

// RESTConfig is how to reach the API server of k: the pod's service
// account, or the kubeconfig file and its context (the current one when
// Context is empty).
func RESTConfig(k *config.Kubernetes) (*rest.Config, error) {
	if k.InCluster {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: in_cluster: %w", err)
		}
		return rc, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: k.Kubeconfig}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: kubeconfig %s: %w", k.Kubeconfig, err)
	}
	return rc, nil
}

// New builds the client of a configured target.
func New(k *config.Kubernetes) (*Client, error) {
	rc, err := RESTConfig(k)
	if err != nil {
		return nil, err
	}
	return NewForConfig(rc, k.Namespace, k.Deployment)
}

// NewForConfig builds the client from a rest.Config (tests point it at
// kubetest's stand-in API server).
func NewForConfig(rc *rest.Config, namespace, deployment string) (*Client, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "drconsole"
	if rc.Timeout == 0 {
		rc.Timeout = 30 * time.Second // one request; the caller bounds the whole
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return &Client{Namespace: namespace, Deployment: deployment, Host: rc.Host, dyn: dyn, disc: disc}, nil
}

// Resource is the namespaced dynamic interface of gvr: reads here, writes
// in runbook/internal/effect only (its boundary test holds that).
func (c *Client) Resource(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
	return c.dyn.Resource(gvr).Namespace(c.Namespace)
}

// GetDeployment reads the FlinkDeployment.
func (c *Client) GetDeployment(ctx context.Context) (*Deployment, error) {
	u, err := c.Resource(FlinkDeployments).Get(ctx, c.Deployment, metav1.GetOptions{})
	if err != nil {
		return nil, c.Explain(err, GetDeployment, c.Deployment)
	}
	return ParseDeployment(u)
}

// GetSnapshot reads the FlinkStateSnapshot name.
func (c *Client) GetSnapshot(ctx context.Context, name string) (*Snapshot, error) {
	u, err := c.Resource(FlinkStateSnapshots).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.Explain(err, GetSnapshot, name)
	}
	return ParseSnapshot(u)
}

// SnapshotsServed reports whether the API server serves FlinkStateSnapshot
// (its CRD is installed: operator 1.10+), from discovery.
func (c *Client) SnapshotsServed(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	list, err := c.disc.ServerResourcesForGroupVersion(Group + "/" + Version)
	if apierrors.IsNotFound(err) {
		return false, nil // no flink.apache.org resources at all; GetDeployment says so
	}
	if err != nil {
		return false, c.unreachable(fmt.Errorf("kubernetes: discovery of %s/%s: %w", Group, Version, err))
	}
	for _, r := range list.APIResources {
		if r.Name == FlinkStateSnapshots.Resource {
			return true, nil
		}
	}
	return false, nil
}

// IsConflict reports a write refused because the resource changed since
// it was read (409: its resourceVersion moved on) or, on create, exists.
func IsConflict(err error) bool { return apierrors.IsConflict(err) }

// Permanent reports an error that waiting does not cure: no permission,
// bad credentials, no such resource, a malformed answer.
func Permanent(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) || errors.Is(err, ErrBadAnswer)
}

// IsAlreadyExists reports a create of a name that exists.
func IsAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// IsNotFound reports a missing resource.
func IsNotFound(err error) bool { return apierrors.IsNotFound(err) }

var errUnreachable = errors.New("unreachable")
