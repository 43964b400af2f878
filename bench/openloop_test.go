package bench

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/stats"
	"github.com/xrcbench/xrcbench/verbs"
	"golang.org/x/sys/unix"
)

// openConfig is one thread on one QP of a sim device whose reg and unreg
// each take 10 µs, at rate operations per second.
func openConfig(t *testing.T, rate float64, d time.Duration) Config {
	cfg := testConfig(t, "steady", "sim", 1, 1, 1)
	cfg.SimCost = verbs.Cost{Reg: 10 * time.Microsecond, Unreg: 10 * time.Microsecond}
	cfg.Rate, cfg.Duration, cfg.Warmup = rate, d, 200*time.Millisecond
	return cfg
}

// cpuShare is the share of its measured time the worker had a CPU: a
// known answer about latency needs the machine to give it one.
func cpuShare(res *results.Result) float64 {
	var cpu float64
	for _, w := range res.Workers {
		cpu += w.CPUSeconds
	}
	return cpu / (time.Duration(res.Config.Duration) + time.Duration(res.Config.Warmup)).Seconds()
}

// Known answers of the open loop: at 25000 operations per second of 10 µs
// each the device is half busy, so the service time is the cost and the
// response time barely more; at 200000 it cannot keep up, and the result
// says so.
func TestOpenLoopKnownAnswers(t *testing.T) {
	const cost = 10_000.0
	t.Run("half busy", func(t *testing.T) {
		res := runOK(t, openConfig(t, 25000, 2*time.Second))
		ol := res.OpenLoop
		if ol == nil || ol.RequestedOpsPerSec != 25000 || ol.Arrival != ArrivalFixed {
			t.Fatalf("open_loop %+v, want 25000 ops/s requested, fixed arrivals", ol)
		}
		for _, kind := range []string{"reg", "unreg"} {
			s := res.Ops[kind]
			if s.ResponseNS == nil || res.Histograms[kind+results.ResponseSuffix] == "" {
				t.Fatalf("%s: no response time", kind)
			}
			if s.ResponseNS.P50 < s.NS.P50 || s.ResponseNS.Max < s.NS.Max/2 {
				t.Errorf("%s: response p50 %d below the service p50 %d", kind, s.ResponseNS.P50, s.NS.P50)
			}
		}
		if share := cpuShare(res); share < 0.8 {
			t.Skipf("the worker had a CPU %.0f%% of the time: the machine is too busy for the latency answers", 100*share)
		}
		for _, kind := range []string{"reg", "unreg"} {
			s := res.Ops[kind]
			if d := float64(s.NS.P50)/cost - 1; d < -0.05 || d > 0.05 {
				t.Errorf("%s: service p50 %d ns, want within 5%% of 10 µs", kind, s.NS.P50)
			}
			if d := float64(s.ResponseNS.P50)/cost - 1; d < -0.2 || d > 0.2 {
				t.Errorf("%s: response p50 %d ns, want within 20%% of 10 µs", kind, s.ResponseNS.P50)
			}
		}
		if ol.Saturated || ol.AchievedOpsPerSec < 0.95*25000 {
			t.Errorf("open_loop %+v: saturated at half the device's capacity", ol)
		}
	})
	// The known answer of queueing theory: one thread on one QP is a
	// single server with a fixed service time s (the sim's reg and unreg
	// each cost 10 µs; s is the measured mean service time, the cost plus
	// the sim's own work). Poisson arrivals at λ make an M/D/1 queue: mean
	// response s + ρs/(2(1−ρ)), ρ = λs; fixed arrivals below saturation
	// never queue: response s (the p50 judged against the service's p50,
	// the mean against its mean). On a quiet machine (2-core VM) the mean
	// response holds within +15% of that and the p50 within +10%; below
	// either by more than 5% the schedule would be wrong. The harness's
	// own stall at each interval's end once made the mean 3x-800x M/D/1
	// and the p50 at ρ = 0.5 +31-46% (issue 25).
	//
	// A machine is quiet for this when a plain C open loop (openref) gets
	// the queue's answer on it: the runs alternate with the reference's,
	// and each figure is the median of its runs. Where the reference holds
	// the answer, the harness must too; where it does not (a VM's host
	// taking the CPU for milliseconds: a stall queues every arrival due in
	// it), the harness may exceed the queue by no more than the reference
	// did plus the same tolerance, so what is judged is what the harness
	// adds to the machine. One run's mean is at the mercy of the longest
	// stall in it (a single 2 ms stall in a second at ρ = 0.5 adds about
	// 40%), so each side is the median of nine: of five, the reference's
	// ranged +19% to +30% between idle sessions, and one batch of the
	// harness's +43% against the reference's +24% when the next two had it
	// at or under the reference's in every pair.
	for _, tt := range []struct {
		name    string
		arrival string
	}{{"M/D/1 at rho 0.5", ArrivalPoisson}, {"D/D/1 at rho 0.5", ArrivalFixed}} {
		t.Run(tt.name, func(t *testing.T) {
			const runs, rate = 9, 50000
			d, ref := time.Second, openRefBinary(t)
			// The reference waits as the harness's thread does: spinning
			// on a machine with a CPU to spare for the harness.
			base := openConfig(t, rate, d)
			wait := base.openWait(host.StartRealTime())
			var refMean, refP50 []float64
			harnessMean, harnessP50 := map[string][]float64{}, map[string][]float64{}
			var failures []string
			load := measureLoad(t, func() {
				for i := range runs {
					r := runOpenRef(t, ref, rate, cost*time.Nanosecond, 200*time.Millisecond, d, tt.arrival, i+1, wait)
					mean, p50 := md1(rate, r.serviceMean, tt.arrival == ArrivalPoisson)
					if tt.arrival == ArrivalFixed {
						p50 = float64(r.serviceP50) // see the harness's below
					}
					refMean, refP50 = append(refMean, r.responseMean/mean-1), append(refP50, float64(r.responseP50)/p50-1)
					t.Logf("reference %d: service mean %.2fµs; response mean %.2fµs (queue %.2fµs, %+.1f%%), p50 %.2fµs (queue %.2fµs, %+.1f%%); latest wake-up %v",
						i, r.serviceMean/1e3, r.responseMean/1e3, mean/1e3, 100*refMean[i], float64(r.responseP50)/1e3, p50/1e3, 100*refP50[i], time.Duration(r.lateMax))

					cfg := openConfig(t, rate, d)
					cfg.Arrival, cfg.Seed = tt.arrival, int64(i+1)
					res := runOK(t, cfg)
					if res.OpenLoop.Wait != wait {
						t.Fatalf("open_loop.wait %q, want %q as the reference waited", res.OpenLoop.Wait, wait)
					}
					for _, kind := range []string{"reg", "unreg"} {
						st := res.Ops[kind]
						if st.ResponseNS == nil {
							t.Fatalf("%s: no response time", kind)
						}
						got := *st.ResponseNS
						if rho := cfg.Rate * st.NS.Mean / 1e9; rho >= 0.9 {
							failures = append(failures, fmt.Sprintf("%s: service mean %.2fµs, ρ %.2f: want about 0.5", kind, st.NS.Mean/1e3, rho))
							continue
						}
						mean, p50 := md1(cfg.Rate, st.NS.Mean, tt.arrival == ArrivalPoisson)
						if tt.arrival == ArrivalFixed {
							// Nothing queues, so the response is the service,
							// median for median: the service's mean is pulled
							// up by the machine's rare long ones (10.7 µs
							// against a p50 of 10.13 µs on the VM), and
							// judging the p50 by it put it 5% "under".
							p50 = float64(st.NS.P50)
						}
						harnessMean[kind] = append(harnessMean[kind], got.Mean/mean-1)
						harnessP50[kind] = append(harnessP50[kind], float64(got.P50)/p50-1)
						t.Logf("harness %d %s: service mean %.2fµs; response mean %.2fµs (queue %.2fµs, %+.1f%%), p50 %.2fµs (queue %.2fµs, %+.1f%%)",
							i, kind, st.NS.Mean/1e3, got.Mean/1e3, mean/1e3, 100*(got.Mean/mean-1), float64(got.P50)/1e3, p50/1e3, 100*(float64(got.P50)/p50-1))
					}
					if res.OpenLoop.Saturated {
						failures = append(failures, fmt.Sprintf("saturated at ρ 0.5: %+v", *res.OpenLoop))
					}
					// Time outside operations and waits delays every arrival
					// due in it: a thread that came back into Go after every
					// ~1 ms program lost 7% so (coverage 0.93), and the
					// queue's answer with it; a ring loses next to nothing.
					if c := res.Harness.Coverage; c == nil || c.MinThreadShare < 0.99 {
						failures = append(failures, fmt.Sprintf("coverage %+v: want the thread inside operations and waits 99%% of its time or more", c))
					}
				}
			})
			failures = append(failures, judgeOpenLoop(refMean, refP50, harnessMean, harnessP50)...)
			failOrSkip(t, load, failures)
		})
	}
	t.Run("saturated", func(t *testing.T) {
		res := runOK(t, openConfig(t, 200000, time.Second))
		ol := res.OpenLoop
		if ol == nil || !ol.Saturated || ol.AchievedOpsPerSec >= 0.95*200000 || ol.BacklogEndNS <= 0 {
			t.Fatalf("open_loop %+v, want saturated, achieved below requested, a backlog", ol)
		}
		if !strings.Contains(strings.Join(results.WarningTexts(res.Warnings), "\n"), "open loop saturated") {
			t.Errorf("warnings %q do not say the open loop saturated", res.Warnings)
		}
	})
}

