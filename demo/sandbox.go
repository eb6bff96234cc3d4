// Package demo is the embedded sandbox behind `drconsole demo`: two
// in-process Kafka clusters (kfake), synthetic traffic and consumer groups on
// the primary, and an MM2-compatible mirror that writes the same internal
// topics, byte for byte, that MirrorMaker 2 writes. The console watches it
// exactly as it would watch a real deployment. Stand-ins for the systems
// around it serve their REST APIs: Kafka Connect (connect.go, the mirror
// as its MirrorSourceConnector, and a failback's reverse copy), Flink
// (flink.go) and Cluster Linking (clusterlink.go).
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Aliases of the two clusters, as the console's demo config names them.
const (
	SourceAlias = "primary"
	TargetAlias = "dr"
)

// Topics are the data topics the traffic generator writes on the primary.
var Topics = []string{"events", "orders", "users"}

// Options configure Start.
type Options struct {
	Logger      *slog.Logger // nil = discard
	Seed        int64        // traffic randomness; fixed in tests
	TrafficRate int          // records/s across all topics, default 200
	// Retention bounds every data partition in both clusters (retention.ms
	// and retention.bytes, enforced every CleanerInterval), so the sandbox's
	// memory stays flat however long it runs, and a mirror stopped for
	// longer than Retention loses records the way a real one would.
	// Defaults: 5 min, 2 MiB, 5 s.
	Retention       time.Duration
	RetentionBytes  int64
	CleanerInterval time.Duration
	// CheckpointInterval is how often the mirror writes checkpoints
	// (emit.checkpoints.interval.seconds), default 2 s; tests shorten it so
	// the first checkpoints are there without a two-second wait.
	CheckpointInterval time.Duration

	// trace, when set (tests), is told of every record the mirror copies.
	trace func(topic string, partition int32, upstream, downstream int64)
}

// Retention defaults; see Options.
const (
	DefaultRetention       = 5 * time.Minute
	DefaultRetentionBytes  = 2 << 20
	DefaultCleanerInterval = 5 * time.Second
)

// DefaultCheckpointInterval is Options.CheckpointInterval's default.
const DefaultCheckpointInterval = 2 * time.Second

// State is a snapshot of the sandbox controls and counters.
type State struct {
	MirrorRate    int // records/s the mirror may copy; 0 = unlimited
	MirrorRunning bool
	PrimaryDown   bool
	// Produced counts data records acknowledged by the primary (aborted
	// transactional records included: they occupy offsets and MM2 copies
	// them). Mirrored counts data records copied to dr. Heartbeats are in
	// neither, so Produced-Mirrored approximates the replication lag.
	Produced           int64
	Mirrored           int64
	SyncsWritten       int64
	CheckpointsWritten int64
	HeartbeatsEmitted  int64
	Since              time.Time // start of the sandbox
}

// Sandbox is a running demo environment. All methods are safe for
// concurrent use.
type Sandbox struct {
	log   *slog.Logger
	opts  Options
	since time.Time

	primary, dr *kfake.Cluster
	ctl         *controls

	cancel    context.CancelFunc
	runCtx    context.Context // done at Close; what late starters run under
	mirror    *mirror
	wg        sync.WaitGroup
	clientsMu sync.Mutex
	clients   []*kgo.Client // closed after every goroutine has returned
	closeOnce sync.Once

	produced, mirrored, syncs, checkpoints, heartbeats atomic.Int64

	jobMu  sync.Mutex
	jobPos map[int32]int64 // consumers.go: the Flink job's group's positions

	consumersMu sync.Mutex
	consumers   *consumerSet // nil while stopped (SetConsumersRunning)
}

