package failback

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// stop-reverse's result as the binary before typed results wrote it (a
// map, keys sorted): a failback stopped then resumes after the upgrade
// with the ends it recorded, and the step writes the same bytes today.
func TestStopReverseResultOfEarlierBinaryIsRead(t *testing.T) {
	const old = `{"connectors":{"reverse-source":"PAUSED"},"dr_ends":{"orders-0":5,"orders-1":7},"paused":["reverse-source"],"primary_ends":{"orders-0":9}}`
	r := &runbook.Run{Plan: FailbackPlan("primary->dr"), Run: model.Run{Steps: make([]model.Step, 5)}}
	r.Steps[3] = model.Step{Status: model.StepDone, Result: old}
	stopped, err := recordedEnds(r)
	if err != nil {
		t.Fatal(err)
	}
	dr, derr := stopped.dr()
	primary, perr := stopped.primary()
	if derr != nil || perr != nil || !maps.Equal(dr, map[model.TP]int64{{Topic: "orders"}: 5, {Topic: "orders", Partition: 1}: 7}) ||
		!maps.Equal(primary, map[model.TP]int64{{Topic: "orders"}: 9}) {
		t.Fatalf("ends read back: DR %v %v, primary %v %v", dr, derr, primary, perr)
	}
	if b, _ := json.Marshal(stopped); string(b) != old {
		t.Fatalf("written as\n%s\nwas\n%s", b, old)
	}
	r.Steps[3].Result = `{"v":2,"dr_ends":{"orders-0":5},"primary_ends":{"orders-0":9}}`
	if _, err := recordedEnds(r); err == nil {
		t.Fatal("a result of a newer shape read as this one")
	}
}

