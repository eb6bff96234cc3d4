package scale

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/cli"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The rig starts the console by running its own executable again with
// these set: ChildMain then runs the drconsole command line (cli.Main, the
// same wiring as the drconsole binary), with a pprof listener beside it
// when asked for.
const (
	childEnv = "DRCONSOLE_SCALE_CHILD"
	pprofEnv = "DRCONSOLE_SCALE_PPROF"
)

// ChildMain runs the console and never returns when this process was
// started by the rig as its console; otherwise it returns at once. Call it
// first in main (or TestMain).
func ChildMain() {
	if os.Getenv(childEnv) == "" {
		return
	}
	if addr := os.Getenv(pprofEnv); addr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale: pprof listener:", err)
			os.Exit(1)
		}
		go http.Serve(ln, mux) //nolint:errcheck // ends with the process
	}
	cli.Main("scale-rig")
}

const (
	flowName = sourceAlias + "->" + targetAlias
	userName = "scale"
)

// ConsoleOptions say how to start the console.
type ConsoleOptions struct {
	Dir             string        // data directory and config file
	Binary          string        // a drconsole binary; empty: this executable through ChildMain
	Pprof           bool          // serve pprof beside the console (only without Binary)
	RefreshInterval time.Duration // refresh_interval
	RPOHistory      time.Duration // flow samples seeded before the start: one per refresh interval over the last day, one a minute before
	PartHistory     time.Duration // partition samples seeded before the start, one per minute
	MemoryLimit     string        // GOMEMLIMIT of the console alone; empty: none
	SyncsBound      int           // retention.syncs_per_partition; 0: the console's default
}

// Console is the console child process.
type Console struct {
	URL      string // http://127.0.0.1:port
	PprofURL string // empty unless asked for
	Pid      int
	Seeding  time.Duration // writing the seeded history, before the start
	DBPath   string
	LogPath  string
	cmd      *exec.Cmd
	exited   chan error
	cookie   string
	store    *storage.Store // the rig's own handle, for counting syncs and reading samples
}

