package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

const savepointUsage = `Usage: drconsole savepoint inspect PATH [--uid UID] [--json] [--config FILE]
       drconsole savepoint rewrite SRC --offsets FILE --out DST ... (see "savepoint rewrite -h")

Reads a Flink savepoint or retained checkpoint (PATH = its directory or its _metadata file,
local or s3://bucket/key) without Java and shows its operators and the Kafka source's
positions: the next offset to read per partition (KafkaSource SourceReaderState; legacy
FlinkKafkaConsumer state too).

  --uid UID   the Kafka source operator: its uid or its 32-hex operator id
              (default: the only operator with source reader state)
  --json      print only {"topic-partition": next offset, ...}, the offsets file that
              "drconsole translate --offsets" reads; partitions holding a marker instead of
              an offset (earliest/committed/latest) are left out, named on stderr, and the
              exit status is non-zero
  --config FILE  for an s3:// (s3a://, s3p://) PATH: the config file whose s3 section
              names the endpoint; credentials come from the usual AWS sources

Exit status: 0 ok, 1 markers left out of --json, 2 bad file or usage.
`

// readSavepoint reads a local savepoint, or one on S3 with the config's
// s3 section.
func readSavepoint(p, cfgFile string) (*flink.Savepoint, error) {
	if !config.IsS3URI(p) {
		sp, err := flink.ReadSavepoint(p)
		if err != nil {
			return nil, inputError{err}
		}
		return sp, nil
	}
	store, err := s3Files(p, cfgFile)
	if err != nil {
		return nil, err
	}
	sp, err := flink.ReadSavepointFrom(store, p)
	if err != nil {
		return nil, inputError{err}
	}
	return sp, nil
}

// s3Files connects to the S3 endpoint of the config's s3 section, for the
// s3:// path p.
func s3Files(p, cfgFile string) (*s3.Store, error) {
	if cfgFile == "" {
		return nil, usageError{fmt.Errorf("%s is on S3: name the config file with its s3 section (--config FILE)", p)}
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		return nil, inputError{err}
	}
	if cfg.S3 == nil {
		return nil, inputError{fmt.Errorf("%s has no s3 section (endpoint, region, path_style)", cfgFile)}
	}
	store, err := s3.New(cfg.S3)
	if err != nil {
		return nil, inputError{err}
	}
	return store, nil
}

// savepointMarkerError is --json output that had to leave partitions out:
// their state holds a marker (earliest, committed, latest), not an offset.
type savepointMarkerError struct{ Partitions []string }

func (e savepointMarkerError) Error() string {
	return fmt.Sprintf("%d partition(s) hold a start marker instead of an offset and were left out of the JSON: %s",
		len(e.Partitions), strings.Join(e.Partitions, ", "))
}

func savepointCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, savepointUsage)
		if len(args) == 0 {
			return usageError{errors.New("savepoint needs a subcommand: inspect or rewrite")}
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "inspect":
		return savepointInspect(ctx, args[1:], stdout, stderr)
	case "rewrite":
		return savepointRewrite(ctx, args[1:], stdin, stdout, stderr)
	}
	return usageError{fmt.Errorf("savepoint: unknown subcommand %q (want inspect or rewrite)", args[0])}
}

func savepointInspect(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("savepoint inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, savepointUsage) }
	uid := fs.String("uid", "", "")
	asJSON := fs.Bool("json", false, "")
	cfgFile := fs.String("config", "", "")
	// Flags may come before or after PATH.
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(paths) == 0:
		return usageError{errors.New("savepoint inspect needs PATH (a savepoint directory or its _metadata file)")}
	case len(paths) > 1:
		return usageError{fmt.Errorf("savepoint inspect: unexpected argument %q", paths[1])}
	}
	sp, err := readSavepoint(paths[0], *cfgFile)
	if err != nil {
		return err
	}
	offsets, offErr := sp.KafkaSourceOffsets(*uid)
	if offErr != nil && (*uid != "" || *asJSON || !errors.Is(offErr, flink.ErrNoKafkaSource)) {
		offErr = inputError{offErr}
	}
	if *asJSON {
		if offErr != nil {
			return offErr
		}
		return writeSavepointJSON(offsets, stdout, stderr)
	}
	var inErr inputError
	if errors.As(offErr, &inErr) {
		writeSavepointHuman(sp, nil, nil, newTerminalWriter(stdout)) // operators; the error follows on stderr
		return offErr
	}
	writeSavepointHuman(sp, offsets, offErr, newTerminalWriter(stdout))
	return nil
}

