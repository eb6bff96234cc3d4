package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/demo/panel"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/notify"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	_ "github.com/drconsole/drconsole/runbook/switchover" // registers the planned switchover's plan kind
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web"
)

func serveCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "configuration file (YAML; see drconsole.example.yaml)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *path == "" {
		return usageError{errors.New("serve needs --config FILE")}
	}
	cfg, err := config.Load(*path)
	if err != nil {
		var ps config.Problems
		if errors.As(err, &ps) {
			return fmt.Errorf("%d problem(s) in the configuration; nothing was started:\n%w", len(ps), err)
		}
		return err
	}
	if err := refuseSandboxDir(cfg.DataDir); err != nil {
		return err
	}
	return serveConsole(ctx, cfg, *path, nil, newLogger(stderr))
}

// ShutdownBound is how long the console takes to stop once ctx is done
// (SIGTERM, Ctrl-C), whatever is stuck: requests in flight get 10 s
// (web.Serve), background work the rest; past the bound it returns without
// waiting for what still runs, and the process exits.
var ShutdownBound = 15 * time.Second

// WorkerShutdownBound is the part of ShutdownBound running failover steps
// and savepoint triggers get to finish once the requests are done.
var WorkerShutdownBound = 4 * time.Second

// serveConsole opens the database, records changed settings in the audit
// log, starts monitoring and serves the pages until ctx is done, then stops
// within ShutdownBound.
func serveConsole(ctx context.Context, cfg *config.Config, cfgFile string, controls handlers.DemoControls, log *slog.Logger) error {
	return stopWithin(ctx, ShutdownBound, log, func() error { return runConsole(ctx, cfg, cfgFile, controls, log) })
}

// stopWithin runs f and returns its result, or, when f has not returned
// bound after ctx is done, an error saying so (f is left running: the
// caller is about to exit).
func stopWithin(ctx context.Context, bound time.Duration, log *slog.Logger, f func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case err := <-errc:
		return err
	case <-t.C:
		log.Error("shutdown: still not stopped, exiting without waiting", "after", bound)
		return fmt.Errorf("shutdown: work still running %s after the stop signal; exited without waiting for it (SQLite recovers the database at the next start)", bound)
	}
}

// runConsole is serveConsole without the bound on stopping. It is the one
// place the console's parts (store, monitor, runbook, catalog, handlers,
// router) are built and wired together.
func runConsole(ctx context.Context, cfg *config.Config, cfgFile string, controls handlers.DemoControls, log *slog.Logger) error {
	memPlan := applyMemoryLimit(cfg.MemoryLimit, os.DirFS("/sys/fs/cgroup"), log) // before the estate is read
	heapCtx, stopHeapWatch := context.WithCancel(ctx)
	defer stopHeapWatch()
	go watchLiveHeap(heapCtx, memPlan, time.Second, liveHeapSustain, log)
	if err := os.MkdirAll(cfg.DataDir, storage.PrivateDir); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	store, err := storage.Open(filepath.Join(cfg.DataDir, "drconsole.db"))
	if err != nil {
		return err
	}
	defer store.Close()
	if err := checkAtStart(ctx, store, cfg.AuditAnchor, log); err != nil {
		return err
	}
	if err := recordSettings(ctx, store, cfg, cfgFile); err != nil {
		return fmt.Errorf("recording the settings in the audit log: %w", err)
	}
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		return err
	}
	defer mon.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	rb := &runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connect.New,
		Flink:   flink.NewRESTClient}
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log.With("component", "savepoint-catalog")}
	if cfg.S3 != nil {
		if cat.S3, err = s3.New(cfg.S3); err != nil {
			return err
		}
	}
	// The plan kinds read the monitor, and the rewrite step reads and
	// registers savepoints through the catalog.
	failover.Equip(rb, failover.Env{Monitor: mon, Catalog: cat})
	worker := &failover.Worker{Runbook: rb, Catalog: cat, Log: log.With("component", "worker")}
	h := &handlers.Handlers{Monitor: mon, Store: store, Log: log, Version: version, Demo: controls, Runbook: rb,
		Auth: cfg.Auth, Catalog: cat, Worker: worker, Failovers: failback.BookOf(rb), Metrics: cfg.Metrics}
	// Failed-over flows are marked before the first refresh is published:
	// no page or notification sees one judged as if the mirror should run.
	if err := failover.BookOf(rb).MarkFailedOver(ctx); err != nil {
		log.Error("reading which flows are failed over", "err", err)
	}
	monCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); mon.Run(monCtx) }()
	catDone := make(chan struct{})
	go func() { defer close(catDone); cat.Run(monCtx) }()
	defer func() { <-catDone }() // before the store closes
	// Drills a crash left unfinished are cleaned up now; failed cleanups
	// are retried at their time.
	drillsDone := make(chan struct{})
	go func() { defer close(drillsDone); worker.CleanDrillsEvery(monCtx, 5*time.Second) }()
	defer func() { <-drillsDone }()
	// Failbacks' reverse flows, watched while their connectors copy.
	reverseDone := make(chan struct{})
	go func() { defer close(reverseDone); failback.BookOf(rb).WatchReverseFlowsEvery(monCtx, 5*time.Second) }()
	defer func() { <-reverseDone }()
	defer startAuditAnchor(monCtx, store, cfg.AuditAnchor, log)()
	notifier := &notify.Notifier{Store: store, Flows: mon, Receivers: cfg.Notifications.Webhooks, PublicURL: cfg.Auth.PublicURL,
		Version: version, Log: log.With("component", "notifications")}
	notifyDone := make(chan struct{})
	go func() { defer close(notifyDone); notifier.Run(monCtx) }()
	defer func() { <-notifyDone }() // before the store closes
	log.Info("drconsole serving", "url", "http://"+ln.Addr().String()+"/", "flows", len(cfg.Flows), "data", cfg.DataDir,
		"memory_limit", memPlan.String())
	err = web.Serve(ctx, ln, web.Router(h, log), log)
	// Steps and savepoints still running get what is left of
	// ShutdownBound after the requests' 10 s, then are cancelled.
	wctx, wcancel := context.WithTimeout(context.Background(), WorkerShutdownBound)
	if werr := worker.Shutdown(wctx); werr != nil {
		log.Error("shutdown: background work cancelled", "err", werr)
	}
	wcancel()
	cancel()
	<-done
	return err
}

