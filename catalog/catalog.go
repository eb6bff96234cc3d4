// Package catalog keeps the console's own savepoint catalog: savepoints and
// retained checkpoints seen in Flink's REST checkpoint history, found in
// configured directories, registered by hand or taken through the console,
// each with the Kafka offsets read from its `_metadata` (Go-native, no JVM)
// and remembered after Flink forgot them (a JobManager restart empties its
// checkpoint history).
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
)

// Catalog syncs, scans, registers, triggers and judges savepoints.
type Catalog struct {
	Store   *storage.Store
	Config  *config.Config
	Monitor *monitor.Monitor
	// Flink returns the REST client of a target's URL; nil means
	// flink.NewRESTClient.
	Flink func(url string) *flink.RESTClient
	Log   *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// S3 reads savepoints on S3 (config s3); nil: their offsets are not read.
	S3 *s3.Store
	// ReadTimeout bounds reading one savepoint's offsets; 0 means
	// DefaultReadTimeout.
	ReadTimeout time.Duration

	once      sync.Once
	syncSlot  chan struct{} // one Sync at a time
	readSlots chan struct{} // savepoint reads running (or stuck)
}

// SyncEvery is how often Run syncs the catalog.
const SyncEvery = 60 * time.Second

// Deadlines on catalog work, so that one bad savepoint or a hung file
// system cannot hold the catalog forever: SyncTimeout bounds a sync Run
// starts, DefaultReadTimeout the reading of one savepoint's offsets. A
// read past its deadline is left running in the background, at most
// readSlotCount at once; further reads wait for a slot until their own
// deadline.
const (
	SyncTimeout        = 5 * time.Minute
	DefaultReadTimeout = 30 * time.Second
	readSlotCount      = 4
)

func (c *Catalog) setup() {
	c.once.Do(func() {
		c.syncSlot = make(chan struct{}, 1)
		c.readSlots = make(chan struct{}, readSlotCount)
	})
}

// notAddressable is what Flink reports as the path of a checkpoint that was
// not written to a file system.
const notAddressable = "<checkpoint-not-externally-addressable>"

func (c *Catalog) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Catalog) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

func (c *Catalog) client(rawURL string) *flink.RESTClient {
	if c.Flink != nil {
		return c.Flink(rawURL)
	}
	return flink.NewRESTClient(rawURL)
}

