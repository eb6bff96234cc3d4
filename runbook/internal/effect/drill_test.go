package effect

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/storage"
)

// DeleteDrillGroup deletes only a drill's temporary group: a production
// group (any name without the drill prefix) is refused before Kafka is
// asked anything, and its offsets stay; a group that is gone already is
// not an error.
func TestDeleteDrillGroup(t *testing.T) {
	ctx := context.Background()
	_, dcl := kafkatest.NewCluster(t, "dr", "events")
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	adm := kadm.NewClient(dcl)
	for _, g := range []string{"billing", DrillGroupPrefix + "7-billing"} {
		o := kadm.Offsets{}
		o.Add(kadm.Offset{Topic: "events", Partition: 0, At: 42, LeaderEpoch: -1})
		if err := adm.CommitAllOffsets(ctx, g, o); err != nil {
			t.Fatal(err)
		}
	}
	w := written(t, store)
	if _, err := DeleteDrillGroup(ctx, w, dcl, "billing"); !errors.Is(err, ErrNotDrillGroup) {
		t.Fatalf("deleting a production group: %v", err)
	}
	deleted, err := DeleteDrillGroup(ctx, w, dcl, DrillGroupPrefix+"7-billing")
	if err != nil || !deleted {
		t.Fatalf("deleting the drill group: %v %v", deleted, err)
	}
	if deleted, err := DeleteDrillGroup(ctx, w, dcl, DrillGroupPrefix+"7-billing"); err != nil || deleted {
		t.Fatalf("deleting it again: %v %v", deleted, err)
	}
	for g, want := range map[string]int64{"billing": 42, DrillGroupPrefix + "7-billing": -1} {
		offs, err := adm.FetchOffsets(ctx, g)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			t.Fatal(err)
		}
		o, ok := offs.Lookup("events", 0)
		if got := map[bool]int64{true: o.At, false: -1}[ok]; got != want {
			t.Errorf("group %s: offset %d, want %d", g, got, want)
		}
	}
}

// CancelJob cancels a running job with Flink's PATCH, and asks nothing
// more of a job that is unknown or finished.
func TestCancelJob(t *testing.T) {
	var mu sync.Mutex
	states := map[string]string{"run": "RUNNING", "done": "CANCELED"}
	var patches []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		id := strings.TrimPrefix(r.URL.Path, "/jobs/")
		st, ok := states[id]
		switch {
		case !ok:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errors":["job not found"]}`)
		case r.Method == http.MethodPatch && r.URL.Query().Get("mode") == "cancel":
			patches = append(patches, id)
			states[id] = "CANCELED"
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{}`)
		default:
			io.WriteString(w, `{"jid":"`+id+`","state":"`+st+`"}`)
		}
	}))
	defer srv.Close()
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c, w := flink.NewRESTClient(srv.URL), written(t, store)
	for id, want := range map[string]string{"run": "RUNNING", "done": "CANCELED", "gone": "not found"} {
		if st, err := CancelJob(context.Background(), w, c, id); err != nil || st != want {
			t.Errorf("cancel %s: %q %v, want %q", id, st, err, want)
		}
	}
	if len(patches) != 1 || patches[0] != "run" || states["run"] != "CANCELED" {
		t.Fatalf("cancel requests %v, states %v", patches, states)
	}
}

// A drill's copy on S3 goes object by object, nested ones too, with
// `_metadata` last; done twice is no error; a prefix with objects but no
// `_metadata` is no savepoint and stays.
func TestRemoveRemoteSavepointCopy(t *testing.T) {
	ctx := context.Background()
	fs3 := s3test.Start(t, "flink")
	store, err := s3.New(fs3.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"sp/copy/_metadata", "sp/copy/op-1/state", "sp/copy/op-1/deeper/more", "sp/copy/shared", "sp/copy-other/_metadata"} {
		fs3.Put(t, k, []byte("x"))
	}
	fs3.Put(t, "sp/not-a-savepoint/data", []byte("x"))
	for range 2 {
		if err := RemoveRemoteSavepointCopy(ctx, writtenT(t), store, "s3://flink/sp/copy/"); err != nil {
			t.Fatal(err)
		}
	}
	if empty, err := store.Empty(ctx, "s3://flink/sp/copy"); err != nil || !empty {
		t.Fatalf("left under the copy: empty %v, %v", empty, err)
	}
	if ok, _ := store.Exists(ctx, "s3://flink/sp/copy-other/_metadata"); !ok {
		t.Fatal("a neighbour sharing the prefix was removed")
	}
	if err := RemoveRemoteSavepointCopy(ctx, writtenT(t), store, "s3://flink/sp/not-a-savepoint"); err == nil || !strings.Contains(err.Error(), "no savepoint `_metadata`") {
		t.Fatalf("a prefix without _metadata: %v", err)
	}
	if ok, _ := store.Exists(ctx, "s3://flink/sp/not-a-savepoint/data"); !ok {
		t.Fatal("an object of a prefix that is no savepoint was removed")
	}
	if err := RemoveRemoteSavepointCopy(ctx, audit.Written{}, store, "s3://flink/sp/copy-other"); !errors.Is(err, ErrNotAudited) {
		t.Fatalf("without an audit record: %v", err)
	}
}
