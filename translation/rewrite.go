package translation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// The targets of a savepoint rewrite (issue 14): where each KafkaSource
// split of a primary savepoint resumes in DR. The rule is the one group
// translation and `drconsole translate` use (Translate below); a partition
// it cannot translate is never guessed: the operator chooses for it, or the
// rewrite is refused.

// Translate is the translation rule of the console for one partition of a
// flow: its DR name under the replication policy, and its DR offset through
// the sync index (or the offset itself when the mirror preserves offsets:
// Cluster Linking).
func (g *GroupTranslator) Translate(tp model.TP, offset int64, preserved bool) (model.TP, mm2.Translation) {
	dr := model.TP{Topic: g.Policy.RemoteTopic(g.Alias, tp.Topic), Partition: tp.Partition}
	if preserved {
		return dr, mm2.Translation{Offset: offset, Method: mm2.MethodPreserved}
	}
	return dr, g.Index.Translate(tp, offset)
}

// TargetRow is one split of the savepoint and where it resumes in DR.
type TargetRow struct {
	Key     string   // the split's "topic-partition" in the savepoint
	Source  model.TP // its primary topic partition
	DR      model.TP // its name in DR
	Subtask int
	// Offset is the split's next offset on the primary; Marker names a
	// negative one (a split the reader had not started).
	Offset int64
	Marker string
	// Translation is the sync index's answer (zero for a marker).
	Translation mm2.Translation
	// Choice is the operator's choice, used when there is no translation.
	Choice *model.Choice
	// Target is where the split resumes; nil when the partition still
	// needs a choice or cannot be rewritten (Problem).
	Target *flink.SplitTarget
	// Problem says why this split stops the rewrite whatever is chosen.
	Problem string
}

// Translated reports whether the row's DR offset comes from translation.
func (r TargetRow) Translated() bool { return r.Marker == "" && r.Translation.Translated() }

// RewriteTargets are the targets of every split of a savepoint's
// KafkaSource, in topic-partition order.
type RewriteTargets struct {
	Rows []TargetRow
	// NeedChoice lists the splits without a translation and without a
	// (usable) choice; Problems the splits no choice can fix.
	NeedChoice []string
	Problems   []string
	// RereadMax bounds the records processed twice over all translated
	// partitions (chosen ones are not bounded: earliest re-reads the
	// whole retained log, latest skips).
	RereadMax int64
	// Renamed maps each primary topic to its DR name where they differ.
	Renamed map[string]string
}

// Complete reports whether every split has a target.
func (t *RewriteTargets) Complete() bool { return len(t.NeedChoice) == 0 && len(t.Problems) == 0 }

// Err says why the rewrite cannot run with these targets; nil when it can.
func (t *RewriteTargets) Err() error {
	var errs []error
	if len(t.Problems) > 0 {
		errs = append(errs, fmt.Errorf("%d split(s) cannot be rewritten: %s", len(t.Problems), strings.Join(t.Problems, "; ")))
	}
	if len(t.NeedChoice) > 0 {
		errs = append(errs, fmt.Errorf("%d partition(s) have no translation and no choice (earliest, latest or timestamp) was made for them: %s",
			len(t.NeedChoice), strings.Join(t.NeedChoice, ", ")))
	}
	return errors.Join(errs...)
}

// Targets is the map flink.Rewrite takes; nil when not Complete.
func (t *RewriteTargets) Targets() map[string]flink.SplitTarget {
	if !t.Complete() {
		return nil
	}
	out := make(map[string]flink.SplitTarget, len(t.Rows))
	for _, r := range t.Rows {
		out[r.Key] = *r.Target
	}
	return out
}

// TargetOptions are the inputs of RewriteTargets beyond the splits.
type TargetOptions struct {
	// Preserved: the mirror keeps offsets (Cluster Linking); only topic
	// names change.
	Preserved bool
	// Choices by split key ("topic-partition", primary name).
	Choices map[string]model.Choice
	// Resolve looks timestamp choices up in DR now (a read). Without it
	// they stay unresolved: a preview says so, and the targets are not
	// Complete.
	Resolve bool
}

// RewriteTargets builds the targets of a savepoint's splits (as
// flink.KafkaOffsets holds them) for this flow.
func (g *GroupTranslator) RewriteTargets(ctx context.Context, splits []flink.PartitionOffset, o TargetOptions) (*RewriteTargets, error) {
	return buildTargets(ctx, splits, o, g.Translate, g.SeekDR)
}

// seekFunc is GroupTranslator.SeekDR's shape (tests stand in for Kafka).
type seekFunc func(ctx context.Context, ms int64, topics ...string) (map[model.TP]model.SeekResult, error)

type translateFunc func(tp model.TP, offset int64, preserved bool) (model.TP, mm2.Translation)

