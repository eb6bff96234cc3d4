package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/model"
)

// putFixture uploads a real fixture's _metadata under key.
func putFixture(t *testing.T, srv *s3test.Server, fixture, key string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(fixture), "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Put(t, key, b)
}

// Savepoints and retained checkpoints on S3: found in Flink's history, by
// a scan of an s3:// savepoint dir and by registration; their offsets read
// from the objects.
func TestCatalogOnS3(t *testing.T) {
	ctx := context.Background()
	fs3 := s3test.Start(t, "flink")
	job := "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	putFixture(t, fs3, fixtureEvents, "savepoints/savepoint-a1b2c3-5f0e1d2c3b4a/_metadata")
	putFixture(t, fs3, fixtureOrders, "checkpoints/"+job+"/chk-11/_metadata")
	putFixture(t, fs3, fixtureOrders, "checkpoints/"+job+"/chk-9/_metadata") // retained too (num-retained 2)
	putFixture(t, fs3, fixtureOrders, "elsewhere/savepoint-ffffff-000000000001/_metadata")
	putFixture(t, fs3, fixtureOrders, "savepoints/manual/copy-1/_metadata")
	spURI := "s3://flink/savepoints/savepoint-a1b2c3-5f0e1d2c3b4a"
	chk11, chk10, chk9 := "s3://flink/checkpoints/"+job+"/chk-11", "s3://flink/checkpoints/"+job+"/chk-10", "s3://flink/checkpoints/"+job+"/chk-9"

	ff := newFakeFlink(t)
	ff.json("GET /jobs/overview", `{"jobs":[{"jid":"`+job+`","name":"events","start-time":1,"end-time":-1,"duration":5,"state":"RUNNING","last-modification":2,"tasks":{"running":2},"pending-operators":0}]}`)
	ff.json("GET /jobs/"+job+"/checkpoints", `{"counts":{"restored":0,"total":3,"in_progress":0,"completed":3,"failed":0},
		"latest":{"completed":{"className":"completed","id":11,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"`+chk11+`","state_size":3700,"trigger_timestamp":5000,"latest_ack_timestamp":5100,"discarded":false},
		"savepoint":null,"failed":null,"restored":null},
		"history":[
		{"className":"completed","id":11,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"`+chk11+`","state_size":3700,"trigger_timestamp":5000,"latest_ack_timestamp":5100,"discarded":false},
		{"className":"completed","id":10,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"`+chk10+`","state_size":3700,"trigger_timestamp":4000,"latest_ack_timestamp":4100,"discarded":false},
		{"className":"completed","id":9,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"`+chk9+`","state_size":3700,"trigger_timestamp":3000,"latest_ack_timestamp":3100,"discarded":false},
		{"className":"completed","id":23,"status":"COMPLETED","is_savepoint":true,"checkpoint_type":"SAVEPOINT","external_path":"`+spURI+`/","state_size":4562,"trigger_timestamp":1000,"latest_ack_timestamp":1100,"discarded":false}]}`)

	store := openStore(t)
	var clk clock
	clk.set(time.Now().Add(time.Minute)) // every object has settled
	cfg := &config.Config{
		FlinkTargets:  []*config.FlinkTarget{{Name: "flink-primary", RestURL: ff.URL, Region: "primary"}},
		SavepointDirs: []string{"s3://flink/savepoints/"},
		S3:            fs3.Config,
	}
	c := &Catalog{Store: store, Config: cfg, Log: quietLog(), Now: clk.now, S3: newS3Store(t, fs3.Config)}
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got := entriesByPath(t, store)
	// chk-10 is listed by Flink but gone from S3: not recorded; chk-9 is
	// not the latest but still there: recorded. The savepoint is seen by
	// REST and by the scan: one entry.
	if len(got) != 4 {
		t.Fatalf("%d entries, want 4 (savepoint, chk-11, chk-9, manual/copy-1 by the scan): %v", len(got), keys(got))
	}
	checkOffsets(t, got[chk9], loadExpected(t, fixtureOrders))
	checkOffsets(t, got[spURI], loadExpected(t, fixtureEvents))
	checkOffsets(t, got[chk11], loadExpected(t, fixtureOrders))
	checkOffsets(t, got["s3://flink/savepoints/manual/copy-1"], loadExpected(t, fixtureOrders))
	if e := got[spURI]; e.Origin != model.OriginREST || e.Kind != model.KindSavepoint || e.JobID != job {
		t.Fatalf("savepoint entry %+v", e)
	}
	if e := got["s3://flink/savepoints/manual/copy-1"]; e.Origin != model.OriginScan || e.SizeBytes == nil || *e.SizeBytes == 0 || e.CompletedMs == nil {
		t.Fatalf("scanned entry %+v", e)
	}

	// Registration: inside the S3 savepoint dir only.
	putFixture(t, fs3, fixtureEvents, "savepoints/late/savepoint-9/_metadata")
	id, err := c.Register(ctx, "s3://flink/savepoints/late/savepoint-9/_metadata")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := store.SavepointByID(ctx, id); err != nil || e.Path != "s3://flink/savepoints/late/savepoint-9" || e.Origin != model.OriginManual {
		t.Fatalf("registered %+v %v", e, err)
	} else {
		checkOffsets(t, e, loadExpected(t, fixtureEvents))
	}
	for _, p := range []string{
		"s3://flink/elsewhere/savepoint-ffffff-000000000001",
		"s3://flink/savepoints/../elsewhere/savepoint-ffffff-000000000001",
		"s3://flink/savepointsX/a",
	} {
		if _, err := c.Register(ctx, p); !errors.Is(err, ErrOutsideDirs) {
			t.Errorf("Register(%s) = %v, want ErrOutsideDirs", p, err)
		}
	}
	if _, err := c.Register(ctx, "s3://flink/savepoints/nothing"); err == nil || !strings.Contains(err.Error(), "no _metadata") {
		t.Errorf("Register(no _metadata) = %v", err)
	}

	// Without an s3 endpoint: listed, not read, and the reason says what to set.
	r := ReadOffsets(spURI, nil)
	if r.OffsetsJSON != "" || !strings.Contains(r.Err, "s3.endpoint") {
		t.Fatalf("ReadOffsets without S3: %+v", r)
	}
}

func newS3Store(t *testing.T, cfg *config.S3) *s3.Store {
	t.Helper()
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// An S3 entry whose read failed (here: recorded before S3 was configured)
// is read again at the next sync once it can be.
func TestS3ReadRetried(t *testing.T) {
	ctx := context.Background()
	fs3 := s3test.Start(t, "flink")
	putFixture(t, fs3, fixtureEvents, "sp/savepoint-1/_metadata")
	store := openStore(t)
	cfg := &config.Config{}
	c := &Catalog{Store: store, Config: cfg, Log: quietLog()}
	id, err := store.UpsertSavepoint(ctx, model.Savepoint{Path: "s3://flink/sp/savepoint-1", Kind: model.KindSavepoint,
		Origin: model.OriginREST, Status: model.SavepointCompleted}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if e, _ := store.SavepointByID(ctx, id); e.OffsetsJSON != "" || !strings.Contains(e.ReadError, "s3.endpoint") {
		t.Fatalf("without S3: %+v", e)
	}
	cfg.S3, c.S3 = fs3.Config, newS3Store(t, fs3.Config)
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	e, _ := store.SavepointByID(ctx, id)
	checkOffsets(t, e, loadExpected(t, fixtureEvents))
	if e.ReadError != "" {
		t.Fatalf("read error kept: %q", e.ReadError)
	}
}