// A measured thread never stops for its interval's report: the longest
// untimed gap of a quiet 1-thread run, across ten interval boundaries, is
// under 1 ms in a closed loop and in an open loop (where every operation
// due during a gap would wait for it); a ring stays in C across them, its
// deck turned by the C loop. Encoding the intervals on the measured thread
// made it 4-30 ms, at every boundary (issue 25); coming back into Go at
// each, up to 3 ms when the runtime preempted the thread there (in 7 of
// 19 runs over 1 ms, race detector on).
func TestNoGapAtIntervals(t *testing.T) {
	for _, tt := range []struct {
		name string
		rate float64
	}{{"closed loop", 0}, {"open loop", 25000}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := openConfig(t, tt.rate, time.Second)
			cfg.Interval = 100 * time.Millisecond
			var res *results.Result
			load := measureLoad(t, func() { res = runOK(t, cfg) })
			// Boundaries to test are the precondition; that all ten
			// intervals are there is judged with the gap, by the load: on a
			// busy machine the run's end can fall before the tenth.
			n := len(hlogIntervals(t, cfg.Out, "reg"))
			if n < 2 {
				t.Fatalf("%d intervals in reg.hlog: no boundary to test", n)
			}
			g := res.Harness.MaxGap
			if g == nil {
				t.Fatal("no untimed gap measured")
			}
			var failures []string
			if n < 10 {
				failures = append(failures, fmt.Sprintf("%d intervals in reg.hlog, want 10 of a 1s run at 100ms", n))
			}
			if g.NS >= int64(time.Millisecond) {
				failures = append(failures, fmt.Sprintf("the longest untimed gap is %v (before a %s batch, %v after the start), want under 1ms",
					time.Duration(g.NS), g.Kind, time.Duration(g.AtNS)))
			}
			failOrSkip(t, load, failures)
			t.Logf("longest untimed gap %v at %v; %s", time.Duration(g.NS), time.Duration(g.AtNS), load)
		})
	}
}

