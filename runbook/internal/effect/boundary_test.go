package effect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The effect boundary, checked on the code rather than trusted: no package
// of the module but this one changes anything outside the console. It
// type-checks every non-test Go file of the module against the compiler's
// export data (go list -export) and fails, naming file:line, on
//   - a franz-go write: kgo produce, commit or transaction calls, kadm
//     calls that create, delete, alter, commit or leave, and the raw kmsg
//     requests that do the same;
//   - a Kubernetes write: client-go's dynamic ResourceInterface Create,
//     Update, Patch, Apply, Delete (and their status twins), the verbs of
//     a raw rest.RESTClient;
//   - an outgoing HTTP request that is not a GET: http.NewRequest(WithContext)
//     with any method but a constant "GET" (a method the checker cannot
//     read is refused too), http.Post, http.PostForm and their
//     (*http.Client) twins. The console's own web server is not a client
//     and builds no requests, so only outgoing requests count;
//   - a process started with os/exec (the switchover's fence command,
//     effect.RunCommand, is the one the console runs);
//   - a call of flink.Rewrite (it writes a new savepoint: files, or S3
//     objects through minio-go, which the checks above do not see) but from
//     the functions in rewriteCallers;
//   - an import of runbook/internal/effect from outside runbook/ (the
//     compiler refuses it already; this says why).
//
// Allowed, each for its reason:
//   - runbook/internal/effect: the door itself;
//   - demo/: the simulated outside world (sandbox clusters, Connect,
//     Cluster Linking and Flink stand-ins); it writes to itself;
//   - testenv/: drives real clusters and JobManagers for end-to-end tests,
//     never linked into the console;
//   - scale/: the scale rig writes its own in-process clusters and signs in
//     to the console it started; nothing in the console imports it;
//   - test files (never parsed here) and test-helper packages (a last path
//     element ending in "test", such as storage/storagetest): compiled only
//     into tests;
//   - notify/: webhooks and Slack messages to people about what the audit
//     log already recorded (it reads the log; it changes nothing managed);
//   - the functions in allowedFuncs, wherever they live.

const modulePath = "github.com/drconsole/drconsole"

var effectPath = modulePath + "/runbook/internal/effect"

// allowed reports whether pkg may change the outside world, and why.
func allowed(pkg string) (bool, string) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, modulePath), "/")
	switch {
	case pkg == effectPath:
		return true, "the effect boundary"
	case rel == "demo" || strings.HasPrefix(rel, "demo/"):
		return true, "the simulated outside world"
	case rel == "testenv" || strings.HasPrefix(rel, "testenv/"):
		return true, "end-to-end test environment"
	case rel == "scale" || strings.HasPrefix(rel, "scale/"):
		return true, "the scale rig"
	case strings.HasSuffix(filepath.Base(rel), "test"):
		return true, "test helpers"
	case rel == "notify":
		// POSTs messages to people (webhooks, Slack) about what the audit
		// log already recorded; it changes no cluster, group or job.
		return true, "notifications"
	}
	return false, ""
}

// allowedFuncs may send a mutating request, each for its reason; the key
// is the package path relative to the module, a dot and the function name.
var allowedFuncs = map[string]string{
	// POSTs the audit chain's head to the operator's witness URL: it
	// publishes the audit log itself and changes no cluster, group or job
	// (it cannot demand an audit record: it is the audit's own proof).
	"cli.writeAnchor": "audit anchor",
}

// rewriteCallers may call flink.Rewrite besides this package (whose
// RewriteSavepoint is the runbook's, audited), each for its reason.
var rewriteCallers = map[string]string{
	// drconsole savepoint rewrite: an operator writes a new savepoint from
	// files they name, like cp; it changes no cluster, group or job.
	"cli.savepointRewrite": "the operator's own local rewrite",
}

var flinkPath = modulePath + "/flink"

