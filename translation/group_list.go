package translation

import (
	"context"
	"errors"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kadm"
)

// SourceGroups lists the consumer groups the primary knows (a read). It
// fails when the translator has no primary client or the primary does not
// answer within ctx.
func (t *GroupTranslator) SourceGroups(ctx context.Context) ([]string, error) {
	if t.source == nil {
		return nil, errNoSource
	}
	groups, err := kadm.NewClient(t.source).ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	return groups.Groups(), nil
}

// SeekDR finds, for each partition of topics in DR, the first offset at
// or after ms (a read: OffsetsInitializer.timestamp's answer).
func (t *GroupTranslator) SeekDR(ctx context.Context, ms int64, topics ...string) (map[model.TP]model.SeekResult, error) {
	return kafka.SeekByTimestamp(ctx, t.target, ms, topics...)
}

// errNoSource: the flow's translator was built without a primary client.
var errNoSource = errors.New("no client for the primary cluster")
