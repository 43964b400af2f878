package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
)

// Without cgo (CGO_ENABLED=0, a laptop or a CI runner without a C
// compiler) the whole module builds, and the binary's analysis commands
// read landed run folders exactly as a cgo build does: report, compare,
// export, history and report --fleet print and write the same bytes as
// this (cgo) test binary's run. Its measuring commands refuse in one line,
// exit 1.
func TestWithoutCgo(t *testing.T) {
	testenv.Long(t, "builds the module and xrcbench with CGO_ENABLED=0")
	env := append(os.Environ(), "CGO_ENABLED=0")
	build := exec.Command("go", "build", "./...")
	build.Dir, build.Env = filepath.Join("..", ".."), env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./...: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "xrcbench")
	build = exec.Command("go", "build", "-o", bin, ".")
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	// The cgo build's answer to the same question, in this process.
	here := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := run(&o, &e, args)
		return code, o.String(), e.String()
	}
	there := func(args ...string) (int, string, string) {
		return runProcess(exec.Command(bin, args...))
	}

	runs := filepath.Join("..", "..", "report", "testdata", "runs")
	a, b := copyDir(t, filepath.Join(runs, "engine-lifecycle")), copyDir(t, filepath.Join(runs, "engine-lifecycle-again"))
	fleet := t.TempDir()
	for i, p := range []int64{1000, 1020, 990, 25000} {
		writeNode(t, fleet, fmt.Sprintf("n%d", i+1), p)
	}
	out := t.TempDir()
	// Each command writes into a folder of its own per build; the files
	// named are compared byte for byte.
	tests := []struct {
		name  string
		args  func(out string) []string
		files []string
	}{
		{"report", func(o string) []string { return []string{"report", a, "--out", o} }, []string{"summary.md", "bench.txt", "report.html"}},
		{"compare", func(string) []string { return []string{"compare", a, b} }, nil},
		{"export", func(string) []string { return []string{"export", a, b, "--format", "csv"} }, nil},
		{"history", func(o string) []string { return []string{"history", a, b, "--out", o} }, []string{"history.json"}},
		{"report --fleet", func(o string) []string { return []string{"report", "--fleet", fleet, "--out", o} }, []string{"fleet.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o1, o2 := filepath.Join(out, tt.name, "cgo"), filepath.Join(out, tt.name, "nocgo")
			wantCode, wantOut, wantErr := here(tt.args(o1)...)
			code, stdout, stderr := there(tt.args(o2)...)
			if wantCode != exitOK {
				t.Fatalf("the cgo build: exit %d: %s", wantCode, wantErr)
			}
			if code != wantCode || strings.ReplaceAll(stdout, o2, o1) != wantOut || stderr != wantErr {
				t.Errorf("exit %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", code, wantCode, stdout, wantOut, stderr, wantErr)
			}
			for _, f := range tt.files {
				want, err := os.ReadFile(filepath.Join(o1, f))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(o2, f))
				if err != nil {
					t.Fatalf("the CGO_ENABLED=0 build: %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the cgo build's (%d bytes, want %d)", f, len(got), len(want))
				}
			}
		})
	}

	for _, cmd := range []string{"run", "sweep", "conform", "devices", "calibrate", "qualify", workerCommand} {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, stderr := there(cmd)
			want := "xrcbench: " + cmd + " needs a cgo build: this binary was built with CGO_ENABLED=0"
			if code != exitFailed || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit %d and one line %q...", code, stdout, stderr, exitFailed, want)
			}
		})
	}
	// list and version answer, naming why no provider is available.
	for _, cmd := range []string{"list", "version"} {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, stderr := there(cmd)
			if code != exitOK || !strings.Contains(stdout, "without cgo (CGO_ENABLED=0)") {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 0 naming the missing cgo", code, stdout, stderr)
			}
		})
	}
}