var (
	kgoPath  = "github.com/twmb/franz-go/pkg/kgo"
	kadmPath = "github.com/twmb/franz-go/pkg/kadm"
	kmsgPath = "github.com/twmb/franz-go/pkg/kmsg"
	dynPath  = "k8s.io/client-go/dynamic"
	restPath = "k8s.io/client-go/rest"

	// Methods of *kgo.Client that write records, commit offsets or run
	// transactions.
	kgoWrites = []string{"Produce", "ProduceSync", "TryProduce", "CommitRecords", "CommitUncommittedOffsets",
		"CommitMarkedOffsets", "CommitOffsets", "CommitOffsetsSync", "BeginTransaction", "EndTransaction",
		"EndAndBeginTransaction", "LeaveGroup", "LeaveGroupContext"}
	// Methods of *kadm.Client that change the cluster (the Validate*
	// variants only ask, and are not listed).
	kadmWrites = []string{"AlterAllReplicaLogDirs", "AlterBrokerConfigs", "AlterBrokerConfigsState",
		"AlterBrokerReplicaLogDirs", "AlterClientQuotas", "AlterPartitionAssignments", "AlterShareGroupOffsets",
		"AlterTopicConfigs", "AlterTopicConfigsState", "AlterUserSCRAMs", "CommitAllOffsets", "CommitAllOffsetsByID",
		"CommitOffsets", "CommitOffsetsByID", "CreateACLs", "CreateDelegationToken", "CreatePartitions", "CreateTopic",
		"CreateTopics", "DeleteACLs", "DeleteGroup", "DeleteGroups", "DeleteOffsets", "DeleteRecords",
		"DeleteShareGroupOffsets", "DeleteTopic", "DeleteTopics", "ElectLeaders", "ExpireDelegationToken",
		"LeaveGroup", "RenewDelegationToken", "UpdateFeatures", "UpdatePartitions", "WriteTxnMarkers"}
	// Methods of client-go's dynamic ResourceInterface that change a
	// Kubernetes resource, and the verbs of its raw rest.RESTClient.
	dynWrites  = []string{"Create", "Update", "UpdateStatus", "Delete", "DeleteCollection", "Patch", "Apply", "ApplyStatus"}
	restWrites = []string{"Post", "Put", "Patch", "Delete", "Verb"}
	// Raw kmsg requests that change the cluster; using the type or its
	// constructors (NewX, NewPtrX) counts.
	kmsgWrites = []string{"ProduceRequest", "OffsetCommitRequest", "TxnOffsetCommitRequest", "CreateTopicsRequest",
		"DeleteTopicsRequest", "DeleteRecordsRequest", "CreatePartitionsRequest", "AlterConfigsRequest",
		"IncrementalAlterConfigsRequest", "DeleteGroupsRequest", "OffsetDeleteRequest", "CreateACLsRequest",
		"DeleteACLsRequest", "AlterPartitionAssignmentsRequest", "ElectLeadersRequest", "AlterClientQuotasRequest",
		"AlterUserSCRAMCredentialsRequest", "AlterReplicaLogDirsRequest", "AddPartitionsToTxnRequest",
		"AddOffsetsToTxnRequest", "EndTxnRequest", "WriteTxnMarkersRequest", "LeaveGroupRequest",
		"CreateDelegationTokenRequest", "RenewDelegationTokenRequest", "ExpireDelegationTokenRequest",
		"UpdateFeaturesRequest", "UnregisterBrokerRequest", "AlterShareGroupOffsetsRequest",
		"DeleteShareGroupOffsetsRequest"}
)

type listedPackage struct {
	ImportPath   string
	Dir          string
	Export       string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Module       *struct{ Path string }
}

// listModule runs go list over the whole module with export data.
func listModule(t *testing.T) (ours []listedPackage, exports map[string]string) {
	t.Helper()
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-export", "-test=false", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports = map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == modulePath {
			ours = append(ours, p)
		}
	}
	if len(ours) < 10 {
		t.Fatalf("go list found %d packages of the module: not the whole module", len(ours))
	}
	return ours, exports
}

func TestEffectBoundary(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	ours, exports := listModule(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var violations []string
	checked := 0
	for _, p := range ours {
		// (c) Only the runbook may import the door.
		if p.ImportPath != modulePath+"/runbook" && !strings.HasPrefix(p.ImportPath, modulePath+"/runbook/") {
			for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
				if slices.Contains(list, effectPath) {
					violations = append(violations, fmt.Sprintf("%s imports %s: only runbook/ may", p.ImportPath, effectPath))
				}
			}
		}
		if ok, _ := allowed(p.ImportPath); ok || len(p.GoFiles) == 0 {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", p.ImportPath, err)
		}
		checked++
		violations = append(violations, findWrites(fset, p.ImportPath, files, info)...)
	}
	if checked == 0 {
		t.Fatal("no package was checked")
	}
	slices.Sort(violations)
	for _, v := range violations {
		t.Error(v)
	}
	if len(violations) > 0 {
		t.Log("every change outside the console goes through runbook/internal/effect, behind an audit.Written")
	}
}

