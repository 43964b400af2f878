package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/loadavg"
	"github.com/xrcbench/xrcbench/results"
)

// createP50 runs the lifecycle workload with the sim device's injected
// costs and returns create p50, after checking the count.
func createP50(t *testing.T, bin string, threads, qps, rounds int) time.Duration {
	t.Helper()
	out := t.TempDir()
	code, stdout, stderr := runBin(bin, "run", "--provider", "sim", "--workload", "lifecycle", "--procs", "1",
		"--threads", strconv.Itoa(threads), "--qps", strconv.Itoa(qps), "--iterations", strconv.Itoa(rounds),
		"--warmup", "0", "--sim-cost", "create=20us,reg=7us,unreg=3us,destroy=310us", "--out", out)
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	create := res.Ops[results.OpCreate]
	if create.Count != int64(rounds*qps) {
		t.Fatalf("create count %d, want rounds x qps = %d", create.Count, rounds*qps)
	}
	return time.Duration(create.NS.P50)
}

// Known answer with twice as many threads as CPUs (issue 10 item 1), the
// issue's own case: every thread but one creates a QP each round, so more
// creators than CPUs busy-wait the sim device's 20 µs at once. Create p50
// must be within 10% of the injected cost, and within 5% of the same
// operation timed alone (one thread, one QP) just before: whatever more
// the crowded run adds is the harness's. Before, half of these creates
// took a page fault inside the timed call: the first write of each
// registrant to each page of its mapping of the sim device's file (on a
// disk file system, 3-13 µs): p50 22.5-24 µs against 20.3 µs alone (one
// registrant writes each page once per four QP slots). Then, on the
// development VM, the first access from user space to each page still
// cost 4-5 µs after the kernel had populated it, with no fault in the
// guest: p50 24.2-25.4 µs, until the device read every page when opened.
//
// Up to three tries: a harness that inflates creates does so in every
// try, a busy machine disturbs some. When even the operation alone misses
// the known answer in every try, the machine cannot time 20 µs to 10% now,
// and the test says so and skips.
func TestCreateNotInflatedOversubscribed(t *testing.T) {
	bin := buildXrcbench(t)
	cpus := runtime.NumCPU()
	const cost, rounds = 20 * time.Microsecond, 300
	threads := 2 * cpus
	qps := threads - 1
	limit := cost + cost/10
	var got []string
	noisy := 0
	for try := 1; try <= 3; try++ {
		alone := createP50(t, bin, 1, 1, rounds)
		crowded := createP50(t, bin, threads, qps, rounds)
		if crowded >= cost && crowded <= limit && crowded <= alone+alone/20 {
			t.Logf("try %d: create p50 %v at %d threads x %d QPs on %d CPUs; %v alone", try, crowded, threads, qps, cpus, alone)
			return
		}
		if alone > limit {
			noisy++
		}
		got = append(got, fmt.Sprintf("%v (alone %v)", crowded, alone))
	}
	if noisy == 3 {
		t.Skipf("the machine is too busy to time a 20 µs operation to 10%%: create p50 alone %s", strings.Join(got, ", "))
	}
	// Oversubscribed on purpose, the crowded run's threads are preempted
	// inside timed calls by one another, which the test allows for, and
	// by every other process, which it cannot: with more than the CPUs'
	// worth of load beside it (make test's other packages), a miss says
	// nothing about the harness. Named, not passed.
	if la := loadavg.Read(); la > float64(cpus) {
		t.Skipf("create p50 at %d threads x %d QPs on %d CPUs: %s at load average %.1f: too busy to judge (other processes preempt the crowded threads)",
			threads, qps, cpus, strings.Join(got, ", "), la)
	}
	t.Errorf("create p50 at %d threads x %d QPs on %d CPUs: %s in 3 tries, want within %v to %v and at most 5%% over the same operation alone",
		threads, qps, cpus, strings.Join(got, ", "), cost, limit)
}
