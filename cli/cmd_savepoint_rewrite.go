package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

const savepointRewriteUsage = `Usage: drconsole savepoint rewrite SRC --offsets FILE --out DST [--uid UID]
                [--rename-topics identity|default [--source-alias A] [--separator S]]
                [--choose TOPIC-P=earliest|latest|timestamp:RFC3339 ...]
                [--config FILE [--flow NAME]] [--json]

Writes a new savepoint DST: a copy of SRC whose Kafka source resumes in the DR cluster. Each
split of the KafkaSource reader state (and the enumerator's view of it) gets the DR topic name
and the DR offset from FILE; every other byte of state is carried over, state files are copied
next to the new _metadata, and the result is read back and checked before it appears at DST.
SRC is never modified; DST must not exist. SRC and DST are local or s3:// (with --config).

  --offsets FILE     DR offsets, as "drconsole translate" writes them: {"events-0": 1234, ...}
                     keyed by the DR topic-partition ("-" = stdin)
  --rename-topics P  the flow's replication policy: identity (DR topics keep their names, the
                     default) or default (DR topic = ALIAS + separator + topic)
  --source-alias A   the primary cluster's alias (needed by --rename-topics default)
  --separator S      replication.policy.separator (default ".")
  --choose K=W       for the split K (its primary topic-partition, e.g. events-3) that has no
                     offset in FILE: resume in DR from the earliest or latest offset, or from the
                     first record at or after an RFC 3339 time (timestamp:2026-12-01T07:00:00Z;
                     looked up in the flow's DR cluster, needs --config). Repeatable.
  --uid UID          the Kafka source operator (default: the only one)
  --config FILE      the config file whose s3 section serves s3:// paths
  --flow NAME        take the replication policy, the source alias and the DR cluster from this
                     flow of --config (default with a timestamp choice: the only flow)
  --json             print the result as JSON

Exit status: 0 written, 3 some splits have no DR offset (a line each on stderr, nothing
written), 2 bad input, usage, or a savepoint that cannot be rewritten faithfully.
`

// missingOffsetsError is splits without a DR offset: exit 3.
type missingOffsetsError struct{ n int }

func (e missingOffsetsError) Error() string {
	return fmt.Sprintf("%d split(s) have no DR offset: nothing written (translate them, or --choose for each)", e.n)
}

// choice is an operator's answer for a split without a DR offset.
type choice struct {
	offset int64     // OffsetEarliest / OffsetLatest, or the resolved offset
	at     time.Time // a timestamp choice (resolved in DR before use)
	why    string
}

// chooseFlags collects repeated --choose K=earliest|latest|timestamp:T.
type chooseFlags map[string]*choice

func (c chooseFlags) String() string { return "" }

func (c chooseFlags) Set(v string) error {
	key, what, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want TOPIC-PARTITION=earliest|latest|timestamp:RFC3339", v)
	}
	if _, err := mm2.ParseTPKey(key); err != nil {
		return err
	}
	if _, dup := c[key]; dup {
		return fmt.Errorf("%s chosen twice", key)
	}
	switch {
	case what == "earliest":
		c[key] = &choice{offset: flink.OffsetEarliest, why: "earliest (chosen)"}
	case what == "latest":
		c[key] = &choice{offset: flink.OffsetLatest, why: "latest (chosen)"}
	case strings.HasPrefix(what, "timestamp:"):
		at, err := time.Parse(time.RFC3339, strings.TrimPrefix(what, "timestamp:"))
		if err != nil {
			return fmt.Errorf("%s: %q is not an RFC 3339 time (e.g. 2026-12-01T07:00:00Z)", key, strings.TrimPrefix(what, "timestamp:"))
		}
		c[key] = &choice{at: at}
	default:
		return fmt.Errorf("%s=%q: want earliest, latest or timestamp:RFC3339", key, what)
	}
	return nil
}

func (c chooseFlags) timestamps() bool {
	for _, ch := range c {
		if !ch.at.IsZero() {
			return true
		}
	}
	return false
}