func buildTargets(ctx context.Context, splits []flink.PartitionOffset, o TargetOptions, translate translateFunc, seek seekFunc) (*RewriteTargets, error) {
	if len(splits) == 0 {
		return nil, errors.New("the savepoint's Kafka source holds no split: nothing to rewrite")
	}
	for key := range o.Choices {
		if !slices.ContainsFunc(splits, func(p flink.PartitionOffset) bool { return p.Key() == key }) {
			return nil, fmt.Errorf("a choice is made for %s, which is not a split of the savepoint", key)
		}
	}
	t := &RewriteTargets{}
	seeks := map[int64][]string{} // timestamp -> DR topics to look up
	for _, p := range splits {
		src := model.TP{Topic: p.Topic, Partition: p.Partition}
		r := TargetRow{Key: p.Key(), Source: src, Subtask: p.Subtask, Offset: p.Next, Marker: p.Marker}
		if p.Next < 0 && r.Marker == "" {
			r.Marker = "negative offset"
		}
		var tr mm2.Translation
		r.DR, tr = translate(src, max(p.Next, 0), o.Preserved)
		if r.Marker == "" {
			r.Translation = tr
		}
		if r.DR.Topic != r.Source.Topic {
			if t.Renamed == nil {
				t.Renamed = map[string]string{}
			}
			t.Renamed[r.Source.Topic] = r.DR.Topic
		}
		// A bounded split's stopping offset is a primary offset: carried
		// over unchanged it would stop at the wrong record in DR.
		if p.Stopping != nil && *p.Stopping >= 0 && !o.Preserved {
			r.Problem = fmt.Sprintf("%s has a stopping offset (%d), a primary offset that means another record in DR", r.Key, *p.Stopping)
			t.Problems = append(t.Problems, r.Problem)
		}
		switch c, chosen := o.Choices[r.Key]; {
		case r.Problem != "":
		case r.Translated():
			r.Target = &flink.SplitTarget{Topic: r.DR.Topic, Offset: r.Translation.Offset, Why: "translated (" + string(r.Translation.Method) + ")"}
			t.RereadMax += r.Translation.RereadMax
		case !chosen:
			t.NeedChoice = append(t.NeedChoice, r.Key+" ("+r.why()+")")
		default:
			if err := c.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", r.Key, err)
			}
			r.Choice = &c
			why := c.String() + " (chosen by " + cmp.Or(c.By, "an unnamed operator") + ": " + r.why() + ")"
			switch c.Kind {
			case model.ChoiceEarliest:
				r.Target = &flink.SplitTarget{Topic: r.DR.Topic, Offset: flink.OffsetEarliest, Why: why}
			case model.ChoiceLatest:
				r.Target = &flink.SplitTarget{Topic: r.DR.Topic, Offset: flink.OffsetLatest, Why: why}
			case model.ChoiceTimestamp:
				r.Target = &flink.SplitTarget{Topic: r.DR.Topic, Offset: -1, Why: why} // resolved below
				seeks[c.AtMs] = appendNew(seeks[c.AtMs], r.DR.Topic)
			}
		}
		t.Rows = append(t.Rows, r)
	}
	slices.SortFunc(t.Rows, func(a, b TargetRow) int {
		return cmp.Or(strings.Compare(a.Source.Topic, b.Source.Topic), cmp.Compare(a.Source.Partition, b.Source.Partition))
	})
	slices.Sort(t.NeedChoice)
	if err := t.resolve(ctx, o.Resolve, seeks, seek); err != nil {
		return t, err
	}
	return t, nil
}

// resolve turns timestamp choices into DR offsets (resolve), or marks
// them as still needing the lookup.
func (t *RewriteTargets) resolve(ctx context.Context, resolve bool, seeks map[int64][]string, seek seekFunc) error {
	found := map[int64]map[model.TP]model.SeekResult{}
	if resolve {
		for ms, topics := range seeks {
			res, err := seek(ctx, ms, topics...)
			if err != nil {
				return fmt.Errorf("looking timestamp %s up in DR: %w", time.UnixMilli(ms).UTC().Format(time.RFC3339), err)
			}
			found[ms] = res
		}
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Choice == nil || r.Choice.Kind != model.ChoiceTimestamp {
			continue
		}
		s, ok := found[r.Choice.AtMs][r.DR]
		switch {
		case !resolve:
			r.Target = nil
			t.NeedChoice = append(t.NeedChoice, r.Key+" (timestamp not looked up in DR yet)")
		case !ok:
			r.Target = nil
			t.Problems = append(t.Problems, fmt.Sprintf("%s: DR did not answer for %s at %s", r.Key, mm2.TPKey(r.DR), r.Choice))
		default:
			r.Target.Offset = s.Offset
			if s.Timestamp < 0 {
				r.Target.Why += fmt.Sprintf(": no record at or after it, the end of the log (%d)", s.Offset)
			} else {
				r.Target.Why += fmt.Sprintf(": first record at or after it is %d (%s)", s.Offset, time.UnixMilli(s.Timestamp).UTC().Format(time.RFC3339))
			}
		}
	}
	slices.Sort(t.NeedChoice)
	return nil
}

// why says why a row has no translation.
func (r TargetRow) why() string {
	switch {
	case r.Marker != "":
		return "the savepoint holds the start marker " + r.Marker + ", not an offset"
	case r.Translation.Method == mm2.MethodTooOld:
		return "too old: every offset sync MM2 kept is newer"
	case r.Translation.Method == mm2.MethodUnknown:
		return "no offset sync known for this partition"
	}
	return "translation " + string(r.Translation.Method)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
