package effect

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
)

// CommitPrimaryGroup commits offsets to a PRIMARY consumer group that has
// no members, for a failback's translate-group-back step. It keeps no
// group-change row: those name a flow and a group but not a cluster, and
// their undo goes to DR. The caller writes the offsets it replaces to the
// audit log first. Committing the same offsets again is harmless, so a
// resumed step commits again.
func CommitPrimaryGroup(ctx context.Context, w audit.Written, primary *kgo.Client, group string, offsets map[model.TP]int64) error {
	if err := audited(w, "offsets of primary group "+group); err != nil {
		return err
	}
	adm := kadm.NewClient(primary)
	state, members, err := kafka.GroupState(ctx, adm, group)
	if err != nil {
		return err
	}
	if members > 0 || (state != "Empty" && state != "Dead") {
		return fmt.Errorf("%w (primary group %s is %s with %d member(s))", kafka.ErrGroupActive, group, state, members)
	}
	commit := kadm.Offsets{}
	for tp, at := range offsets {
		commit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: at, LeaderEpoch: -1})
	}
	return kafka.CoordinatorRetry(ctx, func() error {
		resp, err := adm.CommitOffsets(ctx, group, commit)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
}
