package failover

import (
	"encoding/json"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

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
		var res SavepointRewritten
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

// translate-group's results as the binary before typed results wrote
// them, each shape it wrote (translate-group-back's: runbook/failback). Read back
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
	} {
		if err := json.Unmarshal([]byte(c.old), c.res); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(c.res); string(b) != c.old {
			t.Fatalf("written as\n%s\nwas\n%s", b, c.old)
		}
	}
}

// The results of preflight (a failover's and a drill's) and restore-flink
// through Flink REST as the binary before typed results wrote them
// (stop-writers': runbook/failback). Read back typed, they write the same bytes.
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
