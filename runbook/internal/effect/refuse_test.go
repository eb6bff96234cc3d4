package effect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"k8s.io/client-go/rest"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// Every effect refuses a Written that does not prove a record (the zero
// one, which is what audit.Recorder returns when the write failed) before
// sending anything: the counting server gets no request, the DR group no
// offsets, the store no group change.
func TestEffectsRefuseWithoutAuditRecord(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	store, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// The Written a failed audit write yields.
	storagetest.FailAuditWrites(t, path, true)
	var none audit.Written
	none, err = audit.New(store).Record(ctx, "alice", "test.effect", "test", nil)
	if err == nil || none.Valid() {
		t.Fatalf("a failed audit write gave %+v, %v", none, err)
	}
	storagetest.FailAuditWrites(t, path, false)

	_, dcl := kafkatest.NewCluster(t, "dr", "events")
	cc, lc, fc := connect.New(srv.URL), clusterlink.New(srv.URL, "c", "l", "", "", nil), flink.NewRESTClient(srv.URL)
	pending := storage.GroupChange{ID: 1, Flow: "f", Group: "billing", Status: "applying",
		Changes: []storage.OffsetChange{{Topic: "events", Partition: 0, Applied: 5}}}
	for name, call := range map[string]func() error{
		"StopConnector":   func() error { return StopConnector(ctx, none, cc, "mm2") },
		"ResumeConnector": func() error { return ResumeConnector(ctx, none, cc, "mm2") },
		"PauseConnector":  func() error { return PauseConnector(ctx, none, cc, "mm2") },
		"PutConnectorConfig": func() error {
			_, err := PutConnectorConfig(ctx, none, cc, "mm2", map[string]string{"a": "b"})
			return err
		},
		"PutReverseConnectors": func() error {
			_, err := PutReverseConnectors(ctx, none, cc, mm2.ReverseConnectors{Source: "s", Configs: map[string]map[string]string{"s": {}}})
			return err
		},
		"DeleteConnector": func() error { _, err := DeleteConnector(ctx, none, cc, "mm2"); return err },
		"CreateConnectorStopped": func() error {
			_, err := CreateConnectorStopped(ctx, none, cc, "mm2", map[string]string{"a": "b"})
			return err
		},
		"AlterConnectorOffsets": func() error { return AlterConnectorOffsets(ctx, none, cc, "mm2", []byte(`{"offsets":[]}`)) },
		"Promote":               func() error { _, err := Promote(ctx, none, lc, []string{"t"}); return err },
		"Failover":              func() error { _, err := Failover(ctx, none, lc, []string{"t"}); return err },
		"Pause":                 func() error { _, err := Pause(ctx, none, lc, []string{"t"}); return err },
		"Resume":                func() error { _, err := Resume(ctx, none, lc, []string{"t"}); return err },
		"ReverseAndStart":       func() error { _, err := ReverseAndStart(ctx, none, lc, []string{"t"}); return err },
		"ReverseAndPause":       func() error { _, err := ReverseAndPause(ctx, none, lc, []string{"t"}); return err },
		"TriggerSavepoint": func() error {
			_, err := TriggerSavepoint(ctx, none, fc, "a1", "", true)
			return err
		},
		"RunJar":    func() error { _, err := RunJar(ctx, none, fc, "j", flink.RunRequest{}); return err },
		"CancelJob": func() error { _, err := CancelJob(ctx, none, fc, "a1"); return err },
		"DeleteDrillGroup": func() error {
			_, err := DeleteDrillGroup(ctx, none, dcl, DrillGroupPrefix+"1-billing")
			return err
		},
		"RestoreFlinkDeployment": func() error {
			kc, err := kube.NewForConfig(&rest.Config{Host: srv.URL}, "flink", "job")
			if err != nil {
				return err
			}
			_, err = RestoreFlinkDeployment(ctx, none, kc, KubeRestore{Restore: flink.K8sRestore{Namespace: "flink", Name: "job", SavepointPath: "s3://b/sp", Nonce: 1}, Snapshot: "s"})
			return err
		},
		"RewriteSavepoint": func() error {
			_, err := RewriteSavepoint(ctx, none, flink.RewriteRequest{Source: t.TempDir(), Dest: filepath.Join(t.TempDir(), "dr")})
			return err
		},
		"ApplyOffsets": func() error {
			_, err := ApplyOffsets(ctx, none, store, dcl, "f", "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 5}, "alice", "test")
			return err
		},
		"CommitPrimaryGroup": func() error {
			return CommitPrimaryGroup(ctx, none, dcl, "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 5})
		},
		"FinishInterruptedChange": func() error {
			_, err := FinishInterruptedChange(ctx, none, store, dcl, pending)
			return err
		},
	} {
		if err := call(); !errors.Is(err, ErrNotAudited) {
			t.Errorf("%s without an audit record: %v", name, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests went out without an audit record", n)
	}
	if cs, err := store.GroupChanges(ctx, "f", "billing"); err != nil || len(cs) != 0 {
		t.Fatalf("group changes %+v %v", cs, err)
	}
	offs, err := kafka.GroupOffsets(ctx, kadm.NewClient(dcl), "billing") // none for a group that does not exist
	if o, ok := offs.Lookup("events", 0); err != nil || (ok && o.At >= 0) {
		t.Fatalf("DR offsets %+v %v", offs, err)
	}
}