// findWrites lists the franz-go writes and mutating HTTP requests in files.
func findWrites(fset *token.FileSet, pkgPath string, files []*ast.File, info *types.Info) []string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkgPath, modulePath), "/")
	var out []string
	var exempt, rewriters []ast.Node // the bodies of allowedFuncs, of rewriteCallers
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && allowedFuncs[rel+"."+fd.Name.Name] != "" {
				exempt = append(exempt, fd)
			}
			if fd, ok := d.(*ast.FuncDecl); ok && rewriteCallers[rel+"."+fd.Name.Name] != "" {
				rewriters = append(rewriters, fd)
			}
		}
	}
	inside := func(n ast.Node, bodies []ast.Node) bool {
		return slices.ContainsFunc(bodies, func(e ast.Node) bool { return n.Pos() >= e.Pos() && n.Pos() < e.End() })
	}
	report := func(n ast.Node, format string, args ...any) {
		if !inside(n, exempt) {
			out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
		}
	}
	for id, obj := range info.Uses {
		if obj.Pkg() == nil {
			continue
		}
		switch o := obj.(type) {
		case *types.Func:
			recv := o.Type().(*types.Signature).Recv()
			switch path, name := o.Pkg().Path(), o.Name(); {
			case path == kgoPath && recv != nil && slices.Contains(kgoWrites, name):
				report(id, "franz-go write kgo.(*Client).%s outside runbook/internal/effect", name)
			case path == kadmPath && recv != nil && slices.Contains(kadmWrites, name):
				report(id, "franz-go write kadm.(*Client).%s outside runbook/internal/effect", name)
			case path == kmsgPath && recv == nil && isKmsgWriteConstructor(name):
				report(id, "raw Kafka write request kmsg.%s outside runbook/internal/effect", name)
			case path == dynPath && recv != nil && slices.Contains(dynWrites, name):
				report(id, "Kubernetes write dynamic.ResourceInterface.%s outside runbook/internal/effect", name)
			case path == restPath && recv != nil && slices.Contains(restWrites, name):
				report(id, "Kubernetes write rest.(*RESTClient).%s outside runbook/internal/effect", name)
			case path == "os/exec" && recv == nil && (name == "Command" || name == "CommandContext"):
				report(id, "a process started with os/exec.%s (an operator's fence command) outside runbook/internal/effect", name)
			case path == "net/http" && (name == "Post" || name == "PostForm"):
				report(id, "outgoing HTTP %s (a mutating request) outside runbook/internal/effect", name)
			case path == flinkPath && recv == nil && name == "Rewrite" && !inside(id, rewriters):
				report(id, "savepoint write flink.Rewrite outside runbook/internal/effect and rewriteCallers")
			}
		case *types.TypeName:
			if o.Pkg().Path() == kmsgPath && slices.Contains(kmsgWrites, o.Name()) {
				report(id, "raw Kafka write request kmsg.%s outside runbook/internal/effect", o.Name())
			}
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
			if !ok {
				return true
			}
			fn, ok := info.Uses[sel.Sel].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "net/http" {
				return true
			}
			var method ast.Expr
			switch fn.Name() {
			case "NewRequest":
				method = call.Args[0]
			case "NewRequestWithContext":
				method = call.Args[1]
			default:
				return true
			}
			tv := info.Types[method]
			if tv.Value == nil || tv.Value.Kind() != constant.String {
				report(call, "outgoing HTTP request with a method that is not a constant GET, outside runbook/internal/effect")
			} else if m := constant.StringVal(tv.Value); m != "GET" {
				report(call, "outgoing HTTP %s request (mutating) outside runbook/internal/effect", m)
			}
			return true
		})
	}
	return out
}

func isKmsgWriteConstructor(name string) bool {
	for _, w := range kmsgWrites {
		if name == "New"+w || name == "NewPtr"+w {
			return true
		}
	}
	return false
}

