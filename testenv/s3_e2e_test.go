//go:build e2e

// End-to-end: a savepoint written by REAL Flink with its operator state in separate files
// (relative state handles; data-inline-threshold 0), copied into S3-compatible storage
// (gofakes3, an independent in-memory S3 implementation: no S3 service runs here), is
// found by the catalog's scan of an s3:// savepoint dir and read through the S3 API to
// the same offsets as the local copy and the group's committed offsets.
//
//	go test -tags e2e -count=1 -run S3 -v ./testenv/
package testenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

func TestSavepointOnS3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := testenv.StartKafka(t, "primary")
	f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Config: map[string]string{
		"execution.checkpointing.data-inline-threshold": "0", // every state chunk in its own file
	}})
	const topic, group, uid = "s3-events", "flink-s3", "s3-source"
	createTopics(t, k, map[string]int32{topic: 3})
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	adm := k.Admin(t)
	produceN(t, cl, topic, 3, 600)
	end := catalogEndOffsets(t, adm, topic)
	job := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Topics: []string{topic}, GroupID: group,
		SourceUID: uid, Parallelism: 2, Name: "s3-e2e"})
	f.WaitJobRunning(t, job)
	flinkWaitCommitted(t, adm, group, end)
	local := f.TriggerSavepoint(t, job, t.TempDir(), false)

	// The savepoint really keeps state outside _metadata.
	ents, err := os.ReadDir(local)
	if err != nil {
		t.Fatal(err)
	}
	var stateFiles []string
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != flink.MetadataFileName {
			stateFiles = append(stateFiles, e.Name())
		}
	}
	if len(stateFiles) == 0 {
		t.Fatalf("savepoint %s holds only %v: the inline threshold did not apply", local, ents)
	}
	want := catalog.ReadOffsets(local, nil)
	if want.OffsetsJSON == "" || want.SourceUID != uid {
		t.Fatalf("local read: %+v", want)
	}
	if got := offsetsJSON(t, want.OffsetsJSON); !flinkMapsEqual(got, end) {
		t.Fatalf("local read %v, want the end offsets %v", got, end)
	}
	t.Logf("savepoint %s: _metadata + %d state file(s) %v; offsets %s", local, len(stateFiles), stateFiles, want.OffsetsJSON)

	// An S3 bucket holding the savepoint's _metadata only: the state files are missing.
	srv := s3test.Start(t, "flink")
	prefix := "savepoints/" + filepath.Base(local) + "/"
	upload := func(name string) {
		b, err := os.ReadFile(filepath.Join(local, name))
		if err != nil {
			t.Fatal(err)
		}
		srv.Put(t, prefix+name, b)
	}
	upload(flink.MetadataFileName)
	cfg := &config.Config{SavepointDirs: []string{"s3://flink/savepoints"},
		S3: srv.Config}
	st, err := s3.New(cfg.S3)
	if err != nil {
		t.Fatal(err)
	}
	uri := "s3://flink/" + strings.TrimSuffix(prefix, "/")
	if r := catalog.ReadOffsets(uri, st); r.OffsetsJSON != "" || !strings.Contains(r.Err, flink.ErrStateFileMissing.Error()) {
		t.Fatalf("read with the state files missing: %+v", r)
	}

	// With them: the catalog's scan finds it and reads the same offsets over S3.
	for _, name := range stateFiles {
		upload(name)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := &catalog.Catalog{Store: store, Config: cfg, S3: st, Log: slog.New(slog.NewTextHandler(t.Output(), nil)),
		Now: func() time.Time { return time.Now().Add(time.Minute) }} // past the scan's settle time
	t0 := time.Now()
	if err := c.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	t.Logf("TIMING catalog sync over S3 (list + read %d objects) %s", len(stateFiles)+1, time.Since(t0).Round(time.Millisecond))
	e, err := store.SavepointByPath(ctx, uri)
	if errors.Is(err, storage.ErrNotFound) {
		all, _ := store.Savepoints(ctx, storage.SavepointFilter{})
		t.Fatalf("%s not in the catalog: %+v", uri, all)
	}
	if err != nil {
		t.Fatal(err)
	}
	if e.OffsetsJSON != want.OffsetsJSON || e.SourceUID != uid || e.ReadError != "" || e.Origin != model.OriginScan {
		t.Fatalf("catalog entry over S3 %+v; local read %+v", e, want)
	}
	if committed := flinkCommitted(t, adm, group); !flinkMapsEqual(offsetsJSON(t, e.OffsetsJSON), committed) {
		t.Fatalf("offsets over S3 %s; group committed %v", e.OffsetsJSON, committed)
	}
}

func offsetsJSON(t *testing.T, s string) map[string]int64 {
	t.Helper()
	var m map[string]int64
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("offsets %q: %v", s, err)
	}
	return m
}
