package effect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The writing Kafka client is the one failover hands in: the monitor's DR
// client, which read the offsets being translated. Building a second one
// here from config would repeat kafka.ClientOptions' TLS and SASL set-up
// and open a second set of broker connections for one commit; what keeps
// writes here is boundary_test.go, not the client's type (a kgo.Client
// can always produce).

// ApplyOffsets commits offsets to a DR group that has no members (empty or
// not yet existing). The offsets the group had before are recorded in the
// store first, then the commit is made and its outcome recorded, so every
// change can be undone (apply the previous offsets) even after a crash.
// It is the one function that moves DR group offsets; the failover runbook
// calls it behind its approval gate, with the step's audit record.
func ApplyOffsets(ctx context.Context, w audit.Written, store *storage.Store, target *kgo.Client, flow, group string,
	offsets map[model.TP]int64, actor, reason string) (storage.GroupChange, error) {
	if err := audited(w, "offsets of group "+group); err != nil {
		return storage.GroupChange{}, err
	}
	change := storage.GroupChange{Flow: flow, Group: group, AtMs: time.Now().UnixMilli(), Actor: actor, Reason: reason}
	if len(offsets) == 0 {
		return change, errors.New("nothing to apply: no partition could be translated")
	}
	adm := kadm.NewClient(target)
	state, members, err := kafka.GroupState(ctx, adm, group)
	if err != nil {
		return change, err
	}
	if members > 0 || (state != "Empty" && state != "Dead") {
		return change, fmt.Errorf("%w (group %s is %s with %d member(s))", kafka.ErrGroupActive, group, state, members)
	}
	before, err := kafka.GroupOffsets(ctx, adm, group)
	if err != nil {
		return change, fmt.Errorf("reading DR offsets of group %s: %w", group, err)
	}
	tps := make([]model.TP, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	mm2.SortTPs(tps)
	commit := kadm.Offsets{}
	for _, tp := range tps {
		c := storage.OffsetChange{Topic: tp.Topic, Partition: tp.Partition, Applied: offsets[tp]}
		if o, ok := before.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			v := o.At
			c.Previous = &v
		}
		change.Changes = append(change.Changes, c)
		commit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: offsets[tp], LeaderEpoch: -1})
	}
	if change.ID, err = store.BeginGroupChange(ctx, change); err != nil {
		return change, err
	}
	return commitChange(ctx, store, adm, change, commit)
}

// commitChange commits a recorded change's offsets and records the outcome.
func commitChange(ctx context.Context, store *storage.Store, adm *kadm.Client, change storage.GroupChange, commit kadm.Offsets) (storage.GroupChange, error) {
	change.Status = "applied"
	err := kafka.CoordinatorRetry(ctx, func() error { // committing the same offsets again is harmless
		resp, err := adm.CommitOffsets(ctx, change.Group, commit)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if err != nil {
		err = fmt.Errorf("committing offsets of group %s: %w", change.Group, err)
		change.Status, change.Error = "failed", err.Error()
	}
	if ferr := store.FinishGroupChange(ctx, change.ID, err); ferr != nil && err == nil {
		err = ferr
	}
	return change, err
}

// FinishInterruptedChange completes a change recorded as "applying" by a
// process that died before it knew the commit's outcome, or as "failed"
// (the commit may still have reached Kafka, as after a timeout): the same
// offsets are committed again (harmless if they already were), so a
// resumed failover step neither translates anew nor loses the "previous"
// offsets recorded for undo. The group must still have no members.
func FinishInterruptedChange(ctx context.Context, w audit.Written, store *storage.Store, target *kgo.Client, change storage.GroupChange) (storage.GroupChange, error) {
	if err := audited(w, "offsets of group "+change.Group); err != nil {
		return change, err
	}
	if change.Status != "applying" && change.Status != "failed" {
		return change, fmt.Errorf("group change %d is %s, not interrupted or failed", change.ID, change.Status)
	}
	adm := kadm.NewClient(target)
	state, members, err := kafka.GroupState(ctx, adm, change.Group)
	if err != nil {
		return change, err
	}
	if members > 0 || (state != "Empty" && state != "Dead") {
		return change, fmt.Errorf("%w (group %s is %s with %d member(s))", kafka.ErrGroupActive, change.Group, state, members)
	}
	commit := kadm.Offsets{}
	for _, c := range change.Changes {
		commit.Add(kadm.Offset{Topic: c.Topic, Partition: c.Partition, At: c.Applied, LeaderEpoch: -1})
	}
	return commitChange(ctx, store, adm, change, commit)
}