// A worker stopped for 200 ms in an open loop leaves the operations due
// meanwhile behind: their response times show the stall, in the maximum
// and in the 99.9th percentile, whenever the stop lands (inside an
// operation, a wait, or between program runs). A closed loop would have
// shown one slow operation at most.
func TestOpenLoopStall(t *testing.T) {
	const stall = 200 * time.Millisecond
	for run := range 2 {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			cfg := openConfig(t, 10000, 2*time.Second)
			opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY_MEASURING=1")
			done, _ := startRun(t, cfg, opts, 1)
			pid := measuringWorker(t, stderr)
			time.Sleep(time.Duration(300+200*run) * time.Millisecond)
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			// The stall is timed from when every thread has stopped: on a
			// loaded machine the stop lands milliseconds after kill(2)
			// returns (a CI run measured a max of 197.8 ms when the sleep
			// began at the kill).
			waitStopped(t, pid)
			time.Sleep(stall)
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			o := <-done
			if o.err != nil {
				t.Fatalf("Run: %v\nstderr:\n%s", o.err, stderr)
			}
			var worst int64
			for _, kind := range []string{"reg", "unreg"} {
				r := o.res.Ops[kind].ResponseNS
				if r == nil {
					t.Fatalf("%s: no response time", kind)
				}
				worst = max(worst, r.Max)
				// ops due in the stall: 2000 of 20000, 10% of each kind
				if r.P999 < int64(stall)*3/4 {
					t.Errorf("%s: response p99.9 %v, want the %v stall in it", kind, time.Duration(r.P999), stall)
				}
			}
			// The test times the stop from outside, from when the threads
			// are stopped: the first operation behind it may be due up to
			// one gap (100 µs) after it began, and the histogram holds
			// 200 ms to 131 µs. 1% covers these; a stall that went missing
			// would leave a max of about a millisecond.
			if worst < int64(stall)*99/100 {
				t.Errorf("response max %v, want the %v stall (within 1%%)", time.Duration(worst), stall)
			}
		})
	}
}

