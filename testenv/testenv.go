// Package testenv runs REAL Apache Kafka components for end-to-end tests: single-node KRaft
// brokers, MirrorMaker 2 in dedicated mode, and a Kafka Connect distributed worker running the
// Mirror*Connector classes. The jars are resolved by Maven (see pom.xml and fetch.sh) into
// testenv/.cache/jars/kafka (other Kafka versions: KafkaDist) and started with plain
// `java -cp 'jars/*' <main class>`.
//
// Everything listens on 127.0.0.1 on free ports, keeps its data and logs in t.TempDir(), and is
// killed (whole process group, SIGKILL) in t.Cleanup. Every JVM is started with
// Pdeathsig=SIGKILL so none survives the test binary. On test failure the tail of each
// component's log is printed.
//
// The harness itself has no build tag so that `go vet ./testenv/` covers it; the tests that use
// it are tagged `e2e` (go test -tags e2e ./testenv/...).
package testenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// KafkaVersion is the Apache Kafka version pinned in pom.xml (kafka.version).
const KafkaVersion = "4.3.1"

// KafkaDist is one Kafka version testenv can run: the fetch.sh profile of its brokers and the
// one of the MirrorMaker 2 and Connect worker that run against them.
type KafkaDist struct {
	Version       string // the brokers' Kafka version
	JarsProfile   string // fetch.sh profile of the broker classpath (.cache/jars/<profile>)
	Mirror        string // the Kafka version of MirrorMaker 2 and Connect
	MirrorProfile string // fetch.sh profile of their classpath
}

// The Kafka versions testenv runs. KafkaDefault is what StartKafka uses and the full suite
// runs on; the others are the version matrix. Kafka3_6 is the last MirrorMaker 2 without
// KAFKA-15906's timed offset syncs. Kafka4_4 runs MirrorMaker 2 4.3.1: Central serves the
// 4.4.0 broker but not connect-mirror 4.4.0.
var (
	KafkaDefault = KafkaDist{Version: KafkaVersion, JarsProfile: "kafka", Mirror: KafkaVersion, MirrorProfile: "kafka"}
	Kafka3_6     = KafkaDist{Version: "3.6.2", JarsProfile: "kafka-3.6", Mirror: "3.6.2", MirrorProfile: "kafka-3.6"}
	Kafka3_9     = KafkaDist{Version: "3.9.1", JarsProfile: "kafka-3.9", Mirror: "3.9.1", MirrorProfile: "kafka-3.9"}
	Kafka4_4     = KafkaDist{Version: "4.4.0", JarsProfile: "kafka-4.4", Mirror: KafkaVersion, MirrorProfile: "kafka"}
)

// String names the dist in test names: "kafka-3.9.1", or "kafka-4.4.0-mm2-4.3.1".
func (d KafkaDist) String() string {
	if d.Mirror == d.Version {
		return "kafka-" + d.Version
	}
	return "kafka-" + d.Version + "-mm2-" + d.Mirror
}

// MirrorJars is Jars for the dist's MirrorMaker 2 and Connect classpath.
func (d KafkaDist) MirrorJars(t testing.TB) string {
	t.Helper()
	return fetchProfile(t, d.MirrorProfile, "connect-mirror-*.jar")
}

