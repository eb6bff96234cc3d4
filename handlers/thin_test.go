package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The handlers stay thin (issue 12): no goroutine is started here (long
// work belongs to failover.Worker), no Kafka client or sandbox is
// imported, and no file grows past maxHandlerLines.
func TestHandlersStayThin(t *testing.T) {
	const maxHandlerLines = 260
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := filepath.Glob("form/*.go")
	fset := token.NewFileSet()
	for _, name := range append(files, sub...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), "\n"); n > maxHandlerLines {
			t.Errorf("%s: %d lines; split it by page or action (at most %d)", name, n, maxHandlerLines)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/twmb/franz-go") || path == "github.com/drconsole/drconsole/demo" {
				t.Errorf("%s imports %s: ask a service (translation.GroupTranslator, DemoControls) instead", fset.Position(imp.Pos()), path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: a go statement in handlers; run long work in failover.Worker, parallel reads in the service", fset.Position(g.Pos()))
			}
			return true
		})
	}
}