// waitStopped waits until every thread of pid is stopped (state T in its
// /proc stat), at most a second.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(stats) == 0 {
			t.Fatalf("no threads of pid %d: %v", pid, err)
		}
		stopped := 0
		for _, p := range stats {
			b, err := os.ReadFile(p)
			if st, ok := statState(b); err == nil && ok && st == 'T' {
				stopped++
			}
		}
		if stopped == len(stats) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %d of %d threads stopped a second after SIGSTOP", pid, stopped, len(stats))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// One stall in the last moments of a run that otherwise kept up is not
// saturation: a worker at ρ = 0.8 stopped 0.8 s into a 1 s measurement
// until past its end (as real-time throttling once stopped a SCHED_FIFO
// run, leaving 4043 operations unrun) left its last operations far behind
// and a fifth of its arrivals unrun, and the run was called "did not keep
// up". The verdict judges the sustained backlog, and the warning names the
// stall at the end.
func TestOpenLoopEndStall(t *testing.T) {
	cfg := openConfig(t, 80000, time.Second)
	opts, stderr := testOptions(t, "XRCBENCH_TEST_WORKER_SAY_MEASURING=1")
	var o runOutcome
	load := measureLoad(t, func() {
		done, _ := startRun(t, cfg, opts, 1)
		pid := measuringWorker(t, stderr)
		time.Sleep(800 * time.Millisecond)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(400 * time.Millisecond)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		o = <-done
	})
	if o.err != nil {
		t.Fatalf("Run: %v\nstderr:\n%s", o.err, stderr)
	}
	ol := o.res.OpenLoop
	if ol.BacklogEndNS < int64(100*time.Millisecond) {
		t.Fatalf("open_loop %+v: the stall did not reach the end, so this test checked nothing", *ol)
	}
	var failures []string
	if ol.Saturated || ol.BacklogOverShare >= 0.5 {
		failures = append(failures, fmt.Sprintf("saturated %v, beyond %v behind for %.0f%% of the measurement: want one stall at the end, not saturation (%+v)",
			ol.Saturated, time.Duration(ol.BacklogLimitNS), 100*ol.BacklogOverShare, *ol))
	} else if w := strings.Join(results.WarningTexts(o.res.Warnings), "\n"); !strings.Contains(w, "so this is a stall at the end") || strings.Contains(w, "saturated") {
		t.Errorf("warnings %q: want the stall at the end named, and no saturation", o.res.Warnings)
	}
	failOrSkip(t, load, failures)
}