// MirrorAtLeast tells whether the dist's MirrorMaker 2 is release major.minor or newer.
func (d KafkaDist) MirrorAtLeast(major, minor int) bool {
	var ma, mi int
	fmt.Sscanf(d.Mirror, "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}

// Main classes started by this package.
const (
	mainKafka          = "kafka.Kafka"
	mainStorageTool    = "kafka.tools.StorageTool"
	mainMirrorMaker    = "org.apache.kafka.connect.mirror.MirrorMaker"
	mainConnectDistrib = "org.apache.kafka.connect.cli.ConnectDistributed"
)

// Timeouts for start-up; generous because the machine may have only 2 cores and several JVMs.
const (
	kafkaStartTimeout   = 90 * time.Second
	mm2StartTimeout     = 120 * time.Second
	connectStartTimeout = 120 * time.Second
	stopTimeout         = 60 * time.Second
)

// ---------------------------------------------------------------------------------------------
// Jars

// fetched is the result of one fetch.sh run per profile and process.
type fetched struct {
	once   sync.Once
	dir    string
	err    error
	took   time.Duration
	output string // fetch.sh's message, logged once
}

var (
	fetchMu sync.Mutex
	fetches = map[string]*fetched{}
)

// Dir returns the testenv source directory (where pom.xml and fetch.sh live). It can be
// overridden with DRCONSOLE_TESTENV_DIR.
func Dir() string {
	if d := os.Getenv("DRCONSOLE_TESTENV_DIR"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "testenv"
	}
	return filepath.Dir(file)
}

// Jars makes sure the Kafka/Connect/MM2 jars are present (running fetch.sh at most once per
// process) and returns the jar directory. It fails the test if they cannot be resolved.
func Jars(t testing.TB) string {
	t.Helper()
	return brokerJars(t, KafkaDefault)
}

func brokerJars(t testing.TB, d KafkaDist) string {
	t.Helper()
	return fetchProfile(t, d.JarsProfile, "kafka_2.13-*.jar")
}

// FlinkJars is Jars for the Flink 2.x profile (.cache/jars/flink): the classpath of the
// MiniCluster started by StartFlink.
func FlinkJars(t testing.TB) string {
	t.Helper()
	return fetchProfile(t, "flink", "flink-runtime-*.jar")
}

func fetchProfile(t testing.TB, profile, mustHave string) string {
	t.Helper()
	fetchMu.Lock()
	f := fetches[profile]
	if f == nil {
		f = &fetched{}
		fetches[profile] = f
	}
	fetchMu.Unlock()
	f.once.Do(func() {
		start := time.Now()
		dir := Dir()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(dir, "fetch.sh"), profile)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			f.err = fmt.Errorf("testenv: %s/fetch.sh %s failed: %w\n%s", dir, profile, err, out.String())
			return
		}
		f.dir = filepath.Join(dir, ".cache", "jars", profile)
		f.took = time.Since(start)
		if m, _ := filepath.Glob(filepath.Join(f.dir, mustHave)); len(m) == 0 {
			f.err = fmt.Errorf("testenv: fetch.sh %s succeeded but %s holds no %s\n%s", profile, f.dir, mustHave, out.String())
		}
		f.output = strings.TrimSpace(out.String())
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	fetchMu.Lock()
	msg := f.output
	f.output = ""
	fetchMu.Unlock()
	if msg != "" {
		t.Logf("testenv: %s jars ready in %s: %s", profile, f.took.Round(time.Millisecond), msg)
	}
	return f.dir
}

// ---------------------------------------------------------------------------------------------
// Processes

// Process is one JVM started by testenv.
type Process struct {
	Name    string        // e.g. "kafka-primary", "mm2", "connect"
	Dir     string        // working directory: config files and the log
	LogFile string        // stdout+stderr of the JVM (log4j2 writes to stdout)
	Startup time.Duration // from exec to "ready" (component-specific)

	t        testing.TB
	jvmExtra []string // extra JVM flags after JVMOptions (e.g. Flink's --add-opens)
	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	err      error
}

func javaBin() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		p := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("testenv: java not found (set JAVA_HOME or PATH; JDK 17+ needed): %w", err)
	}
	return p, nil
}

// JVMOptions are passed to every JVM; override with DRCONSOLE_TESTENV_JVM_OPTS (space separated).
// Small heap, serial GC and C1-only JIT keep several JVMs fast on 2 cores.
var JVMOptions = []string{
	"-Xms64m", "-Xmx512m",
	"-XX:+UseSerialGC",
	"-XX:TieredStopAtLevel=1",
	"-XX:-UsePerfData",
	"-Djava.awt.headless=true",
	"-Djava.net.preferIPv4Stack=true",
}

const log4j2XML = `<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <Console name="stdout" target="SYSTEM_OUT">
      <PatternLayout pattern="[%d{HH:mm:ss.SSS}] %-5p [%t] %m (%c{1})%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="org.apache.kafka.clients.consumer.internals.ConsumerCoordinator" level="WARN"/>
    <Logger name="org.reflections" level="ERROR"/>
    <Root level="INFO"><AppenderRef ref="stdout"/></Root>
  </Loggers>
</Configuration>
`

// javaCmd builds the command line for one JVM run in dir; stdout+stderr go to logFile (append).
func javaCmd(jars, dir, logFile, mainClass string, args ...string) (*exec.Cmd, *os.File, error) {
	return javaCmdOpts(jars, nil, dir, logFile, mainClass, args...)
}

// classpath turns a jar directory into "<dir>/*"; a value that already is a path list
// (contains ':') is used as it is.
func classpath(jars string) string {
	if strings.ContainsRune(jars, os.PathListSeparator) {
		return jars
	}
	return filepath.Join(jars, "*")
}

// javaCmdOpts is javaCmd with extra JVM flags (after JVMOptions) and jars as for classpath.
func javaCmdOpts(jars string, jvmExtra []string, dir, logFile, mainClass string, args ...string) (*exec.Cmd, *os.File, error) {
	java, err := javaBin()
	if err != nil {
		return nil, nil, err
	}
	logCfg := filepath.Join(dir, "log4j2.xml")
	if _, err := os.Stat(logCfg); err != nil {
		if err := os.WriteFile(logCfg, []byte(log4j2XML), 0o644); err != nil {
			return nil, nil, err
		}
	}
	opts := JVMOptions
	if s := os.Getenv("DRCONSOLE_TESTENV_JVM_OPTS"); s != "" {
		opts = strings.Fields(s)
	}
	argv := slices.Concat(opts, jvmExtra, []string{
		"-Dlog4j2.configurationFile=" + logCfg,
		"-Dkafka.logs.dir=" + dir,
		"-cp", classpath(jars),
		mainClass,
	}, args)
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(f, "### testenv %s: %s %s\n", time.Now().Format(time.RFC3339Nano), java, strings.Join(argv, " "))
	cmd := exec.Command(java, argv...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Stdin = nil
	// Own process group (so cleanup can kill everything the JVM forks) and SIGKILL when the
	// parent dies (the test binary is killed by -timeout or by hand). Linux sends Pdeathsig when
	// the forking OS *thread* exits; Go keeps its threads alive unless a goroutine exits while
	// locked to one (LockOSThread), which testenv never does. Checked: no JVM survives a -timeout
	// panic or `kill -9` of the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, f, nil
}

// runJava runs a short-lived JVM to completion (e.g. StorageTool) and returns its output.
func runJava(ctx context.Context, jars, dir, logFile, mainClass string, args ...string) error {
	cmd, f, err := javaCmd(jars, dir, logFile, mainClass, args...)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return ctx.Err()
	}
}

