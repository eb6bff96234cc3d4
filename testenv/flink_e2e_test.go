//go:build e2e

// End-to-end: REAL Flink (MiniCluster with REST) runs testenv's KafkaSource job against REAL
// Kafka; savepoints are taken through the REST API (plain trigger and stop-with-savepoint),
// checked byte-wise, optionally written out as fixtures for the savepoint reader, and one is
// restored through POST /jars/{id}/run with savepointPath.
//
//	go test -tags e2e -count=1 -run Flink -v ./testenv/
//	DRCONSOLE_FIXTURE_OUT=$PWD/flink/testdata/savepoints go test -tags e2e -count=1 -run Flink -v ./testenv/
package testenv_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/testenv"
)

// flinkMetadataMagic is the first int32 of every checkpoint/savepoint _metadata file
// (Checkpoints.HEADER_MAGIC_NUMBER, reference notes B5).
const flinkMetadataMagic = 0x4960672d

// flinkShape is one job/savepoint scenario; each produces at most one fixture (the
// stop-with-savepoint one) named fixture.
type flinkShape struct {
	fixture     string
	topics      []string
	partitions  map[string]int32
	parallelism int
	group, uid  string
	// records(topic, partition, batch) is how many records batch (1, 2, 3) writes there.
	records func(topic string, p int32, batch int) int
	// plain: take a plain savepoint (job keeps running) before the stop-with-savepoint.
	plain bool
	// restore: submit the job again from a relocated copy of the final savepoint.
	restore bool
	note    string
}

var flinkShapes = []flinkShape{
	{
		fixture:    "flink-2.2.1-p2-events4-stop",
		topics:     []string{"events"},
		partitions: map[string]int32{"events": 4},
		// uneven partitions, so a reader that mixes them up fails
		records: func(_ string, p int32, batch int) int {
			switch batch {
			case 1:
				return []int{700, 1100, 450, 950}[p]
			case 2:
				return 100 * int(p+1)
			default:
				return 10 + int(p)
			}
		},
		parallelism: 2,
		group:       "flink-events",
		uid:         "kafka-source",
		plain:       true,
		restore:     true,
		note:        "KafkaSource over `events` (4 partitions), parallelism 2 (two splits per reader subtask), keyed count state (8 keys); stop-with-savepoint (drain=false), CANONICAL",
	},
	{
		fixture:    "flink-2.2.1-p1-orders2-users3-stop",
		topics:     []string{"orders", "users"},
		partitions: map[string]int32{"orders": 2, "users": 3},
		records: func(topic string, p int32, batch int) int {
			if batch != 1 {
				return 0
			}
			if topic == "orders" {
				return 300 + 50*int(p)
			}
			return 200 + 70*int(p)
		},
		parallelism: 1,
		group:       "flink-orders-users",
		uid:         "orders-users-source",
		note:        "KafkaSource over `orders` (2 partitions) and `users` (3 partitions), parallelism 1 (all five splits in one reader subtask), source uid `orders-users-source`, keyed count state (8 keys); stop-with-savepoint (drain=false), CANONICAL",
	},
}

