package report

import (
	"bytes"
	"maps"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/results"
)

// fixture describes a synthetic run folder: real HdrHistogram data recorded
// from a seeded log-normal distribution per op kind, summarised the way the
// engine summarises (results.Summarize), with .hlog interval logs.
type fixture struct {
	name     string
	workload string
	provider string
	procs    int
	threads  int
	qps      int
	reps     int
	seconds  int // per repetition; one .hlog interval per second
	seed     int64
	// kinds maps an op kind to its median latency (ns) and ops per thread
	// per second.
	kinds map[string]kindSpec
	// repScale multiplies every latency of repetition i (noise, outliers).
	repScale func(rep int) float64
	status   string
	errMsg   string
	errors   map[string]int64 // per kind, counted in repetition 0
	skewNS   int64
	timerNS  float64
	noHlog   []string // kinds written without a .hlog
	// hlogTrunc cuts this kind's .hlog in the middle of its last line.
	hlogTrunc string
	device    *results.Device
	host      string
	// expect names the errno a kind's operations must fail with.
	expect map[string]string
	// stoppedAt, when > 0, is the seconds the last repetition measured
	// before the run was stopped (of seconds requested); requested is the
	// repetitions asked for, when more than were run.
	stoppedAt int
	requested int
	// provDetail is the result's provider_detail.
	provDetail map[string]string
}

type kindSpec struct {
	medianNS float64
	sigma    float64 // of the log-normal
	rate     int     // ops per thread per second
}

// lifecycleFixture is a clean run of the lifecycle workload.
func lifecycleFixture() fixture {
	return fixture{
		name: "lifecycle", workload: "lifecycle", provider: "sim",
		procs: 2, threads: 2, qps: 16, reps: 5, seconds: 3, seed: 1,
		kinds: map[string]kindSpec{
			results.OpCreate:    {medianNS: 2500, sigma: 0.3, rate: 400},
			results.OpReg:       {medianNS: 900, sigma: 0.25, rate: 1600},
			results.OpUnreg:     {medianNS: 700, sigma: 0.25, rate: 1200},
			results.OpUnregLast: {medianNS: 4200, sigma: 0.35, rate: 400},
		},
		repScale: func(rep int) float64 { return 1 + 0.01*float64(rep%3) },
		status:   results.StatusOK,
		skewNS:   12_000, timerNS: 19.5,
		device: &results.Device{Name: "sim0", XRC: true, FWVer: "sim-1.0", NUMANode: -1},
		host:   "bench-a",
	}
}

// noisyFixture calls for every warning: partial status, errors, an outlier
// repetition, high variation, large start skew, a timer as slow as the
// operation, a missing and a damaged interval log.
func noisyFixture() fixture {
	return fixture{
		name: "noisy", workload: "steady", provider: "null",
		procs: 1, threads: 2, qps: 4, reps: 6, seconds: 2, seed: 2,
		kinds: map[string]kindSpec{
			results.OpReg:   {medianNS: 40, sigma: 0.4, rate: 3000},
			results.OpUnreg: {medianNS: 35, sigma: 0.4, rate: 3000},
		},
		repScale: func(rep int) float64 {
			if rep == 4 {
				return 3 // the outlier
			}
			return 1 + 0.3*float64(rep%2) // and high variation
		},
		status: results.StatusPartial, errMsg: "worker 0 exited: signal: killed",
		errors: map[string]int64{results.OpReg: 7},
		skewNS: 90_000_000, timerNS: 21,
		noHlog:    []string{results.OpUnreg},
		hlogTrunc: results.OpReg,
		host:      "bench-b",
	}
}

// tinyFixture has one operation of zero duration in one repetition: the
// case that breaks log axes.
func tinyFixture() fixture {
	return fixture{
		name: "tiny", workload: "churn", provider: "sim",
		procs: 1, threads: 1, qps: 1, reps: 1, seconds: 1, seed: 3,
		kinds: map[string]kindSpec{
			results.OpCreate:    {medianNS: 0, rate: 1},
			results.OpUnregLast: {medianNS: 0, rate: 1},
		},
		status: results.StatusOK,
		host:   "bench-a",
	}
}

