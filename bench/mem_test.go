package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/host"
)

// sayMemory, a worker's measuring hook in TestMemoryWhileMeasuring, says
// the process's RSS and its sim device mapping's, as /proc shows them
// while the thread measures.
func sayMemory(thread int) {
	rss, _, err := host.ProcessMemory(os.Getpid())
	smaps, serr := os.ReadFile("/proc/self/smaps")
	if err != nil || serr != nil {
		fmt.Fprintf(os.Stderr, "thread %d memory unreadable: %v %v\n", thread, err, serr)
		return
	}
	var dev int64
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			in = strings.HasSuffix(line, "/sim.dev")
		case in && len(f) == 3 && f[0] == "Rss:":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			dev += n
		}
	}
	fmt.Fprintf(os.Stderr, "thread %d measuring: rss %d kB, sim.dev rss %d kB\n", thread, rss, dev)
}

// TestMemoryWhileMeasuring: a worker's recorded memory is what it held
// while it measured, the sim device's mapping included. Read after the
// threads tore down it was 23.3 MB of 40.6 MB: the 17.5 MB mapping had
// gone with them.
func TestMemoryWhileMeasuring(t *testing.T) {
	if _, _, err := host.ProcessMemory(os.Getpid()); err != nil {
		t.Skipf("no smaps_rollup here: %v", err)
	}
	for _, workload := range []string{"steady", "storm"} {
		t.Run(workload, func(t *testing.T) {
			cfg := testConfig(t, workload, "sim", 1, 2, 4)
			cfg.Iterations = 3
			if workload == "storm" {
				cfg.Iterations, cfg.QPs, cfg.Nodes = 1, 0, 3
				cfg.StormDefaults()
			}
			opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY_MEMORY=1")
			res, err := Run(context.Background(), cfg, opts)
			if err != nil {
				t.Fatalf("Run: %v\nstderr:\n%s", err, stderr)
			}
			var during, dev int64
			for _, line := range strings.Split(stderr.String(), "\n") {
				var th int
				var r, d int64
				if i := strings.Index(line, "thread "); i >= 0 {
					line = line[i:]
				}
				if n, _ := fmt.Sscanf(line, "thread %d measuring: rss %d kB, sim.dev rss %d kB", &th, &r, &d); n == 3 {
					during, dev = max(during, r), max(dev, d)
				}
			}
			if during == 0 || dev == 0 {
				t.Fatalf("the workers said no memory, or no sim.dev mapping:\n%s", stderr)
			}
			w := res.Workers[0]
			// The worker's own view while measuring, within what a
			// thread's start and the end's sample can differ by.
			if w.RSSKB < dev || w.RSSKB < during*9/10 {
				t.Errorf("recorded RSS %d KiB at the end of measurement; while measuring the process had %d KiB, %d of them the sim device's mapping", w.RSSKB, during, dev)
			}
			if w.PeakRSSKB < w.RSSKB || w.PeakPSSKB < w.PSSKB || w.PSSKB <= 0 || w.PSSKB > w.RSSKB {
				t.Errorf("worker memory: end RSS %d PSS %d, peak RSS %d PSS %d KiB", w.RSSKB, w.PSSKB, w.PeakRSSKB, w.PeakPSSKB)
			}
			if m := res.Harness.Memory; m == nil || m.RSSKB != w.RSSKB || m.PeakRSSKB != w.PeakRSSKB {
				t.Errorf("harness memory %+v, one worker's %+v", m, w)
			}
		})
	}
}