// measuringWorker waits until worker 0's thread 0 says it measures (a run
// started with XRCBENCH_TEST_WORKER_SAY_MEASURING=1) and returns the
// worker's pid.
func measuringWorker(t *testing.T, stderr *syncBuffer) int {
	t.Helper()
	pidOf := regexp.MustCompile(`worker 0 \(pid (\d+)\): thread 0 measuring`)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := pidOf.FindStringSubmatch(stderr.String()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the thread never measured:\n%s", stderr)
		}
	}
}

// The schedule of a timed loop ends at the loop's end: an arrival due at
// or after it is not scheduled, so no thread waits past the end for it
// (--rate 0.05 once made a 300ms run last 20s).
func TestOpenLoopEndsAtTheEnd(t *testing.T) {
	for _, tt := range []struct {
		rate float64
		want int // arrivals before the end: at 0, 1/rate, ...
	}{{0.05, 1}, {1e-300, 1}, {10, 3}, {10.01, 4}} {
		o := &openLoop{a: verbs.NewArrivals(1e9/tt.rate, false, 1, 2)}
		t0 := verbs.Now()
		o.begin(t0)
		o.a.End = t0 + uint64(300*time.Millisecond)
		start := make([]uint64, 8)
		n := o.schedule(start, 0, len(start), uint64(time.Second))
		if n != tt.want || !o.over() {
			t.Errorf("rate %g: scheduled %d (over %v), want %d before the end", tt.rate, n, o.over(), tt.want)
		}
		for _, s := range start[:n] {
			if s >= o.a.End {
				t.Errorf("rate %g: an arrival %v after the start, past the end", tt.rate, time.Duration(s-t0))
			}
		}
		if again := o.schedule(start, n, len(start), uint64(time.Second)); again != n {
			t.Errorf("rate %g: past the end, scheduled %d more", tt.rate, again-n)
		}
	}
}

