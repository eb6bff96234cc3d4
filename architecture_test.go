package main

// The rules of ARCHITECTURE.md, checked: who may import whom and a package
// doc on every package. The effect boundary has its own test beside the
// effects (failover/internal/effect/boundary_test.go), thin handlers theirs
// (handlers/thin_test.go).

import (
	"bytes"
	"encoding/json"
	"os/exec"
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
		"notify":      {"model", "audit", "config", "monitor", "storage"},
		"kube":        {"model", "config"},
		"pages":       {"model", "storage"},
		"report":      {"model", "config", "storage"},
	}
	// room -> packages (or prefixes) of ours or others it must never import.
	forbidden := map[string][]string{
		"handlers": {"demo", "github.com/twmb/franz-go", "failover/internal/effect", "k8s.io/client-go"},
		"views":    {"storage", "kafka", "kube", "demo", "github.com/twmb/franz-go", "failover/internal/effect", "k8s.io/client-go"},
		"web":      {"demo", "github.com/twmb/franz-go", "failover/internal/effect", "k8s.io/client-go"},
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
