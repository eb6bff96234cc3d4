//go:build e2e

// End-to-end: the same testenv job on the other Flink versions (testenv.Flink1_20: Flink 1.20.3 +
// flink-connector-kafka 3.4.0-1.20; testenv.Flink2_3: Flink 2.3.0 + 5.0.0-2.2, the newest
// connector, built for 2.2), so the savepoint reader has real fixtures of other `_metadata`
// writers. Same scenario as TestFlinkSavepoints' p2-events4 shape: events (4
// partitions), parallelism 2, plain savepoint, more data, stop-with-savepoint, restore from a
// relocated copy.
//
//	go test -tags e2e -count=1 -run TestFlinkVersionSavepoints -v ./testenv/
//	DRCONSOLE_FIXTURE_OUT=$PWD/flink/testdata/savepoints go test -tags e2e -count=1 -run TestFlinkVersionSavepoints -v ./testenv/
package testenv_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/testenv"
)

func TestFlinkVersionSavepoints(t *testing.T) {
	for _, d := range []testenv.FlinkDist{testenv.Flink1_20, testenv.Flink2_3} {
		t.Run("flink-"+d.Version, func(t *testing.T) {
			start := time.Now()
			k := testenv.StartKafka(t, "primary")
			f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &d})
			s := flinkShapes[0] // p2-events4
			s.fixture = "flink-" + d.Version + "-p2-events4-stop"
			runFlinkDistShape(t, k, f, d, s)
			t.Logf("TIMING flink %s start %s; whole test %s", d.Version, f.Proc.Startup.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		})
	}
}

// runFlinkDistShape is runFlinkShape for any FlinkDist (fixture metadata names its versions),
// plus the console's own reader on the savepoints it takes.
func runFlinkDistShape(t *testing.T, k *testenv.Kafka, f *testenv.Flink, d testenv.FlinkDist, s flinkShape) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := k.Admin(t)
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	for _, topic := range s.topics {
		if res, err := adm.CreateTopic(ctx, s.partitions[topic], 1, nil, topic); err != nil || res.Err != nil {
			t.Fatalf("create topic %s: %v %v", topic, err, res.Err)
		}
	}
	flinkProduce(t, cl, s, 1)
	end := flinkEndOffsets(t, adm, s)
	opts := testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Topics: s.topics, GroupID: s.group, SourceUID: s.uid, Parallelism: s.parallelism}
	submit := time.Now()
	jobID := f.SubmitJob(t, opts)
	f.WaitJobRunning(t, jobID)
	t.Logf("TIMING submit -> RUNNING %s", time.Since(submit).Round(time.Millisecond))
	cp := f.WaitCheckpoint(t, jobID, 0)
	t.Logf("TIMING submit -> first completed checkpoint %d %s", cp.ID, time.Since(submit).Round(time.Millisecond))
	flinkWaitCommitted(t, adm, s.group, end)
	t.Logf("TIMING submit -> group committed the end offsets %s", time.Since(submit).Round(time.Millisecond))
	vertices := flinkVertices(t, f, jobID)

	// The console's reader on every savepoint: it must give the scan's offsets.
	reader := func(path string, want map[string]int64) {
		t.Helper()
		sp, err := flink.ReadSavepoint(path)
		if err != nil {
			t.Errorf("flink.ReadSavepoint(%s) on a Flink %s savepoint: %v", path, d.Version, err)
			return
		}
		ko, err := sp.KafkaSourceOffsets("")
		if err != nil {
			t.Errorf("KafkaSourceOffsets on a Flink %s savepoint (v%d): %v", d.Version, sp.Version, err)
			return
		}
		got := map[string]int64{}
		for k, p := range ko.Partitions {
			got[k] = p.Next
		}
		if !flinkMapsEqual(got, want) {
			t.Errorf("reader on Flink %s savepoint: %v, want %v", d.Version, got, want)
		}
		t.Logf("console reader on Flink %s savepoint v%d: uid %q id %s, %v (enumerator err %q)", d.Version, sp.Version, ko.UID, ko.OperatorID, got, ko.EnumeratorErr)
	}

	path := f.TriggerSavepoint(t, jobID, t.TempDir(), false)
	md := checkFlinkSavepoint(t, path, s, end)
	reader(path, end)
	t.Logf("plain savepoint: _metadata v%d checkpoint %d, %d bytes, files %v", md.version, md.checkpointID, md.size, md.files)
	flinkProduce(t, cl, s, 2)
	end = flinkEndOffsets(t, adm, s)
	flinkWaitCommitted(t, adm, s.group, end)

	t0 := time.Now()
	path = f.TriggerSavepoint(t, jobID, t.TempDir(), true)
	took := time.Since(t0)
	committed := flinkCommitted(t, adm, s.group)
	f.WaitJobState(t, jobID, "FINISHED")
	md = checkFlinkSavepoint(t, path, s, end)
	if md.version >= 5 {
		flinkCheckOperatorID(t, path, s.uid, vertices) // UTF uid followed by the 16 id bytes
	} else {
		flinkCheckOperatorIDOnly(t, path, s.uid, vertices) // V4 and older: no uid in the file
	}
	reader(path, end)
	t.Logf("TIMING stop-with-savepoint %s; _metadata v%d checkpoint %d, %d bytes, files %v", took.Round(time.Millisecond), md.version, md.checkpointID, md.size, md.files)
	if !flinkMapsEqual(committed, md.reader) {
		t.Errorf("committed offsets right after stop-with-savepoint %v != savepoint offsets %v", committed, md.reader)
	}
	if out := os.Getenv("DRCONSOLE_FIXTURE_OUT"); out != "" {
		writeFlinkFixture(t, out, d, s, path, md, committed, end, vertices, flinkVersionFixtureAbout(d))
	}

	// Restore from a relocated copy (claimMode NO_CLAIM, as testenv submits it).
	moved := filepath.Join(t.TempDir(), "relocated-savepoint")
	flinkCopyDir(t, path, moved)
	ropts := opts
	ropts.SavepointPath = "file://" + moved
	rjob := f.SubmitJob(t, ropts)
	f.WaitJobRunning(t, rjob)
	st, err := f.Checkpoints(ctx, rjob)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Latest.Restored; r == nil || !r.IsSavepoint || r.ID != md.checkpointID || !strings.Contains(r.ExternalPath, moved) {
		t.Fatalf("restored job %s: latest.restored = %+v, want savepoint %d from %s", rjob, r, md.checkpointID, moved)
	}
	flinkProduce(t, cl, s, 3)
	end = flinkEndOffsets(t, adm, s)
	flinkWaitCommitted(t, adm, s.group, end)
	t.Logf("restored job %s from savepoint %d consumed and committed batch 3", rjob, md.checkpointID)
	f.CancelJob(t, rjob)
}