// md1 is the mean and median response time (ns) of a single server with
// the fixed service time s (ns) under arrivals at rate per second: an
// M/D/1 queue for Poisson arrivals, none for fixed ones below saturation.
func md1(rate, s float64, poisson bool) (mean, p50 float64) {
	if !poisson {
		return s, s
	}
	lambda := rate / 1e9
	rho := lambda * s
	if rho >= 1 {
		return math.Inf(1), math.Inf(1) // no steady state: the queue grows
	}
	mean = s + rho*s/(2*(1-rho))
	// The median wait: the least t with P(wait <= t) >= 1/2, by bisection
	// on the waiting time's distribution (waitCDF).
	if waitCDF(0, lambda, s) >= 0.5 {
		return mean, s
	}
	lo, hi := 0.0, s
	for waitCDF(hi, lambda, s) < 0.5 {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1e-3 {
		if mid := (lo + hi) / 2; waitCDF(mid, lambda, s) < 0.5 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return mean, s + hi
}

// waitCDF is P(wait <= t) in an M/D/1 queue with arrivals at lambda per
// ns and service time s ns (Erlang's formula, as Crommelin gave it):
// (1-ρ) Σ_{k=0}^{⌊t/s⌋} e^{λ(t-ks)} (-λ(t-ks))^k / k!. Its alternating
// terms lose precision far into the tail, not at the median of ρ <= 0.95.
func waitCDF(t, lambda, s float64) float64 {
	var sum float64
	for k := 0; float64(k)*s <= t; k++ {
		x := lambda * (t - float64(k)*s)
		term := math.Exp(x)
		for j := 1; j <= k; j++ {
			term *= -x / float64(j)
		}
		sum += term
	}
	return (1 - lambda*s) * sum
}

// The M/D/1 figures the known answer holds against: the mean from the
// Pollaczek-Khinchine formula, the distribution from Erlang's, which must
// agree with a simulation of the queue.
func TestMD1(t *testing.T) {
	const s = 10_000.0
	for _, rho := range []float64{0.2, 0.5, 0.8, 0.95} {
		rate := rho / s * 1e9
		mean, p50 := md1(rate, s, true)
		if want := s + rho*s/(2*(1-rho)); mean != want {
			t.Errorf("ρ %g: mean %g, want %g", rho, mean, want)
		}
		// Lindley's recursion over a million Poisson arrivals.
		rng := rand.New(rand.NewPCG(1, uint64(1000*rho)))
		var w, sum float64
		resp := make([]float64, 0, 1_000_000)
		for i := 0; i < cap(resp); i++ {
			resp = append(resp, w+s)
			sum += w + s
			w = max(0, w+s-rng.ExpFloat64()/(rate/1e9))
		}
		slices.Sort(resp)
		simMean, simP50 := sum/float64(len(resp)), resp[len(resp)/2]
		if math.Abs(simMean/mean-1) > 0.03 || math.Abs(simP50/p50-1) > 0.03 {
			t.Errorf("ρ %g: mean %.0f, p50 %.0f; the simulated queue's %.0f, %.0f", rho, mean, p50, simMean, simP50)
		}
		t.Logf("ρ %g: mean %.0f ns, p50 %.0f ns (simulated %.0f, %.0f)", rho, mean, p50, simMean, simP50)
	}
	if mean, p50 := md1(50000, s, false); mean != s || p50 != s {
		t.Errorf("fixed arrivals: %g, %g, want the service time", mean, p50)
	}
}

// A thread's sustained backlog: the time from one program run's end to
// the next one's counts as behind when the later run ended more than the
// limit behind its schedule; what came before the measurement does not.
func TestOpenLoopBacklogTime(t *testing.T) {
	ms := uint64(time.Millisecond)
	o := &openLoop{a: verbs.NewArrivals(1e5, false, 1, 2)}
	o.begin(1000 * ms)
	o.a.Limit = 10 * ms
	for _, r := range []struct{ at, behind uint64 }{
		{1001, 0}, {1002, 9 * ms}, // within the limit
		{1050, 60 * ms}, {1060, 50 * ms}, // a stall: 48 + 10 ms behind
		{1061, 10 * ms}, // at the limit: not beyond it
		{1100, 0},
		{1400, 300 * ms}, // a stall to the end: 300 ms
	} {
		o.ran(&verbs.ProgramStats{BehindNS: r.behind}, r.at*ms, true)
	}
	if want := (48 + 10 + 300) * ms; o.a.OverNS != want {
		t.Errorf("behind beyond the limit for %v, want %v", time.Duration(o.a.OverNS), time.Duration(want))
	}
	if o.sampled() != 400*ms {
		t.Errorf("the backlog counted over %v, want the 400ms from the first intended start to the last sample", time.Duration(o.sampled()))
	}
	if o.behindNS != 300*ms || o.a.BehindMax != 300*ms {
		t.Errorf("backlog %v at the end, at most %v; want 300ms", time.Duration(o.behindNS), time.Duration(o.a.BehindMax))
	}
	o.begin(2000 * ms)
	if o.a.OverNS != 0 || o.a.Mark != 2000*ms {
		t.Errorf("a new measurement starts with %v behind, marked at %v", time.Duration(o.a.OverNS), time.Duration(o.a.Mark))
	}
}

// The open loop's known answer's tolerances, as shares of the queue's
// figure: above it, for the mean response and the p50; below it, for both
// (a machine's stalls only add, so a figure well under the queue's is a
// wrong schedule).
const (
	openMeanAbove = 0.15
	openP50Above  = 0.10
	openBelow     = 0.05
)

// judgeOpenLoop says what fails the open loop's known answer. Each figure
// is a run's excess over the queue's answer (mean response / queue's − 1,
// and the same of the p50), of the reference loop and, per op kind, of
// the harness; each side is judged by the median of its runs. Where the
// reference's medians hold the tolerances the machine is quiet and the
// harness's must hold them too; elsewhere the harness's may exceed the
// reference's by no more than the tolerance, and fall below the lower of
// the reference's and the queue's by no more than openBelow.
func judgeOpenLoop(refMean, refP50 []float64, mean, p50 map[string][]float64) []string {
	rm, rp := stats.Median(refMean), stats.Median(refP50)
	quiet := rm >= -openBelow && rm <= openMeanAbove && rp >= -openBelow && rp <= openP50Above
	var failures []string
	check := func(kind, what string, got, ref, above float64) {
		hi, lo := above, -openBelow
		if !quiet {
			hi, lo = max(ref, 0)+above, min(ref, 0)-openBelow
		}
		if got >= lo && got <= hi {
			return
		}
		why := "the reference C loop got the queue's answer (a quiet machine)"
		if !quiet {
			why = "the reference C loop on this machine got " + fmt.Sprintf("%+.1f%% mean, %+.1f%% p50", 100*rm, 100*rp)
		}
		failures = append(failures, fmt.Sprintf("%s: median %s %+.1f%% from the queue's, want %+.0f%%..%+.0f%% (%s)",
			kind, what, 100*got, 100*lo, 100*hi, why))
	}
	for _, kind := range slices.Sorted(maps.Keys(mean)) {
		check(kind, "mean response", stats.Median(mean[kind]), rm, openMeanAbove)
		check(kind, "response p50", stats.Median(p50[kind]), rp, openP50Above)
	}
	return failures
}

func TestJudgeOpenLoop(t *testing.T) {
	runs := func(xs ...float64) []float64 { return xs }
	for _, tt := range []struct {
		name      string
		refMean   []float64
		refP50    []float64
		mean, p50 []float64
		fail      []string // what the failures name, in order
	}{
		{"quiet, held", runs(0.02, 0.05, 0.30), runs(0.01, 0.03, 0.02), runs(0.10, 0.12, 0.90), runs(0.05, 0.08, 0.02), nil},
		{"quiet, the harness's mean over", runs(0.02, 0.05, 0.04), runs(0.01, 0.03, 0.02), runs(0.20, 0.25, 0.30), runs(0.05, 0.08, 0.02), []string{"mean response +25.0%", "want -5%..+15% (the reference C loop got the queue's answer"}},
		{"quiet, the p50 under", runs(0.02, 0.05, 0.04), runs(0.01, 0.03, 0.02), runs(0.02, 0.02, 0.02), runs(-0.08, -0.07, -0.06), []string{"response p50 -7.0%"}},
		{"a machine's stalls, added to", runs(0.35, 0.60, 0.90), runs(0.10, 0.12, 0.08), runs(0.50, 0.70, 0.80), runs(0.15, 0.11, 0.20), nil},
		{"a machine's stalls, the harness's beyond", runs(0.35, 0.60, 0.90), runs(0.10, 0.12, 0.08), runs(0.90, 1.20, 2.00), runs(0.15, 0.11, 0.20), []string{"mean response +120.0%", "want -5%..+75%", "got +60.0% mean, +10.0% p50"}},
		{"a p50 under the queue, as the reference's", runs(0.30, 0.40, 0.50), runs(-0.08, -0.07, -0.09), runs(0.40, 0.40, 0.40), runs(-0.10, -0.09, -0.11), nil},
		{"an interval stall (3x-800x)", runs(0.20, 0.30, 0.25), runs(0.01, 0.02, 0.03), runs(3, 50, 800), runs(0.31, 0.46, 0.40), []string{"mean response +5000.0%", "response p50 +40.0%"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := judgeOpenLoop(tt.refMean, tt.refP50, map[string][]float64{"reg": tt.mean}, map[string][]float64{"reg": tt.p50})
			all := strings.Join(got, "\n")
			if len(tt.fail) == 0 && len(got) != 0 {
				t.Fatalf("failures %q, want none", got)
			}
			if len(tt.fail) != 0 && len(got) == 0 {
				t.Fatalf("no failure, want %q", tt.fail)
			}
			for _, f := range tt.fail {
				if !strings.Contains(all, f) {
					t.Errorf("failures %q do not say %q", got, f)
				}
			}
		})
	}
}

// An open loop's measured threads spin their waits when they leave a CPU
// to the harness and run at the ordinary policy, and sleep otherwise; a
// closed loop has no waits. The run's threads are set against the CPUs
// this test may use, so the table holds on any machine.
func TestOpenWait(t *testing.T) {
	cpus := len(host.AllowedCPUs())
	fifo := &host.RTSched{Policy: unix.SCHED_FIFO, Priority: 1}
	for _, tt := range []struct {
		name           string
		procs, threads int
		rate           float64
		rt             *host.RTSched
		want           string
	}{
		{"closed loop", 1, 1, 0, nil, ""},
		{"one CPU spare", 1, cpus - 1, 1000, nil, WaitSpin},
		{"one CPU spare over processes", cpus - 1, 1, 1000, nil, WaitSpin},
		{"as many threads as CPUs", 1, cpus, 1000, nil, WaitSleep},
		{"more threads than CPUs", 2, cpus, 1000, nil, WaitSleep},
		{"real-time", 1, 1, 1000, fifo, WaitSleep},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.procs < 1 || tt.threads < 1 {
				t.Skipf("needs %d processes of %d threads: this test may use %d CPU(s)", tt.procs, tt.threads, cpus)
			}
			c := Config{Procs: tt.procs, Threads: tt.threads, Rate: tt.rate}
			if got := c.openWait(tt.rt); got != tt.want {
				t.Errorf("%d x %d threads at %v/s on %d CPUs (rt %v): wait %q, want %q", tt.procs, tt.threads, tt.rate, cpus, tt.rt, got, tt.want)
			}
		})
	}
}