// savepoint-dr's results as the binary before typed results wrote them:
// taken now, found in Flink's history by an earlier attempt, and failed
// before a savepoint existed. Read back typed, they write the same bytes.
func TestSavepointDRResultOfEarlierBinaryIsRead(t *testing.T) {
	for _, c := range []struct{ old, savepoint string }{
		{`{"catalog_id":7,"job_id":"j1","job_name":"orders","savepoint":"/sp/savepoint-1","target":"dr-flink"}`, "/sp/savepoint-1"},
		{`{"catalog_id":8,"job_id":"j1","job_name":"orders","note":"taken by an earlier attempt (found in Flink's checkpoint history)","savepoint":"/sp/savepoint-2","target":"dr-flink"}`, "/sp/savepoint-2"},
		{`{"job_id":"j1","job_name":"orders","target":"dr-flink"}`, ""},
	} {
		p := WithFlinkBack(FailbackPlan("primary->dr"), runbook.FlinkBack{DRJob: "j1", DRTarget: "dr-flink", RewriteTo: "/sp/back"})
		r := &runbook.Run{Plan: p, Run: model.Run{Steps: make([]model.Step, len(p.Steps))}}
		i := slices.Index(kindsOf(p), KindSavepointDR)
		r.Steps[i] = model.Step{Status: model.StepDone, Result: c.old}
		var res savepointTaken
		if err := stepResult(r, KindSavepointDR, &res); err != nil || res.Savepoint != c.savepoint {
			t.Fatalf("read back %+v, %v; want savepoint %q", res, err, c.savepoint)
		}
		if b, _ := json.Marshal(res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
	}
}

// restore-primary's results as the binary before typed results wrote
// them: sent, found restored by an earlier attempt, with the truncation
// not known, and refused before sending. Read back typed, they write the
// same bytes, and the topics are what later steps read.
func TestRestorePrimaryResultOfEarlierBinaryIsRead(t *testing.T) {
	for _, old := range []string{
		`{"primary":"http://primary:8090","sent_to":["orders"],"topics":["orders"],"truncated":12,"truncated_partitions":["orders-0: 12"]}`,
		`{"note":"the primary's topics are mirrors of DR's already","primary":"http://primary:8090","sent_to":null,"topics":["orders"]}`,
		`{"primary":"http://primary:8090","sent_to":["orders"],"topics":["orders"],"truncated":0,"truncated_partitions":null,"truncated_unknown":"orders-1: no answer"}`,
		`{"primary":"http://primary:8090","sent_to":["orders"],"topics":["orders"]}`,
	} {
		var res primaryRestored
		if err := json.Unmarshal([]byte(old), &res); err != nil || !slices.Equal(res.Topics, []string{"orders"}) {
			t.Fatalf("read back %+v %v", res, err)
		}
		if b, _ := json.Marshal(res); string(b) != old {
			t.Fatalf("written as\n%s\nwas\n%s", b, old)
		}
	}
}

// wait-primary's and reverse-to-primary's results as the binary before
// typed results wrote them. Read back typed, they write the same bytes.
func TestLinkBackResultsOfEarlierBinaryAreRead(t *testing.T) {
	for _, c := range []struct {
		old string
		res any
	}{
		{`{"caught_up":true,"topics":["orders"]}`, &primaryCaughtUp{}},
		{`{"behind":"orders: lag 3"}`, &primaryBehindBy{}},
		{`{"dr_mirrors":{"orders":"ACTIVE"},"paused":false,"primary":"http://primary:8090","sent_to":["orders"],"topics":["orders"]}`, &reversedToPrimary{}},
		{`{"dr_mirrors":{},"paused":true,"primary":"http://primary:8090","sent_to":null,"topics":null}`, &reversedToPrimary{}},
		{`{"paused":false,"primary":"http://primary:8090","sent_to":["orders"],"topics":["orders"]}`, &reversedToPrimary{}},
	} {
		if err := json.Unmarshal([]byte(c.old), c.res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(c.res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
	}
}

// set-up-reverse's, wait-reverse's, stop-reverse's refusal and restart-forward's results as
// the binary before typed results wrote them. Read back typed, they write
// the same bytes.
func TestReverseResultsOfEarlierBinaryAreRead(t *testing.T) {
	for _, c := range []struct {
		old string
		res any
	}{
		{`{"caught_up":true,"connectors":{"reverse-source":"RUNNING"}}`, &reverseCaughtUp{}},
		{`{"connectors":{"reverse-source":"RUNNING"},"never_copied_back":["orders-1"]}`, &reverseUncopyable{}},
		{`{"behind":["orders-0 DR end 9, reverse at 5"],"connectors":null}`, &reverseBehind{}},
		{`{"behind":null,"never_copied_back":["orders-1"]}`, &reverseNotCaughtUp{}},
		{`{"connect_url":"http://connect:8083","connectors":["dr-\u003eprimary.MirrorSourceConnector","dr-\u003eprimary.MirrorCheckpointConnector","dr-\u003eprimary.MirrorHeartbeatConnector"],"dr_bootstrap":"dr:9092","notes":["Identity policy: DR's topics come back under the same names."],"primary_bootstrap":"primary:9092","start_partitions":3}`, &reverseSetUp{}},
		{`{"connect_url":"http://connect:8083","connectors":["s","c","h"],"dr_bootstrap":"dr:9092","note":"the source was created, reset and resumed by an earlier attempt (RUNNING)","notes":null,"primary_bootstrap":"primary:9092","start":"earliest","start_partitions":0}`, &reverseSetUp{}},
		{`{"source":"MirrorSourceConnector","start_partitions":2}`, &forwardRestarted{}},
		{`{"note":"the source was set to the ends by an earlier attempt (RUNNING)","source":"MirrorSourceConnector","start_partitions":2}`, &forwardRestarted{}},
	} {
		if err := json.Unmarshal([]byte(c.old), c.res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(c.res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
	}
}

// translate-group-back's results as the binary before typed results wrote
// them, each shape it wrote. Read back typed, they write the same bytes.
func TestTranslateBackResultsOfEarlierBinaryAreRead(t *testing.T) {
	for _, c := range []struct {
		old string
		res any
	}{
		{`{"committed":{"orders-0":9},"group":"billing","not_committed_in_dr":null,"previous":{},"translated_inside_log":["orders-0: DR 5 → primary 9"]}`, &groupMovedBack{}},
		{`{"not_committed_in_dr":["orders-1"]}`, &groupBackRefused{}},
		{`{"not_committed_in_dr":null}`, &groupBackRefused{}},
	} {
		if err := json.Unmarshal([]byte(c.old), c.res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(c.res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
	}
}

// stop-writers' result as the binary before typed results wrote it. Read
// back typed, it writes the same bytes.
func TestStopWritersResultOfEarlierBinaryIsRead(t *testing.T) {
	for _, c := range []struct {
		old string
		res any
	}{
		{`{"confirmed_by":"alice","note":"the operator confirmed, by typing the flow name, that no producer writes to DR"}`, &writersStopped{}},
	} {
		if err := json.Unmarshal([]byte(c.old), c.res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(c.res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
	}
}
