package layout

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/xrcbench/xrcbench/"

// allowed is, for every package of the module, the packages of the module
// it may import (the helpers under internal/ aside: see below). The
// imports go one way, down this list: cmd drives everything; qualify
// drives the engine and judges with report; bench is the engine over the
// providers; device (discovery) and conform (the semantics checks) stand
// on verbs, which reads the host's files about a device through
// internal/facts; report reads run folders only through results and knows
// nothing of how they were measured; stats is plain numbers in, numbers
// out, and imports nothing of the project, so any layer may use it
// (calibration's loops in verbs included). A new package must be placed
// here.
//
// At the top level are the packages the project's mission names (cmd,
// bench, verbs, workloads, report, results); everything else is under
// internal/, as no program outside the module imports it. The engine's
// neighbours there: fleet (a fleet node's identity and barrier, which cmd
// hands to the engine), host (the machine's facts: CPUs, NUMA placement,
// real-time policy, memory, the run limits, the build's version and the
// bill of materials) and runfolder (the run folder: its lock, the commit
// that puts a run in place and the recovery of a killed one; the run's
// private directory) and leaks (the check that no QP outlived a
// repetition, and the record of the QP numbers it made) import the
// engine's lower layers, never the engine.
// calibrate (xrcbench calibrate) stands above the engine instead: it
// measures through verbs' loops and bench's Rig, and judges what they
// measured; so does sweep (one run per point of a product, indexed by
// sweep.json). units (how figures print) imports nothing, but is placed too,
// so that the packages that print figures are named. The other internal/
// packages are small helpers any package may use, and import nothing of
// the project.
var allowed = map[string][]string{
	"cmd/xrcbench":               {"bench", "internal/analysis", "internal/calibrate", "internal/conform", "internal/device", "internal/fleet", "internal/host", "internal/qualify", "internal/runfolder", "internal/sweep", "report", "results", "verbs", "workloads"},
	"internal/qualify":           {"bench", "internal/conform", "internal/device", "internal/host", "internal/runfolder", "internal/stats", "internal/units", "report", "results", "verbs", "workloads"},
	"bench":                      {"internal/device", "internal/host", "internal/leaks", "internal/runfolder", "internal/stats", "results", "verbs", "workloads"},
	"internal/device":            {"results", "verbs"},
	"internal/conform":           {"internal/device", "verbs"},
	"verbs":                      {"internal/facts", "internal/stats", "results"},
	"internal/facts":             {"results"},
	"workloads":                  {"results"},
	"internal/analysis":          {"internal/stats", "internal/stats/changepoint", "internal/units", "report", "results"},
	"report":                     {"internal/stats", "internal/units", "results"},
	"results":                    {},
	"results/resultstest":        {"results"},
	"internal/stats":             {},
	"internal/stats/changepoint": {"internal/stats"},
	"test/vm":                    {},
	"internal/layout":            {},
	"internal/calibrate":         {"bench", "internal/host", "internal/stats", "verbs"},
	"internal/fleet":             {"results"},
	"internal/host":              {"internal/device", "results", "verbs", "workloads"},
	"internal/leaks":             {"internal/device", "results", "verbs"},
	"internal/runfolder":         {"results"},
	"internal/sweep":             {"bench", "results", "verbs", "workloads"},
	"internal/units":             {},
}

// analysis are the packages a build without cgo must give in full, and
// which therefore may not depend on anything that measures.
var analysis = []string{"internal/analysis", "internal/stats", "internal/stats/changepoint", "internal/units", "report", "results"}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
	CgoFiles   []string
	Error      *struct{ Err string }
}

// list is go list of the module's packages, with their deps, in one build
// configuration (env added to the test's).
func list(t *testing.T, env ...string) map[string]pkg {
	t.Helper()
	args := []string{"list", "-json=ImportPath,Dir,GoFiles,Imports,Deps,CgoFiles,Error"}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("%s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

// ours is the module's packages among paths, named inside the module.
func ours(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, module) {
			out = append(out, strings.TrimPrefix(p, module))
		}
	}
	return out
}

func internal(p string) bool { return strings.HasPrefix(p, "internal/") }