// And the thread does as open_loop.wait says: at 1000 operations a second
// of 10 µs (1% busy) a spinning thread burns its CPU for the whole run, a
// sleeping one next to none of it. The worker's CPU time also holds its
// start-up and setup (the runtime's, the sim device's mapping read once:
// 7% of the run a thread for 2 sleeping threads on the development VM),
// hence a second of measurement and a bound for sleeping well above 1%.
func TestOpenWaitSpins(t *testing.T) {
	cpus := len(host.AllowedCPUs())
	if cpus < 2 {
		t.Skipf("a spinning wait needs a CPU to spare: this test may use %d", cpus)
	}
	for _, threads := range []int{1, cpus} {
		cfg := openConfig(t, 1000, time.Second)
		cfg.Threads = threads
		res := runOK(t, cfg)
		share := cpuShare(res) / float64(threads) // of a CPU, per thread
		switch want := cfg.openWait(nil); {
		case res.OpenLoop.Wait != want:
			t.Errorf("%d thread(s) on %d CPUs: open_loop.wait %q, want %q", threads, cpus, res.OpenLoop.Wait, want)
		case want == WaitSpin && share < 0.25:
			t.Errorf("%d thread(s) spinning: each had a CPU %.0f%% of the run, want it busy (25%% at least, beside make test)", threads, 100*share)
		case want == WaitSleep && share > 0.2:
			t.Errorf("%d thread(s) sleeping: each had a CPU %.0f%% of the run, want its 1%% and its setup (20%% at most)", threads, 100*share)
		default:
			t.Logf("%d thread(s) on %d CPUs, wait %s: each had a CPU %.1f%% of the run", threads, cpus, want, 100*share)
		}
	}
}