// The checker itself: it must see what it is meant to refuse, in a package
// that is not allowed to.
func TestFindWritesSeesForbiddenCalls(t *testing.T) {
	src := `package p

import (
	"context"
	"net/http"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

func f(ctx context.Context, cl *kgo.Client, method string) {
	cl.ProduceSync(ctx, &kgo.Record{})
	kadm.NewClient(cl).CommitOffsets(ctx, "g", kadm.Offsets{})
	_ = kmsg.NewPtrOffsetCommitRequest()
	http.NewRequestWithContext(ctx, http.MethodPut, "http://x", nil)
	http.NewRequest(method, "http://x", nil)
	http.Post("http://x", "", nil)
	http.NewRequest(http.MethodGet, "http://x", nil) // a read: fine
	kadm.NewClient(cl).ListTopics(ctx)              // a read: fine
}

func writeAnchor(ctx context.Context) {
	http.NewRequestWithContext(ctx, http.MethodPost, "http://witness", nil) // cli's may; this package's may not
}

func k(ctx context.Context, r dynamic.ResourceInterface) {
	r.Patch(ctx, "n", types.MergePatchType, nil, metav1.PatchOptions{})
	r.Get(ctx, "n", metav1.GetOptions{}) // a read: fine
}
`
	got := checkSample(t, "p", src)
	want := []string{"p.go:16:5: franz-go write kgo.(*Client).ProduceSync", "p.go:17:21: franz-go write kadm.(*Client).CommitOffsets",
		"p.go:18:11: raw Kafka write request kmsg.NewPtrOffsetCommitRequest", "p.go:19:2: outgoing HTTP PUT request",
		"p.go:20:2: outgoing HTTP request with a method that is not a constant GET", "p.go:21:7: outgoing HTTP Post",
		"p.go:27:2: outgoing HTTP POST request", "p.go:31:4: Kubernetes write dynamic.ResourceInterface.Patch"}
	if len(got) != len(want) {
		t.Fatalf("found %d, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if ok, _ := allowed(modulePath + "/kafka"); ok {
		t.Error("kafka is allowed to write")
	}
	for _, p := range []string{effectPath, modulePath + "/demo", modulePath + "/testenv", modulePath + "/scale", modulePath + "/storage/storagetest"} {
		if ok, why := allowed(p); !ok || why == "" {
			t.Errorf("%s not allowed", p)
		}
	}
}

// A switchover's fence: ACL writes and the operator's fence command run
// only here; reading ACLs is fine anywhere.
func TestFindWritesSeesFenceCalls(t *testing.T) {
	src := `package p

import (
	"context"
	"os/exec"

	"github.com/twmb/franz-go/pkg/kadm"
)

func f(ctx context.Context, adm *kadm.Client, b *kadm.ACLBuilder) {
	adm.CreateACLs(ctx, b)
	adm.DeleteACLs(ctx, b)
	adm.DescribeACLs(ctx, b) // a read: fine
	exec.CommandContext(ctx, "fence.sh")
	exec.Command("fence.sh")
}
`
	got := checkSample(t, "p", src)
	want := []string{"p.go:11:6: franz-go write kadm.(*Client).CreateACLs", "p.go:12:6: franz-go write kadm.(*Client).DeleteACLs",
		"p.go:14:7: a process started with os/exec.CommandContext", "p.go:15:7: a process started with os/exec.Command"}
	if len(got) != len(want) {
		t.Fatalf("found %d, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// checkSample type-checks src as the package rel of the module and returns
// what findWrites reports in it, sorted.
func checkSample(t *testing.T, rel, src string) []string {
	t.Helper()
	_, exports := listModule(t)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	if _, err := (&types.Config{Importer: imp}).Check(rel, fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := findWrites(fset, modulePath+"/"+rel, []*ast.File{f}, info)
	slices.Sort(got)
	return got
}

// A savepoint rewrite is a write: only this package and rewriteCallers
// (by package and function) may call flink.Rewrite; flink.CheckRewrite
// (the dry run) writes nothing.
func TestFindWritesSeesRewriteCalls(t *testing.T) {
	src := `package cli

import (
	"context"

	"github.com/drconsole/drconsole/flink"
)

func savepointRewrite(ctx context.Context, req flink.RewriteRequest) {
	flink.Rewrite(ctx, req) // the CLI's own: fine
}

func other(ctx context.Context, req flink.RewriteRequest) {
	flink.Rewrite(ctx, req)
	flink.CheckRewrite(ctx, req) // a dry run: fine
}
`
	want := []string{"p.go:14:8: savepoint write flink.Rewrite"}
	for rel, want := range map[string][]string{"cli": want, "catalog": {"p.go:10:8: savepoint write flink.Rewrite", want[0]}} {
		got := checkSample(t, rel, src)
		if len(got) != len(want) {
			t.Errorf("as package %s: found %d, want %d:\n%s", rel, len(got), len(want), strings.Join(got, "\n"))
			continue
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("as package %s: %q, want %q", rel, got[i], want[i])
			}
		}
	}
}
