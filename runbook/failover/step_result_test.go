package failover

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

// stop-mirror's results as the binary before typed results wrote them (a
// Connect flow with a known loss, a dedicated MM2 with no cut recorded):
// read back typed, LostAtCut finds the text, and they write the same bytes.
func TestStopMirrorResultOfEarlierBinaryIsRead(t *testing.T) {
	for _, c := range []struct{ old, lost string }{
		{`{"cut":{"cut_dr_end_unknown":0,"cut_partitions":2},"lost_at_cut":{"age_ms":1500,"as_of":"2026-01-02T03:04:05Z","at_least":true,"lag_ms":1200,"offsets":42,"text":"≥ 42 offsets / 1.2 s not in DR","unknown_partitions":0,"why_lower_bound":["read before the mirror stopped"]},"stopped":{"connect_url":"http://connect:8083","connectors":{"MirrorSourceConnector":"STOPPED"}}}`,
			"≥ 42 offsets / 1.2 s not in DR"},
		{`{"cut":{"cut":"not recorded: the console knows no mirrored partition of this flow"},"lost_at_cut":null,"stopped":{"last_heartbeat_ms":0,"syncs":0,"verified":"no new heartbeat or offset sync for 10s"}}`,
			"not recorded by step 2 (a run from before the console recorded it)"},
		{`{"cut":{"cut_connect_offsets_error":"e1","cut_dr_end_unknown":3,"cut_dr_read_error":"e2","cut_dr_stable_read_error":"e3","cut_partitions":3},"lost_at_cut":{"at_least":false,"lag_ms":null,"offsets":null,"text":"unknown","unknown_partitions":3},"stopped":{"last_heartbeat_ms":17,"syncs":4,"verified":"no new heartbeat or offset sync for 10s"}}`,
			"unknown"},
	} {
		var res mirrorStopped
		if err := json.Unmarshal([]byte(c.old), &res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
		r := &runbook.Run{Plan: runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindStopMirror}}},
			Run: model.Run{Steps: []model.Step{{Status: model.StepDone}, {Status: model.StepDone, Result: c.old}}}}
		if got := LostAtCut(r); got != c.lost {
			t.Fatalf("lost at the cut %q, want %q", got, c.lost)
		}
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

// rewrite-savepoint's and rewrite-savepoint-back's results as the binary
// before typed results wrote them: written now, found from an earlier
// attempt, failed before registering, and refused for a split without a
// target. Read back typed, they write the same bytes.
func TestRewriteResultOfEarlierBinaryIsRead(t *testing.T) {
	for _, old := range []string{
		`{"catalog_id":4,"catalog_path":"/sp/dr-1","copied_bytes":2048,"copied_files":3,"dest":"/sp/dr-1","path":"/sp/dr-1","removed_leftovers":["/sp/.dr-1.tmp"],"renamed_topics":{"orders":"primary.orders"},"reread_max":12,"source":"/sp/sp-1","source_uid":"kafka-source","splits":["orders-0 (subtask 0) primary 9 → primary.orders-0 5"]}`,
		`{"catalog_id":4,"catalog_path":"/sp/dr-1","dest":"/sp/dr-1","note":"written by an earlier attempt and read back: it holds exactly these targets","renamed_topics":null,"reread_max":0,"source":"/sp/sp-1","source_uid":"","splits":[]}`,
		`{"copied_bytes":0,"copied_files":0,"dest":"/sp/back-1","not_in_savepoint":null,"path":"/sp/back-1","source":"/sp/sp-dr","source_uid":"kafka-source","splits":null}`,
		`{"dest":"/sp/back-1","not_in_savepoint":["orders-1"],"source":"/sp/sp-dr","source_uid":"kafka-source","splits":["orders-0: DR 5 → primary 9"]}`,
	} {
		var res savepointRewritten
		if err := json.Unmarshal([]byte(old), &res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); string(b) != old {
			t.Fatalf("written as\n%s\nwas\n%s", b, old)
		}
	}
	const refused = `{"splits":["orders-0 (subtask 0) primary 9: no offset sync"]}`
	var res rewriteRefused
	if err := json.Unmarshal([]byte(refused), &res); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); string(b) != refused {
		t.Fatalf("written as\n%s\nwas\n%s", b, refused)
	}
}