// startProcess starts a long-running JVM and registers cleanup (kill + wait, log tail on failure).
func startProcess(t testing.TB, name, jars, dir, mainClass string, args ...string) *Process {
	t.Helper()
	return startProcessOpts(t, name, jars, nil, dir, mainClass, args...)
}

// startProcessOpts is startProcess with extra JVM flags; jars may be a path list (see classpath).
func startProcessOpts(t testing.TB, name, jars string, jvmExtra []string, dir, mainClass string, args ...string) *Process {
	t.Helper()
	p := &Process{Name: name, Dir: dir, LogFile: filepath.Join(dir, name+".log"), t: t, jvmExtra: jvmExtra}
	if err := p.start(jars, mainClass, args...); err != nil {
		t.Fatalf("testenv: start %s: %v", name, err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("testenv: --- last lines of %s ---\n%s", p.LogFile, p.LogTail(15))
			// The tail is often routine (offset commits); what went wrong
			// earlier is in the warnings and errors.
			if w := p.LogProblems(20); w != "" {
				t.Logf("testenv: --- last warnings and errors of %s ---\n%s", p.LogFile, w)
			}
		}
		keepLog(t, p.Dir, p.LogFile)
	})
	return p
}

// keepLog copies a component's log and config files to $DRCONSOLE_TESTENV_LOGDIR/<test>/ (if
// set), because t.TempDir() is removed when the test ends.
func keepLog(t testing.TB, dir, logFile string) {
	root := os.Getenv("DRCONSOLE_TESTENV_LOGDIR")
	if root == "" {
		return
	}
	dst := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Logf("testenv: keep logs: %v", err)
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.properties"))
	for _, f := range append(files, logFile) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		name := filepath.Base(f)
		if !strings.HasSuffix(name, ".log") {
			name = strings.TrimSuffix(filepath.Base(logFile), ".log") + "-" + name
		}
		_ = os.WriteFile(filepath.Join(dst, name), b, 0o644)
	}
}

func (p *Process) start(jars, mainClass string, args ...string) error {
	cmd, f, err := javaCmdOpts(jars, p.jvmExtra, p.Dir, p.LogFile, mainClass, args...)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done, p.err = cmd, done, nil
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Pid returns the JVM's process id (0 if never started).
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited reports whether the JVM has exited, and its wait error.
func (p *Process) Exited() (bool, error) {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return true, nil
	}
	select {
	case <-done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

func (p *Process) signalWait(sig syscall.Signal, timeout time.Duration) bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || done == nil {
		return true
	}
	select {
	case <-done:
		return true
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig) // the whole process group
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Stop shuts the JVM down gracefully (SIGTERM to its process group) and waits; after
// stopTimeout it falls back to SIGKILL.
func (p *Process) Stop() {
	p.t.Helper()
	start := time.Now()
	if !p.signalWait(syscall.SIGTERM, stopTimeout) {
		p.t.Logf("testenv: %s did not stop within %s after SIGTERM; sending SIGKILL", p.Name, stopTimeout)
		p.signalWait(syscall.SIGKILL, stopTimeout)
		return
	}
	p.t.Logf("testenv: %s stopped gracefully in %s", p.Name, time.Since(start).Round(time.Millisecond))
}

// Kill sends SIGKILL to the JVM's process group and waits for it to exit ("the primary dies").
func (p *Process) Kill() {
	p.t.Helper()
	if !p.signalWait(syscall.SIGKILL, stopTimeout) {
		p.t.Logf("testenv: %s still running %s after SIGKILL", p.Name, stopTimeout)
	}
}

// LogTail returns the last n lines of the process log.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogFile, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogProblems is the last n WARN and ERROR lines of the process log, with
// the lines that follow each (a stack trace, a cause); "" when there are
// none or the log cannot be read.
func (p *Process) LogProblems(n int) string {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return ""
	}
	return logProblems(string(b), n)
}

func logProblems(log string, n int) string {
	var out []string
	in := false // inside a problem: its continuation lines belong to it
	for _, l := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		entry := strings.HasPrefix(l, "[")
		switch {
		case entry && (strings.Contains(l, "] WARN ") || strings.Contains(l, "] ERROR ")):
			in = true
			out = append(out, l)
		case entry:
			in = false
		case in:
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

// LogContains reports whether the process log contains s.
func (p *Process) LogContains(s string) bool {
	f, err := os.Open(p.LogFile)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return true
		}
	}
	return false
}

// waitFor polls cond every interval until it returns true, the process exits, or timeout.
func (p *Process) waitFor(timeout, interval time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return nil
		}
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited while waiting for %s (err=%v); log tail:\n%s", p.Name, what, err, p.LogTail(40))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %s within %s; log tail:\n%s", p.Name, what, timeout, p.LogTail(40))
		}
		time.Sleep(interval)
	}
}

// ---------------------------------------------------------------------------------------------
// Ports

