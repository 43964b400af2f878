package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// sweepDir builds a sweep folder in a temporary directory: points are
// lifecycle fixtures at several procs × threads and two QP counts, whose
// latency grows with concurrency as contention would make it.
func sweepDir(t *testing.T) string {
	dir := t.TempDir()
	s := &results.Sweep{}
	i := 0
	for _, qps := range []int{1, 16} {
		for _, pt := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {2, 2}} {
			f := lifecycleFixture()
			f.procs, f.threads, f.qps, f.reps, f.seconds = pt[0], pt[1], qps, 2, 1
			f.seed = int64(10 + i)
			load := float64(pt[0]*pt[1]) / float64(qps)
			for k, spec := range f.kinds {
				spec.medianNS *= 1 + load
				f.kinds[k] = spec
			}
			name := filepath.Join("points", itoa(i))
			f.write(t, filepath.Join(dir, name))
			s.Points = append(s.Points, results.SweepPoint{Dir: name, Procs: pt[0], Threads: pt[1], QPs: qps, Status: results.StatusOK})
			i++
		}
	}
	// A point the sweep never finished: its folder is missing.
	s.Points = append(s.Points, results.SweepPoint{Dir: "points/99", Procs: 4, Threads: 4, QPs: 16, Status: results.StatusFailed})
	if err := results.WriteSweep(dir, s); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGenerateSweep(t *testing.T) {
	dir := sweepDir(t)
	rep, err := Generate([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Out != dir {
		t.Errorf("out %s, want the sweep folder %s", rep.Out, dir)
	}
	for _, name := range []string{"sweep-ops_per_sec", "sweep-p99", "overlay-reg-spectrum"} {
		for _, ext := range []string{".png", ".svg"} {
			if _, err := os.Stat(filepath.Join(dir, plotsDir, name+ext)); err != nil {
				t.Errorf("sweep plot: %v", err)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# xrcbench sweep: lifecycle on sim", "| points/3 | 2 | 2 | 1 | ok |", "| points/7 | 2 | 2 | 16 | ok |", "points/99 (procs=4 threads=4 qps=16, status failed) left out"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range sweepDirFigures(t) {
		checkFigure(t, f)
	}
}

// sweepDirFigures are the figures of a sweepDir, drawn once for every test
// that looks at them: plots are slow under the race detector.
var sweepDirFigures = func() func(t *testing.T) []Figure {
	var (
		once sync.Once
		figs []Figure
		err  error
	)
	return func(t *testing.T) []Figure {
		t.Helper()
		once.Do(func() {
			var sr *sweepReport
			if sr, err = loadSweep(sweepDir(t)); err == nil {
				figs, err = sweepFigures(sr)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return figs
	}
}()

func TestGenerate(t *testing.T) {
	lc := fixtureDir(t, lifecycleFixture())
	tests := []struct {
		name    string
		dirs    func(t *testing.T) []string
		out     bool
		wantErr string // "" for success; errors must wrap results.ErrInput
	}{
		{"one run into itself", func(t *testing.T) []string { return []string{copyRun(t, lc)} }, false, ""},
		{"several runs", func(t *testing.T) []string { return []string{lc, fixtureDir(t, noisyFixture())} }, true, ""},
		{"several runs without --out", func(t *testing.T) []string { return []string{lc, lc} }, false, "--out"},
		{"missing folder", func(t *testing.T) []string { return []string{filepath.Join(t.TempDir(), "nope")} }, true, "no such run folder"},
		{"not a run folder", func(t *testing.T) []string { return []string{t.TempDir()} }, true, "not a run folder"},
		{"truncated result.json", func(t *testing.T) []string { return []string{damaged(t, lc, truncate)} }, true, "not a complete result.json"},
		{"another schema", func(t *testing.T) []string { return []string{damaged(t, lc, otherSchema)} }, true, `schema "xrcbench.result/v9"`},
		{"sweep with a run", func(t *testing.T) []string { return []string{sweepDir(t), lc} }, true, "report it alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs := tt.dirs(t)
			out := ""
			if tt.out {
				out = filepath.Join(t.TempDir(), "report")
			}
			rep, err := Generate(dirs, out)
			if tt.wantErr != "" {
				if !errors.Is(err, results.ErrInput) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want results.ErrInput with %q", err, tt.wantErr)
				}
				// Bad input leaves nothing behind.
				if out != "" {
					if _, err := os.Stat(out); !os.IsNotExist(err) {
						t.Errorf("output folder created despite bad input: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := out
			if want == "" {
				want = dirs[0]
			}
			for _, name := range []string{HTMLFile, MarkdownFile, benchFile} {
				if st, err := os.Stat(filepath.Join(want, name)); err != nil || st.Size() == 0 {
					t.Errorf("%s: %v", name, err)
				}
			}
			if len(rep.Files) == 0 || filepath.Base(rep.Files[len(rep.Files)-1]) != HTMLFile {
				t.Errorf("report.html must be written last: %v", rep.Files)
			}
			if len(dirs) > 1 {
				if _, err := os.Stat(filepath.Join(want, plotsDir, "overlay-reg-spectrum.svg")); err != nil {
					t.Errorf("no overlaid spectrum: %v", err)
				}
			}
		})
	}
}

// copyRun copies the files of a run folder into a temporary one, so a test
// can write a report into it.
func copyRun(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func truncate(b []byte) []byte { return b[:len(b)/2] }

func otherSchema(b []byte) []byte {
	return []byte(strings.Replace(string(b), results.Schema, "xrcbench.result/v9", 1))
}

// damaged copies a run folder and rewrites its result.json with f.
func damaged(t *testing.T, dir string, f func([]byte) []byte) string {
	t.Helper()
	dst := copyRun(t, dir)
	path := filepath.Join(dst, results.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestGenerateHostileKind: op kinds come from the input; one that looks
// like a path must not write (or read) outside the report folder.
func TestGenerateHostileKind(t *testing.T) {
	dir := copyRun(t, fixtureDir(t, tinyFixture()))
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Ops["../../escape"] = r.Ops["create"]
	r.Histograms["../../escape"] = r.Histograms["create"]
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "a", "b")
	if _, err := Generate([]string{dir}, out); err != nil {
		t.Fatal(err)
	}
	err = filepath.Walk(filepath.Dir(filepath.Dir(out)), func(path string, info os.FileInfo, err error) error {
		if err == nil && strings.Contains(info.Name(), "escape") && !strings.HasPrefix(path, filepath.Join(out, plotsDir)) {
			t.Errorf("wrote %s outside %s/plots", path, out)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEngineSweep reads a sweep folder `xrcbench sweep` wrote: every point
// loads, and the table shows each point's own figures.
func TestEngineSweep(t *testing.T) {
	dir := filepath.Join("testdata", "sweeps", "engine-lifecycle")
	sr, err := loadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Runs) != len(sr.Points) || len(sr.Notes) != 0 {
		t.Fatalf("%d of %d points read; notes %v", len(sr.Runs), len(sr.Points), sr.Notes)
	}
	for _, p := range sr.Points {
		r, err := results.Load(filepath.Join(dir, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if r.Config.Procs != p.Procs || r.Config.Threads != p.Threads || r.Config.QPs != p.QPs {
			t.Errorf("%s: sweep.json says %d×%d q%d, result %d×%d q%d", p.Dir, p.Procs, p.Threads, p.QPs, r.Config.Procs, r.Config.Threads, r.Config.QPs)
		}
		for i, k := range sr.Kinds {
			s := r.Ops[k]
			want := sweepCell{Rate: "–", P99: "–"}
			if s.Count > 0 {
				want = sweepCell{Rate: units.FormatRate(s.OpsPerSec), P99: units.FormatNS(float64(s.NS.P99))}
			}
			if p.Cells[i] != want {
				t.Errorf("%s %s: cell %v, want %v", p.Dir, k, p.Cells[i], want)
			}
		}
	}
	figs, err := sweepFigures(sr)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		checkFigure(t, f)
	}
}

// A symbolic link inside a run folder (plots -> a folder elsewhere, as
// another user who can write a shared folder may plant it) is refused:
// report writes nothing through it, and records nothing there for a later
// run to remove. Before, the plots went through the link.
func TestGenerateRefusesLinkInFolder(t *testing.T) {
	for _, link := range []string{plotsDir, HTMLFile} {
		t.Run(link, func(t *testing.T) {
			dir := copyRun(t, filepath.Join("testdata", "runs", "engine-lifecycle"))
			outside := t.TempDir()
			os.RemoveAll(filepath.Join(dir, link))
			target := outside
			if link == HTMLFile {
				target = filepath.Join(outside, "page.html")
				if err := os.WriteFile(target, []byte("outside"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			_, err := Generate([]string{dir}, "")
			ents, _ := os.ReadDir(outside)
			switch {
			case link == plotsDir && err == nil:
				t.Errorf("report through %s -> %s: no error", link, target)
			case link == plotsDir && len(ents) != 0:
				t.Errorf("report wrote %d files outside the run folder, through %s", len(ents), link)
			case link == HTMLFile:
				// A link in a file's place is replaced, never written through.
				if data, _ := os.ReadFile(target); string(data) != "outside" {
					t.Errorf("report wrote through %s: the file outside now holds %q", link, data)
				}
				if st, err := os.Lstat(filepath.Join(dir, link)); err != nil || st.Mode()&os.ModeSymlink != 0 {
					t.Errorf("%s is still the link after report (%v)", link, err)
				}
			}
			if m, err := results.LoadManifest(dir); err == nil && link == plotsDir && len(m.Files) > 0 {
				t.Errorf("recorded %v for removal though nothing was written", m.Files)
			}
		})
	}
}

// A log of another run than the result.json read before it is a folder
// that mixes two runs, unless the folder's result.json names another run
// by now: then a run replaced the folder while the report read it, and
// the report says so (report it again) rather than call the folder mixed.
func TestReplacedWhileRead(t *testing.T) {
	dir := t.TempDir()
	r, err := results.Load(filepath.Join("testdata", "runs", "lifecycle"))
	if err != nil {
		t.Fatal(err)
	}
	r.RunID = "newrun"
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, read string
		want       string
	}{
		{"replaced since", "oldrun", "was replaced while the report was made"},
		{"mixed for good", "newrun", "the folder mixes two runs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := replacedWhileRead(dir, results.InputError(&results.MixedLogError{Path: "reg.hlog", LogRunID: "other", ResultRunID: tt.read}))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, results.ErrInput) {
				t.Errorf("%v: want an input error saying %q", err, tt.want)
			}
		})
	}
}
