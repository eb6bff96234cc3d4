//go:build e2e

package testenv_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	connectrest "github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

// The failback with both clusters behind SASL/PLAIN, against real Kafka and MirrorMaker 2 on
// Kafka Connect: the reverse connectors must reach DR and the primary with the client settings
// the forward MirrorSourceConnector has for each, swapped (source.cluster.* for DR,
// target.cluster.* and producer.override.* for the primary), or they copy nothing. Checked by
// payload: every DR record reaches the primary once; the group translated back reads exactly the
// record written after the failback; the restarted forward flow copies it to DR. The secrets
// never appear in a step's result or the audit log.
func TestFailbackSASLE2E(t *testing.T) {
	began := time.Now()
	primary := testenv.StartKafkaSASL(t, "primary", "primary-admin", "primary-secret")
	dr := testenv.StartKafkaSASL(t, "dr", "dr-admin", "dr-secret")
	createTopics(t, primary, map[string]int32{"events": fbParts})
	ctx := context.Background()
	pcl := fbSeedPrimary(t, ctx, primary)
	connect, cfg, store, mon, log := runbookOnConnectPolicy(t, ctx, "identity", primary, dr, filepath.Join(t.TempDir(), "drconsole.db"))
	steps := fbSteps{t: t, ctx: ctx, rb: fbRunbook(cfg, store, mon, log)}
	fo := steps.failover(mon)
	fbProduce(t, ctx, pcl, "events", "lost", fbLost)
	fbWriteDR(t, ctx, dr)
	fbWaitCommitted(t, ctx, dr, "events")
	fbDrainGroup(t, ctx, dr, fbGroup, []string{"events"}, fbPre+fbDR+fbDRTxn)

	fb := steps.approved(failback.FailbackPlan(fbFlowName, fbGroup), "e2e failback, SASL")
	if r, _ := steps.rb.Get(ctx, fb); r.Plan.FailbackOf != fo {
		t.Fatalf("failback of run %d, want %d", r.Plan.FailbackOf, fo)
	}
	steps.run(fb, 0, 1) // set-up-reverse
	// The reverse source carries DR's settings as its source cluster's and the primary's as its
	// target's and its producer's, from the forward source's.
	if err := testenv.Eventually(30*time.Second, 250*time.Millisecond, func() error { // Connect applies the resume later
		if st, err := connect.Status(ctx, fbReverse); err != nil || !st.Running() {
			return fmt.Errorf("reverse source %+v %v", st, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rinfo, err := connectrest.New(connect.URL).Info(ctx, fbReverse)
	if err != nil {
		t.Fatal(err)
	}
	rcfg := rinfo.Config
	for prefix, k := range map[string]*testenv.Kafka{"source.cluster.": dr, "target.cluster.": primary, "producer.override.": primary} {
		for key, want := range k.ClientProps() {
			if got := rcfg[prefix+key]; got != want {
				t.Errorf("reverse source %s%s = %q, want %s's %q", prefix, key, got, k.Name, want)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	steps.run(fb, 1, 6) // wait-reverse-caught-up … restart-forward

	// Every DR record is on the primary once; the lost ones untouched.
	onPrimary := fbCount(fbReadAll(t, primary, "events"))
	var bad []string
	for p := range int32(fbParts) {
		for prefix, n := range map[string]int{"pre": fbPre, "lost": fbLost, "dr": fbDR, "drtxn": fbDRTxn} {
			for i := int(p); i < n; i += fbParts {
				if c := onPrimary[p][fmt.Sprintf("%s-%d", prefix, i)]; c != 1 {
					bad = append(bad, fmt.Sprintf("%s-%d on primary events-%d %d times", prefix, i, p, c))
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("primary after the failback:\n%s", strings.Join(bad, "\n"))
	}
	// The group reads exactly the record written after the failback; the forward flow copies it.
	var after []*kgo.Record
	for p := range int32(fbParts) {
		after = append(after, &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "after-%d", p)})
	}
	if err := pcl.ProduceSync(ctx, after...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := fbGroupRead(t, primary, fbGroup, []string{"events"}, fbParts)
	slices.Sort(got)
	if want := []string{"events-0:after-0", "events-1:after-1", "events-2:after-2"}; !slices.Equal(got, want) {
		t.Fatalf("the group on the primary read %v, want exactly %v", got, want)
	}
	fbForwardCopied(t, dr, "events")
	if a, err := failover.ActiveSideOf(ctx, store, fbFlowName); err != nil || a.Side != model.SidePrimary {
		t.Fatalf("after the failback: %+v %v", a, err)
	}
	// The secrets stay out of the runs' results and the audit log.
	for _, id := range []int64{fo, fb} {
		r, _ := steps.rb.Get(ctx, id)
		for i, st := range r.Steps {
			if strings.Contains(st.Result, primary.SASL.Password) || strings.Contains(st.Result, dr.SASL.Password) {
				t.Errorf("run %d step %d's result holds the password: %s", id, i+1, st.Result)
			}
		}
	}
	entries, err := store.AuditEntries(ctx, storage.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(string(e.Details), primary.SASL.Password) || strings.Contains(string(e.Details), dr.SASL.Password) {
			t.Errorf("audit record %d (%s) holds the password", e.ID, e.Action)
		}
	}
	t.Logf("failback e2e, SASL/PLAIN: %d DR records back on the primary, reverse source with %v, %s", fbDR+fbDRTxn,
		slices.Sorted(maps.Keys(primary.ClientProps())), time.Since(began).Round(time.Millisecond))
}