func TestFlinkSavepoints(t *testing.T) {
	start := time.Now()
	k := testenv.StartKafka(t, "primary")
	f := testenv.StartFlink(t)
	for _, s := range flinkShapes {
		t.Run(s.fixture, func(t *testing.T) { runFlinkShape(t, k, f, s) })
	}
	t.Run("commit-on-savepoint", func(t *testing.T) { runFlinkCommitOnSavepoint(t, k, f) })
	t.Logf("TIMING flink start %s; whole test %s", f.Proc.Startup.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

func runFlinkShape(t *testing.T, k *testenv.Kafka, f *testenv.Flink, s flinkShape) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := k.Admin(t)
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	for _, topic := range s.topics {
		res, err := adm.CreateTopic(ctx, s.partitions[topic], 1, nil, topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	flinkProduce(t, cl, s, 1)
	end := flinkEndOffsets(t, adm, s)

	opts := testenv.FlinkJobOptions{
		Bootstrap: k.Bootstrap, Topics: s.topics, GroupID: s.group, SourceUID: s.uid, Parallelism: s.parallelism,
	}
	submit := time.Now()
	jobID := f.SubmitJob(t, opts)
	f.WaitJobRunning(t, jobID)
	t.Logf("TIMING submit -> RUNNING (all tasks) %s", time.Since(submit).Round(time.Millisecond))
	cp := f.WaitCheckpoint(t, jobID, 0)
	t.Logf("TIMING submit -> first completed checkpoint %d %s (%s, state %d B)", cp.ID, time.Since(submit).Round(time.Millisecond), cp.ExternalPath, cp.StateSize)
	flinkWaitCommitted(t, adm, s.group, end)
	t.Logf("TIMING submit -> group %s committed all end offsets %s", s.group, time.Since(submit).Round(time.Millisecond))
	vertices := flinkVertices(t, f, jobID)

	if s.plain {
		// The job consumed everything (its committed offsets are the end offsets), so the
		// savepoint's next-offsets must be exactly the end offsets.
		t0 := time.Now()
		path := f.TriggerSavepoint(t, jobID, t.TempDir(), false)
		took := time.Since(t0)
		committed := flinkCommitted(t, adm, s.group)
		md := checkFlinkSavepoint(t, path, s, end)
		t.Logf("TIMING plain savepoint %s; _metadata v%d checkpoint %d, %d bytes; committed right after: %v", took.Round(time.Millisecond), md.version, md.checkpointID, md.size, committed)
		if ov, err := f.JobOverview(ctx, jobID); err != nil || ov.State != "RUNNING" {
			t.Fatalf("job after plain savepoint: %+v, %v (want RUNNING)", ov, err)
		}
		// Move on: more data, consumed and committed, before stopping.
		flinkProduce(t, cl, s, 2)
		end = flinkEndOffsets(t, adm, s)
		t0 = time.Now()
		flinkWaitCommitted(t, adm, s.group, end)
		t.Logf("TIMING batch 2 produced -> committed %s", time.Since(t0).Round(time.Millisecond))
	}

	spDir := t.TempDir()
	t0 := time.Now()
	path := f.TriggerSavepoint(t, jobID, spDir, true)
	took := time.Since(t0)
	committed := flinkCommitted(t, adm, s.group) // right after COMPLETED
	ov := f.WaitJobState(t, jobID, "FINISHED")
	md := checkFlinkSavepoint(t, path, s, end)
	flinkCheckOperatorID(t, path, s.uid, vertices)
	t.Logf("TIMING stop-with-savepoint %s (job %s); _metadata v%d checkpoint %d, %d bytes, files %v", took.Round(time.Millisecond), ov.State, md.version, md.checkpointID, md.size, md.files)
	// The group's committed offsets equal the savepoint's next-offsets here only because the job
	// had consumed everything and a periodic checkpoint had committed that before the stop:
	// savepoints themselves commit nothing (see runFlinkCommitOnSavepoint).
	if !flinkMapsEqual(committed, md.reader) {
		t.Errorf("committed offsets right after stop-with-savepoint %v != savepoint offsets %v", committed, md.reader)
	}
	if after := flinkCommitted(t, adm, s.group); !flinkMapsEqual(after, md.reader) {
		t.Errorf("committed offsets after FINISHED %v != savepoint offsets %v", after, md.reader)
	}

	if out := os.Getenv("DRCONSOLE_FIXTURE_OUT"); out != "" {
		writeFlinkFixture(t, out, testenv.FlinkDefault, s, path, md, committed, end, vertices, flinkFixtureAbout)
	}

	if s.restore {
		// Restore from a COPY in another directory: canonical savepoints are relocatable, and
		// the fixtures are copies too.
		moved := filepath.Join(t.TempDir(), "relocated-savepoint")
		flinkCopyDir(t, path, moved)
		ropts := opts
		ropts.SavepointPath = "file://" + moved
		submit := time.Now()
		rjob := f.SubmitJob(t, ropts)
		f.WaitJobRunning(t, rjob)
		t.Logf("TIMING restore submit -> RUNNING %s", time.Since(submit).Round(time.Millisecond))
		st, err := f.Checkpoints(ctx, rjob)
		if err != nil {
			t.Fatal(err)
		}
		r := st.Latest.Restored
		if r == nil || !r.IsSavepoint || !strings.Contains(r.ExternalPath, moved) || r.ID != md.checkpointID {
			t.Fatalf("restored job %s: latest.restored = %+v, want savepoint %d from %s", rjob, r, md.checkpointID, moved)
		}
		t.Logf("restored job %s from savepoint %d at %s", rjob, r.ID, r.ExternalPath)
		// The restored job keeps consuming and committing.
		flinkProduce(t, cl, s, 3)
		end = flinkEndOffsets(t, adm, s)
		t0 := time.Now()
		flinkWaitCommitted(t, adm, s.group, end)
		t.Logf("TIMING restored job: batch 3 produced -> committed %s", time.Since(t0).Round(time.Millisecond))
		f.CancelJob(t, rjob)
	}
}

// flinkProduce writes batch b of shape s with explicit partitions.
func flinkProduce(t *testing.T, cl *kgo.Client, s flinkShape, b int) {
	t.Helper()
	var recs []*kgo.Record
	for _, topic := range s.topics {
		for p := range s.partitions[topic] {
			for i := range s.records(topic, p, b) {
				recs = append(recs, &kgo.Record{
					Topic: topic, Partition: p,
					Key:   []byte(fmt.Sprintf("k%d", i%97)),
					Value: []byte(fmt.Sprintf("%s-%d-b%d-%d", topic, p, b, i)),
				})
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for chunk := range slices.Chunk(recs, 500) {
		if err := cl.ProduceSync(ctx, chunk...).FirstErr(); err != nil {
			t.Fatalf("produce batch %d: %v", b, err)
		}
	}
}

func flinkEndOffsets(t *testing.T, adm *kadm.Client, s flinkShape) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := adm.ListEndOffsets(ctx, s.topics...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, topic := range s.topics {
		for p := range s.partitions[topic] {
			o, ok := l.Lookup(topic, p)
			if !ok || o.Err != nil {
				t.Fatalf("end offset %s/%d: %v", topic, p, o.Err)
			}
			out[fmt.Sprintf("%s-%d", topic, p)] = o.Offset
		}
	}
	return out
}

// flinkCommitted returns the group's committed offsets as "topic-partition" -> offset.
func flinkCommitted(t *testing.T, adm *kadm.Client, group string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := testenv.FetchCommitted(ctx, adm, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := map[string]int64{}
	r.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[fmt.Sprintf("%s-%d", o.Topic, o.Partition)] = o.At
		}
	})
	return out
}

func flinkWaitCommitted(t *testing.T, adm *kadm.Client, group string, want map[string]int64) {
	t.Helper()
	var got map[string]int64
	err := testenv.Eventually(2*time.Minute, 200*time.Millisecond, func() error {
		got = flinkCommitted(t, adm, group)
		if !flinkMapsEqual(got, want) {
			return fmt.Errorf("group %s committed %v, want %v", group, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func flinkMapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

type flinkVertex struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Parallelism int    `json:"parallelism"`
	MaxParallel int    `json:"maxParallelism,omitempty"`
}

// flinkVertices returns GET /jobs/{id} vertices (a vertex id is the operator id of the chain
// head: for the source, murmur3_128 of its uid).
func flinkVertices(t *testing.T, f *testenv.Flink, jobID string) []flinkVertex {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d struct {
		Vertices []flinkVertex `json:"vertices"`
	}
	if err := f.Do(ctx, http.MethodGet, "/jobs/"+jobID, nil, &d); err != nil {
		t.Fatal(err)
	}
	return d.Vertices
}

// flinkMeta is what the test reads from a _metadata file without a full parser.
type flinkMeta struct {
	version      uint32
	checkpointID int64
	size         int
	files        []string         // files in the savepoint directory with sizes
	reader       map[string]int64 // reader-state splits: topic-partition -> next offset
	enum         map[string]int64 // enumerator (coordinator) state splits
	splitVersion int32            // KafkaPartitionSplitSerializer version of reader elements
	hasUID       bool
}

// checkFlinkSavepoint checks the magic number and scans _metadata for KafkaPartitionSplit
// bytes (B6: UTF topic ; int32 partition ; int64 startingOffset ; int64 stoppingOffset). In the
// reader state each split is an element [int32 len=8+n][int32 serializerVersion][int32 n][split]
// (BytePrimitiveArraySerializer around SimpleVersionedSerialization); other occurrences are the
// enumerator's. Every partition must appear exactly once in the reader state, at want.
func checkFlinkSavepoint(t *testing.T, dir string, s flinkShape, want map[string]int64) flinkMeta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatalf("savepoint %s: %v", dir, err)
	}
	md := flinkMeta{size: len(b), reader: map[string]int64{}, enum: map[string]int64{}, splitVersion: -1}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			rel, _ := filepath.Rel(dir, p)
			md.files = append(md.files, fmt.Sprintf("%s(%dB)", rel, fi.Size()))
		}
		return nil
	})
	if len(b) < 16 {
		t.Fatalf("_metadata too short: %d bytes", len(b))
	}
	if m := binary.BigEndian.Uint32(b); m != flinkMetadataMagic {
		t.Fatalf("_metadata magic %#08x, want %#08x; first bytes % x", m, flinkMetadataMagic, b[:16])
	}
	md.version = binary.BigEndian.Uint32(b[4:])
	md.checkpointID = int64(binary.BigEndian.Uint64(b[8:]))
	t.Logf("_metadata %s: first 16 bytes % x (magic, version %d, checkpoint id %d), %d bytes", dir, b[:16], md.version, md.checkpointID, len(b))

	for _, topic := range s.topics {
		pat := binary.BigEndian.AppendUint16(nil, uint16(len(topic)))
		pat = append(pat, topic...)
		n := len(pat) + 4 + 8 + 8
		for i := 0; ; {
			j := bytes.Index(b[i:], pat)
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if at+n > len(b) {
				continue
			}
			part := int32(binary.BigEndian.Uint32(b[at+len(pat):]))
			startOff := int64(binary.BigEndian.Uint64(b[at+len(pat)+4:]))
			stopOff := int64(binary.BigEndian.Uint64(b[at+len(pat)+12:]))
			if part < 0 || part >= s.partitions[topic] {
				continue
			}
			key := fmt.Sprintf("%s-%d", topic, part)
			isReader := at >= 12 &&
				int32(binary.BigEndian.Uint32(b[at-4:])) == int32(n) &&
				int32(binary.BigEndian.Uint32(b[at-12:])) == int32(n+8)
			stop := fmt.Sprint(stopOff)
			if stopOff == math.MinInt64 {
				stop = "none(Long.MIN_VALUE)"
			}
			if isReader {
				ver := int32(binary.BigEndian.Uint32(b[at-8:]))
				md.splitVersion = ver
				if _, dup := md.reader[key]; dup {
					t.Errorf("_metadata: split %s twice in reader state", key)
				}
				md.reader[key] = startOff
				t.Logf("  reader split at byte %d: %s next=%d stop=%s (serializer v%d)", at, key, startOff, stop, ver)
			} else {
				md.enum[key] = startOff
				t.Logf("  other (enumerator) split at byte %d: %s offset=%d stop=%s; 8 bytes before: % x", at, key, startOff, stop, b[max(0, at-8):at])
			}
		}
	}
	if !flinkMapsEqual(md.reader, want) {
		t.Errorf("_metadata reader splits %v, want %v", md.reader, want)
	}
	if md.version >= 5 {
		md.hasUID = bytes.Contains(b, append(binary.BigEndian.AppendUint16(nil, uint16(len(s.uid))), s.uid...))
		if !md.hasUID {
			t.Errorf("_metadata v%d does not contain the source uid %q as a UTF string", md.version, s.uid)
		}
	}
	return md
}

// flinkCheckOperatorID checks that the source vertex id from REST (= operator id of the chain
// head, the source) appears in _metadata as 16 raw bytes right after the UTF uid (V5+ operator
// state: UTF name ; UTF uid ; int64 idLower ; int64 idUpper), i.e. REST hex == raw byte order.
func flinkCheckOperatorID(t *testing.T, dir, uid string, vertices []flinkVertex) {
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
	pat := append(binary.BigEndian.AppendUint16(nil, uint16(len(uid))), uid...)
	if !bytes.Contains(b, append(pat, raw...)) {
		t.Errorf("_metadata: UTF uid %q is not followed by the source vertex id %s", uid, id)
		return
	}
	t.Logf("_metadata: uid %q is followed by operator id %s (REST vertex id, raw bytes in hex order)", uid, id)
}

// writeFlinkFixture copies the savepoint directory to <out>/<fixture>/ with expected.json and a
// README.md: the shared header, then about, the caller's account of how it was made.
func writeFlinkFixture(t *testing.T, out string, d testenv.FlinkDist, s flinkShape, spPath string, md flinkMeta, committed, end map[string]int64, vertices []flinkVertex, about string) {
	t.Helper()
	dst := filepath.Join(out, s.fixture)
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	flinkCopyDir(t, spPath, dst)
	srcID := ""
	for _, v := range vertices {
		if strings.HasPrefix(v.Name, "Source:") {
			srcID = v.ID
		}
	}
	exp := map[string]any{
		"flink_version":            d.Version,
		"kafka_connector_version":  d.KafkaConnector,
		"metadata_version":         md.version,
		"checkpoint_id":            md.checkpointID,
		"savepoint_kind":           "stop-with-savepoint",
		"format_type":              "CANONICAL",
		"source_uid":               s.uid,
		"source_operator_id":       srcID,
		"job_vertices":             vertices,
		"parallelism":              s.parallelism,
		"topics":                   s.partitions,
		"group_id":                 s.group,
		"split_serializer_version": md.splitVersion,
		// next offset to read per partition (KafkaPartitionSplit.startingOffset in SourceReaderState)
		"topic_partitions":         md.reader,
		"enumerator_split_offsets": md.enum,
		"committed_group_offsets":  committed,
		"end_offsets":              end,
	}
	if strings.HasPrefix(d.KafkaConnector, "3.") {
		// Connector 3.x writes KafkaSourceEnumState serializer v2: [int32 n] n x (UTF topic ;
		// int32 partition ; int32 assignment status 0=ASSIGNED) ; bool initialDiscoveryFinished.
		// No split offsets at all, so the byte scan's "enumerator" hits are misreads of those
		// bytes (observed in the 1.20.3 fixture: 419190 = 00 06 65 76 of the next "events").
		exp["enumerator_split_offsets"] = map[string]int64{}
		exp["enumerator_serializer_version"] = 2
		exp["enumerator_note"] = "KafkaSourceEnumState v2 (connector 3.x): assigned partitions with status, no offsets"
	}
	var j bytes.Buffer
	enc := json.NewEncoder(&j)
	enc.SetEscapeHTML(false) // "count-per-key -> discard: Writer", not \u003e
	enc.SetIndent("", "  ")
	if err := enc.Encode(exp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "expected.json"), j.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := fmt.Sprintf("# %s\n\n%s.\n\nProduced by testenv (real Flink %s MiniCluster + flink-connector-kafka %s, real Kafka %s%s",
		s.fixture, s.note, d.Version, d.KafkaConnector, testenv.KafkaVersion, about)
	if err := os.WriteFile(filepath.Join(dst, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	var total int64
	var names []string
	_ = filepath.WalkDir(dst, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			fi, _ := e.Info()
			total += fi.Size()
			rel, _ := filepath.Rel(dst, p)
			names = append(names, fmt.Sprintf("%s(%dB)", rel, fi.Size()))
		}
		return nil
	})
	sort.Strings(names)
	t.Logf("fixture %s written: %d bytes: %v", dst, total, names)
}

// flinkFixtureAbout is how TestFlinkSavepoints' fixtures were made.
const flinkFixtureAbout = `):

    DRCONSOLE_FIXTURE_OUT=$PWD/flink/testdata/savepoints go test -tags e2e -count=1 -run 'TestFlinkSavepoints' -v ./testenv/

The job (testenv/flinkjob, EventsJob) consumed every record before the savepoint, so
topic_partitions (the KafkaPartitionSplit startingOffset = next offset to read) equals the end
offsets, and the group's committed offsets equal them too (committed by the last periodic
checkpoint before the stop: savepoints themselves commit no offsets in Flink 2.2.1, see
TestFlinkSavepoints/commit-on-savepoint). enumerator_split_offsets are the offsets inside the
enumerator's (coordinator) state: the initial split offsets (-3 = COMMITTED marker), not
positions. job_vertices are from GET /jobs/{id};
a vertex id is the operator id of its chain head (source_operator_id belongs to source_uid).
`

func flinkCopyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s -> %s: %v", src, dst, err)
	}
}

// runFlinkCommitOnSavepoint: with periodic checkpoints effectively off (interval 1 h), the only
// offset commits could come from savepoints. Observed with Flink 2.2.1 + connector 5.0.0-2.2:
// NEITHER a plain savepoint NOR stop-with-savepoint commits the group's offsets (savepoints do
// not reach KafkaSourceReader.notifyCheckpointComplete's commit). So a group's committed offsets
// are those of the last completed periodic CHECKPOINT, never "the savepoint's"; the console must
// not assume they match. This test pins that behaviour (it fails if Flink starts committing).
func runFlinkCommitOnSavepoint(t *testing.T, k *testenv.Kafka, f *testenv.Flink) {
	s := flinkShape{
		topics:     []string{"clicks"},
		partitions: map[string]int32{"clicks": 3},
		records: func(_ string, p int32, batch int) int {
			return 200*batch + 33*int(p)
		},
		parallelism: 2,
		group:       "flink-clicks",
		uid:         "clicks-source",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := k.Admin(t)
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if res, err := adm.CreateTopic(ctx, 3, 1, nil, "clicks"); err != nil || res.Err != nil {
		t.Fatalf("create clicks: %v %v", err, res.Err)
	}
	flinkProduce(t, cl, s, 1)
	end := flinkEndOffsets(t, adm, s)
	jobID := f.SubmitJob(t, testenv.FlinkJobOptions{
		Bootstrap: k.Bootstrap, Topics: s.topics, GroupID: s.group, SourceUID: s.uid,
		// Flink delays the first periodic checkpoint by a random part of the interval: make
		// it far longer than the test so no checkpoint (and no commit) can happen.
		Parallelism: s.parallelism, CheckpointInterval: 30 * 24 * time.Hour,
	})
	f.WaitJobRunning(t, jobID)
	flinkWaitSourceRecords(t, f, jobID, end)
	if c := flinkCommitted(t, adm, s.group); len(c) != 0 {
		t.Fatalf("group %s has commits %v before any checkpoint", s.group, c)
	}

	path := f.TriggerSavepoint(t, jobID, t.TempDir(), false)
	md := checkFlinkSavepoint(t, path, s, end)
	// The source's commit requests are only flushed when its consumer poll returns (up to 10 s
	// when idle, observed), so watch for 12 s.
	deadline := time.Now().Add(12 * time.Second)
	for time.Now().Before(deadline) {
		if c := flinkCommitted(t, adm, s.group); len(c) != 0 {
			t.Fatalf("plain savepoint %d committed offsets %v (savepoint offsets %v): Flink's behaviour changed, update the notes", md.checkpointID, c, md.reader)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("FINDING plain savepoint %d (offsets %v): group %s still has no committed offsets 12 s later", md.checkpointID, md.reader, s.group)

	flinkProduce(t, cl, s, 2)
	end = flinkEndOffsets(t, adm, s)
	flinkWaitSourceRecords(t, f, jobID, end)
	path = f.TriggerSavepoint(t, jobID, t.TempDir(), true)
	f.WaitJobState(t, jobID, "FINISHED")
	md = checkFlinkSavepoint(t, path, s, end)
	if c := flinkCommitted(t, adm, s.group); len(c) != 0 {
		t.Fatalf("stop-with-savepoint %d committed offsets %v (savepoint offsets %v): Flink's behaviour changed, update the notes", md.checkpointID, c, md.reader)
	}
	t.Logf("FINDING stop-with-savepoint %d (offsets %v): job FINISHED, group %s has no committed offsets", md.checkpointID, md.reader, s.group)
}

// flinkWaitSourceRecords waits until the source vertex has emitted as many records as the
// partitions hold (end offsets; no transactions, so offsets = records), via the vertex metric
// write-records of GET /jobs/{id}.
func flinkWaitSourceRecords(t *testing.T, f *testenv.Flink, jobID string, end map[string]int64) {
	t.Helper()
	var want int64
	for _, o := range end {
		want += o
	}
	var got int64
	err := testenv.Eventually(time.Minute, 200*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var d struct {
			Vertices []struct {
				Name    string `json:"name"`
				Metrics struct {
					WriteRecords int64 `json:"write-records"`
				} `json:"metrics"`
			} `json:"vertices"`
		}
		if err := f.Do(ctx, http.MethodGet, "/jobs/"+jobID, nil, &d); err != nil {
			return err
		}
		for _, v := range d.Vertices {
			if strings.HasPrefix(v.Name, "Source:") {
				got = v.Metrics.WriteRecords
			}
		}
		if got != want {
			return fmt.Errorf("source emitted %d records, want %d", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