var (
	portsMu sync.Mutex
	ports   = map[int]bool{}
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and that this process
// has not handed out before.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("testenv: listen for a free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !ports[port] {
			ports[port] = true
			return port
		}
	}
	t.Fatal("testenv: no free port found")
	return 0
}

// ---------------------------------------------------------------------------------------------
// Kafka

// Kafka is a single-node KRaft cluster (one JVM that is broker and controller).
type Kafka struct {
	Name       string // e.g. "primary", "dr"
	Bootstrap  string // 127.0.0.1:<port>
	Controller string // 127.0.0.1:<port> (CONTROLLER listener)
	ClusterID  string
	Dir        string // config, data (Dir/data) and log
	Proc       *Process
	// SASL is the broker's one PLAIN user when its listener is SASL_PLAINTEXT
	// (StartKafkaSASL); nil for PLAINTEXT.
	SASL *SASLPlain
	// Dist is the Kafka version running; MirrorMaker 2 and Connect targeting this cluster run
	// its Mirror version.
	Dist KafkaDist

	t    testing.TB
	jars string
}

func randomClusterID() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if !strings.HasPrefix(id, "-") { // like org.apache.kafka.common.Uuid.randomUuid
			return id
		}
	}
}

// SASLPlain is a SASL/PLAIN user.
type SASLPlain struct {
	User, Password string
	// Users are further PLAIN principals (name → password); Authorizer runs StandardAuthorizer
	// with User a super user (StartKafkaAuthz).
	Users      map[string]string
	Authorizer bool
}

// StartKafka formats and starts a single-node KRaft broker+controller with a static quorum on
// 127.0.0.1 and waits until a franz-go client gets metadata listing the broker.
func StartKafka(t testing.TB, name string) *Kafka {
	t.Helper()
	return startKafka(t, name, nil, KafkaDefault)
}

// StartKafkaDist is StartKafka for another Kafka version (KafkaDist).
func StartKafkaDist(t testing.TB, name string, d KafkaDist) *Kafka {
	t.Helper()
	return startKafka(t, name, nil, d)
}

// StartKafkaSASL is StartKafka with the client listener SASL_PLAINTEXT, mechanism PLAIN and one
// user (the broker's own too); the controller listener stays PLAINTEXT. Client and Admin
// authenticate; ClientProps are the Java clients' settings for it.
func StartKafkaSASL(t testing.TB, name, user, password string) *Kafka {
	t.Helper()
	return startKafka(t, name, &SASLPlain{User: user, Password: password}, KafkaDefault)
}

// StartKafkaAuthz is StartKafkaSASL with KRaft's StandardAuthorizer: user is a super user (the
// console's, MM2's), users are further PLAIN principals (name → password: User:<name>), and a
// resource without ACLs is open to every principal (allow.everyone.if.no.acl.found), so an ACL
// a test adds (a switchover's DENY WRITE fence) is what refuses.
func StartKafkaAuthz(t testing.TB, name, user, password string, users map[string]string) *Kafka {
	t.Helper()
	return startKafka(t, name, &SASLPlain{User: user, Password: password, Users: users, Authorizer: true}, KafkaDefault)
}

