package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// Known answer with twice as many threads as CPUs (issue 10 item 1): the
// sim device busy-waits 20 µs per create, so create p50 is 20 µs plus the
// timer, within 10%. One QP per round: a single creator runs while every
// other thread waits at the barrier, so whatever is added to its create
// is the harness's doing (with several creators, their contention on the
// device lock is the workload's). Waiters must not take the creator's
// CPU: spinning and yielding, and the worker's Go runtime handing its few
// Ps from thread to thread, put creates at 33-44 µs. One run in three
// meeting the bound passes: a harness that inflates creates does so in
// every run, a busy machine disturbs some.
func TestCreateNotInflatedOversubscribed(t *testing.T) {
	bin := buildXrcbench(t)
	cpus := runtime.NumCPU()
	const cost, rounds, qps = 20 * time.Microsecond, 400, 1
	threads := 2 * cpus
	var got []string
	for try := 1; try <= 3; try++ {
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
		if create.Count != rounds*qps {
			t.Fatalf("create count %d, want rounds x qps = %d", create.Count, rounds*qps)
		}
		p50 := time.Duration(create.NS.P50)
		if p50 >= cost && p50 <= cost+cost/10 {
			t.Logf("try %d: create p50 %v p99 %v at %d threads on %d CPUs", try, p50, time.Duration(create.NS.P99), threads, cpus)
			return
		}
		got = append(got, fmt.Sprintf("p50 %v (p99 %v)", p50, time.Duration(create.NS.P99)))
	}
	t.Errorf("create at %d threads on %d CPUs: %s in 3 runs, want p50 within %v to %v", threads, cpus, strings.Join(got, ", "), cost, cost+cost/10)
}
