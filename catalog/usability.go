package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// kafkaTimeout bounds each cluster's offset lookups: a primary that is gone
// must not hold the page.
var kafkaTimeout = 10 * time.Second

// model.Usability checks a savepoint's offsets against flow's clusters: the
// primary's and DR's log-start offsets, and the translation to DR. An
// unreachable cluster makes its side unknown, not an error; errors are for
// an unknown flow or undecodable offsets.
func (c *Catalog) Usability(ctx context.Context, sp model.Savepoint, flow string) (model.Usability, error) {
	u := model.Usability{SavepointID: sp.ID, Flow: flow, At: c.now(), Verdict: model.VerdictUnknown, Primary: model.VerdictUnknown, DR: model.VerdictUnknown}
	if c.Monitor == nil {
		return u, errors.New("catalog: no Kafka monitor: usability cannot be checked")
	}
	tr := c.Monitor.Translator(flow)
	if tr == nil {
		return u, fmt.Errorf("catalog: no flow %q", flow)
	}
	offsets, err := sp.Offsets()
	if err != nil {
		return u, err
	}
	if offsets == nil {
		why := "its offsets were not read yet"
		if sp.ReadError != "" {
			why = "its offsets could not be read: " + sp.ReadError
		}
		u.Notes = append(u.Notes, why)
		return u, nil
	}
	if sp.ReadError != "" {
		u.Notes = append(u.Notes, sp.ReadError)
	}
	link := false
	if f := c.Config.Flow(flow); f != nil {
		link = f.IsClusterLink()
	}
	var srcTopics, drTopics []string
	for key, off := range offsets {
		tp, err := mm2.ParseTPKey(key)
		if err != nil {
			return u, fmt.Errorf("catalog: savepoint %d: %w", sp.ID, err)
		}
		p := model.PartitionUsability{Source: tp, Offset: off}
		p.DR, p.Translation = tr.Translate(tp, off, link)
		u.Partitions = append(u.Partitions, p)
		srcTopics = appendNew(srcTopics, p.Source.Topic)
		drTopics = appendNew(drTopics, p.DR.Topic)
	}
	sort.Slice(u.Partitions, func(i, j int) bool {
		a, b := u.Partitions[i].Source, u.Partitions[j].Source
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})

	primaryCl, drCl := c.Monitor.Clients(flow)
	primary, primaryErr := logStarts(ctx, primaryCl, srcTopics)
	if primaryErr != nil {
		u.PrimaryErr = kafka.Explained(ctx, primaryCl, "the primary", c.Monitor.DownSince(flow, false), primaryErr).Error()
	}
	var dr, drEnds map[model.TP]int64
	var drErr error
	if link {
		dr, drEnds, drErr = logBounds(ctx, drCl, drTopics)
	} else {
		dr, drErr = logStarts(ctx, drCl, drTopics)
	}
	if drErr != nil {
		u.DRErr = kafka.Explained(ctx, drCl, "DR", c.Monitor.DownSince(flow, true), drErr).Error()
	}

	for i := range u.Partitions {
		p := &u.Partitions[i]
		key := mm2.TPKey(p.Source)
		p.Primary, p.DRVerdict = model.VerdictUnknown, model.VerdictUnknown
		if v, ok := primary[p.Source]; !ok {
			p.Problems = append(p.Problems, "primary log start unknown")
		} else {
			p.PrimaryLogStart = &v
			p.PrimaryDeleted = v > p.Offset
			p.Primary = model.VerdictUsable
			if p.PrimaryDeleted {
				p.Primary = model.VerdictUnusable
				why := fmt.Sprintf("data deleted on the primary: log start %d is past the savepoint's offset %d (%d records gone)", v, p.Offset, v-p.Offset)
				p.Problems = append(p.Problems, why)
				u.Unusable = append(u.Unusable, key+": "+why)
			}
		}
		switch {
		case !p.Translation.Translated():
			u.Untranslatable = append(u.Untranslatable, key)
			why := fmt.Sprintf("no DR offset: translation %s", p.Translation.Method)
			if p.Translation.Method == mm2.MethodTooOld {
				why = "no DR offset: every offset sync MM2 kept is newer than the savepoint's offset"
				p.DRVerdict = model.VerdictUnusable
				u.Unusable = append(u.Unusable, key+": "+why)
			} else {
				why = "no DR offset: no offset syncs known for this partition (yet)"
			}
			p.Problems = append(p.Problems, why)
		default:
			v, ok := dr[p.DR]
			if !ok {
				p.Problems = append(p.Problems, "DR log start unknown")
				break
			}
			p.DRLogStart = &v
			p.DRDeleted = v > p.Translation.Offset
			p.DRVerdict = model.VerdictUsable
			if p.DRDeleted {
				p.DRVerdict = model.VerdictUnusable
				why := fmt.Sprintf("data deleted in DR: log start %d of %s is past the translated offset %d", v, mm2.TPKey(p.DR), p.Translation.Offset)
				p.Problems = append(p.Problems, why)
				u.Unusable = append(u.Unusable, key+": "+why)
			}
			if link {
				checkMirrored(&u, p, key, drEnds)
			}
		}
	}
	u.Primary = combine(u.Partitions, func(p *model.PartitionUsability) model.Verdict { return p.Primary })
	u.DR = combine(u.Partitions, func(p *model.PartitionUsability) model.Verdict { return p.DRVerdict })
	u.Verdict = worst(u.Primary, u.DR)
	if len(u.Partitions) == 0 {
		u.Verdict, u.Primary, u.DR = model.VerdictUnknown, model.VerdictUnknown, model.VerdictUnknown
		u.Notes = append(u.Notes, "the savepoint holds no Kafka partition offsets")
	}
	return u, nil
}