func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "HTTP listen address")
	data := fs.String("data", "", "directory for the console's database (default: a temporary directory, removed at exit)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	log := newLogger(stderr)
	dir := *data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "drconsole-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else {
		if err := prepareSandboxDir(dir); err != nil {
			return err
		}
	}
	world, err := startSandbox(ctx, demo.Options{Logger: log.With("component", "sandbox")}, *addr, dir)
	if err != nil {
		return err
	}
	defer world.Close()
	if err := createDemoUsers(ctx, filepath.Join(dir, "drconsole.db"), stdout); err != nil {
		return fmt.Errorf("creating the sandbox accounts: %w", err)
	}
	fmt.Fprintf(stdout, "drconsole sandbox: open http://%s/ (sandbox controls at /demo). Ctrl-C stops it.\n", *addr)
	return serveConsole(ctx, world.Config, "(sandbox)", panel.SandboxControls{Sandbox: world.Sandbox}, log)
}

// sandboxWorld is the sandbox and its stand-ins, with the config that
// describes them to the console.
type sandboxWorld struct {
	Sandbox *demo.Sandbox
	Flink   *demo.FlinkStandIn
	Link    *demo.ClusterLinkStandIn
	Connect *demo.ConnectStandIn
	Config  *config.Config
	closers []func()
}

// Close stops the stand-ins, then the sandbox.
func (w *sandboxWorld) Close() {
	for _, c := range slices.Backward(w.closers) {
		c()
	}
}