// flinkCheckOperatorIDOnly: _metadata before V5 has no operator uid/name, only the 16 OperatorID
// bytes; they must be the REST vertex id of the source, which must be murmur3_128 of its uid.
func flinkCheckOperatorIDOnly(t *testing.T, dir, uid string, vertices []flinkVertex) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, v := range vertices {
		if strings.HasPrefix(v.Name, "Source:") {
			id = v.ID
		}
	}
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != 16 {
		t.Fatalf("source vertex id %q: %v", id, err)
	}
	if want := flink.OperatorIDFromUID(uid); id != want {
		t.Errorf("source vertex id %s, murmur3 of uid %q = %s", id, uid, want)
	}
	if bytes.Contains(b, append(binary.BigEndian.AppendUint16(nil, uint16(len(uid))), uid...)) {
		t.Errorf("_metadata contains the uid %q as a UTF string: not expected before V5", uid)
	}
	at := bytes.Index(b, raw)
	if at < 0 {
		t.Errorf("_metadata: source operator id %s not found as raw bytes", id)
		return
	}
	t.Logf("_metadata: source operator id %s (= murmur3(%q)) at byte %d, no uid string in the file", id, uid, at)
}

// flinkVersionFixtureAbout is how TestFlinkVersionSavepoints' fixture of d was made, and the
// layout that its connector and _metadata version write.
func flinkVersionFixtureAbout(d testenv.FlinkDist) string {
	layout := `The enumerator (coordinator) state of connector 3.x is serializer
v2: assigned partitions with a status and no offsets, hence the empty enumerator_split_offsets.
_metadata is version 4: no operator uid or name in the file, only the 16 OperatorID bytes
(murmur3_128 of the uid), so a reader can only report source_uid when given it.`
	if !strings.HasPrefix(d.KafkaConnector, "3.") {
		layout = `The enumerator (coordinator) state of connector 5.x is serializer
v3: the initial split offsets (-3 = COMMITTED marker), not positions. _metadata is version 6, as
Flink 2.2.1 writes it: each operator's UTF name and uid, then its 16 OperatorID bytes.`
	}
	if mm := d.Version[:strings.LastIndex(d.Version, ".")]; !strings.HasSuffix(d.KafkaConnector, "-"+mm) {
		layout += "\nNo flink-connector-kafka is published for Flink " + mm + "; " + d.KafkaConnector + " ran here unchanged."
	}
	return fmt.Sprintf(`; the
same testenv/flinkjob sources built with its Maven profile %s):

    DRCONSOLE_FIXTURE_OUT=$PWD/flink/testdata/savepoints go test -tags e2e -count=1 -run 'TestFlinkVersionSavepoints/flink-%s' -v ./testenv/

The job (testenv/flinkjob, EventsJob) consumed every record before the savepoint, so
topic_partitions (the KafkaPartitionSplit startingOffset = next offset to read) equals the end
offsets, and the group's committed offsets equal them too (committed by the last periodic
checkpoint before the stop). %s job_vertices are from
GET /jobs/{id}; a vertex id is the operator id of its chain head (source_operator_id belongs to
source_uid).
`, "flink-"+strings.TrimPrefix(d.JobProfile, "flinkjob-"), d.Version, layout)
}
