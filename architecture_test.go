package main

// The rules of ARCHITECTURE.md, checked: who may import whom and a package
// doc on every package, and ARCHITECTURE.md's import table as go list
// sees it. The effect boundary has its own test beside the
// effects (runbook/internal/effect/boundary_test.go), thin handlers theirs
// (handlers/thin_test.go).

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/drconsole/drconsole"

type listedPackage struct {
	ImportPath string
	Dir        string
	Doc        string
	Imports    []string
	GoFiles    []string
}

// listPackages is `go list -json ./...` (non-test files only).
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// ours returns the project packages p imports, relative to the module.
func ours(p listedPackage) []string {
	var out []string
	for _, imp := range p.Imports {
		if imp == module || strings.HasPrefix(imp, module+"/") {
			out = append(out, rel(imp))
		}
	}
	return out
}

// TestLayerImports holds the import rules of ARCHITECTURE.md: the lower a
// room, the less it may know.
func TestLayerImports(t *testing.T) {
	// room -> the only packages of ours it may import.
	allowed := map[string][]string{
		"model":       {},
		"safefile":    {},
		"config":      {"model", "safefile"},
		"mm2":         {"model"},
		"storage":     {"model"},
		"audit":       {"model", "storage"},
		"connect":     {"model"},
		"clusterlink": {"model", "config"},
		"kafka":       {"model", "mm2", "config"},
		"flink":       {"model", "config", "flink/s3", "safefile"},
		"notify":      {"model", "audit", "config", "flowstate", "storage"},
		"flowstate":   {"model", "config", "mm2", "clusterlink", "storage"},
		"kube":        {"model", "config"},
		"pages":       {"model", "storage"},
		"report":      {"model", "config", "storage"},
		"views":       {"model"},
	}
	// room -> packages (or prefixes) of ours or others it must never import.
	forbidden := map[string][]string{
		// handlers names the monitor, the catalog and the plan kinds through
		// its own interfaces (handlers/services*.go); cli hands the concrete
		// ones in.
		"handlers":      {"demo", "github.com/twmb/franz-go", "runbook/internal/effect", "k8s.io/client-go", "runbook/failover", "runbook/failback", "runbook/switchover", "monitor", "catalog", "translation"},
		"handlers/form": {"monitor", "catalog", "translation", "runbook/failover", "runbook/failback", "runbook/switchover"},
		"web":           {"demo", "github.com/twmb/franz-go", "runbook/internal/effect", "k8s.io/client-go", "monitor", "catalog", "translation", "runbook/failover", "runbook/failback", "runbook/switchover"},
	}
	checked := 0
	for _, p := range listPackages(t) {
		room := rel(p.ImportPath)
		if !strings.HasPrefix(room, "scale") && slices.Contains(ours(p), "scale") {
			t.Errorf("%s imports scale, the measuring rig; nothing in the console may", room)
		}
		if ok, has := allowed[room]; has {
			checked++
			for _, imp := range ours(p) {
				if !slices.Contains(ok, imp) {
					t.Errorf("%s imports %s; it may import only %v", room, imp, ok)
				}
			}
		}
		if bad, has := forbidden[room]; has {
			checked++
			for _, imp := range p.Imports {
				for _, b := range bad {
					name := rel(imp)
					if name == b || strings.HasPrefix(name, b+"/") || strings.HasPrefix(imp, b) {
						t.Errorf("%s imports %s, which it must not", room, imp)
					}
				}
			}
		}
	}
	if checked != len(allowed)+len(forbidden) {
		t.Errorf("checked %d rooms, want %d: a room was renamed; update this test and ARCHITECTURE.md", checked, len(allowed)+len(forbidden))
	}
}

// TestPackageDocs: a newcomer reads what a package is for before its code.
func TestPackageDocs(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.HasPrefix(rel(p.ImportPath), "testenv") {
			continue // build-tagged test suite, no non-test package code
		}
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no package doc comment", rel(p.ImportPath))
		}
	}
}

// importGraph is `go list -deps` of pkgs: every package they reach (the
// standard library and modules included) with its direct imports.
func importGraph(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	g := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		g[f[0]] = f[1:]
	}
	return g
}

// reach is every package from reaches in g, each with the chain that got
// there; it does not look into the packages of ours named in through.
func reach(g map[string][]string, from string, through []string) map[string]string {
	seen := map[string]string{from: rel(from)}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != from && strings.HasPrefix(p, module+"/") && slices.ContainsFunc(through, func(s string) bool {
			return rel(p) == s || strings.HasPrefix(rel(p), s+"/")
		}) {
			continue
		}
		for _, imp := range g[p] {
			if _, ok := seen[imp]; !ok {
				seen[imp] = seen[p] + " → " + imp
				queue = append(queue, imp)
			}
		}
	}
	return seen
}

// TestViewsAndHandlersReachNoClients: the pages, the handlers and the
// forms that feed them, the server, the runbook's engine and the flow
// snapshots the pages show (flowstate) reach neither Kubernetes' client-go
// nor franz-go, not even through other packages: handlers name the
// monitor, the catalog and the plan kinds through interfaces of their own
// (handlers/services*.go), which cli fills with the concrete services.
func TestViewsAndHandlersReachNoClients(t *testing.T) {
	clients := []string{"k8s.io/", "github.com/twmb/franz-go/"}
	rooms := []string{"views", "flowstate", "handlers/form", "runbook", "handlers", "web"}
	g := importGraph(t, "./views", "./flowstate", "./handlers", "./handlers/form", "./runbook", "./web")
	for _, room := range rooms {
		for p, chain := range reach(g, module+"/"+room, nil) {
			if slices.ContainsFunc(clients, func(c string) bool { return strings.HasPrefix(p, c) }) {
				t.Errorf("%s reaches %s: %s", room, p, chain)
			}
		}
	}
}

// TestArchitectureTable: the "imports of ours" column of ARCHITECTURE.md's
// rooms table is what go list says each room's package imports, and every
// top-level package has a row. A note in parentheses is not part of the
// list.
func TestArchitectureTable(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][]string{}
	for line := range strings.Lines(string(doc)) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue // not a room row
		}
		room := strings.TrimSuffix(strings.Trim(strings.TrimSpace(cells[1]), "`"), "/")
		if room == "main.go" {
			room = "."
		}
		table[room] = []string{}
		for _, name := range strings.Split(notes.ReplaceAllString(cells[3], ""), ",") {
			if name = strings.TrimSpace(name); name != "" && name != "none" {
				table[room] = append(table[room], name)
			}
		}
	}
	for _, p := range listPackages(t) {
		room := rel(p.ImportPath)
		want, has := table[room]
		switch {
		case !has && !strings.Contains(room, "/"):
			t.Errorf("ARCHITECTURE.md has no row for %s", room)
		case has:
			got := ours(p)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("ARCHITECTURE.md says %s imports %s; go list: %s", room, strings.Join(want, ", "), strings.Join(got, ", "))
			}
			delete(table, room)
		}
	}
	for room := range table {
		t.Errorf("ARCHITECTURE.md has a row for %s, which is no package", room)
	}
}

// notes are the parenthesised remarks in a table cell.
var notes = regexp.MustCompile(`\([^)]*\)`)
