package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
)

// inputError is malformed input: exit 2, like a usage error.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

// partialError is some partitions not translatable: exit 3.
type partialError struct{ n int }

func (e partialError) Error() string {
	return fmt.Sprintf("%d partition(s) could not be translated (use --allow-partial to leave them out)", e.n)
}

const translateUsage = `Usage: drconsole translate --offsets FILE (--syncs FILE | --config FILE [--flow NAME])
                           [--out FILE] [--explain] [--allow-partial]
                           [--source-alias A --policy identity|default [--separator S]]

Translates primary (upstream) offsets to DR offsets with MirrorMaker 2's rule over the offset-sync
history: the newest sync at or below each offset; exact when equal, else its DR offset + 1
(at most offset - sync records may be read twice; none is skipped).

  --offsets FILE   {"events-0": 1234567, ...}: next offsets to read on the primary ("-" = stdin)
  --syncs FILE     offset syncs as JSON Lines, in the order MM2 wrote them (drconsole export syncs)
  --config FILE    use the history stored by the console for a flow instead

Exit status: 0 all translated, 3 some could not be (a line each on stderr), 2 bad input or usage.
`

func translateCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, translateUsage) }
	offsetsFile := fs.String("offsets", "", "")
	syncsFile := fs.String("syncs", "", "")
	cfgFile := fs.String("config", "", "")
	flowName := fs.String("flow", "", "")
	outFile := fs.String("out", "", "")
	explain := fs.Bool("explain", false, "")
	allowPartial := fs.Bool("allow-partial", false, "")
	sourceAlias := fs.String("source-alias", "", "")
	policy := fs.String("policy", "", "")
	separator := fs.String("separator", "", "")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("translate: unexpected argument %q", fs.Arg(0))}
	case *offsetsFile == "":
		return usageError{errors.New("translate needs --offsets FILE")}
	case (*syncsFile == "") == (*cfgFile == ""):
		return usageError{errors.New("translate needs exactly one of --syncs FILE or --config FILE")}
	}

	var index *mm2.SyncIndex
	var aborted []storage.AbortedBatch // aborted transactions MM2 copied (stored history only)
	var names mm2.ReplicationPolicy
	var alias string
	if *syncsFile != "" {
		switch config.ReplicationPolicy(*policy) {
		case "", config.PolicyIdentity:
			names.Identity = true
		case config.PolicyDefault:
			if *sourceAlias == "" {
				return usageError{errors.New("--policy default renames topics with the source alias: give --source-alias")}
			}
		default:
			return usageError{fmt.Errorf("--policy %q: want identity or default", *policy)}
		}
		names.Separator, alias = *separator, *sourceAlias
		var err error
		if index, err = loadSyncsFile(ctx, *syncsFile); err != nil {
			return err
		}
	} else {
		if *policy != "" || *sourceAlias != "" || *separator != "" {
			return usageError{errors.New("--policy, --source-alias and --separator come from the flow when --config is used")}
		}
		cfg, flow, err := loadFlow(*cfgFile, *flowName)
		if err != nil {
			return err
		}
		names, alias = flowstate.TopicsOf(flow).Policy, flow.SourceAlias
		store, err := storage.Open(filepath.Join(cfg.DataDir, "drconsole.db"))
		if err != nil {
			return err
		}
		defer store.Close()
		index = mm2.NewSyncIndex()
		if err := monitor.LoadSyncIndex(ctx, index, store, flow.Name); err != nil {
			return err
		}
		if index.Len() == 0 {
			return fmt.Errorf("flow %s: no offset syncs stored in %s yet (is `drconsole serve` ingesting?)", flow.Name, cfg.DataDir)
		}
		if aborted, err = store.AbortedBatches(ctx, flow.Name); err != nil {
			return err
		}
	}

	in, err := readOffsets(ctx, *offsetsFile, stdin)
	if err != nil {
		return err
	}
	translated := map[model.TP]int64{}
	explained := make([]mm2.Explained, 0, len(in))
	failed := 0
	for i, po := range in {
		// SIGINT/SIGTERM (run's context) stop a big file part-way.
		if i%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("translate: stopped after %d of %d partitions, nothing written: %w", i, len(in), ctx.Err())
		}
		t := index.Translate(po.TP, po.Offset)
		dr := model.TP{Topic: names.RemoteTopic(alias, po.TP.Topic), Partition: po.TP.Partition}
		explained = append(explained, mm2.Explain(po, mm2.TPKey(dr), t))
		if t.Translated() {
			translated[dr] = t.Offset
			if n := flowstate.AbortedInDRAfter(aborted, po.TP, po.Offset); n > 0 {
				fmt.Fprintf(stderr, "drconsole: %s: warning: DR holds at least %d record(s) of aborted transactions after this offset, "+
					"copied by MirrorMaker 2 as ordinary records: a consumer in DR reads them, the primary's readers never did\n", po.Key, n)
			}
			continue
		}
		failed++
		fmt.Fprintf(stderr, "drconsole: %s: not translated: %s\n", po.Key, whyNot(t, po))
	}

	var out bytes.Buffer
	if *explain {
		out.WriteString("{")
		for i, e := range explained {
			b, _ := json.Marshal(e)
			if i > 0 {
				out.WriteString(",")
			}
			fmt.Fprintf(&out, "\n  %q: %s", in[i].Key, b)
		}
		out.WriteString("\n}\n")
	} else if err := mm2.WriteOffsetsJSON(&out, translated); err != nil {
		return err
	}
	if failed > 0 && !*allowPartial {
		return partialError{failed}
	}
	if *outFile == "" {
		_, err = stdout.Write(out.Bytes())
		return err
	}
	return writeFileAtomic(*outFile, out.Bytes())
}

