package flink

import (
	"strings"
	"testing"
)

func TestK8sRestorePatch(t *testing.T) {
	k := K8sRestore{Namespace: "streaming", Name: "events-job", SavepointPath: "s3://dr-bucket/savepoints/savepoint-1\"x", Nonce: 1764400000000,
		AllowNonRestoredState: true, Args: []string{"--bootstrap", "kafka.dr:9092"}}
	got := k.MergePatch()
	for _, want := range []string{
		"spec:\n  job:\n",
		`    initialSavepointPath: "s3://dr-bucket/savepoints/savepoint-1\"x"` + "\n",
		"    savepointRedeployNonce: 1764400000000\n",
		"    upgradeMode: \"savepoint\"\n",
		"    allowNonRestoredState: true\n",
		"    args:\n      - \"--bootstrap\"\n      - \"kafka.dr:9092\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("patch lacks %q:\n%s", want, got)
		}
	}
	if cmd := k.KubectlCommand("restore.yaml"); cmd != "kubectl --namespace streaming patch flinkdeployment events-job --type merge --patch-file restore.yaml" {
		t.Errorf("command %q", cmd)
	}
	if q := shellQuote("it's"); q != `'it'"'"'s'` {
		t.Errorf("quote %q", q)
	}
}