// ClientAs is Client signed in as one of the broker's further users (StartKafkaAuthz).
func (k *Kafka) ClientAs(t testing.TB, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	pass, ok := k.SASL.Users[user]
	if !ok {
		t.Fatalf("testenv: kafka %s has no user %q", k.Name, user)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()), kgo.SeedBrokers(k.Bootstrap)}, opts...)...)
	if err != nil {
		t.Fatalf("testenv: kafka %s: client as %s: %v", k.Name, user, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func startKafka(t testing.TB, name string, sasl *SASLPlain, d KafkaDist) *Kafka {
	t.Helper()
	jars := brokerJars(t, d)
	dir := t.TempDir()
	bport, cport := FreePort(t), FreePort(t)
	k := &Kafka{
		Name:       name,
		Bootstrap:  fmt.Sprintf("127.0.0.1:%d", bport),
		Controller: fmt.Sprintf("127.0.0.1:%d", cport),
		ClusterID:  randomClusterID(),
		Dir:        dir,
		SASL:       sasl,
		Dist:       d,
		t:          t,
		jars:       jars,
	}
	listener := "PLAINTEXT"
	if sasl != nil {
		listener = "SASL_PLAINTEXT"
	}
	props := fmt.Sprintf(`# testenv: single-node KRaft cluster %q
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@%[3]s
listeners=%[5]s://%[2]s,CONTROLLER://%[3]s
advertised.listeners=%[5]s://%[2]s
controller.listener.names=CONTROLLER
inter.broker.listener.name=%[5]s
listener.security.protocol.map=CONTROLLER:PLAINTEXT,%[5]s:%[5]s
log.dirs=%[4]s
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=5
group.initial.rebalance.delay.ms=0
# After Kill() the old registration blocks a restart until the broker session expires
# (DUPLICATE_BROKER_REGISTRATION); shorter than the 9 s default, yet long enough that a
# stalled JVM on a loaded 2-core machine does not fence its only broker.
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=6000
auto.create.topics.enable=false
log.cleaner.dedupe.buffer.size=2097152
num.io.threads=2
num.network.threads=2
background.threads=2
`, name, k.Bootstrap, k.Controller, filepath.Join(dir, "data"), listener)
	if sasl != nil {
		props += fmt.Sprintf(`sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="%[1]s" password="%[2]s" user_%[1]s="%[2]s"%[3]s;
`, sasl.User, sasl.Password, extraUsers(sasl.Users))
		if sasl.Authorizer {
			// The controller listener is PLAINTEXT: the broker reaches its controller as
			// User:ANONYMOUS there, which must be a super user; the SASL listener has no
			// anonymous clients.
			props += fmt.Sprintf(`authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:%s;User:ANONYMOUS
allow.everyone.if.no.acl.found=true
`, sasl.User)
		}
	}
	cfg := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "kafka-"+name+".log")

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	err := runJava(ctx, jars, dir, logFile, mainStorageTool, "format", "-t", k.ClusterID, "-c", cfg)
	cancel()
	if err != nil {
		b, _ := os.ReadFile(logFile)
		t.Fatalf("testenv: kafka %s: StorageTool format failed: %v\n%s", name, err, b)
	}
	formatTook := time.Since(start)

	k.Proc = startProcess(t, "kafka-"+name, jars, dir, mainKafka, cfg)
	k.waitReady()
	k.Proc.Startup = time.Since(start)
	t.Logf("testenv: kafka %s %q ready at %s in %s (storage format %s), log %s",
		d.Version, name, k.Bootstrap, k.Proc.Startup.Round(time.Millisecond), formatTook.Round(time.Millisecond), k.Proc.LogFile)
	return k
}

// extraUsers are the JAAS user_<name>="<password>" entries of users, sorted.
func extraUsers(users map[string]string) string {
	var out string
	for _, u := range slices.Sorted(maps.Keys(users)) {
		out += fmt.Sprintf(` user_%s="%s"`, u, users[u])
	}
	return out
}

func (k *Kafka) waitReady() {
	k.t.Helper()
	cl, err := kgo.NewClient(append(k.auth(), kgo.SeedBrokers(k.Bootstrap), kgo.RetryTimeout(2*time.Second))...)
	if err != nil {
		k.t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	err = k.Proc.waitFor(kafkaStartTimeout, 200*time.Millisecond, "metadata from "+k.Bootstrap, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		md, err := adm.BrokerMetadata(ctx)
		return err == nil && len(md.Brokers) > 0
	})
	if err != nil {
		k.t.Fatalf("testenv: kafka %s: %v", k.Name, err)
	}
}

// Stop shuts the broker down gracefully and waits.
func (k *Kafka) Stop() { k.t.Helper(); k.Proc.Stop() }

// Kill SIGKILLs the broker (simulates losing the cluster).
func (k *Kafka) Kill() { k.t.Helper(); k.Proc.Kill() }

// Restart starts the (stopped or killed) broker again with the same ports, config and data and
// waits until it serves metadata.
func (k *Kafka) Restart() {
	k.t.Helper()
	if exited, _ := k.Proc.Exited(); !exited {
		k.t.Fatalf("testenv: kafka %s: Restart while still running", k.Name)
	}
	start := time.Now()
	if err := k.Proc.start(k.jars, mainKafka, filepath.Join(k.Dir, "server.properties")); err != nil {
		k.t.Fatalf("testenv: kafka %s: restart: %v", k.Name, err)
	}
	k.waitReady()
	k.t.Logf("testenv: kafka %q restarted in %s", k.Name, time.Since(start).Round(time.Millisecond))
}

// Client returns a franz-go client for this cluster, closed at test cleanup.
func (k *Kafka) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(append(k.auth(), kgo.SeedBrokers(k.Bootstrap)), opts...)...)
	if err != nil {
		t.Fatalf("testenv: kafka %s: client: %v", k.Name, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// auth is how a franz-go client signs in to this cluster: nothing, or SASL/PLAIN.
func (k *Kafka) auth() []kgo.Opt {
	if k.SASL == nil {
		return nil
	}
	return []kgo.Opt{kgo.SASL(plain.Auth{User: k.SASL.User, Pass: k.SASL.Password}.AsMechanism())}
}

// ClientProps are a Java client's settings for this cluster's listener (security.protocol,
// sasl.mechanism, sasl.jaas.config); none for PLAINTEXT.
func (k *Kafka) ClientProps() map[string]string {
	if k.SASL == nil {
		return nil
	}
	return map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s";`, k.SASL.User, k.SASL.Password)}
}

// Admin returns a kadm client for this cluster, closed at test cleanup.
func (k *Kafka) Admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(k.Client(t))
}

// FetchCommitted is adm.FetchOffsets that rides out the group coordinator's
// retriable errors (COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
// NOT_COORDINATOR) until ctx ends: a freshly started broker answers those
// while __consumer_offsets is still being created or loaded, longer on a
// loaded machine than the client's own retries cover.
func FetchCommitted(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	for {
		r, err := adm.FetchOffsets(ctx, group)
		if err == nil || !kerr.IsRetriable(err) {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("%w (still retrying when %v)", err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ---------------------------------------------------------------------------------------------
// MirrorMaker 2

// MM2Options describe one active/passive MM2 setup (Source -> Target).
type MM2Options struct {
	Source, Target *Kafka
	SourceAlias    string // default "primary"
	TargetAlias    string // default "dr"
	// Policy is "identity" (IdentityReplicationPolicy, default) or "default" (DefaultReplicationPolicy).
	Policy string
	// OffsetSyncsLocation is "source" (MM2's default) or "target" (default here).
	OffsetSyncsLocation string
	// Topics is the topic regex list replicated Source -> Target; default "events.*,orders.*,users.*".
	Topics string
	// Extra properties, written last (so they override anything above). Keys are written as
	// given, e.g. "primary->dr.offset.lag.max" or "tasks.max".
	Extra map[string]string
}

func (o MM2Options) withDefaults() MM2Options {
	if o.SourceAlias == "" {
		o.SourceAlias = "primary"
	}
	if o.TargetAlias == "" {
		o.TargetAlias = "dr"
	}
	if o.Policy == "" {
		o.Policy = "identity"
	}
	if o.OffsetSyncsLocation == "" {
		o.OffsetSyncsLocation = "target"
	}
	if o.Topics == "" {
		o.Topics = "events.*,orders.*,users.*"
	}
	return o
}

// PolicyClass returns the Java class of the replication policy.
func (o MM2Options) PolicyClass() string {
	switch o.withDefaults().Policy {
	case "identity":
		return "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	case "default":
		return "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	default:
		return o.Policy // a class name
	}
}

// RemoteTopic is the target-side name of a replicated source topic under the policy.
func (o MM2Options) RemoteTopic(topic string) string {
	o = o.withDefaults()
	if o.Policy == "default" {
		return o.SourceAlias + "." + topic
	}
	return topic
}

// OffsetSyncsTopic returns the offset-syncs topic name and the cluster that holds it:
// mm2-offset-syncs.<target>.internal on the source (location=source), or
// mm2-offset-syncs.<source>.internal on the target (location=target).
func (o MM2Options) OffsetSyncsTopic() (string, *Kafka) {
	o = o.withDefaults()
	if o.OffsetSyncsLocation == "source" {
		return "mm2-offset-syncs." + o.TargetAlias + ".internal", o.Source
	}
	return "mm2-offset-syncs." + o.SourceAlias + ".internal", o.Target
}

// CheckpointsTopic is <source>.checkpoints.internal (always on the target).
func (o MM2Options) CheckpointsTopic() string {
	return o.withDefaults().SourceAlias + ".checkpoints.internal"
}

// mirrorCommon returns the connector-level settings shared by mm2.properties and the Connect
// connector configs (fast timings, RF 1).
func (o MM2Options) mirrorCommon() [][2]string {
	return [][2]string{
		{"replication.policy.class", o.PolicyClass()},
		{"offset-syncs.topic.location", o.OffsetSyncsLocation},
		{"sync.group.offsets.enabled", "true"},
		{"emit.checkpoints.interval.seconds", "1"},
		{"sync.group.offsets.interval.seconds", "1"},
		{"emit.heartbeats.interval.seconds", "1"},
		{"refresh.topics.interval.seconds", "2"},
		{"refresh.groups.interval.seconds", "2"},
		{"sync.topic.acls.enabled", "false"},
		{"replication.factor", "1"},
		{"offset-syncs.topic.replication.factor", "1"},
		{"checkpoints.topic.replication.factor", "1"},
		{"heartbeats.topic.replication.factor", "1"},
	}
}

// MM2Properties renders the dedicated-mode mm2.properties for opts (see mm2.md §6.3).
func MM2Properties(opts MM2Options) string {
	o := opts.withDefaults()
	src, tgt := o.SourceAlias, o.TargetAlias
	var b strings.Builder
	w := func(k, v string) { fmt.Fprintf(&b, "%s = %s\n", k, v) }
	b.WriteString("# testenv: MirrorMaker 2 dedicated mode, active/passive\n")
	w("clusters", src+", "+tgt)
	w(src+".bootstrap.servers", o.Source.Bootstrap)
	w(tgt+".bootstrap.servers", o.Target.Bootstrap)
	w(src+"->"+tgt+".enabled", "true")
	w(src+"->"+tgt+".topics", o.Topics)
	// The reverse flow is disabled, but its herder still runs MirrorHeartbeatConnector
	// (emit.heartbeats.enabled defaults to true), which writes heartbeats into the SOURCE
	// cluster's `heartbeats` topic; the forward flow replicates it to the target as
	// `<src>.heartbeats`.
	w(tgt+"->"+src+".enabled", "false")
	for _, kv := range o.mirrorCommon() {
		w(kv[0], kv[1])
	}
	// offset.flush.interval.ms is a worker setting: dedicated mode only takes it with the
	// herder's target-alias prefix. <tgt>. covers src->tgt, <src>. the tgt->src heartbeat herder.
	w(tgt+".offset.flush.interval.ms", "1000")
	w(src+".offset.flush.interval.ms", "1000")
	w("offset.storage.replication.factor", "1")
	w("status.storage.replication.factor", "1")
	w("config.storage.replication.factor", "1")
	w("tasks.max", "1")
	// All Kafka plugins ship ServiceLoader manifests; skipping the reflective classpath scan
	// saves seconds of MM2 start-up (it scans once per herder otherwise).
	// Like offset.flush.interval.ms, the per-herder worker config only takes it alias-prefixed.
	w("plugin.discovery", "service_load")
	w(tgt+".plugin.discovery", "service_load")
	w(src+".plugin.discovery", "service_load")
	keys := make([]string, 0, len(o.Extra))
	for k := range o.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		b.WriteString("# Extra\n")
	}
	for _, k := range keys {
		w(k, o.Extra[k])
	}
	return b.String()
}

// StartMM2Dedicated writes mm2.properties and starts org.apache.kafka.connect.mirror.MirrorMaker
// (dedicated mode, all herders in one JVM), waiting for "Kafka MirrorMaker started" in its log.
// Connectors and tasks come up asynchronously after that; tests wait for data, not for status.
// It runs the MirrorMaker 2 of opts.Target's KafkaDist.
func StartMM2Dedicated(t testing.TB, opts MM2Options) *Process {
	t.Helper()
	o := opts.withDefaults()
	if o.Source == nil || o.Target == nil {
		t.Fatal("testenv: StartMM2Dedicated needs Source and Target")
	}
	jars := o.Target.Dist.MirrorJars(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(cfg, []byte(MM2Properties(o)), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := startProcess(t, "mm2", jars, dir, mainMirrorMaker, cfg)
	if err := p.waitFor(mm2StartTimeout, 200*time.Millisecond, `"Kafka MirrorMaker started"`, func() bool {
		return p.LogContains("Kafka MirrorMaker started")
	}); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	p.Startup = time.Since(start)
	t.Logf("testenv: mm2 %s dedicated (%s->%s, policy=%s, offset-syncs=%s) started in %s, config %s, log %s",
		o.Target.Dist.Mirror, o.SourceAlias, o.TargetAlias, o.Policy, o.OffsetSyncsLocation, p.Startup.Round(time.Millisecond), cfg, p.LogFile)
	return p
}

// ---------------------------------------------------------------------------------------------
// Kafka Connect (distributed) running the mirror connectors

// Connect is a single Kafka Connect distributed worker whose bootstrap cluster is the DR
// (target) cluster, with ByteArrayConverter for keys, values and headers.
type Connect struct {
	URL     string // http://127.0.0.1:<port>
	Target  *Kafka
	Proc    *Process
	GroupID string
	// Internal topics on Target.
	ConfigTopic, OffsetTopic, StatusTopic string
}

// StartConnect starts a Connect distributed worker against target and waits until its REST API
// answers GET /connectors. worker holds worker properties written last, overriding the ones
// above (e.g. exactly.once.source.support=enabled for MirrorMaker 2 with exactly-once support).
// The worker runs the Connect and MirrorMaker 2 of target's KafkaDist.
func StartConnect(t testing.TB, target *Kafka, worker ...map[string]string) *Connect {
	t.Helper()
	jars := target.Dist.MirrorJars(t)
	dir := t.TempDir()
	port := FreePort(t)
	c := &Connect{
		URL:         fmt.Sprintf("http://127.0.0.1:%d", port),
		Target:      target,
		GroupID:     "drconsole-connect",
		ConfigTopic: "connect-configs",
		OffsetTopic: "connect-offsets",
		StatusTopic: "connect-status",
	}
	props := fmt.Sprintf(`# testenv: Kafka Connect distributed worker on cluster %q
bootstrap.servers=%s
group.id=%s
listeners=http://127.0.0.1:%d
rest.advertised.host.name=127.0.0.1
rest.advertised.port=%[4]d
rest.advertised.listener=http
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
header.converter=org.apache.kafka.connect.converters.ByteArrayConverter
config.storage.topic=%s
offset.storage.topic=%s
status.storage.topic=%s
config.storage.replication.factor=1
offset.storage.replication.factor=1
offset.storage.partitions=5
status.storage.replication.factor=1
status.storage.partitions=1
offset.flush.interval.ms=1000
scheduled.rebalance.max.delay.ms=0
plugin.discovery=service_load
`, target.Name, target.Bootstrap, c.GroupID, port, c.ConfigTopic, c.OffsetTopic, c.StatusTopic)
	// The worker's own clients and the ones it gives connectors (producer, consumer, admin).
	for _, prefix := range []string{"", "producer.", "consumer.", "admin."} {
		for _, k := range slices.Sorted(maps.Keys(target.ClientProps())) {
			props += prefix + k + "=" + target.ClientProps()[k] + "\n"
		}
	}
	for _, w := range worker {
		for _, k := range slices.Sorted(maps.Keys(w)) {
			props += k + "=" + w[k] + "\n"
		}
	}
	cfg := filepath.Join(dir, "connect-distributed.properties")
	if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.Proc = startProcess(t, "connect", jars, dir, mainConnectDistrib, cfg)
	hc := &http.Client{Timeout: 3 * time.Second}
	if err := c.Proc.waitFor(connectStartTimeout, 250*time.Millisecond, "REST "+c.URL+"/connectors", func() bool {
		resp, err := hc.Get(c.URL + "/connectors")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	c.Proc.Startup = time.Since(start)
	t.Logf("testenv: connect worker ready at %s in %s, log %s", c.URL, c.Proc.Startup.Round(time.Millisecond), c.Proc.LogFile)
	return c
}

// MirrorConnectorConfigs returns the REST configs of MirrorSourceConnector,
// MirrorCheckpointConnector and MirrorHeartbeatConnector for opts, keyed by connector name
// (the names equal the class simple names, as in dedicated mode, so that Connect offsets keys
// look the same: ["MirrorSourceConnector", {...}]).
//
// Heartbeats on a Connect cluster: MirrorHeartbeatConnector with source=primary,
// target=dr emits Heartbeat{source: primary, target: dr} through the WORKER's producer, i.e.
// into `heartbeats` on the cluster the worker runs against (DR here; the connector creates
// that topic via target.cluster.bootstrap.servers). That only proves the worker can write to
// DR. Nothing writes `heartbeats` on primary in this setup, so DR gets NO `primary.heartbeats`
// (dedicated MM2 gets it from its reverse dr->primary herder, which writes
// Heartbeat{source: dr, target: primary} into primary's `heartbeats`, replicated to DR as
// `primary.heartbeats`). Verified against Kafka 4.3.1 in mm2_e2e_test.go.
func MirrorConnectorConfigs(opts MM2Options) map[string]map[string]string {
	o := opts.withDefaults()
	base := func(class string) map[string]string {
		m := map[string]string{
			"connector.class":                  "org.apache.kafka.connect.mirror." + class,
			"tasks.max":                        "1",
			"source.cluster.alias":             o.SourceAlias,
			"target.cluster.alias":             o.TargetAlias,
			"source.cluster.bootstrap.servers": o.Source.Bootstrap,
			"target.cluster.bootstrap.servers": o.Target.Bootstrap,
			"key.converter":                    "org.apache.kafka.connect.converters.ByteArrayConverter",
			"value.converter":                  "org.apache.kafka.connect.converters.ByteArrayConverter",
			"header.converter":                 "org.apache.kafka.connect.converters.ByteArrayConverter",
		}
		for _, kv := range o.mirrorCommon() {
			m[kv[0]] = kv[1]
		}
		for k, v := range o.Source.ClientProps() {
			m["source.cluster."+k] = v
		}
		for k, v := range o.Target.ClientProps() {
			m["target.cluster."+k] = v
		}
		return m
	}
	src := base("MirrorSourceConnector")
	src["topics"] = o.Topics
	cp := base("MirrorCheckpointConnector")
	cp["topics"] = o.Topics
	hb := base("MirrorHeartbeatConnector")
	all := map[string]map[string]string{
		"MirrorSourceConnector":     src,
		"MirrorCheckpointConnector": cp,
		"MirrorHeartbeatConnector":  hb,
	}
	for name, cfg := range all {
		for k, v := range o.Extra {
			cfg[k] = v
		}
		all[name] = cfg
	}
	return all
}

// ConnectorStatus is GET /connectors/{name}/status.
type ConnectorStatus struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
	Type string `json:"type"`
}

// Running reports whether the connector and at least one task run, and no task is not RUNNING.
func (s ConnectorStatus) Running() bool {
	if s.Connector.State != "RUNNING" || len(s.Tasks) == 0 {
		return false
	}
	for _, tk := range s.Tasks {
		if tk.State != "RUNNING" {
			return false
		}
	}
	return true
}

// Status fetches a connector's status.
func (c *Connect) Status(ctx context.Context, name string) (ConnectorStatus, error) {
	var s ConnectorStatus
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/connectors/"+name+"/status", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("GET status %s: %s: %s", name, resp.Status, b)
	}
	return s, json.Unmarshal(b, &s)
}

// PutConnectorConfig creates or updates a connector (PUT /connectors/{name}/config).
func (c *Connect) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.URL+"/connectors/"+name+"/config", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT /connectors/%s/config: %s: %s", name, resp.Status, b)
	}
	return nil
}

// CreateMirrorConnectors PUTs the three mirror connectors (see MirrorConnectorConfigs) and waits
// until each connector and all its tasks are RUNNING. MirrorCheckpointConnector only gets a task
// once it knows a consumer group with offsets on a replicated topic, so commit one before.
func (c *Connect) CreateMirrorConnectors(t testing.TB, opts MM2Options) {
	t.Helper()
	o := opts.withDefaults()
	if o.Source == nil || o.Target == nil {
		t.Fatal("testenv: CreateMirrorConnectors needs Source and Target")
	}
	start := time.Now()
	cfgs := MirrorConnectorConfigs(o)
	names := []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.PutConnectorConfig(ctx, name, cfgs[name])
		cancel()
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
	}
	for _, name := range names {
		var last ConnectorStatus
		var lastErr error
		err := c.Proc.waitFor(connectStartTimeout, 500*time.Millisecond, name+" RUNNING", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			last, lastErr = c.Status(ctx, name)
			return lastErr == nil && last.Running()
		})
		if err != nil {
			t.Fatalf("testenv: %v\nlast status: %+v (err %v)", err, last, lastErr)
		}
	}
	t.Logf("testenv: mirror connectors %v RUNNING after %s", names, time.Since(start).Round(time.Millisecond))
}

// ErrTimeout is returned by Eventually when the deadline passes.
var ErrTimeout = errors.New("testenv: timed out")

// Eventually calls f every interval until it returns nil or timeout passes, and returns f's
// last error wrapped in ErrTimeout.
func Eventually(timeout, interval time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %s: %w", ErrTimeout, timeout, err)
		}
		time.Sleep(interval)
	}
}