func savepointRewrite(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("savepoint rewrite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, savepointRewriteUsage) }
	offsetsFile := fs.String("offsets", "", "")
	out := fs.String("out", "", "")
	uid := fs.String("uid", "", "")
	rename := fs.String("rename-topics", "identity", "")
	alias := fs.String("source-alias", "", "")
	separator := fs.String("separator", "", "")
	cfgFile := fs.String("config", "", "")
	flowName := fs.String("flow", "", "")
	asJSON := fs.Bool("json", false, "")
	choose := chooseFlags{}
	fs.Var(choose, "choose", "")
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	var policy mm2.ReplicationPolicy
	var flow *config.Flow
	var cfg *config.Config
	if *flowName != "" || choose.timestamps() {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		switch {
		case *cfgFile == "":
			return usageError{errors.New("--flow and timestamp choices need --config FILE (the flow's DR cluster)")}
		case set["rename-topics"] || set["source-alias"] || set["separator"]:
			return usageError{errors.New("--rename-topics, --source-alias and --separator come from the flow when --flow or a timestamp choice is used")}
		}
		if cfg, flow, err = loadFlow(*cfgFile, *flowName); err != nil {
			return err
		}
		policy, *alias = flowstate.TopicsOf(flow).Policy, flow.SourceAlias
	} else {
		switch config.ReplicationPolicy(*rename) {
		case config.PolicyIdentity:
			policy.Identity = true
			if *alias != "" || *separator != "" {
				return usageError{errors.New("--source-alias and --separator go with --rename-topics default")}
			}
		case config.PolicyDefault:
			if *alias == "" {
				return usageError{errors.New("--rename-topics default names DR topics with the source alias: give --source-alias")}
			}
			policy.Separator = *separator
		default:
			return usageError{fmt.Errorf("--rename-topics %q: want identity or default", *rename)}
		}
	}
	switch {
	case len(paths) != 1:
		return usageError{errors.New("savepoint rewrite needs exactly one SRC (a savepoint directory or its _metadata file)")}
	case *offsetsFile == "":
		return usageError{errors.New("savepoint rewrite needs --offsets FILE (the DR offsets drconsole translate writes)")}
	case *out == "":
		return usageError{errors.New("savepoint rewrite needs --out DST (a new directory)")}
	}

	sp, err := readSavepoint(paths[0], *cfgFile)
	if err != nil {
		return err
	}
	offs, err := sp.KafkaSourceOffsets(*uid)
	if err != nil {
		return inputError{err}
	}
	in, err := readOffsets(ctx, *offsetsFile, stdin)
	if err != nil {
		return err
	}
	dr := map[string]int64{}
	for _, po := range in {
		dr[mm2.TPKey(po.TP)] = po.Offset
	}
	for key := range choose {
		if _, ok := offs.Partitions[key]; !ok {
			return usageError{fmt.Errorf("--choose %s: the savepoint has no split %s", key, key)}
		}
	}
	if choose.timestamps() {
		if err := resolveTimestamps(ctx, cfg, flow, choose, policy, *alias); err != nil {
			return err
		}
	}
	targets, missing, err := rewriteTargets(offs, dr, choose, policy, *alias)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		for _, m := range missing {
			fmt.Fprintf(stderr, "drconsole: %s: no DR offset for %s in %s (give --choose %s=earliest|latest|timestamp:RFC3339 to resume there)\n", m[0], m[1], *offsetsFile, m[0])
		}
		return missingOffsetsError{len(missing)}
	}

	req := flink.RewriteRequest{Source: paths[0], Dest: *out, SourceUID: offs.OperatorID, Targets: targets}
	for _, p := range []string{paths[0], *out} {
		if config.IsS3URI(p) {
			if req.Files, err = s3Files(p, *cfgFile); err != nil {
				return err
			}
			break
		}
	}
	res, err := flink.Rewrite(ctx, req)
	if errors.Is(err, flink.ErrRewriteRefused) {
		return inputError{err}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	writeRewriteHuman(paths[0], res, newTerminalWriter(stdout))
	return nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, and returns those.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		if fs.NArg() == 0 {
			return paths, nil
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// rewriteTargets gives each split its DR topic (the policy's remote name)
// and its DR offset from dr, or the operator's choice. missing lists the
// splits with neither: {split key, DR key}.
func rewriteTargets(offs *flink.KafkaOffsets, dr map[string]int64, choose chooseFlags, policy mm2.ReplicationPolicy, alias string) (map[string]flink.SplitTarget, [][2]string, error) {
	targets := map[string]flink.SplitTarget{}
	var missing [][2]string
	for _, p := range offs.Sorted() {
		topic := policy.RemoteTopic(alias, p.Topic)
		drKey := topic + "-" + strconv.Itoa(int(p.Partition))
		off, translated := dr[drKey]
		ch, chosen := choose[p.Key()]
		switch {
		case translated && chosen:
			return nil, nil, usageError{fmt.Errorf("--choose %s: %s has a DR offset in the offsets file; --choose is for splits without one", p.Key(), drKey)}
		case translated && off < 0:
			return nil, nil, inputError{fmt.Errorf("the offsets file gives %s the negative offset %d", drKey, off)}
		case translated:
			targets[p.Key()] = flink.SplitTarget{Topic: topic, Offset: off, Why: "translated"}
		case chosen:
			targets[p.Key()] = flink.SplitTarget{Topic: topic, Offset: ch.offset, Why: ch.why}
		default:
			missing = append(missing, [2]string{p.Key(), drKey})
		}
	}
	return targets, missing, nil
}

func writeRewriteHuman(src string, res *flink.RewriteResult, w io.Writer) {
	fmt.Fprintf(w, "rewrote %s\n   into %s\n\n", src, res.Path)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SPLIT\tSUBTASK\tOLD NEXT\tDR SPLIT\tNEW NEXT\tWHY")
	for _, s := range res.Splits {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s-%d\t%s\t%s\n", s.From.Key(), s.From.Subtask, offsetText(s.From.Next),
			s.To.Topic, s.From.Partition, offsetText(s.To.Offset), s.To.Why)
	}
	tw.Flush()
	if len(res.RenamedTopics) > 0 {
		var from []string
		for f := range res.RenamedTopics {
			from = append(from, f)
		}
		sort.Strings(from)
		fmt.Fprintln(w, "\nrenamed topics (reader and enumerator state):")
		for _, f := range from {
			fmt.Fprintf(w, "  %s -> %s\n", f, res.RenamedTopics[f])
		}
	}
	fmt.Fprintf(w, "\nstate files copied: %d (%d bytes)\n", res.CopiedFiles, res.CopiedBytes)
	for _, d := range res.RemovedLeftovers {
		fmt.Fprintf(w, "removed %s, left by an earlier rewrite to the same destination that did not finish\n", d)
	}
}

func offsetText(v int64) string {
	switch v {
	case flink.OffsetEarliest:
		return "earliest"
	case flink.OffsetLatest:
		return "latest"
	case flink.OffsetCommitted:
		return "committed"
	}
	return strconv.FormatInt(v, 10)
}

// resolveTimestamps looks the timestamp choices up in the flow's DR
// cluster: the first offset of the split's DR partition whose record time
// is at or after the chosen time (its end offset when none is), as
// KafkaSource's OffsetsInitializer.timestamp would start. A read only.
func resolveTimestamps(ctx context.Context, cfg *config.Config, flow *config.Flow, choose chooseFlags, policy mm2.ReplicationPolicy, alias string) error {
	cluster := cfg.Clusters[flow.Target]
	if cluster == nil {
		return inputError{fmt.Errorf("flow %s: no cluster %q", flow.Name, flow.Target)}
	}
	opts, err := kafka.ClientOptions("savepoint-rewrite", cluster, newLogger(io.Discard))
	if err != nil {
		return inputError{err}
	}
	cl, err := kafka.NewClient(opts, nil)
	if err != nil {
		return inputError{err}
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timestampLookupTimeout)
	defer cancel()
	for key, ch := range choose {
		if ch.at.IsZero() {
			continue
		}
		tp, _ := mm2.ParseTPKey(key)
		topic := policy.RemoteTopic(alias, tp.Topic)
		found, err := kafka.SeekByTimestamp(ctx, cl, ch.at.UnixMilli(), topic)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		r, ok := found[model.TP{Topic: topic, Partition: tp.Partition}]
		if !ok {
			return inputError{fmt.Errorf("%s: the DR cluster %s has no partition %s-%d (or could not list it)", key, flow.Target, topic, tp.Partition)}
		}
		ch.offset = r.Offset
		ch.why = fmt.Sprintf("timestamp %s (chosen): DR offset %d", ch.at.UTC().Format(time.RFC3339Nano), r.Offset)
		if r.Timestamp < 0 {
			ch.why = fmt.Sprintf("timestamp %s (chosen): no record at or after it, DR end offset %d", ch.at.UTC().Format(time.RFC3339Nano), r.Offset)
		}
	}
	return nil
}

// timestampLookupTimeout bounds the DR lookups of timestamp choices.
const timestampLookupTimeout = 30 * time.Second
