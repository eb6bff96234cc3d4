package failover

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// lostExport is an export of the records lost to DR, checked and on record,
// ready to stream (model.LostExport).
type lostExport struct {
	lost *model.LostToDR
	opts kafka.Options
	lim  runbook.LostLimits
}

// LostRecordLine is one exported record. Keys, values and header values are
// untrusted bytes: base64 (encoding/json's []byte), null when absent.
type LostRecordLine struct {
	Topic       string       `json:"topic"`
	Partition   int32        `json:"partition"`
	Offset      int64        `json:"offset"`
	Timestamp   string       `json:"timestamp"` // RFC 3339, UTC
	TimestampMs int64        `json:"timestamp_ms"`
	Key         []byte       `json:"key"`
	Value       []byte       `json:"value"`
	Headers     []LostHeader `json:"headers"`
}

// LostHeader is a record header.
type LostHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// LostEndLine is an export's last line, {"end": ...}: a file whose last
// line is not an end line with complete true is not the whole export.
type LostEndLine struct {
	End LostEnd `json:"end"`
}

// LostEnd sums an export up.
type LostEnd struct {
	Flow     string `json:"flow"`
	Run      int64  `json:"run"`
	Complete bool   `json:"complete"`
	Records  int64  `json:"records"`
	// Error says why the export is not complete.
	Error      string         `json:"error,omitempty"`
	Partitions []LostEndRange `json:"partitions"`
}

// LostEndRange is what the export holds of one partition.
type LostEndRange struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// From and To are the offsets read, [From, To); absent when unknown.
	From *int64 `json:"from,omitempty"`
	To   *int64 `json:"to,omitempty"`
	// Exact: From is the exact cut; otherwise records from From on may
	// already be in DR (up to MaybeInDR of them; -1: no bound).
	Exact     bool   `json:"exact"`
	MaybeInDR int64  `json:"maybe_in_dr"`
	Unknown   string `json:"unknown,omitempty"`
}

// PrepareLostExport checks that who may export flow's records lost to DR
// (only, when set, narrows it to one partition), reads where they are and
// puts the export on record; nothing is written to w yet, so a refusal can
// still be answered as an error.
func (rb Book) PrepareLostExport(ctx context.Context, who runbook.Actor, flow string, only *model.TP) (model.LostExport, error) {
	if !runbook.MayOperate(who) {
		return nil, runbook.ErrRole
	}
	l, opts, err := rb.lostPositions(ctx, flow)
	if err != nil {
		return nil, err
	}
	if !l.Recorded {
		return nil, fmt.Errorf("failover run %d did not record where the mirror stopped: which records are lost to DR is unknown", l.Active.Run)
	}
	if opts == nil {
		return nil, errors.New(l.PrimaryErr)
	}
	if only != nil {
		var keep []model.LostPartition
		for _, p := range l.Partitions {
			if p.TP() == *only {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("partition %s/%d is not mirrored by flow %s", only.Topic, only.Partition, flow)
		}
		l.Partitions = keep
	}
	x := &lostExport{lost: l, opts: opts, lim: rb.LostLimits.WithDefaults()}
	if err := rb.Audit.Record(ctx, who, audit.FailbackLostExport, "flow:"+flow, map[string]any{"run": l.Active.Run, "partitions": x.end().Partitions}); err != nil {
		return nil, &runbook.AuditRefusedError{Err: err}
	}
	return x, nil
}

// Filename names the export's file.
func (x *lostExport) Filename() string {
	return fmt.Sprintf("drconsole-lost-to-dr-run%d-%s.jsonl", x.lost.Active.Run, time.UnixMilli(x.lost.AtMs).UTC().Format("20060102T150405Z"))
}

// end is the export's end line, before any record is read.
func (x *lostExport) end() LostEnd {
	e := LostEnd{Flow: x.lost.Active.Flow, Run: x.lost.Active.Run, Partitions: []LostEndRange{}}
	for _, p := range x.lost.Partitions {
		r := LostEndRange{Topic: p.Topic, Partition: p.Partition, Exact: p.Reached.InDRAtMost == 0, MaybeInDR: p.Reached.InDRAtMost}
		switch {
		case !p.Reached.Known:
			r.Unknown = p.Reached.How
		case !p.Read:
			r.Unknown = "the primary's offsets could not be read"
		default:
			r.From, r.To = &p.From, &p.End
		}
		e.Partitions = append(e.Partitions, r)
	}
	return e
}

// WriteTo streams the records as JSON lines, then the end line; the end
// line says complete only when every partition is known and read to its
// end. A failure mid-way (the cap, the primary gone, ctx ended) is written
// into the end line and returned.
func (x *lostExport) WriteTo(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	end := x.end()
	err := kafka.ReadRecords(ctx, x.opts, lostRanges(x.lost), kafka.ReadLimits{MaxRecords: x.lim.ExportRecords, MaxBytes: x.lim.ExportBytes, Idle: x.lim.Idle},
		func(r *kafka.Record) error {
			end.Records++
			return enc.Encode(lostLine(r))
		}, nil)
	var capped *kafka.CapError
	switch {
	case errors.As(err, &capped):
		end.Error = "the export " + capped.Error() + ": export one partition at a time"
	case err != nil:
		end.Error = "reading the old primary: " + err.Error()
	}
	end.Complete = err == nil
	for _, p := range end.Partitions {
		if p.Unknown != "" {
			end.Complete = false
			end.Error = cmp.Or(end.Error, "some partitions are unknown: their records are not in this file")
		}
	}
	return errors.Join(err, enc.Encode(LostEndLine{End: end}), bw.Flush())
}

func lostLine(r *kafka.Record) LostRecordLine {
	l := LostRecordLine{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UTC().Format(time.RFC3339Nano),
		TimestampMs: r.Timestamp.UnixMilli(), Key: r.Key, Value: r.Value, Headers: make([]LostHeader, len(r.Headers))}
	for i, h := range r.Headers {
		l.Headers[i] = LostHeader{Key: h.Key, Value: h.Value}
	}
	return l
}