// errorsFixture is an errors-workload run through the libibverbs test
// double, interrupted in its second of three repetitions: intended
// failures, a few unexpected ones, the test-double marking and a
// shortened measurement.
func errorsFixture() fixture {
	return fixture{
		name: "errors", workload: "errors", provider: "rdma",
		procs: 1, threads: 2, qps: 4, reps: 2, seconds: 3, seed: 4,
		kinds: map[string]kindSpec{
			results.OpRegInvalid: {medianNS: 1500, sigma: 0.3, rate: 500},
			results.OpRegForeign: {medianNS: 1800, sigma: 0.3, rate: 500},
		},
		expect:    map[string]string{results.OpRegInvalid: "EINVAL", results.OpRegForeign: "EINVAL"},
		errors:    map[string]int64{results.OpRegForeign: 3},
		stoppedAt: 1, requested: 3,
		status: results.StatusPartial, errMsg: "repetition 2: interrupted (signal: interrupt): measured until then; operations with an unexpected outcome: reg_foreign 3 of 4200 (EBUSY x3)",
		skewNS: 20_000, timerNS: 20,
		device:     &results.Device{Name: "xbfake0", XRC: true, FWVer: "99.1.0", Library: "xrcbench fakeverbs (test double)", TestDouble: true, NUMANode: -1},
		provDetail: map[string]string{"libibverbs": "/work/build/fakeverbs/libibverbs.so.1"},
		host:       "bench-a",
	}
}

