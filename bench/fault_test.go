package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// children lists the pids of this process's child processes.
func children(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// runOutcome is what a Run started by startRun returned.
type runOutcome struct {
	res *results.Result
	err error
}

// startRun starts Run in the background and waits (up to 30 s) for its n
// worker processes to appear, so a test can signal them.
func startRun(t *testing.T, cfg Config, opts Options, n int) (<-chan runOutcome, []int) {
	t.Helper()
	before := map[int]bool{}
	for _, p := range children(t) {
		before[p] = true
	}
	done := make(chan runOutcome, 1)
	go func() {
		res, err := Run(context.Background(), cfg, opts)
		done <- runOutcome{res, err}
	}()
	var workers []int
	for deadline := time.Now().Add(30 * time.Second); len(workers) < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		workers = workers[:0]
		for _, p := range children(t) {
			if !before[p] {
				workers = append(workers, p)
			}
		}
	}
	if len(workers) < n {
		t.Fatalf("found %d worker processes, want %d", len(workers), n)
	}
	return done, workers
}

// A worker killed in the middle of a run (the OOM killer, say) stops it as
// a stalled worker does (issue 43, item 9): a *RunError with status
// partial, result.json written naming the worker, its pid and the signal,
// the other workers' measurements kept, nothing left running, nothing
// leaked on the device. Before, the repetition failed and every worker's
// data was dropped (ops null).
func TestWorkerKilled(t *testing.T) {
	for _, w := range []string{"steady", "lifecycle"} {
		t.Run(w, func(t *testing.T) {
			cfg := testConfig(t, w, "sim", 3, 2, 4)
			cfg.Duration = time.Minute
			opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY_MEASURING=1")
			// Wait for the three workers, until every thread measures,
			// let them run, kill the second.
			done, workers := startRun(t, cfg, opts, 3)
			for deadline := time.Now().Add(60 * time.Second); strings.Count(stderr.String(), "measuring") < 6; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the threads never all measured:\n%s", stderr)
				}
			}
			time.Sleep(500 * time.Millisecond)
			victim := workers[1]
			if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var o runOutcome
			select {
			case o = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("the run did not stop after a worker was killed\nstderr:\n%s", stderr)
			}
			var re *RunError
			if !errors.As(o.err, &re) || re.Status != results.StatusPartial {
				t.Fatalf("err = %v, want a RunError with status partial\nstderr:\n%s", o.err, stderr)
			}
			loaded, err := results.Load(cfg.Out)
			if err != nil {
				t.Fatalf("result.json: %v", err)
			}
			want := "(pid " + strconv.Itoa(victim) + ") was killed by signal 9 (killed): the run was stopped; the other workers' measurements are kept"
			if loaded.Status != results.StatusPartial || !strings.Contains(loaded.Error, want) || !strings.Contains(loaded.Error, "worker ") {
				t.Errorf("status %q error %q, want partial naming the worker and %q", loaded.Status, loaded.Error, want)
			}
			// The workers that were not killed measured, and are kept.
			kept := map[int]int64{}
			for _, w := range loaded.Workers {
				for _, n := range w.Counts {
					kept[w.Index] += n
				}
			}
			m := regexp.MustCompile(`worker (\d) \(pid ` + strconv.Itoa(victim) + `\)`).FindStringSubmatch(loaded.Error)
			if m == nil {
				t.Fatalf("error %q does not name the killed worker's index", loaded.Error)
			}
			killed, _ := strconv.Atoi(m[1])
			for i := 0; i < cfg.Procs; i++ {
				if i != killed && kept[i] == 0 {
					t.Errorf("worker %d's counts are lost (worker %d was killed): %v", i, killed, kept)
				}
			}
			if loaded.Ops["reg"].Count == 0 {
				t.Errorf("reg: nothing kept: %+v", loaded.Ops)
			}
			for _, p := range workers {
				if syscall.Kill(p, 0) == nil {
					// A zombie is reaped by Wait; a live worker is a leak.
					if data, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat"); err == nil && !strings.Contains(string(data), ") Z ") {
						t.Errorf("worker pid %d still running after the run", p)
					}
				}
			}
			if loaded.Leaks == nil || !loaded.Leaks.Checked || len(loaded.Leaks.Leaked) != 0 {
				t.Errorf("leaks %+v: the dead worker's registrations must be reaped, nothing leaked", loaded.Leaks)
			}
		})
	}
}

