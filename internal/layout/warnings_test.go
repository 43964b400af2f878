package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryWarningSaysWhatToDo holds every warning the tree writes into a
// result to its Means: what the fact means for the figures, or what to do
// about it, in a few words (results.Warning.Means). A warning that states a
// fact and stops ("12 latencies for 13 operations") leaves its reader to
// guess whether to trust the run. So, outside tests:
//   - results.NewWarning(...) is always the receiver of .WithMeans(means);
//   - bench's warnf gets its means (its fourth argument);
//   - a results.Warning literal sets Means;
//
// and no means is the empty string.
func TestEveryWarningSaysWhatToDo(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var seen int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n != "." && n != ".." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		inResults := f.Name.Name == "results"
		// The NewWarning calls that are the receivers of a WithMeans.
		withMeans := map[ast.Expr]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithMeans" {
				withMeans[ast.Unparen(sel.X)] = true
				if len(call.Args) == 1 && emptyString(call.Args[0]) {
					t.Errorf("%s: WithMeans(\"\") says nothing", fset.Position(call.Pos()))
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch name := callee(n, inResults); name {
				case "NewWarning":
					seen++
					if !withMeans[n] && !(inResults && rel == filepath.Join("results", "warning.go")) {
						t.Errorf("%s: a NewWarning without .WithMeans: say what the warning means for the figures or what to do", fset.Position(n.Pos()))
					}
				case "warnf":
					if f.Name.Name != "bench" {
						break
					}
					seen++
					if len(n.Args) < 4 || emptyString(n.Args[3]) {
						t.Errorf("%s: warnf without its means", fset.Position(n.Pos()))
					}
				}
			case *ast.CompositeLit:
				if !isWarningType(n.Type, inResults) {
					break
				}
				seen++
				has := false
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Means" && !emptyString(kv.Value) {
							has = true
						}
					}
				}
				// results' own readers build warnings from what a file
				// says (LegacyWarning); they are not new warnings.
				if !has && !inResults {
					t.Errorf("%s: a results.Warning literal without Means", fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have found the warnings it holds to their means, or
	// it checks nothing (a moved package, a renamed helper).
	if seen < 20 {
		t.Fatalf("found %d warnings being written, expected the engine's 20 or more: the check no longer sees them", seen)
	}
}

// callee is the name of the function call calls: results.NewWarning (or
// NewWarning inside results) as "NewWarning", a plain identifier as itself.
func callee(call *ast.CallExpr, inResults bool) string {
	switch f := call.Fun.(type) {
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Name == "results" {
			return f.Sel.Name
		}
	case *ast.Ident:
		if f.Name == "NewWarning" && !inResults {
			return ""
		}
		return f.Name
	}
	return ""
}

func isWarningType(e ast.Expr, inResults bool) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "results" && e.Sel.Name == "Warning"
	case *ast.Ident:
		return inResults && e.Name == "Warning"
	}
	return false
}

func emptyString(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && strings.TrimSpace(s) == ""
}