// write creates the run folder dir from f.
func (f fixture) write(t testing.TB, dir string) *results.Result {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(f.seed))
	start := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	r := &results.Result{
		Schema: results.Schema, Status: f.status, Error: f.errMsg,
		Started: start,
		Config: results.Config{
			CommandLine: []string{"xrcbench", "run", "--provider", f.provider, "--workload", f.workload,
				"--procs", itoa(f.procs), "--threads", itoa(f.threads), "--qps", itoa(f.qps),
				"--repetitions", itoa(f.reps), "--seed", itoa(int(f.seed))},
			Workload: f.workload, WorkloadSpec: "name: " + f.workload + "\n",
			Provider: f.provider, Procs: f.procs, Threads: f.threads, QPs: f.qps,
			Duration: results.Duration(time.Duration(f.seconds) * time.Second),
			Warmup:   results.Duration(time.Second), Repetitions: max(f.reps, f.requested), Seed: f.seed,
			Interval: results.Duration(time.Second),
		},
		Environment: results.Environment{
			Host: f.host, Kernel: "6.1.0-test", CPUModel: "Test CPU @ 2.0GHz", CPUs: 2,
			GoVersion: "go1.26.8", Version: "fixture", Provider: f.provider, Device: f.device,
			ProviderDetail: f.provDetail,
		},
		Harness: results.Harness{Timer: "clock_monotonic", TimerOverheadNS: f.timerNS, StartSkewNS: f.skewNS,
			Warmup: results.Duration(time.Second), Repetitions: f.reps},
		Ops: map[string]results.OpStats{}, Histograms: map[string]string{},
	}
	kinds := slices.Sorted(maps.Keys(f.kinds))
	merged := map[string]*hdrhistogram.Histogram{}
	logs := map[string]*bytes.Buffer{}
	writers := map[string]*hdrhistogram.HistogramLogWriter{}
	for _, k := range kinds {
		merged[k] = results.NewHistogram()
		logs[k] = &bytes.Buffer{}
		w := hdrhistogram.NewHistogramLogWriter(logs[k])
		w.OutputLogFormatVersion()
		w.OutputStartTime(start.UnixMilli())
		w.OutputLegend()
		writers[k] = w
	}
	workers := make([]results.Worker, f.procs)
	for p := range workers {
		workers[p] = results.Worker{Index: p, PID: 1000 + p, Threads: f.threads, Exit: "ok", Counts: map[string]int64{}}
		for th := 0; th < f.threads; th++ {
			workers[p].PerThread = append(workers[p].PerThread, results.ThreadCounts{Thread: th, CPU: -1, Counts: map[string]int64{}})
		}
	}
	at := start
	for rep := 0; rep < f.reps; rep++ {
		scale := 1.0
		if f.repScale != nil {
			scale = f.repScale(rep)
		}
		repHist := map[string]*hdrhistogram.Histogram{}
		for _, k := range kinds {
			repHist[k] = results.NewHistogram()
		}
		secs := f.seconds
		if f.stoppedAt > 0 && rep == f.reps-1 {
			secs = f.stoppedAt
		}
		for sec := 0; sec < secs; sec++ {
			for _, k := range kinds {
				spec := f.kinds[k]
				iv := results.NewHistogram()
				for p := 0; p < f.procs; p++ {
					for th := 0; th < f.threads; th++ {
						// Threads differ a little in speed, so the
						// per-worker plot has something to show.
						n := spec.rate * (10 + p + th) / 10
						for i := 0; i < n; i++ {
							v := int64(0)
							if spec.medianNS > 0 {
								v = int64(spec.medianNS * scale * math.Exp(spec.sigma*rng.NormFloat64()))
							}
							iv.RecordValue(v)
						}
						workers[p].Counts[k] += int64(n)
						workers[p].PerThread[th].Counts[k] += int64(n)
					}
				}
				iv.SetStartTimeMs(at.Add(time.Duration(sec) * time.Second).UnixMilli())
				iv.SetEndTimeMs(at.Add(time.Duration(sec+1) * time.Second).UnixMilli())
				writers[k].OutputIntervalHistogram(iv)
				repHist[k].Merge(iv)
			}
		}
		dur := time.Duration(secs) * time.Second
		rr := results.Repetition{Index: rep, Duration: results.Duration(dur), Ops: map[string]results.OpStats{}}
		for _, k := range kinds {
			h := repHist[k]
			s := results.OpStats{Count: h.TotalCount(), OpsPerSec: float64(h.TotalCount()) / dur.Seconds(), NS: results.Summarize(h)}
			if rep == 0 && f.errors[k] > 0 {
				s.Errors = f.errors[k]
				s.ErrnoCounts = map[string]int64{"EBUSY": f.errors[k]}
			}
			s.Expect = f.expect[k]
			rr.Ops[k] = s
			merged[k].Merge(h)
		}
		r.Repetitions = append(r.Repetitions, rr)
		at = at.Add(dur + time.Second) // a second between repetitions
	}
	r.Finished = at
	var total time.Duration
	for _, rep := range r.Repetitions {
		total += rep.Duration.D()
	}
	for _, k := range kinds {
		h := merged[k]
		enc, err := results.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		r.Histograms[k] = enc
		r.Ops[k] = results.OpStats{Count: h.TotalCount(), Errors: f.errors[k], OpsPerSec: float64(h.TotalCount()) / total.Seconds(), NS: results.Summarize(h)}
		if f.errors[k] > 0 {
			r.Ops[k] = withErrno(r.Ops[k], "EBUSY", f.errors[k])
		}
		if e := f.expect[k]; e != "" {
			s := r.Ops[k]
			s.Expect = e
			r.Ops[k] = s
		}
	}
	r.Workers = workers
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{}
	for _, k := range f.noHlog {
		skip[k] = true
	}
	for _, k := range kinds {
		path := filepath.Join(dir, k+".hlog")
		os.Remove(path)
		if skip[k] {
			continue
		}
		data := logs[k].Bytes()
		if k == f.hlogTrunc {
			// Cut the last interval's payload in half, as a killed writer would.
			last := bytes.LastIndexByte(data[:len(data)-1], '\n')
			data = data[:last+1+(len(data)-last)/2]
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func withErrno(s results.OpStats, errno string, n int64) results.OpStats {
	s.ErrnoCounts = map[string]int64{errno: n}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// fixtureDir returns testdata/runs/<f.name>, rewriting it first with -update.
// Tests read the committed folder, so the golden files do not depend on
// this Go version's zlib output.
func fixtureDir(t testing.TB, f fixture) string {
	t.Helper()
	dir := filepath.Join("testdata", "runs", f.name)
	if *golden.Update {
		os.RemoveAll(dir)
		f.write(t, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, results.FileName)); err != nil {
		t.Fatalf("fixture %s missing: run go test ./report -update (%v)", f.name, err)
	}
	return dir
}

// allFixtures are the synthetic runs every report test reads.
func allFixtures() []fixture {
	return []fixture{lifecycleFixture(), noisyFixture(), tinyFixture(), errorsFixture()}
}