// A worker that cannot set up (here: a sim device that refuses it because
// it asks for another cost model than the device has) fails the run
// before it starts, naming the worker, with nothing left running.
func TestWorkerSetupFails(t *testing.T) {
	cfg := testConfig(t, "steady", "sim", 2, 1, 2)
	cfg.Iterations = 10
	opts, _ := testOptions(t)
	// The holder opens the device first with this cost; workers get the
	// configuration's options, which differ only through this test hook.
	cfg.SimCost = verbs.Cost{Reg: time.Microsecond}
	opts.WorkerEnv = append(opts.WorkerEnv, "XRCBENCH_TEST_WORKER_SIM_COST=reg=3us")
	_, err := Run(context.Background(), cfg, opts)
	var re *RunError
	if !errors.As(err, &re) || re.Status != results.StatusFailed {
		t.Fatalf("err = %v, want a failed RunError", err)
	}
	if !strings.Contains(err.Error(), "worker ") || !strings.Contains(err.Error(), "failed: thread") {
		t.Errorf("error %q does not name the worker and thread", err)
	}
}

// An interrupted run (^C) stops its workers gracefully and keeps what was
// measured: status partial, the counts of the time it ran, nothing leaked.
func TestInterrupted(t *testing.T) {
	for _, w := range []string{"sharded", "lifecycle"} {
		t.Run(w, func(t *testing.T) {
			cfg := testConfig(t, w, "sim", 2, 2, 4)
			cfg.Duration = time.Minute
			cfg.Repetitions = 3
			opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY_MEASURING=1")
			// ^C once every thread measures, and a little after: on a busy
			// machine a fixed delay may fall before the first round.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for deadline := time.Now().Add(60 * time.Second); strings.Count(stderr.String(), "measuring") < 4 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				time.Sleep(300 * time.Millisecond)
				cancel()
			}()
			start := time.Now()
			res, err := Run(ctx, cfg, opts)
			var re *RunError
			if !errors.As(err, &re) || re.Status != results.StatusPartial || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("err = %v, want a partial RunError saying interrupted\nstderr:\n%s", err, stderr)
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("took %v to stop", time.Since(start))
			}
			if len(res.Repetitions) != 1 || res.Repetitions[0].Duration.D() > 5*time.Second {
				t.Errorf("repetitions %+v, want one cut short", res.Repetitions)
			}
			for _, kind := range cfg.Workload.Kinds() {
				if kind != "reg" && kind != "unreg" && kind != "unreg_last" {
					continue
				}
				if s := res.Ops[kind]; s.Count == 0 || s.Errors != 0 {
					t.Errorf("%s: %+v, want operations and no errors", kind, s)
				}
			}
			if res.Leaks == nil || !res.Leaks.Checked || len(res.Leaks.Leaked) != 0 {
				t.Errorf("leaks %+v", res.Leaks)
			}
			if _, err := results.Load(cfg.Out); err != nil {
				t.Error(err)
			}
		})
	}
}

// A worker that writes garbage where the protocol's frames go fails the
// run with a message that says so, and names it.
func TestWorkerGarbage(t *testing.T) {
	cfg := testConfig(t, "steady", "null", 2, 1, 2)
	cfg.Iterations = 10
	opts, _ := testOptions(t, "XRCBENCH_TEST_WORKER_GARBAGE=1")
	_, err := Run(context.Background(), cfg, opts)
	var re *RunError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "protocol error") || !strings.Contains(err.Error(), "worker ") {
		t.Fatalf("err = %v, want a RunError naming the worker and the protocol error", err)
	}
}

// What a worker writes on stderr reaches the coordinator's stderr, each
// line prefixed with the worker's index and pid.
func TestWorkerStderrForwarded(t *testing.T) {
	cfg := testConfig(t, "steady", "null", 2, 1, 2)
	cfg.Iterations = 5
	opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY=hello from a worker")
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Workers {
		want := "worker " + strconv.Itoa(w.Index) + " (pid " + strconv.Itoa(w.PID) + "): hello from a worker\n"
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

// hlogCounts sums every interval line of every <kind>.hlog in dir.
func hlogCounts(t *testing.T, dir string, kinds []string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, kind := range kinds {
		for _, h := range hlogIntervals(t, dir, kind) {
			out[kind] += h.TotalCount()
		}
	}
	return out
}

// hlogIntervals reads every interval line of <kind>.hlog in dir, with
// hdrhistogram-go's reader.
func hlogIntervals(t *testing.T, dir, kind string) []*hdrhistogram.Histogram {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, kind+".hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	var hs []*hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%s.hlog: %v", kind, err)
		}
		if h == nil {
			return hs
		}
		hs = append(hs, h)
	}
}

