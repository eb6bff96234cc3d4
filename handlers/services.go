package handlers

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// The services the pages call, named here by what handlers asks of them:
// cli hands in the concrete ones (monitor.Monitor, catalog.Catalog), and
// their answers are model's and flowstate's values, so handlers reaches
// no Kafka or Kubernetes client through them.

// MonitorService is what the pages ask of the monitor (monitor.Monitor):
// the flows' snapshots as of the last refresh, their sync history, and
// the translation reads of a flow, named by the flow. The translation
// reads fail with storage.ErrNotFound for an unknown flow.
type MonitorService interface {
	MetricsSource
	// Snapshot is flow's snapshot; nil for a flow the monitor does not know.
	Snapshot(flow string) *flowstate.FlowSnapshot
	// Ready: every flow has had its first refresh.
	Ready() bool
	// SyncHistory is up to limit of flow's newest offset syncs of tp, and
	// how many it holds.
	SyncHistory(flow string, tp model.TP, limit int) ([]model.OffsetSync, int)
	// KnownGroups lists flow's consumer groups; the list is usable even
	// when the error says the primary's groups are missing.
	KnownGroups(ctx context.Context, flow string, primaryTimeout time.Duration) ([]model.KnownGroup, error)
	// TranslateOffset is tp's DR name and the DR offset of offset.
	TranslateOffset(flow string, tp model.TP, offset int64) (model.TP, model.Translation, error)
	// GroupPlan previews translating flow's consumer group (reads only).
	GroupPlan(ctx context.Context, flow, group string) (*model.GroupPlan, error)
	// SeekDR finds the first DR offset at or after ms of each partition
	// of topics.
	SeekDR(ctx context.Context, flow string, ms int64, topics ...string) (map[model.TP]model.SeekResult, error)
}

// CatalogService is what the pages ask of the savepoint catalog
// (catalog.Catalog): its entries and their verdicts, the Flink targets'
// jobs and jars, registration and the sync with Flink's history.
type CatalogService interface {
	// Usability judges sp's offsets against flow's clusters.
	Usability(ctx context.Context, sp model.Savepoint, flow string) (model.Usability, error)
	// UsabilityOf judges sps against flow within model.UsabilityTimeout;
	// those not judged in time are absent from the map.
	UsabilityOf(ctx context.Context, sps []model.Savepoint, flow string) (map[int64]model.Usability, error)
	// RewriteStateOf reads whether sp's Kafka source can be rewritten.
	RewriteStateOf(ctx context.Context, sp model.Savepoint) model.RewriteState
	// RestoreChoices are flow's newest savepoints (at most limit) with
	// their verdicts, for the plan form.
	RestoreChoices(ctx context.Context, flow string, limit int) ([]model.SavepointChoice, error)
	// NewestUsable is flow's newest usable savepoint among the newest limit.
	NewestUsable(ctx context.Context, flow string, limit int) (model.Savepoint, error)
	// SavepointByPath is the entry of a canonical path (flink.CanonicalPath);
	// an error wrapping storage.ErrNotFound when there is none.
	SavepointByPath(ctx context.Context, path string) (model.Savepoint, error)
	// Register adds the savepoint at path (within SavepointDirs); an error
	// wrapping model.ErrOffsetsUnreadable comes with the id it registered.
	Register(ctx context.Context, path string) (int64, error)
	// Sync reads the Flink targets' savepoint history into the catalog.
	Sync(ctx context.Context) error
	// SavepointDirs are the configured savepoint directories.
	SavepointDirs() []string
	// DirExists says whether path exists (local or S3).
	DirExists(ctx context.Context, path string) (bool, error)
	// Targets are the Flink targets' names, sorted.
	Targets() []string
	// LiveJobs asks every Flink target for its jobs, each within timeout.
	LiveJobs(ctx context.Context, timeout time.Duration) []flink.TargetJobs
	// Job is a target's job.
	Job(ctx context.Context, target, jobID string) (flink.Job, error)
	// Jars are the jars uploaded to a target.
	Jars(ctx context.Context, target string) ([]flink.Jar, error)
}
