// Command drconsole is a web console for Kafka disaster recovery: it watches
// MirrorMaker 2 replication between a primary and a DR cluster and shows
// what a failover right now would lose.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/failover"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web"
)

// version is set by the build (-ldflags "-X main.version=...").
var version = "dev"

const usage = `drconsole: Kafka disaster-recovery console

Usage:
  drconsole serve --config FILE          watch the clusters and flows of FILE
  drconsole demo [--addr HOST:PORT] [--data DIR]
                                         run the embedded sandbox: two in-process
                                         Kafka clusters, traffic and an MM2 mirror
  drconsole translate --offsets FILE (--syncs FILE | --config FILE)
                                         translate primary offsets to DR offsets
  drconsole export syncs --config FILE   write the stored offset syncs as JSON Lines
  drconsole users add|list|passwd|role|disable|enable ... (--config FILE | --db FILE)
                                         manage the console's accounts (audited)
  drconsole audit verify (--db FILE | --config FILE)
                                         check the audit log's hash chain
  drconsole audit export --config FILE [--format jsonl|csv]
                                         write the audit log
  drconsole savepoint inspect PATH [--uid UID] [--json] [--config FILE]
                                         read the Kafka offsets out of a Flink savepoint
                                         (local, or s3:// with the config's s3 section)
  drconsole version                      print the version

Run "drconsole COMMAND -h" for a command's flags.
`

func main() {
	go exitWhenStuck(os.Stderr)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stuckGrace is how long a command may take to stop after SIGINT or
// SIGTERM (serve's own bound is 15 s) before the process exits anyway: a
// command blocked in a system call, such as reading a named pipe given as
// --syncs or --config, never sees its context end. A second signal exits
// at once.
var stuckGrace = 20 * time.Second

func exitWhenStuck(stderr io.Writer) {
	c := make(chan os.Signal, 2)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	<-c
	select {
	case <-c:
	case <-time.After(stuckGrace):
	}
	fmt.Fprintln(stderr, "drconsole: still busy after the stop signal (a named pipe or stuck read?); exiting")
	os.Exit(1)
}

// run is main without the exit, so tests can call it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(ctx, args[1:], stderr)
	case "demo":
		err = demoCmd(ctx, args[1:], stdout, stderr)
	case "translate":
		err = translateCmd(ctx, args[1:], stdin, stdout, stderr)
	case "savepoint":
		err = savepointCmd(ctx, args[1:], stdout, stderr)
	case "export":
		err = exportCmd(ctx, args[1:], stdout, stderr)
	case "users":
		err = usersCmd(ctx, args[1:], stdin, stdout, stderr)
	case "audit":
		err = auditCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "drconsole", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "drconsole: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var usageErr usageError
	var inErr inputError
	var partial partialError
	var markers savepointMarkerError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usageErr), errors.As(err, &inErr):
		fmt.Fprintln(stderr, "drconsole:", err)
		return 2
	case errors.As(err, &partial), errors.As(err, &markers):
		fmt.Fprintln(stderr, "drconsole:", err)
		return 3
	default:
		fmt.Fprintln(stderr, "drconsole:", err)
		return 1
	}
}

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

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

// runConsole is serveConsole without the bound on stopping.
func runConsole(ctx context.Context, cfg *config.Config, cfgFile string, controls handlers.DemoControls, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
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
	rb := &failover.Runbook{Store: store, Monitor: mon, Config: cfg, Audit: failover.StoreAuditor{Store: store}, Log: log,
		Connect: func(url string) failover.ConnectAPI { return kafka.NewConnectClient(url) },
		Flink:   func(url string) failover.FlinkAPI { return flink.NewRESTClient(url) }}
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log.With("component", "savepoint-catalog")}
	if cfg.S3 != nil {
		if cat.S3, err = s3.New(cfg.S3); err != nil {
			return err
		}
	}
	h := &handlers.Handlers{Monitor: mon, Store: store, Log: log, Version: version, Demo: controls, Runbook: rb,
		Auth: cfg.Auth, Catalog: cat}
	monCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); mon.Run(monCtx) }()
	catDone := make(chan struct{})
	go func() { defer close(catDone); cat.Run(monCtx) }()
	defer func() { <-catDone }() // before the store closes
	defer startAuditAnchor(monCtx, store, cfg.AuditAnchor, log)()
	log.Info("drconsole serving", "url", "http://"+ln.Addr().String()+"/", "flows", len(cfg.Flows), "data", cfg.DataDir)
	err = web.Serve(ctx, ln, web.Router(h, log), log)
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
	sb, err := demo.Start(ctx, demo.Options{Logger: log.With("component", "sandbox")})
	if err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	defer sb.Close()
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		return fmt.Errorf("starting the sandbox's Flink stand-in: %w", err)
	}
	defer fl.Close()
	link, err := demo.StartClusterLinkStandIn(demo.LinkClusterID, demo.LinkName, demo.LinkTopics)
	if err != nil {
		return fmt.Errorf("starting the sandbox's Cluster Linking stand-in: %w", err)
	}
	defer link.Close()
	if err := demo.DriveClusterLink(ctx, link, sb.PrimaryBootstrap(), 1); err != nil {
		return err
	}
	cfg := demoConfig(sb, *addr, dir, fl.URL, fl.SavepointDir)
	// A Cluster Linking flow beside the MM2 one (stand-in REST API, real
	// primary records for the lag in time).
	cfg.Flows = append(cfg.Flows, &config.Flow{Name: "primary->dr-link", Kind: "cluster-link", Source: demo.SourceAlias, Target: demo.TargetAlias,
		Topics:      config.Topics{Include: []string{demo.LinkTopic}},
		ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: demo.LinkClusterID, Link: demo.LinkName}})
	if err := cfg.Normalize("demo"); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}
	if err := createDemoUsers(ctx, filepath.Join(dir, "drconsole.db"), stdout); err != nil {
		return fmt.Errorf("creating the sandbox accounts: %w", err)
	}
	fmt.Fprintf(stdout, "drconsole sandbox: open http://%s/ (sandbox controls at /demo). Ctrl-C stops it.\n", *addr)
	return serveConsole(ctx, cfg, "(sandbox)", handlers.SandboxControls{Sandbox: sb}, log)
}

// demoConfig describes the sandbox as an operator would in a config file.
func demoConfig(sb *demo.Sandbox, addr, dir, flinkURL, savepointDir string) *config.Config {
	cfg := &config.Config{
		Listen:  addr,
		DataDir: dir,
		Clusters: map[string]*config.Cluster{
			demo.SourceAlias: {Bootstrap: sb.PrimaryBootstrap()},
			demo.TargetAlias: {Bootstrap: sb.DRBootstrap()},
		},
		Flows: []*config.Flow{{
			Source: demo.SourceAlias, Target: demo.TargetAlias,
			ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic(demo.SourceAlias),
			Topics:              config.Topics{Include: demo.Topics},
		}},
		RefreshInterval: config.Duration(2e9),
		// Not real Flink: a stand-in that records the restore request.
		FlinkTargets: []*config.FlinkTarget{{Name: "sandbox-flink-dr", RestURL: flinkURL, Region: "dr"}},
		// Where the stand-in writes its savepoints (copies of a real one).
		SavepointDirs: []string{savepointDir},
		// Plain http on 127.0.0.1: a Secure cookie would never come back.
		Auth: config.Auth{InsecureCookie: true},
	}
	if err := cfg.Normalize("demo"); err != nil {
		panic("demo config: " + err.Error()) // a programming error, not an operator's
	}
	return cfg
}
