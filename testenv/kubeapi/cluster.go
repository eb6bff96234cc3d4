package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/kube/kubetest"
)

// Cluster is kubetest.API over a real API server, as the operator sees
// it: reads from a watch of namespace ns's FlinkDeployments and
// FlinkStateSnapshots (an informer's cache), status written through the
// status subresource as a JSON merge patch.
type Cluster struct {
	Dyn dynamic.Interface
	ns  string
	inf map[string]cache.SharedIndexInformer

	mu sync.Mutex
	// errs are the writes the API server refused: the stand-in operator's
	// own writes are checked against the CRDs too.
	errs []error
}

var _ kubetest.API = (*Cluster)(nil)

// Watch starts the watch of namespace ns's served resources on a; it
// stops with the test.
func (a *APIServer) Watch(t testing.TB, ns string) *Cluster {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(a.Config)
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	c := &Cluster{Dyn: dyn, ns: ns, inf: map[string]cache.SharedIndexInformer{}}
	for _, r := range a.Served {
		c.inf[r] = f.ForResource(gvr(r)).Informer()
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	f.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for r, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("watch of %s did not sync", r.Resource)
		}
	}
	return c
}

func gvr(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: kube.Group, Version: kube.Version, Resource: resource}
}

// Get returns a copy of the watched object, nil when absent.
func (c *Cluster) Get(resource, ns, name string) map[string]any {
	inf := c.inf[resource]
	if inf == nil || ns != c.ns {
		return nil
	}
	o, ok, err := inf.GetStore().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	return o.(*unstructured.Unstructured).DeepCopy().Object
}

// SetStatus merge-patches the status subresource; a refusal is kept for
// Errs.
func (c *Cluster) SetStatus(resource, ns, name string, status map[string]any) {
	body, err := json.Marshal(map[string]any{"status": status})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = c.Dyn.Resource(gvr(resource)).Namespace(ns).Patch(ctx, name, types.MergePatchType, body,
			metav1.PatchOptions{FieldManager: "flink-kubernetes-operator", FieldValidation: "Strict"}, "status")
	}
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.errs = append(c.errs, fmt.Errorf("status of %s %s/%s: %w", resource, ns, name, err))
	}
}

// NewSnapshots names the watched FlinkStateSnapshots without a status.
func (c *Cluster) NewSnapshots(ns string) []string {
	if ns != c.ns {
		return nil
	}
	inf := c.inf[kube.FlinkStateSnapshots.Resource]
	if inf == nil {
		return nil // not served: an operator before 1.10
	}
	var names []string
	for _, o := range inf.GetStore().List() {
		u := o.(*unstructured.Unstructured)
		if _, ok := u.Object["status"]; !ok {
			names = append(names, u.GetName())
		}
	}
	return names
}

// Errs are the status writes the API server refused.
func (c *Cluster) Errs() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.errs...)
}
