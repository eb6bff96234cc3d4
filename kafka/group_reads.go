package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/drconsole/drconsole/model"
)

// GroupOffsets fetches group's committed offsets on adm's cluster; a group
// that does not exist (yet) has none, which is not an error.
func GroupOffsets(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	var resp kadm.OffsetResponses
	err := CoordinatorRetry(ctx, func() (err error) {
		resp, err = adm.FetchOffsets(ctx, group)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// coordinatorPatience bounds how long a group request waits for its
// coordinator: a DR broker that just started (or took over the group)
// answers COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS until
// __consumer_offsets is created and loaded, which on a busy broker outlasts
// the client's own retries (it returns FindCoordinator errors at once).
const coordinatorPatience = 20 * time.Second

// CoordinatorRetry runs f until it succeeds, fails with an error that is
// not a retriable Kafka error, ctx ends, or coordinatorPatience passes.
func CoordinatorRetry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(coordinatorPatience)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := f()
		if err == nil || !kerr.IsRetriable(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// GroupState describes group on adm's cluster: its state ("Dead" when it
// does not exist) and member count, waiting for a coordinator that is
// still loading. runbook/internal/effect checks it before committing.
func GroupState(ctx context.Context, adm *kadm.Client, group string) (string, int, error) {
	var described kadm.DescribedGroups
	err := CoordinatorRetry(ctx, func() (err error) {
		described, err = adm.DescribeGroups(ctx, group)
		if d, ok := described[group]; err == nil && ok && kerr.IsRetriable(d.Err) {
			err = d.Err
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return "Dead", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("describing DR group %s: %w", group, err)
	}
	d, ok := described[group]
	if !ok {
		return "Dead", 0, nil
	}
	if errors.Is(d.Err, kerr.GroupIDNotFound) {
		return "Dead", 0, nil
	}
	if d.Err != nil {
		return "", 0, fmt.Errorf("describing DR group %s: %w", group, d.Err)
	}
	return d.State, len(d.Members), nil
}

// ErrGroupActive refuses to move offsets under running consumers: Kafka
// would reject the commit, and their positions would overwrite it anyway.
var ErrGroupActive = errors.New("the DR group has active members; stop its consumers first")

// SeekByTimestamp finds, for each DR partition of topics, the first offset
// whose record timestamp is at or after ms (Kafka's ListOffsets by
// timestamp). The alternative to translation: simpler, at-least-once.
func SeekByTimestamp(ctx context.Context, target *Client, ms int64, topics ...string) (map[model.TP]model.SeekResult, error) {
	listed, err := kadm.NewClient(target).ListOffsetsAfterMilli(ctx, ms, topics...)
	if err != nil && !Partial(err) {
		return nil, fmt.Errorf("listing DR offsets by timestamp: %w", err)
	}
	out := map[model.TP]model.SeekResult{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[model.TP{Topic: o.Topic, Partition: o.Partition}] = model.SeekResult{Offset: o.Offset, Timestamp: o.Timestamp}
		}
	})
	return out, nil
}

// GroupCommitted is group's committed offsets on cl's cluster by
// partition (GroupOffsets), leaving out partitions with an error or no
// offset.
func GroupCommitted(ctx context.Context, cl *Client, group string) (map[model.TP]int64, error) {
	resp, err := GroupOffsets(ctx, kadm.NewClient(cl), group)
	if err != nil {
		return nil, err
	}
	out := map[model.TP]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[model.TP{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	})
	return out, nil
}

// GroupStateOn is GroupState on cl's cluster, for readers that hold a
// client, not the admin client the effects commit with.
func GroupStateOn(ctx context.Context, cl *Client, group string) (string, int, error) {
	return GroupState(ctx, kadm.NewClient(cl), group)
}

// Groups lists the consumer groups cl's cluster knows.
func Groups(ctx context.Context, cl *Client) ([]string, error) {
	listed, err := kadm.NewClient(cl).ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	return listed.Groups(), nil
}

// AllGroupsCommitted is every group's committed offsets on cl's cluster
// (one ListGroups and one batched OffsetFetch), as GroupCommitted; a group
// whose offsets could not be fetched is left out.
func AllGroupsCommitted(ctx context.Context, cl *Client) (map[string]map[model.TP]int64, error) {
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	groups := listed.Groups()
	out := map[string]map[model.TP]int64{}
	if len(groups) == 0 {
		return out, nil
	}
	for _, r := range adm.FetchManyOffsets(ctx, groups...) {
		if r.Err != nil {
			continue
		}
		offs := map[model.TP]int64{}
		r.Fetched.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				offs[model.TP{Topic: o.Topic, Partition: o.Partition}] = o.At
			}
		})
		out[r.Group] = offs
	}
	return out, nil
}
