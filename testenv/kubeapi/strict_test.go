package kubeapi

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drconsole/drconsole/kube"
)

// undeclare removes from the CRDs a field the console writes each time:
// spec.job.savepointRedeployNonce of FlinkDeployment and
// spec.savepoint.disposeOnDelete of FlinkStateSnapshot (a cluster whose
// CRDs do not know them, e.g. older than the operator it runs).
func undeclare(crd *apiextensionsv1.CustomResourceDefinition) bool {
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	switch crd.Spec.Names.Kind {
	case "FlinkDeployment":
		job := spec.Properties["job"]
		delete(job.Properties, "savepointRedeployNonce")
		spec.Properties["job"] = job
	case "FlinkStateSnapshot":
		sp := spec.Properties["savepoint"]
		delete(sp.Properties, "disposeOnDelete")
		spec.Properties["savepoint"] = sp
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	return true
}

// A field the CRD's schema does not declare fails the step with the API
// server's reason (the console asks for strict field validation), nothing
// created, patched or deployed: on the snapshot create (400), then on the
// deployment patch (422, whose message quotes the whole patched object:
// the step's error keeps only the reason). The same writes without strict
// validation are accepted with the field pruned and only a warning, which
// the console would otherwise have taken for success.
func TestUndeclaredFieldFailsTheStep(t *testing.T) {
	r := newRig(t, undeclare)
	stop := r.operator(t, false)
	cfg := consoleConfig(t, r.kubeconfig, r.bootstrap)
	ctx := context.Background()
	snapshots := r.dyn(t).Resource(kube.FlinkStateSnapshots).Namespace(ns)

	rb := console(t, cfg, filepath.Join(t.TempDir(), "db"))
	id := approvedRestore(t, rb, savepoint, drArgs)
	err, _ := execute(t, ctx, rb, id)
	const snapField = `unknown field "spec.savepoint.disposeOnDelete"`
	if err == nil || !strings.Contains(err.Error(), snapField) {
		t.Fatalf("snapshot create with an undeclared field: %v, want the server's %s", err, snapField)
	}
	t.Logf("the step failed on the snapshot create with (HTTP %d %s): %v", code(err), apierrors.ReasonForError(err), err)
	if run, _ := rb.Get(ctx, id); run.Steps[0].Status != "failed" || !strings.Contains(run.Steps[0].Error, snapField) {
		t.Fatalf("step %s: %s", run.Steps[0].Status, run.Steps[0].Error)
	}
	if list, err := snapshots.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("FlinkStateSnapshots after a refused create: %v %v", list, err)
	}

	cfg.FlinkTargets[0].Kubernetes.UseStateSnapshot = "false"
	rb = console(t, cfg, filepath.Join(t.TempDir(), "db"))
	id = approvedRestore(t, rb, savepoint, drArgs)
	err, res := execute(t, ctx, rb, id)
	const depField = `unknown field "spec.job.savepointRedeployNonce"`
	if err == nil || !strings.Contains(err.Error(), depField) || res.Patched {
		t.Fatalf("patch with an undeclared field: %v (patched %t), want the server's %s", err, res.Patched, depField)
	}
	t.Logf("the step failed on the patch with (HTTP %d %s): %v", code(err), apierrors.ReasonForError(err), err)
	if m := err.Error(); strings.Contains(m, "managedFields") || strings.Contains(m, "flinkConfiguration") {
		t.Errorf("the step's error quotes the patched object (the server's 422 does): %s", m)
	}
	if run, _ := rb.Get(ctx, id); run.Steps[0].Status != "failed" || !strings.Contains(run.Steps[0].Error, depField) {
		t.Fatalf("step %s: %s", run.Steps[0].Status, run.Steps[0].Error)
	}
	d := r.get(t, kube.FlinkDeployments.Resource, dep)
	if p, _, _ := unstructured.NestedString(d.Object, "spec", "job", "initialSavepointPath"); d.GetGeneration() != 1 || p == savepoint || len(r.deploys()) != 0 {
		t.Fatalf("generation %d, initialSavepointPath %q, %d deploys after a refused patch", d.GetGeneration(), p, len(r.deploys()))
	}
	stop()

	// Without strict validation the server takes both writes and drops
	// the field, saying so only in a warning header.
	var warnings []string
	rc := *r.api.Config
	rc.WarningHandlerWithContext = warn(func(msg string) { warnings = append(warnings, msg) })
	lax := dynamic.NewForConfigOrDie(&rc)
	snap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kube.Group + "/" + kube.Version, "kind": "FlinkStateSnapshot",
		"metadata": map[string]any{"name": "lax", "namespace": ns},
		"spec": map[string]any{"backoffLimit": int64(0), "jobReference": map[string]any{"kind": "FlinkDeployment", "name": dep},
			"savepoint": map[string]any{"alreadyExists": true, "disposeOnDelete": false, "path": savepoint}},
	}}
	u, err := lax.Resource(kube.FlinkStateSnapshots).Namespace(ns).Create(ctx, snap, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("snapshot create, default validation: %v", err)
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "savepoint", "disposeOnDelete"); set || len(warnings) != 1 || !strings.Contains(warnings[0], snapField) {
		t.Fatalf("disposeOnDelete kept %t, warnings %q: want pruned with one warning", set, warnings)
	}
	t.Logf("without strict validation the create was accepted, disposeOnDelete pruned; warning: %s", warnings[0])
	body := []byte(`{"metadata":{"resourceVersion":"` + d.GetResourceVersion() + `"},"spec":{"job":{"initialSavepointPath":"` + savepoint + `","savepointRedeployNonce":42}}}`)
	u, err = lax.Resource(kube.FlinkDeployments).Namespace(ns).Patch(ctx, dep, types.MergePatchType, body, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch, default validation: %v", err)
	}
	p, _, _ := unstructured.NestedString(u.Object, "spec", "job", "initialSavepointPath")
	if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "job", "savepointRedeployNonce"); set || p != savepoint || u.GetGeneration() != 2 ||
		len(warnings) != 2 || !strings.Contains(warnings[1], depField) {
		t.Fatalf("nonce kept %t, initialSavepointPath %q, generation %d, warnings %q: want the path set, the nonce pruned, one more warning", set, p, u.GetGeneration(), warnings)
	}
	t.Logf("without strict validation the patch was accepted (generation 2), the nonce pruned; warning: %s", warnings[1])
}

// code is the HTTP status of the API error in err's chain, 0 without one.
func code(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}