// testsOnly are the internal packages for tests alone: they register test
// flags (-update) or build the test double.
var testsOnly = []string{"internal/golden", "internal/testdouble", "internal/testenv"}

func TestImports(t *testing.T) {
	for _, build := range []struct {
		name string
		env  []string
		cgo  bool
	}{
		{"default", nil, true},
		{"without cgo", []string{"CGO_ENABLED=0"}, false},
	} {
		t.Run(build.name, func(t *testing.T) {
			pkgs := list(t, build.env...)
			for name, p := range pkgs {
				want, placed := allowed[name]
				if !placed && !internal(name) {
					t.Errorf("%s is in no layer: place it in allowed (and in docs/design.md)", name)
				}
				for _, imp := range ours(p.Imports) {
					_, layer := allowed[imp]
					switch {
					case slices.Contains(testsOnly, imp):
						t.Errorf("%s imports %s, which only tests may", name, imp)
					case internal(imp) && !layer:
						// Small helpers any package may use.
					case internal(name) && !placed:
						t.Errorf("%s imports %s: internal/ packages import no other package of the project", name, imp)
					case !slices.Contains(want, imp):
						t.Errorf("%s imports %s: not allowed (it may import %v)", name, imp, want)
					}
				}
				// cgo is confined to verbs, which has it in every build that
				// has cgo, and stands in without it (nocgo.go).
				hasCgo := len(p.CgoFiles) > 0
				if name == "verbs" && hasCgo != build.cgo {
					t.Errorf("verbs: cgo files %v in a build with cgo %v", p.CgoFiles, build.cgo)
				}
				if name != "verbs" && hasCgo {
					t.Errorf("%s has cgo files %v: cgo belongs in verbs only", name, p.CgoFiles)
				}
			}
			for _, name := range analysis {
				p, ok := pkgs[name]
				if !ok {
					t.Fatalf("no package %s", name)
				}
				for _, dep := range ours(p.Deps) {
					// The helpers importing nothing of the project may
					// serve either half; every placed package, internal
					// or not, must be of the analysis half.
					if _, placed := allowed[dep]; placed && !slices.Contains(analysis, dep) {
						t.Errorf("%s depends on %s: the analysis half reads run folders through results only", name, dep)
					}
				}
			}
		})
	}
}

// TestRacePackages holds the Makefile's RACE_PKGS, the packages make test
// runs under the race detector, to the packages where a race can be: a
// package whose code starts a goroutine or imports sync, and one that
// imports unsafe, whose pointer conversions the race build checks
// (checkptr). The detector only sees two goroutines touching the same
// memory, so the others are tested without it (and still run under it
// inside RACE_PKGS' tests).
func TestRacePackages(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(mk), "\n") {
		if rest, ok := strings.CutPrefix(line, "RACE_PKGS"); ok {
			_, value, _ := strings.Cut(rest, ":=")
			listed = strings.Fields(value)
		}
	}
	if len(listed) == 0 {
		t.Fatal("Makefile: no RACE_PKGS := line")
	}
	pkgs := list(t)
	for name, p := range pkgs {
		why := raceWhy(t, p)
		switch in := slices.Contains(listed, name); {
		case why != "" && !in:
			t.Errorf("%s %s: add it to the Makefile's RACE_PKGS", name, why)
		case why == "" && in:
			t.Errorf("%s starts no goroutine and imports neither sync nor unsafe: take it out of the Makefile's RACE_PKGS", name)
		}
	}
	for _, name := range listed {
		if _, ok := pkgs[name]; !ok {
			t.Errorf("RACE_PKGS names %s, which is no package", name)
		}
	}
}

// raceWhy says why p's code (its tests aside) needs the race build, or "".
func raceWhy(t *testing.T, p pkg) string {
	for _, imp := range p.Imports {
		if imp == "sync" || imp == "sync/atomic" || imp == "unsafe" {
			return "imports " + imp
		}
	}
	fset := token.NewFileSet()
	for _, name := range append(slices.Clone(p.GoFiles), p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var at token.Pos
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok && at == token.NoPos {
				at = g.Pos()
			}
			return at == token.NoPos
		})
		if at != token.NoPos {
			return "starts a goroutine (" + fset.Position(at).String() + ")"
		}
	}
	return ""
}