// checkMirrored judges a Cluster Linking partition by DR's log end: the
// mirror keeps offsets, so the savepoint is usable in DR once the mirror
// has copied everything before its offset. Behind is unusable (for now:
// while the primary lives the mirror may still catch up).
func checkMirrored(u *model.Usability, p *model.PartitionUsability, key string, ends map[model.TP]int64) {
	v, ok := ends[p.DR]
	if !ok {
		p.DRVerdict = worst(p.DRVerdict, model.VerdictUnknown)
		p.Problems = append(p.Problems, "DR log end unknown")
		return
	}
	p.DRLogEnd = &v
	p.DRBehind = v < p.Offset
	if p.DRBehind {
		p.DRVerdict = model.VerdictUnusable
		why := fmt.Sprintf("the DR mirror is behind the savepoint: %s ends at %d, before the savepoint's offset %d (%d records not mirrored yet)",
			mm2.TPKey(p.DR), v, p.Offset, p.Offset-v)
		p.Problems = append(p.Problems, why)
		u.Unusable = append(u.Unusable, key+": "+why)
	}
}

func appendNew(xs []string, s string) []string {
	if slices.Contains(xs, s) {
		return xs
	}
	return append(xs, s)
}

// combine is the worst of the partitions' verdicts.
func combine(ps []model.PartitionUsability, f func(*model.PartitionUsability) model.Verdict) model.Verdict {
	v := model.VerdictUsable
	for i := range ps {
		v = worst(v, f(&ps[i]))
	}
	return v
}

// worst: model.VerdictUnusable beats model.VerdictUnknown beats model.VerdictUsable.
func worst(a, b model.Verdict) model.Verdict {
	rank := map[model.Verdict]int{model.VerdictUsable: 0, model.VerdictUnknown: 1, model.VerdictUnusable: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// logStarts lists the log-start offsets of topics' partitions
// (kafka.ListAt); a partition not read is missing, and the error says why.
func logStarts(ctx context.Context, cl *kafka.Client, topics []string) (map[model.TP]int64, error) {
	if cl == nil {
		return nil, errNoClient
	}
	ctx, cancel := context.WithTimeout(ctx, kafkaTimeout)
	defer cancel()
	return kafka.ListAt(ctx, cl, kafka.StartOffset, topics...)
}

// logBounds is logStarts with the log-end offsets (kafka.ListBounds).
func logBounds(ctx context.Context, cl *kafka.Client, topics []string) (starts, ends map[model.TP]int64, err error) {
	if cl == nil {
		return nil, nil, errNoClient
	}
	ctx, cancel := context.WithTimeout(ctx, kafkaTimeout)
	defer cancel()
	bounds, err := kafka.ListBounds(ctx, cl, topics...)
	starts, ends = make(map[model.TP]int64, len(bounds)), make(map[model.TP]int64, len(bounds))
	for tp, b := range bounds {
		starts[tp], ends[tp] = b.Start, b.End
	}
	return starts, ends, err
}

var errNoClient = errors.New("no client for the cluster")
