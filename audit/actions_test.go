package audit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/storage"
)

// actionValues are the values of the Action constants in actions.go.
func actionValues(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "actions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				switch v := v.(type) {
				case *ast.BasicLit:
					s, _ := strconv.Unquote(v.Value)
					out[s] = true
				case *ast.SelectorExpr: // the one storage writes itself
					if v.Sel.Name != "ActionAccountsBaseline" {
						t.Fatalf("actions.go: an action constant from %s.%s this test does not know", v.X, v.Sel.Name)
					}
					out[storage.ActionAccountsBaseline] = true
				}
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("found %d action constants in actions.go; the parse is wrong", len(out))
	}
	return out
}

// actionArg is where the action sits in the calls that record one: the
// recorder's own methods and the helpers in front of them.
var actionArg = map[string]int{
	"Record": 2, "With": 2, "Entry": 2, "recorded": 2, "auditAs": 2,
	"auditEntry": 1, "Audit": 1,
}

// Every action the code records is one of the constants: a literal shaped
// like an action (a known room, a dot, a verb) or one handed to the
// recorder. The values are in the hash chain, so a new action is a new
// constant, never a string made up in place.
func TestEveryRecordedActionIsAConstant(t *testing.T) {
	known := actionValues(t)
	rooms := map[string]bool{}
	for a := range known {
		if room, _, ok := strings.Cut(a, "."); ok {
			rooms[room] = true
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			// Test helper packages (storagetest, runbooktest, …) record for
			// tests only, like _test.go files.
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || hasGoMod(path) ||
				strings.HasSuffix(name, "test") && name != "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		// config's keys (drill.timeout, failover.approvals_required) share
		// the actions' rooms; only what it hands the recorder counts there.
		keys := filepath.Dir(path) == filepath.Join(root, "config")
		check := func(lit *ast.BasicLit, handed bool) {
			s, err := strconv.Unquote(lit.Value)
			if err != nil || known[s] {
				if known[s] {
					seen++
				}
				return
			}
			room, verb, ok := strings.Cut(s, ".")
			shaped := !keys && ok && rooms[room] && verb != "" && !strings.ContainsAny(verb, " ./:")
			if shaped || handed {
				t.Errorf("%s: %q is recorded as an action but is no audit.Action constant", fset.Position(lit.Pos()), s)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					check(n, false)
				}
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				if i, ok := actionArg[name]; ok && i < len(n.Args) {
					if lit, ok := n.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						check(lit, true)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no action found in the code; the scan is wrong")
	}
}

func hasGoMod(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}
