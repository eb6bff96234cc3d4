package flink

import (
	"fmt"
	"strconv"
	"strings"
)

// K8sRestore is a restore through the Flink Kubernetes Operator: the change
// to an existing FlinkDeployment that makes the operator redeploy the job
// from a savepoint (operator 1.8+: savepointRedeployNonce).
type K8sRestore struct {
	Namespace, Name string
	SavepointPath   string
	// Nonce must differ from the deployment's current
	// spec.job.savepointRedeployNonce; a timestamp is a safe choice.
	Nonce                 int64
	AllowNonRestoredState bool
	// Args, when set, replace spec.job.args (e.g. to point at DR Kafka).
	Args []string
}

// MergePatch renders the JSON merge patch, as YAML, that `kubectl patch
// --type merge` applies. Strings are double-quoted (YAML reads JSON string
// syntax), so no value can break the document.
func (k K8sRestore) MergePatch() string {
	var b strings.Builder
	b.WriteString("# Restore " + k.Namespace + "/" + k.Name + " from a savepoint (Flink Kubernetes Operator 1.8+).\n")
	b.WriteString("# A new savepointRedeployNonce makes the operator redeploy from initialSavepointPath.\n")
	b.WriteString("# There is no rollback to the previous state afterwards.\n")
	b.WriteString("spec:\n  job:\n")
	fmt.Fprintf(&b, "    initialSavepointPath: %s\n", strconv.Quote(k.SavepointPath))
	fmt.Fprintf(&b, "    savepointRedeployNonce: %d\n", k.Nonce)
	b.WriteString("    upgradeMode: \"savepoint\"\n")
	fmt.Fprintf(&b, "    allowNonRestoredState: %t\n", k.AllowNonRestoredState)
	if len(k.Args) > 0 {
		b.WriteString("    args:\n")
		for _, a := range k.Args {
			fmt.Fprintf(&b, "      - %s\n", strconv.Quote(a))
		}
	}
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
