package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

// The memory bounds the docs state (docs/analysis.md, "Reports and
// comparisons"; docs/method.md, "Memory"): the
// coordinator (with its worker) and report each stay under maxRSSMB
// whatever the run's length, and a run ten times longer costs less than
// growthMB more. Before report streamed the .hlog files, report took
// about 100 KB per interval (1 GB at 10,000) and so did the run, which
// reads its own logs back for summary.md.
const (
	maxRSSMB = 200
	growthMB = 32
)

// peakRSS runs cmd to its end and returns its peak resident set in MB, as
// the kernel counts it for the child and the processes it waited for.
func peakRSS(t *testing.T, cmd *exec.Cmd) float64 {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return float64(ru.Maxrss) / 1024 // KB on Linux
}

// TestMemoryIndependentOfRunLength runs a short and a ten times longer
// run at --interval 1ms and reports a 2,000- and a 20,000-interval run
// folder: the peak RSS of the coordinator and of report, each a real
// child process, stays under maxRSSMB and grows by less than growthMB.
func TestMemoryIndependentOfRunLength(t *testing.T) {
	testenv.Long(t, "a 2s and a 20s run at 1ms intervals, and their reports")
	bin := engineBinary(t)
	run := func(d string) (string, float64, int64) {
		dir := filepath.Join(t.TempDir(), "run")
		rss := peakRSS(t, exec.Command(bin, "run", "--provider", "null", "--workload", "steady", "--qps", "2",
			"--interval", "1ms", "--duration", d, "--warmup", "0s", "-q", "--out", dir))
		r, err := results.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return dir, rss, r.Logs[results.OpReg].Intervals
	}
	shortDir, shortRSS, shortN := run("2s")
	_, longRSS, longN := run("20s")
	t.Logf("coordinator: %d intervals %.0f MB, %d intervals %.0f MB", shortN, shortRSS, longN, longRSS)
	// A busy machine writes fewer intervals than the duration holds (a
	// thread off the CPU reports none); the comparison needs a long run
	// that is long in intervals.
	if longN < 4*shortN {
		t.Skipf("the long run wrote %d intervals, the short %d: too busy a machine to compare", longN, shortN)
	}
	if longRSS > maxRSSMB || longRSS-shortRSS > growthMB {
		t.Errorf("coordinator: %.0f MB at %d intervals, %.0f MB at %d: want under %d MB and less than %d MB more", shortRSS, shortN, longRSS, longN, maxRSSMB, growthMB)
	}

	report := func(n int) float64 {
		dir := filepath.Join(t.TempDir(), "run")
		lengthenRun(t, shortDir, dir, n)
		return peakRSS(t, exec.Command(bin, "report", dir))
	}
	small, large := report(2000), report(20000)
	t.Logf("report: 2000 intervals %.0f MB, 20000 intervals %.0f MB", small, large)
	if large > maxRSSMB || large-small > growthMB {
		t.Errorf("report: %.0f MB at 2,000 intervals, %.0f MB at 20,000: want under %d MB and less than %d MB more", small, large, maxRSSMB, growthMB)
	}
}

// lengthenRun copies the run folder src to dst with each .hlog made n
// intervals of 1ms long, from the run's own interval histograms in turn,
// and result.json saying so: a run folder of any length, in seconds.
func lengthenRun(t *testing.T, src, dst string, n int) {
	t.Helper()
	r, err := results.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for kind, lf := range r.Logs {
		b, err := os.ReadFile(filepath.Join(src, lf.File))
		if err != nil {
			t.Fatal(err)
		}
		var head []string
		var payloads []string
		var counts []int64
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Split(line, ",")
			if strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"`) || len(f) != 4 {
				head = append(head, line)
				continue
			}
			h, err := results.DecodeHistogram(f[3])
			if err != nil {
				t.Fatal(err)
			}
			payloads, counts = append(payloads, f[2]+","+f[3]), append(counts, h.TotalCount())
		}
		if len(payloads) == 0 {
			t.Fatalf("%s: no intervals", lf.File)
		}
		out, err := os.Create(filepath.Join(dst, lf.File))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(out)
		for _, line := range head {
			fmt.Fprintln(w, line)
		}
		lf.Intervals, lf.Count = int64(n), 0
		for i := range n {
			fmt.Fprintf(w, "%.3f,0.001000,%s\n", float64(i)/1000, payloads[i%len(payloads)])
			lf.Count += counts[i%len(payloads)]
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out.Close()
		r.Logs[kind] = lf
	}
	if err := results.Write(dst, r); err != nil {
		t.Fatal(err)
	}
}
