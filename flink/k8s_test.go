package flink

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestK8sRestorePatch(t *testing.T) {
	k := K8sRestore{Namespace: "streaming", Name: "events-job", SavepointPath: "s3://dr-bucket/savepoints/savepoint-1\"x", Nonce: 1764400000000,
		AllowNonRestoredState: true, Args: []string{"--bootstrap", "kafka.dr:9092"}}
	got := k.MergePatch()
	// The text is YAML for kubectl: its body must be the JSON the runbook sends.
	var body map[string]any
	if err := json.Unmarshal([]byte(got[strings.Index(got, "{"):]), &body); err != nil {
		t.Fatalf("patch body is not JSON: %v\n%s", err, got)
	}
	for _, want := range []string{
		"\"spec\": {\n    \"job\": {\n",
		`      "initialSavepointPath": "s3://dr-bucket/savepoints/savepoint-1\"x",` + "\n",
		`      "savepointRedeployNonce": 1764400000000`,
		`      "upgradeMode": "savepoint"`,
		`      "allowNonRestoredState": true,`,
		`      "state": "running"`,
		"      \"args\": [\n        \"--bootstrap\",\n        \"kafka.dr:9092\"\n      ],\n",
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