func writeSavepointJSON(k *flink.KafkaOffsets, stdout, stderr io.Writer) error {
	out := map[model.TP]int64{}
	var marked []string
	for _, p := range k.Sorted() {
		if p.Next < 0 || p.Marker != "" {
			fmt.Fprintf(stderr, "drconsole: %s: left out: the savepoint holds the %s marker (%d), not an offset\n", p.Key(), p.Marker, p.Next)
			marked = append(marked, p.Key())
			continue
		}
		out[model.TP{Topic: p.Topic, Partition: p.Partition}] = p.Next
	}
	if err := mm2.WriteOffsetsJSON(stdout, out); err != nil {
		return err
	}
	if len(marked) > 0 {
		return savepointMarkerError{Partitions: marked}
	}
	return nil
}

func writeSavepointHuman(sp *flink.Savepoint, k *flink.KafkaOffsets, offErr error, w io.Writer) {
	kind := "checkpoint/savepoint"
	if sp.SnapshotName != "" {
		kind = sp.SnapshotName
	}
	if sp.FormatType != "" {
		kind += " (" + sp.FormatType + ")"
	}
	fmt.Fprintf(w, "savepoint:      %s\n", sp.Dir)
	fmt.Fprintf(w, "_metadata:      version %d, checkpoint id %d, %s\n", sp.Version, sp.CheckpointID, kind)
	fmt.Fprintf(w, "\noperators (%d):\n", len(sp.Operators))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tUID\tNAME\tPARALLELISM\tMAX\tSTATE")
	for i := range sp.Operators {
		op := &sp.Operators[i]
		var state []string
		if op.FullyFinished {
			state = append(state, "finished")
		}
		if op.HasKeyedState() {
			state = append(state, "keyed")
		}
		state = append(state, op.StateNames()...)
		if op.Coordinator != nil {
			state = append(state, "coordinator")
		}
		if len(state) == 0 {
			state = []string{"-"}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\n", op.ID, orDash(op.UID), orDash(op.Name), op.Parallelism, op.MaxParallelism, strings.Join(state, ", "))
	}
	tw.Flush()

	if k == nil && offErr == nil {
		return
	}
	fmt.Fprintln(w)
	if offErr != nil {
		fmt.Fprintf(w, "kafka source:   none (%v)\n", offErr)
		return
	}
	label := k.OperatorID
	if k.UID != "" {
		label = fmt.Sprintf("uid %s, id %s", k.UID, k.OperatorID)
	}
	fmt.Fprintf(w, "kafka source:   %s (%s), %d partition(s)\n", label, k.Source, len(k.Partitions))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PARTITION\tNEXT OFFSET\tSTOPPING\tSUBTASK")
	for _, p := range k.Sorted() {
		next := strconv.FormatInt(p.Next, 10)
		if p.Marker != "" {
			next = fmt.Sprintf("%s (%d)", p.Marker, p.Next)
		}
		stop := "-"
		if p.Stopping != nil {
			stop = strconv.FormatInt(*p.Stopping, 10)
			if p.StoppingMarker != "" {
				stop = fmt.Sprintf("%s (%d)", p.StoppingMarker, *p.Stopping)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\n", p.Key(), next, stop, p.Subtask)
	}
	tw.Flush()
	switch {
	case k.Enumerator != nil:
		e := k.Enumerator
		markers := map[string]int{}
		for _, s := range e.Splits {
			switch {
			case s.Offset == nil:
				markers["no offset stored"]++
			case s.Marker != "":
				markers[s.Marker]++
			default:
				markers["offset"]++
			}
		}
		var parts []string
		for _, m := range []string{"committed", "earliest", "latest", "migrated", "offset", "no offset stored"} {
			if markers[m] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", markers[m], m))
			}
		}
		fmt.Fprintf(w, "enumerator:     state v%d, %d split(s) (%s): initial offsets, for information only, not positions\n",
			e.SerializerVersion, len(e.Splits), strings.Join(parts, ", "))
	case k.EnumeratorErr != "":
		fmt.Fprintf(w, "enumerator:     not decoded: %s\n", k.EnumeratorErr)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