// translate-group's and translate-group-back's results as the binary
// before typed results wrote them, each shape each kind wrote. Read back
// typed, they write the same bytes.
func TestTranslateResultsOfEarlierBinaryAreRead(t *testing.T) {
	for _, c := range []struct {
		old string
		res any
	}{
		{`{"change_id":3,"changes":[{"topic":"primary.orders","partition":0,"previous":null,"applied":41}],"from":"primary group offsets","group":"billing","reread_max":2,"untranslatable":null}`, &groupTranslated{}},
		{`{"change_id":0,"changes":null,"from":"checkpoint","group":"drconsole-drill-1-billing","reread_max":0,"untranslatable":["orders-1 (none)"]}`, &groupTranslated{}},
		{`{"change_id":3,"changes":[{"topic":"primary.orders","partition":0,"previous":7,"applied":41}],"note":"applied by an earlier attempt"}`, &groupResumed{}},
		{`{"untranslatable":["orders-0 (none)","orders-1 (none)"]}`, &groupUntranslatable{}},
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

// The results of preflight (a failover's and a drill's), stop-writers and
// restore-flink through Flink REST as the binary before typed results
// wrote them. Read back typed, they write the same bytes.
func TestSmallResultsOfEarlierBinaryAreRead(t *testing.T) {
	const rule = `{"name":"DR cluster reachable now","ok":true,"overridable":false,"evidence":"answered in 3ms"}`
	for _, c := range []struct {
		old string
		res any
	}{
		{`{"rules":[` + rule + `]}`, &rulesChecked{}},
		{`{"rules":null}`, &rulesChecked{}},
		{`{"guards":[` + rule + `],"rules":[` + rule + `],"would_have_failed":null}`, &drillRulesChecked{}},
		{`{"guards":null,"rules":[],"would_have_failed":["RPO within objective"]}`, &drillRulesChecked{}},
		{`{"confirmed_by":"alice","note":"the operator confirmed, by typing the flow name, that no producer writes to DR"}`, &writersStopped{}},
		{`{"flink_version":"1.20.1","job_id":"662f32e643d7f9586df3ddb3b0642109","savepoint":"","target":"flink-dr"}`, &jobStarted{}},
		{`{"job_id":"662f32e643d7f9586df3ddb3b0642109","note":"already started by an earlier attempt","state":"RUNNING"}`, &jobFound{}},
	} {
		if err := json.Unmarshal([]byte(c.old), c.res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(c.res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
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

// wait-reverse's, stop-reverse's refusal and restart-forward's results as
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

// A drill's restore-flink results as the binary before typed results
// wrote them: the first record measured, the job failed first, no record
// before the timeout. Read back typed, they write the same bytes.
func TestDrillRestoreResultsOfEarlierBinaryAreRead(t *testing.T) {
	const restore = `{"flink_version":"1.20.1","job_id":"j1","savepoint":"/sp/dr-1","target":"flink-dr"}`
	for _, old := range []string{
		`{"measured":{"job_id":"j1","records_seen":40,"rpo_at_least":false,"rpo_ms":1200,"state":"RUNNING"},"restore":` + restore + `}`,
		`{"measured":{"job_id":"j1","records_seen":1,"rpo_at_least":true,"rpo_ms":null,"state":"RUNNING"},"restore":` + restore + `}`,
		`{"measured":{"job_id":"j1","state":"FAILED"},"restore":` + restore + `}`,
		`{"measured":{"job_id":"j1","running":false},"restore":` + restore + `}`,
		`{"measured":null,"restore":` + restore + `}`,
	} {
		var res drillRestored
		if err := json.Unmarshal([]byte(old), &res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); string(b) != old {
			t.Fatalf("written as\n%s\nwas\n%s", b, old)
		}
	}
}

// promote-mirrors' and failover-mirrors' results as the binary before
// typed results wrote them: stopped, failed when sent, and with no
// mirror. Read back typed, they write the same bytes.
func TestMirrorsResultOfEarlierBinaryIsRead(t *testing.T) {
	for _, old := range []string{
		`{"lag_per_mirror":["orders: 3"],"mirrors":["orders"],"records_at_risk":3,"states":{"orders":"STOPPED"}}`,
		`{"lag_per_mirror":null,"mirrors":["orders"],"records_at_risk":0}`,
		`{"lag_per_mirror":null,"mirrors":null,"records_at_risk":0,"states":{}}`,
	} {
		var res mirrorsAltered
		if err := json.Unmarshal([]byte(old), &res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); string(b) != old {
			t.Fatalf("written as\n%s\nwas\n%s", b, old)
		}
	}
}
