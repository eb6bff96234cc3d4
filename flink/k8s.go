package flink

import (
	"encoding/json"
	"fmt"
	"strings"
)

// K8sRestore is a restore through the Flink Kubernetes Operator: the change
// to an existing FlinkDeployment that makes the operator redeploy the job
// from a savepoint (operator 1.8+: savepointRedeployNonce). The runbook
// applies it through the Kubernetes API (runbook/internal/effect); the
// savepoint page shows it as text for a DR cluster the console has no
// Kubernetes access to.
type K8sRestore struct {
	Namespace, Name string
	SavepointPath   string
	// Nonce must differ from the deployment's current
	// spec.job.savepointRedeployNonce, or the operator does nothing.
	Nonce                 int64
	AllowNonRestoredState bool
	// Args, when set, replace spec.job.args (e.g. to point at DR Kafka).
	Args []string
}

// Job is the spec.job part of the JSON merge patch (RFC 7386): the
// operator's field names (reference.md, JobSpec). state "running" also
// starts a standby deployment kept suspended; upgradeMode "savepoint"
// keeps later upgrades stateful.
func (k K8sRestore) Job() map[string]any {
	job := map[string]any{
		"initialSavepointPath":   k.SavepointPath,
		"savepointRedeployNonce": k.Nonce,
		"upgradeMode":            "savepoint",
		"allowNonRestoredState":  k.AllowNonRestoredState,
		"state":                  "running",
	}
	if len(k.Args) > 0 {
		job["args"] = k.Args
	}
	return job
}

// MergePatch renders the merge patch that `kubectl patch --type merge`
// applies, the same content the runbook sends. It is JSON (which YAML
// reads), so no value can break the document.
func (k K8sRestore) MergePatch() string {
	body, _ := json.MarshalIndent(map[string]any{"spec": map[string]any{"job": k.Job()}}, "", "  ") // strings, bools, ints: cannot fail
	var b strings.Builder
	b.WriteString("# Restore " + k.Namespace + "/" + k.Name + " from a savepoint (Flink Kubernetes Operator 1.8+).\n")
	b.WriteString("# A new savepointRedeployNonce makes the operator redeploy from initialSavepointPath.\n")
	b.WriteString("# There is no rollback to the previous state afterwards.\n")
	b.Write(body)
	b.WriteString("\n")
	return b.String()
}

// KubectlCommand is how an operator applies MergePatch saved as file.
func (k K8sRestore) KubectlCommand(file string) string {
	return fmt.Sprintf("kubectl --namespace %s patch flinkdeployment %s --type merge --patch-file %s", shellQuote(k.Namespace), shellQuote(k.Name), shellQuote(file))
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