// Start brings up both clusters, creates the topics, and starts traffic,
// consumers, heartbeats and the mirror. Close stops all of it.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.TrafficRate <= 0 {
		opts.TrafficRate = 200
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.RetentionBytes <= 0 {
		opts.RetentionBytes = DefaultRetentionBytes
	}
	if opts.CleanerInterval <= 0 {
		opts.CleanerInterval = DefaultCleanerInterval
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	s := &Sandbox{log: opts.Logger, opts: opts, since: time.Now()}
	if err := s.startClusters(); err != nil {
		return nil, err
	}
	s.ctl = newControls(s.primary)

	setupCtx, cancelSetup := context.WithTimeout(ctx, 15*time.Second)
	defer cancelSetup()
	if err := s.createPrimaryTopics(setupCtx); err != nil {
		s.closeClients()
		s.closeClusters()
		return nil, err
	}
	m, err := s.newMirror(setupCtx)
	if err != nil {
		s.closeClients()
		s.closeClusters()
		return nil, err
	}

	// The sandbox outlives the Start context: only Close stops it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel, s.runCtx, s.mirror = cancel, runCtx, m
	starters := []func(context.Context) error{
		s.startPlainTraffic,
		s.startOrdersTraffic,
		s.startHeartbeats,
		s.startConsumers,
	}
	for _, start := range starters {
		if err := start(runCtx); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.goRun(func() { m.run(runCtx) })
	s.goRun(func() { m.checkpoints.run(runCtx) })
	s.goRun(func() { s.runRetention(runCtx) })
	s.log.Info("demo sandbox started",
		"primary", s.PrimaryBootstrap(), "dr", s.DRBootstrap(), "traffic_rate", opts.TrafficRate)
	return s, nil
}

// Close stops everything; it is idempotent and returns once every goroutine
// the sandbox started has exited.
func (s *Sandbox) Close() {
	s.closeOnce.Do(func() {
		// Lift an outage first so clients can leave groups and close quickly.
		s.ctl.setPrimaryDown(false)
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		s.closeClients()
		s.closeClusters()
		s.log.Info("demo sandbox stopped")
	})
}

// PrimaryBootstrap returns the primary cluster's listen addresses.
func (s *Sandbox) PrimaryBootstrap() []string { return s.primary.ListenAddrs() }

// DRBootstrap returns the dr cluster's listen addresses.
func (s *Sandbox) DRBootstrap() []string { return s.dr.ListenAddrs() }

// State returns the current controls and counters.
func (s *Sandbox) State() State {
	rate, running, down := s.ctl.snapshot()
	return State{
		MirrorRate:         rate,
		MirrorRunning:      running,
		PrimaryDown:        down,
		Produced:           s.produced.Load(),
		Mirrored:           s.mirrored.Load(),
		SyncsWritten:       s.syncs.Load(),
		CheckpointsWritten: s.checkpoints.Load(),
		HeartbeatsEmitted:  s.heartbeats.Load(),
		Since:              s.since,
	}
}

// SetMirrorRate limits how many records per second the mirror copies;
// 0 (the default) is unlimited. A rate below the traffic rate makes lag grow.
func (s *Sandbox) SetMirrorRate(recordsPerSecond int) { s.ctl.setRate(recordsPerSecond) }

// SetMirrorRunning pauses or resumes the mirror: while paused it copies
// nothing and writes no syncs, Connect offsets or checkpoints. Heartbeats are
// still emitted on the primary, so dr's primary.heartbeats goes stale.
func (s *Sandbox) SetMirrorRunning(running bool) { s.ctl.setRunning(running) }

// SetPrimaryDown makes the primary cluster refuse (down) or serve (up) every
// request. Clients on the primary fail and retry meanwhile.
func (s *Sandbox) SetPrimaryDown(down bool) { s.ctl.setPrimaryDown(down) }

func (s *Sandbox) goRun(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// newClient creates a client the sandbox closes after its goroutines exit,
// so no goroutine ever uses a closed client.
func (s *Sandbox) newClient(name string, seeds []string, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("drconsole-demo-" + name),
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		// kgo refreshes metadata at most every 5 s by default, which would
		// keep clients stalled that long after the primary comes back.
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("demo: %s client: %w", name, err)
	}
	s.clientsMu.Lock()
	s.clients = append(s.clients, cl)
	s.clientsMu.Unlock()
	return cl, nil
}

func (s *Sandbox) closeClients() {
	s.clientsMu.Lock()
	cls := s.clients
	s.clients = nil
	s.clientsMu.Unlock()
	for _, cl := range cls {
		cl.Close()
	}
}

// closeClient closes one client early (before Close) and forgets it.
func (s *Sandbox) closeClient(cl *kgo.Client) {
	s.clientsMu.Lock()
	for i, c := range s.clients {
		if c == cl {
			s.clients = append(s.clients[:i], s.clients[i+1:]...)
			break
		}
	}
	s.clientsMu.Unlock()
	cl.Close()
}

// produceAll produces recs and returns each record's error at its input
// index: kgo's ProduceSync reports results in completion order, not input
// order.
func produceAll(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) []error {
	idx := make(map[*kgo.Record]int, len(recs))
	for i, r := range recs {
		idx[r] = i
	}
	errs := make([]error, len(recs))
	for _, res := range cl.ProduceSync(ctx, recs...) {
		errs[idx[res.Record]] = res.Err
	}
	return errs
}