// Run syncs at once and then every SyncEvery until ctx is done. Errors are
// logged by Sync.
func (c *Catalog) Run(ctx context.Context) {
	t := time.NewTicker(SyncEvery)
	defer t.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, SyncTimeout)
		c.Sync(sctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync brings the catalog up to date: every Flink target's checkpoint
// history (savepoints and retained checkpoints), every configured savepoint
// directory, then the offsets of every entry not read yet whose path is
// local. A target that does not answer does not stop the others: the
// problems come back joined, and are logged. While another sync runs it
// waits, until ctx is done.
func (c *Catalog) Sync(ctx context.Context) error {
	c.setup()
	select {
	case c.syncSlot <- struct{}{}:
		defer func() { <-c.syncSlot }()
	case <-ctx.Done():
		return fmt.Errorf("catalog: another sync is still running: %w", ctx.Err())
	}
	var errs []error
	fail := func(err error) {
		c.log().Warn("savepoint catalog", "err", err)
		errs = append(errs, err)
	}
	for _, ft := range c.Config.FlinkTargets {
		if err := c.syncTarget(ctx, ft); err != nil {
			fail(fmt.Errorf("flink target %s (%s): %w", ft.Name, ft.RestURL, err))
		}
	}
	if err := c.scanDirs(ctx); err != nil {
		fail(err)
	}
	if err := c.readPending(ctx); err != nil {
		fail(err)
	}
	return errors.Join(errs...)
}

// syncTarget records what one Flink cluster's checkpoint history holds:
// every completed savepoint, and the completed checkpoints that still
// exist (not flagged discarded; local ones whose _metadata is there, of
// remote ones the latest, which Flink retains): Flink lists discarded
// checkpoints with their former path, and deletes their files
// asynchronously, so the flag and the file check are both needed.
func (c *Catalog) syncTarget(ctx context.Context, ft *config.FlinkTarget) error {
	cl := c.client(ft.RestURL)
	jobs, err := cl.Jobs(ctx)
	if err != nil {
		return err
	}
	var errs []error
	var entries []model.Savepoint
	seen := map[string]bool{}
	for _, job := range jobs {
		h, err := cl.Checkpoints(ctx, job.ID)
		if err != nil {
			var re *flink.RESTError
			if errors.As(err, &re) && re.Status == 404 {
				continue // no checkpoint statistics (checkpointing off, or the job is gone)
			}
			errs = append(errs, fmt.Errorf("job %s (%s): %w", job.ID, job.Name, err))
			continue
		}
		latest := int64(-1)
		if h.Latest.Completed != nil {
			latest = h.Latest.Completed.ID
		}
		cands := append([]flink.Checkpoint{}, h.History...)
		for _, p := range []*flink.Checkpoint{h.Latest.Completed, h.Latest.Savepoint} {
			if p != nil {
				cands = append(cands, *p)
			}
		}
		for _, cp := range cands {
			if cp.Status != model.SavepointCompleted || cp.ExternalPath == "" || cp.ExternalPath == notAddressable {
				continue
			}
			path := flink.CanonicalPath(cp.ExternalPath)
			if seen[path] {
				continue
			}
			kind := model.KindCheckpoint
			if cp.IsSavepoint || strings.Contains(cp.CheckpointType, "SAVEPOINT") {
				kind = model.KindSavepoint
			}
			if kind == model.KindCheckpoint && (cp.Discarded || !c.checkpointKept(ctx, path, cp.ID == latest)) {
				continue // subsumed or disposed: Flink lists it with its former path
			}
			seen[path] = true
			sp := model.Savepoint{FlinkTarget: ft.Name, JobID: job.ID, JobName: job.Name, Path: path, Kind: kind,
				Origin: model.OriginREST, Status: model.SavepointCompleted}
			fillFromFlink(&sp, cp)
			entries = append(entries, sp)
		}
	}
	if len(entries) > 0 {
		if _, err := c.Store.UpsertSavepoints(ctx, entries, c.now().UnixMilli()); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func ptr(v int64) *int64 { return &v }

// s3RetryBatch bounds how many S3 entries whose read failed are tried
// again per sync.
const s3RetryBatch = 20

// readPending reads the offsets of every entry never read. Entries on
// storage this process cannot open (hdfs://, or s3:// without an s3
// section) get an error saying so. S3 entries whose read failed are tried
// again each sync (a few at a time, newest first): the failure may have
// been the network, throttling, or S3 not configured yet.
func (c *Catalog) readPending(ctx context.Context) error {
	pending, err := c.Store.Savepoints(ctx, storage.SavepointFilter{Unread: true})
	if err != nil {
		return err
	}
	if c.S3 != nil {
		failed, err := c.Store.Savepoints(ctx, storage.SavepointFilter{Failed: true, PathPrefixes: []string{"s3://", "s3a://", "s3p://"},
			Limit: s3RetryBatch})
		if err != nil {
			return err
		}
		pending = append(pending, failed...)
	}
	var errs []error
	for _, sp := range pending {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := c.readInto(ctx, sp.ID, sp.Path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readInto reads the savepoint at path and stores the result (offsets, or
// why not) on entry id. The error is about storing, not reading, or that
// ctx was done (then nothing is stored).
func (c *Catalog) readInto(ctx context.Context, id int64, path string) error {
	r := c.readOffsets(ctx, path)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r.Err != "" {
		c.log().Info("savepoint catalog: offsets not read", "id", id, "path", path, "why", r.Err)
	}
	return c.Store.SetSavepointOffsets(ctx, id, r.OffsetsJSON, r.SourceUID, r.CheckpointID, r.Err)
}

// ReadResult is what reading a savepoint's Kafka source gives.
type ReadResult struct {
	OffsetsJSON  string // {"topic-partition": next offset}; "" when unreadable
	SourceUID    string // the source operator's uid, else its 32-hex id
	CheckpointID int64  // 0 when _metadata could not be read
	// Err says why the offsets could not be read; with offsets, it names
	// the partitions left out because they hold a start marker.
	Err string
}

// readOffsets is ReadOffsets within the read timeout (and ctx), reading only
// inside the savepoint's own directory and the configured savepoint
// directories.
func (c *Catalog) readOffsets(ctx context.Context, path string) ReadResult {
	r, err := boundedRead(c, ctx, path, func() ReadResult { return ReadOffsets(path, c.remote(), c.Config.SavepointDirs...) })
	if err != nil {
		return ReadResult{Err: err.Error()}
	}
	return r
}

// boundedRead runs read (of the savepoint at path) in one of the read
// slots, within the read timeout and ctx: a hung file system or storage
// holds a slot, never the caller.
func boundedRead[T any](c *Catalog, ctx context.Context, path string, read func() T) (T, error) {
	c.setup()
	limit := c.ReadTimeout
	if limit <= 0 {
		limit = DefaultReadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var zero T
	late := fmt.Errorf("reading %s did not finish within %s (or was cancelled): a hung file system or storage? Register it again to retry", path, limit)
	select {
	case c.readSlots <- struct{}{}:
	case <-ctx.Done():
		return zero, late
	}
	done := make(chan T, 1)
	go func() {
		defer func() { <-c.readSlots }()
		done <- read()
	}()
	select {
	case r := <-done:
		return r, nil
	case <-ctx.Done():
		return zero, late
	}
}

// remote is the storage savepoints off the local file system are read
// from, or nil.
func (c *Catalog) remote() flink.Files {
	if c.S3 == nil {
		return nil
	}
	return c.S3
}

// ReadOffsets reads the Kafka source positions of a savepoint or retained
// checkpoint: path is a file: URI or an absolute local path (its directory
// or its _metadata), or a URI remote serves (nil: none). Files are read
// only inside the savepoint's own directory and roots (the configured
// savepoint directories). The source operator is found automatically (the
// only one holding Kafka source state).
func ReadOffsets(path string, remote flink.Files, roots ...string) ReadResult {
	sp, err := openSavepoint(path, remote, roots...)
	if err != nil {
		return ReadResult{Err: err.Error()}
	}
	res := ReadResult{CheckpointID: sp.CheckpointID}
	k, err := sp.KafkaSourceOffsets("")
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.SourceUID = k.UID
	if res.SourceUID == "" {
		res.SourceUID = k.OperatorID
	}
	offsets := map[string]int64{}
	var marked []string
	for _, p := range k.Sorted() {
		if p.Next < 0 || p.Marker != "" {
			marked = append(marked, fmt.Sprintf("%s (%s)", p.Key(), p.Marker))
			continue
		}
		offsets[p.Key()] = p.Next
	}
	b, err := json.Marshal(offsets)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.OffsetsJSON = string(b)
	if len(marked) > 0 {
		res.Err = fmt.Sprintf("%d partition(s) hold a start marker instead of an offset and are not in the offsets: %s",
			len(marked), strings.Join(marked, ", "))
	}
	return res
}

// openSavepoint reads the `_metadata` of the savepoint at path (see
// ReadOffsets).
func openSavepoint(path string, remote flink.Files, roots ...string) (*flink.Savepoint, error) {
	local, err := flink.LocalPath(path)
	switch {
	case err == nil:
		return flink.ReadSavepoint(local, roots...)
	case remote != nil && remote.Serves(path):
		return flink.ReadSavepointFrom(remote, path, roots...)
	case config.IsS3URI(path):
		return nil, fmt.Errorf("%q is on S3: set s3.endpoint in the config file so the console can read it", path)
	}
	return nil, err
}

// checkpointKept guesses whether a completed checkpoint Flink has not
// flagged discarded still exists: a local or S3 one when its _metadata is
// there, one on other storage when it is the latest.
func (c *Catalog) checkpointKept(ctx context.Context, path string, latest bool) bool {
	local, err := flink.LocalPath(path)
	if err == nil {
		return fileExists(filepath.Join(local, flink.MetadataFileName))
	}
	if c.S3 != nil && c.S3.Serves(path) {
		ok, err := c.S3.Exists(ctx, path+"/"+flink.MetadataFileName)
		return ok || (err != nil && latest) // unsure: keep the latest
	}
	return latest
}

// SavepointDirs are the configured savepoint directories, the only places
// Register takes a savepoint from.
func (c *Catalog) SavepointDirs() []string { return c.Config.SavepointDirs }

// SavepointByPath is the catalog's entry of canonical path p; an error
// wrapping storage.ErrNotFound when it has none.
func (c *Catalog) SavepointByPath(ctx context.Context, p string) (model.Savepoint, error) {
	if c.Store == nil {
		return model.Savepoint{}, errors.New("catalog: no store: its entries cannot be read")
	}
	return c.Store.SavepointByPath(ctx, p)
}

// Targets lists the configured Flink targets' names, sorted.
func (c *Catalog) Targets() []string {
	var out []string
	for _, ft := range c.Config.FlinkTargets {
		out = append(out, ft.Name)
	}
	sort.Strings(out)
	return out
}

func (c *Catalog) target(name string) (*config.FlinkTarget, error) {
	for _, ft := range c.Config.FlinkTargets {
		if ft.Name == name {
			return ft, nil
		}
	}
	return nil, fmt.Errorf("catalog: no Flink target %q in the configuration (have %s)", name, strings.Join(c.Targets(), ", "))
}

// fillFromFlink copies Flink's own figures for a checkpoint or savepoint
// into a catalog entry; unknown (zero) figures stay unknown.
func fillFromFlink(sp *model.Savepoint, cp flink.Checkpoint) {
	sp.CheckpointID = ptr(cp.ID)
	if cp.TriggerTime > 0 {
		sp.TriggerMs = ptr(cp.TriggerTime)
	}
	if cp.LatestAckTime > 0 {
		sp.CompletedMs = ptr(cp.LatestAckTime)
	}
	if cp.StateSize > 0 {
		sp.SizeBytes = ptr(cp.StateSize)
	}
}
