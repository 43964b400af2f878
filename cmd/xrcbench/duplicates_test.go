package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// One run given twice is one measurement counted twice: compare and
// history still run, and warn once, naming the folders; a fleet folder
// with two folders of one node is refused.
func TestRunGivenTwice(t *testing.T) {
	x, other := fixture("engine-lifecycle-rtr"), fixture("engine-lifecycle-rtr-modify25")
	copyOfX := copyDir(t, x)
	tests := []struct {
		name  string
		args  []string
		times string // how many times it is given
		dirs  []string
	}{
		{"compare X X", []string{"compare", x, x}, "2 times", []string{x + ", " + x}},
		{"compare X and a copy", []string{"compare", x, copyOfX}, "2 times", []string{x + ", " + copyOfX}},
		{"compare N-way", []string{"compare", x, other, x}, "2 times", []string{x + ", " + x}},
		{"history X X X", []string{"history", x, x, x, "--out", t.TempDir()}, "3 times", []string{x + ", " + x + ", " + x}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runEngine(t, tt.args...)
			if code == exitUsage && !strings.Contains(stderr, "warning:") {
				t.Fatalf("refused: %s", stderr)
			}
			if n := strings.Count(stderr, "is given "); n != 1 {
				t.Fatalf("%d warnings of a run given twice, want 1:\n%s\n%s", n, stderr, stdout)
			}
			for _, want := range append(tt.dirs, "warning: the same run (run id c74e0d94c216269d) is given "+tt.times) {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
	t.Run("two different runs", func(t *testing.T) {
		_, _, stderr := runEngine(t, "compare", x, other)
		if strings.Contains(stderr, "is given") {
			t.Errorf("two runs taken for one:\n%s", stderr)
		}
	})
}

func TestFleetNodeGivenTwice(t *testing.T) {
	r, err := results.Load(fixture("lifecycle"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, folder := range []string{"n1", "n1-again"} {
		r.Fleet = &results.Fleet{Launcher: "slurm", JobID: "4711", Node: "n1", Rank: i, Nodes: 2, NodeList: []string{"n1", "n2"}}
		if err := os.Mkdir(filepath.Join(dir, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(filepath.Join(dir, folder), r); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI("report", "--fleet", dir)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
	}
	checkOneLine(t, stderr)
	for _, want := range []string{"node n1 ", filepath.Join(dir, "n1") + " and ", filepath.Join(dir, "n1-again")} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
}

// copyDir copies a run folder: a run with the same run id as dir, in
// another folder (a result without one is then another run to compare).
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}