// startSandbox starts the sandbox with opts, its Flink, Cluster Linking
// and Kafka Connect stand-ins, and describes them in a config serving on
// addr with its database in dir.
func startSandbox(ctx context.Context, opts demo.Options, addr, dir string) (_ *sandboxWorld, err error) {
	w := &sandboxWorld{}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	if w.Sandbox, err = demo.Start(ctx, opts); err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	w.closers = append(w.closers, w.Sandbox.Close)
	if w.Flink, err = demo.StartFlinkStandIn(); err != nil {
		return nil, fmt.Errorf("starting the sandbox's Flink stand-in: %w", err)
	}
	w.closers = append(w.closers, w.Flink.Close)
	// Its savepoints hold the sandbox job's positions, and it takes one
	// every 2 minutes so the newest stays usable within retention.
	w.Flink.FollowPositions(w.Sandbox.JobPositions)
	w.Flink.StartPeriodicSavepoints(demo.DefaultPeriodicSavepoints)
	if w.Link, err = demo.StartClusterLinkStandIn(demo.LinkClusterID, demo.LinkName, demo.LinkTopics); err != nil {
		return nil, fmt.Errorf("starting the sandbox's Cluster Linking stand-in: %w", err)
	}
	w.closers = append(w.closers, w.Link.Close)
	if err := demo.DriveClusterLink(ctx, w.Link, w.Sandbox.PrimaryBootstrap(), 1); err != nil {
		return nil, err
	}
	if w.Connect, err = demo.StartConnectStandIn(w.Sandbox); err != nil {
		return nil, fmt.Errorf("starting the sandbox's Kafka Connect stand-in: %w", err)
	}
	w.closers = append(w.closers, w.Connect.Close)
	w.Config = demoConfig(w, addr, dir)
	return w, nil
}

// sandboxDrillArgs are the sandbox's drill.job_args: the drill copy of the
// job reads with the drill's temporary group and writes to topics of its
// own, as an operator would configure a real job's.
var sandboxDrillArgs = []string{"--group-id", "{group}", "--output-topic-suffix", "-drill-{run}"}

// demoConfig describes the sandbox as an operator would in a config file:
// the MM2 flow on the Connect stand-in, a Cluster Linking flow beside it
// (stand-in REST API, real primary records for the lag in time), the
// Flink stand-in in DR, the drill's job arguments.
func demoConfig(w *sandboxWorld, addr, dir string) *config.Config {
	sb := w.Sandbox
	cfg := &config.Config{
		Listen:  addr,
		DataDir: dir,
		Clusters: map[string]*config.Cluster{
			demo.SourceAlias: {Bootstrap: sb.PrimaryBootstrap()},
			demo.TargetAlias: {Bootstrap: sb.DRBootstrap()},
		},
		Flows: []*config.Flow{{
			Source: demo.SourceAlias, Target: demo.TargetAlias,
			ReplicationPolicy: config.PolicyIdentity, OffsetSyncsLocation: config.SyncsOnTarget,
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic(demo.SourceAlias),
			Topics:              config.Topics{Include: demo.Topics},
			// The stand-in's forward source is the sandbox's mirror.
			ConnectURL: w.Connect.URL, Connectors: slices.Clone(demo.ForwardConnectors),
			// The sandbox's consumer groups, as an operator would name
			// those that matter: billing pages when a failover would
			// reprocess more than its objective.
			Groups: []config.Group{{Name: "billing", Critical: true, ReprocessObjective: 1000}, {Name: demo.FlinkJobGroup}},
			// The sandbox's primary enforces ACLs: the fence denies its
			// writers (all one principal) Write on the mirrored topics.
			Switchover: &config.Switchover{Fence: config.FenceACL, Principals: []string{demo.WriterPrincipal},
				QuietPeriod: config.Duration(5 * time.Second)},
		}, {
			Name: "primary->dr-link", Kind: config.FlowClusterLink, Source: demo.SourceAlias, Target: demo.TargetAlias,
			Topics: config.Topics{Include: []string{demo.LinkTopic}},
			ClusterLink: &config.ClusterLink{RestURL: w.Link.URL, ClusterID: demo.LinkClusterID, Link: demo.LinkName,
				// The stand-in serves the primary's end of the link too: a failback goes there.
				Primary: &config.ClusterLink{RestURL: w.Link.URL, ClusterID: demo.ClusterLinkSourceID}},
		}},
		RefreshInterval: config.Duration(2e9),
		// Not real Flink: a stand-in that records the restore request.
		FlinkTargets: []*config.FlinkTarget{{Name: "sandbox-flink-dr", RestURL: w.Flink.URL, Region: config.RegionDR}},
		// Where the stand-in writes its savepoints.
		SavepointDirs: []string{w.Flink.SavepointDir},
		Drill:         config.Drill{JobArgs: slices.Clone(sandboxDrillArgs)},
		// Plain http on 127.0.0.1: a Secure cookie would never come back.
		Auth: config.Auth{InsecureCookie: true},
	}
	if err := cfg.Normalize("demo"); err != nil {
		panic("demo config: " + err.Error()) // a programming error, not an operator's
	}
	return cfg
}