// freeAddr is a 127.0.0.1 port nobody listens on right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// writeConfig writes the console's config file for clusters c.
func writeConfig(path, listen, dataDir string, c *Clusters, refresh time.Duration, syncsBound int) error {
	q := func(addrs []string) string { return `["` + strings.Join(addrs, `", "`) + `"]` }
	cfg := fmt.Sprintf(`# Written by the scale rig (package scale).
listen: %s
data_dir: %s
clusters:
  %s: {bootstrap: %s}
  %s: {bootstrap: %s}
flows:
  - source: %s
    target: %s
    replication_policy: identity
    offset_syncs_location: target
    topics: {include: ["%s.*"]}
refresh_interval: %s
auth:
  mode: local
  insecure_cookie: true
`, listen, dataDir, sourceAlias, q(c.Primary.ListenAddrs()), targetAlias, q(c.DR.ListenAddrs()),
		sourceAlias, targetAlias, topicPrefix, refresh)
	if syncsBound > 0 {
		cfg += fmt.Sprintf("retention:\n  syncs_per_partition: %d\n", syncsBound)
	}
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// rawHistory is the console's default retention.lag_history: how long
// every flow sample is kept.
const rawHistory = 24 * time.Hour

// seed creates the rig's viewer account and the seeded history, through
// the same storage calls the console makes, before the console starts.
func seed(ctx context.Context, dbPath string, o ConsoleOptions, sh Shape) (password string, err error) {
	store, err := storage.Open(dbPath)
	if err != nil {
		return "", err
	}
	defer store.Close()
	password = rand.Text()
	hash, err := identity.HashPassword(password)
	if err != nil {
		return "", err
	}
	actx := audit.WithClient(ctx, audit.Client{IP: "local", UserAgent: "drconsole-scale-rig"})
	if err := identity.CreateUser(actx, store, identity.AuditAs(audit.New(store), "scale-rig"), userName, model.RoleViewer, hash, "scale-rig"); err != nil {
		return "", err
	}
	now := time.Now()
	if o.RPOHistory > 0 {
		// One sample per refresh over the last day (the console's default
		// retention.lag_history keeps every sample that long); before it one
		// a minute, as many per-minute rollups as retention keeps (90 days
		// by default) without seeding raw samples retention would delete.
		recent := now.Add(-rawHistory)
		for at := now.Add(-o.RPOHistory); at.Before(now); {
			// An RPO that wanders between 0 and a minute: charts draw real lines.
			rpo := int64(30_000 + 30_000*math.Sin(float64(at.Unix())/600))
			lag, hb := rpo/100, int64(1000)
			if err := store.AddFlowSample(ctx, flowName, storage.FlowSample{AtMs: at.UnixMilli(), RPOMs: &rpo, LagMessages: &lag,
				HeartbeatAgeMs: &hb, Status: "OK"}); err != nil {
				return "", err
			}
			if at.Before(recent) {
				at = at.Add(time.Minute)
			} else {
				at = at.Add(o.RefreshInterval)
			}
		}
	}
	if o.PartHistory > 0 {
		topics := sh.topics()
		for at := now.Add(-o.PartHistory); at.Before(now); at = at.Add(time.Minute) {
			xs := make([]storage.PartitionSample, 0, sh.Partitions)
			for i, t := range topics {
				for p := range sh.partitionsOf(i) {
					end, repl := int64(sh.SyncsPerPart+lagging(i, p)), int64(sh.SyncsPerPart)
					lag, lagMs := end-repl, int64(0)
					if lag > 0 {
						lagMs = 30_000
					}
					xs = append(xs, storage.PartitionSample{Topic: t, Partition: p, AtMs: at.UnixMilli(),
						SourceEnd: &end, Replicated: &repl, LagMessages: &lag, LagMs: &lagMs})
				}
			}
			if err := store.AddPartitionMinute(ctx, flowName, at.UnixMilli(), xs); err != nil {
				return "", err
			}
		}
	}
	return password, nil
}

// StartConsole writes the config, seeds the database, starts the console
// and signs in; it returns once /readyz answers (within setup).
func StartConsole(ctx context.Context, c *Clusters, o ConsoleOptions, setup time.Duration) (*Console, error) {
	if o.Binary != "" && o.Pprof {
		return nil, errors.New("scale: pprof needs the console run from this executable (no -console binary)")
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dataDir := filepath.Join(o.Dir, "data")
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(o.Dir, "drconsole.yaml")
	if err := writeConfig(cfgPath, addr, dataDir, c, o.RefreshInterval, o.SyncsBound); err != nil {
		return nil, err
	}
	con := &Console{URL: "http://" + addr, DBPath: filepath.Join(dataDir, "drconsole.db"), LogPath: filepath.Join(o.Dir, "console.log"),
		exited: make(chan error, 1)}
	t0 := time.Now()
	password, err := seed(ctx, con.DBPath, o, c.Shape)
	con.Seeding = time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("scale: seeding the database: %w", err)
	}
	logf, err := os.Create(con.LogPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	bin, env := o.Binary, os.Environ()
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
		env = append(env, childEnv+"=1")
		if o.Pprof {
			paddr, err := freeAddr()
			if err != nil {
				return nil, err
			}
			env = append(env, pprofEnv+"="+paddr)
			con.PprofURL = "http://" + paddr
		}
	}
	if o.MemoryLimit != "" {
		env = append(env, "GOMEMLIMIT="+o.MemoryLimit)
	}
	con.cmd = exec.Command(bin, "serve", "--config", cfgPath)
	con.cmd.Env, con.cmd.Stdout, con.cmd.Stderr = env, logf, logf
	if err := con.cmd.Start(); err != nil {
		return nil, fmt.Errorf("scale: starting the console: %w", err)
	}
	con.Pid = con.cmd.Process.Pid
	go func() { con.exited <- con.cmd.Wait() }()
	if err := con.waitReady(ctx, setup); err != nil {
		con.Stop()
		return nil, err
	}
	if con.cookie, err = con.signIn(ctx, password); err != nil {
		con.Stop()
		return nil, err
	}
	if con.store, err = storage.Open(con.DBPath); err != nil {
		con.Stop()
		return nil, err
	}
	return con, nil
}

// waitReady polls /readyz (the first refresh is done) for at most d.
func (con *Console) waitReady(ctx context.Context, d time.Duration) error {
	return poll(ctx, d, "the console's /readyz", func() (bool, error) {
		select {
		case err := <-con.exited:
			return false, fmt.Errorf("scale: the console exited (%v); see %s", err, con.LogPath)
		default:
		}
		resp, err := http.Get(con.URL + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// poll calls cond until it holds, fails, or d passes. It pauses 200 ms
// between calls, or twice as long as the last call took: checking a big
// estate (a 16 MB /metrics, counting millions of syncs) must not become
// the load that slows what it waits for.
func poll(ctx context.Context, d time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(d)
	for {
		t0 := time.Now()
		ok, err := cond()
		pause := max(200*time.Millisecond, 2*time.Since(t0))
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("scale: timed out after %s waiting for %s", d, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// signIn posts the login form and returns the session cookie.
func (con *Console) signIn(ctx context.Context, password string) (string, error) {
	form := url.Values{"username": {userName}, "password": {password}, "next": {"/"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, con.URL+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "drconsole_session" && c.Value != "" {
			return c.Name + "=" + c.Value, nil
		}
	}
	return "", fmt.Errorf("scale: sign-in answered %s without a session cookie", resp.Status)
}

// WaitIngested waits until the console has stored every offset sync the
// clusters hold, then for one refresh after that (so the snapshot and the
// sync index hold the whole estate).
func (con *Console) WaitIngested(ctx context.Context, want int64, d time.Duration) error {
	err := poll(ctx, d, fmt.Sprintf("%d offset syncs in the console's database", want), func() (bool, error) {
		n, err := con.store.CountSyncs(ctx, flowName)
		return err == nil && n >= want, nil
	})
	if err != nil {
		return err
	}
	since := time.Now().UnixMilli()
	return poll(ctx, d, "a refresh after ingestion", func() (bool, error) {
		xs, err := con.store.FlowSamples(ctx, flowName, since)
		return err == nil && len(xs) >= 1, nil
	})
}

// RefreshTimes are the starts of the refreshes the console recorded (one
// flow sample each) since sinceMs.
func (con *Console) RefreshTimes(ctx context.Context, sinceMs int64) ([]int64, error) {
	xs, err := con.store.FlowSamples(ctx, flowName, sinceMs)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = x.AtMs
	}
	return out, nil
}

// Stop ends the console (SIGTERM, then SIGKILL after 20 s).
func (con *Console) Stop() {
	if con.store != nil {
		con.store.Close()
	}
	if con.cmd == nil || con.cmd.Process == nil {
		return
	}
	con.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-con.exited:
	case <-time.After(20 * time.Second):
		con.cmd.Process.Kill()
		<-con.exited
	}
}