func whyNot(t mm2.Translation, po mm2.PartitionOffset) string {
	switch t.Method {
	case mm2.MethodUnknown:
		return "no offset syncs for this partition"
	case mm2.MethodOutOfRange:
		return fmt.Sprintf("the DR offset would pass %d (sync %d->%d): refused rather than wrapped", int64(mm2.MaxOffset), t.Sync.Upstream, t.Sync.Downstream)
	case mm2.MethodTooOld:
		return fmt.Sprintf("offset %d is older than every stored sync (MM2 has no mapping that far back)", po.Offset)
	}
	return string(t.Method)
}

func readOffsets(ctx context.Context, name string, stdin io.Reader) ([]mm2.PartitionOffset, error) {
	data, err := readInput(name, stdin, offsetsFileLimit)
	if err != nil {
		return nil, err
	}
	in, err := mm2.ReadOffsetsJSON(ctx, name, bytes.NewReader(data), 0)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("translate: %w", err)
	}
	if err != nil {
		return nil, inputError{err}
	}
	if len(in) == 0 {
		return nil, inputError{fmt.Errorf("%s: no offsets in it", name)}
	}
	return in, nil
}

func loadSyncsFile(ctx context.Context, name string) (*mm2.SyncIndex, error) {
	f, err := openInput(name, streamedFileLimit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	index := mm2.NewSyncIndex()
	var batch []model.OffsetSync
	var n int64
	err = mm2.ParseSyncsJSONL(name, f, func(s model.OffsetSync) error {
		if n%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("%s: reading syncs stopped after %d: %w", name, n, ctx.Err())
		}
		batch = append(batch, model.OffsetSync{Topic: s.Topic, Partition: s.Partition, Upstream: s.Upstream, Downstream: s.Downstream, LogOffset: n})
		n++
		return nil
	})
	if ctx.Err() != nil {
		return nil, fmt.Errorf("translate: %w", err)
	}
	if err != nil {
		return nil, inputError{err}
	}
	index.Add(batch)
	return index, nil
}

// loadFlow loads a config and picks a flow: the named one, or the only one.
func loadFlow(path, name string) (*config.Config, *config.Flow, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, nil, err
	}
	if name == "" {
		if len(cfg.Flows) > 1 {
			var names []string
			for _, f := range cfg.Flows {
				names = append(names, f.Name)
			}
			return nil, nil, usageError{fmt.Errorf("%s has %d flows (%s): choose one with --flow", path, len(names), strings.Join(names, ", "))}
		}
		return cfg, cfg.Flows[0], nil
	}
	f := cfg.Flow(name)
	if f == nil {
		return nil, nil, usageError{fmt.Errorf("%s has no flow named %q", path, name)}
	}
	return cfg, f, nil
}

func exportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "syncs" {
		return usageError{errors.New("usage: drconsole export syncs --config FILE [--flow NAME] [--out FILE]")}
	}
	fs := flag.NewFlagSet("export syncs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "configuration file")
	flowName := fs.String("flow", "", "flow (default: the only one)")
	outFile := fs.String("out", "", "output file (default: stdout)")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err}
	}
	if *cfgFile == "" {
		return usageError{errors.New("export syncs needs --config FILE")}
	}
	cfg, flow, err := loadFlow(*cfgFile, *flowName)
	if err != nil {
		return err
	}
	store, err := storage.Open(filepath.Join(cfg.DataDir, "drconsole.db"))
	if err != nil {
		return err
	}
	defer store.Close()
	var buf bytes.Buffer
	err = store.EachSync(ctx, flow.Name, func(s model.OffsetSync) error {
		return mm2.WriteSyncJSONL(&buf, model.OffsetSync{Topic: s.Topic, Partition: s.Partition, Upstream: s.Upstream, Downstream: s.Downstream})
	})
	if err != nil {
		return err
	}
	if *outFile == "" {
		_, err = stdout.Write(buf.Bytes())
		return err
	}
	return writeFileAtomic(*outFile, buf.Bytes())
}