// A worker stopped (SIGSTOP) for several intervals while the others run
// on reports its interval late; that interval is written late, not lost:
// every .hlog sums to the counts in result.json, by hdrhistogram-go's
// reader and by HdrHistogram's JavaScript one. (Before, a thread lagging
// more than two intervals dropped out of the .hlog: 7% short.)
func TestStalledWorkerLosesNoSample(t *testing.T) {
	cfg := testConfig(t, "steady", "null", 2, 1, 4)
	cfg.Duration = 4 * time.Second
	cfg.Interval = 100 * time.Millisecond
	opts, stderr := testOptions(t)
	// Stop the worker only once the measurement runs (the first interval
	// reports arrive): on a loaded machine start-up takes a while, and a
	// stop before the start is rightly in no figure.
	measuring := make(chan struct{})
	var once sync.Once
	opts.Progress = func(p Progress) {
		for _, k := range p.Kinds {
			if k.Count > 0 {
				once.Do(func() { close(measuring) })
			}
		}
	}
	done, workers := startRun(t, cfg, opts, 2)
	select {
	case <-measuring:
	case <-time.After(60 * time.Second):
		t.Fatalf("no interval reported within a minute\nstderr:\n%s", stderr)
	}
	time.Sleep(200 * time.Millisecond) // some intervals
	if err := syscall.Kill(workers[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // 7 intervals: the other worker runs ahead
	if err := syscall.Kill(workers[0], syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("Run: %v\nstderr:\n%s", o.err, stderr)
	}
	late := false
	for _, w := range o.res.Warnings {
		late = late || w.Kind == results.WarnLateReports && w.Severity == results.SeverityNotice && strings.Contains(w.Text, "written late")
	}
	if !late {
		t.Fatalf("no interval report came late (warnings %q): the stall did not make a thread lag, so this test checked nothing", o.res.Warnings)
	}
	// The stall is accounted: inside an operation it is a latency, between
	// batches it is the longest untimed gap (issue 10 item 5).
	stall := o.res.Harness.MaxGap
	var worst int64
	for _, s := range o.res.Ops {
		worst = max(worst, s.NS.Max)
	}
	if stall != nil {
		worst = max(worst, stall.NS)
	}
	if worst < int64(500*time.Millisecond) {
		t.Errorf("a 700 ms stall is neither a latency nor an untimed gap: latency max and max gap %v", time.Duration(worst))
	}
	// Every thread measured the timer before and after, every worker its
	// memory (items 6, 7).
	if to := o.res.Harness.TimerOverhead; to == nil || to.Samples != 2*cfg.Procs*cfg.Threads || to.MinNS <= 0 {
		t.Errorf("timer overhead %+v, want 2 measurements per thread", to)
	}
	for _, w := range o.res.Workers {
		if w.PSSKB <= 0 || w.PSSKB > w.RSSKB {
			t.Errorf("worker %d: RSS %d KiB, PSS %d KiB", w.Index, w.RSSKB, w.PSSKB)
		}
		for _, tc := range w.PerThread {
			if tc.Coverage <= 0 || tc.Coverage > 1 {
				t.Errorf("thread %d coverage %g", tc.Thread, tc.Coverage)
			}
		}
	}
	kinds := cfg.Workload.Kinds()
	got := hlogCounts(t, cfg.Out, kinds)
	for _, kind := range kinds {
		if want := o.res.Ops[kind].Count; got[kind] != want || want == 0 {
			t.Errorf("%s: the .hlog holds %d latencies, result.json counts %d", kind, got[kind], want)
		}
	}
	// The independent reader agrees.
	for _, kind := range kinds {
		var sum int64
		for _, ln := range strings.Split(strings.TrimSpace(hdrJS(t, "hlog", filepath.Join(cfg.Out, kind+".hlog"))), "\n") {
			n, _ := strconv.ParseInt(strings.Fields(ln)[2], 10, 64)
			sum += n
		}
		if sum != o.res.Ops[kind].Count {
			t.Errorf("%s: the JS reader sums the .hlog to %d, result.json counts %d", kind, sum, o.res.Ops[kind].Count)
		}
		// The late lines share their intervals' spans: counted once, the
		// lengths are still the repetition's time.
		checkLogRates(t, o.res, kind, filepath.Join(cfg.Out, kind+".hlog"), float64(time.Now().UnixMilli()))
	}
}

// A stopped worker (SIGSTOP) is a stalled one: after --stall-timeout the
// run stops, naming it with its pid and state, keeps what the other
// workers (and it, until it stopped) measured, and ends partial. In
// iterations and duration runs, loop and rounds workloads: a rounds
// workload's other threads wait at a barrier for the stopped one.
func TestStalledWorker(t *testing.T) {
	tests := []struct {
		workload   string
		iterations int64
		duration   time.Duration
	}{
		{"sharded", 1 << 40, 0},
		{"sharded", 0, time.Hour},
		{"lifecycle", 1 << 40, 0},
		{"lifecycle", 0, time.Hour},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/iterations", tt.workload)
		if tt.duration > 0 {
			name = fmt.Sprintf("%s/duration", tt.workload)
		}
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t, tt.workload, "sim", 2, 2, 4)
			cfg.Iterations, cfg.Duration = tt.iterations, tt.duration
			cfg.Interval = 200 * time.Millisecond
			cfg.StallTimeout = 2 * time.Second
			opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY_MEASURING=1")
			done := make(chan runOutcome, 1)
			go func() {
				res, err := Run(context.Background(), cfg, opts)
				done <- runOutcome{res, err}
			}()
			// Wait until every thread measures and an interval or two went
			// out, then stop worker 1.
			pidOf := regexp.MustCompile(`worker 1 \(pid (\d+)\): thread \d+ measuring`)
			var pid int
			for deadline := time.Now().Add(60 * time.Second); pid == 0 || strings.Count(stderr.String(), "measuring") < 4; time.Sleep(20 * time.Millisecond) {
				if m := pidOf.FindStringSubmatch(stderr.String()); m != nil {
					pid, _ = strconv.Atoi(m[1])
				}
				if time.Now().After(deadline) {
					t.Fatalf("the threads never all measured:\n%s", stderr)
				}
			}
			time.Sleep(600 * time.Millisecond)
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := time.Now()
			defer syscall.Kill(pid, syscall.SIGKILL)
			var o runOutcome
			select {
			case o = <-done:
			case <-time.After(60 * time.Second):
				syscall.Kill(pid, syscall.SIGCONT)
				t.Fatalf("the run did not stop within 60s of the worker's SIGSTOP")
			}
			if d := time.Since(stopped); d < cfg.StallTimeout {
				t.Errorf("stopped after %v, before the stall timeout %v", d, cfg.StallTimeout)
			}
			var re *RunError
			if !errors.As(o.err, &re) || re.Status != results.StatusPartial {
				t.Fatalf("err = %v, want a partial RunError\nstderr:\n%s", o.err, stderr)
			}
			for _, want := range []string{fmt.Sprintf("worker 1 (pid %d)", pid), "state T, stopped", "--stall-timeout"} {
				if !strings.Contains(o.err.Error(), want) {
					t.Errorf("error %q does not say %q", o.err, want)
				}
			}
			r, err := results.Load(cfg.Out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != results.StatusPartial || len(r.Repetitions) != 1 {
				t.Errorf("status %s, %d repetitions: want partial with the one measured", r.Status, len(r.Repetitions))
			}
			// The other worker's threads measured: its counts are kept.
			var kept int64
			for _, w := range r.Workers {
				if w.Index == 0 {
					for _, n := range w.Counts {
						kept += n
					}
				}
			}
			if kept == 0 {
				t.Errorf("worker 0's counts lost: %+v", r.Workers)
			}
			for kind, s := range r.Ops {
				if s.Count == 0 && kind != "create" {
					t.Errorf("%s: nothing kept", kind)
				}
			}
		})
	}
}
