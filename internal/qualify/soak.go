package qualify

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/device"
	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/runfolder"
	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// SoakSpec is a plan's soak: lifecycle, then churn, each for half the
// duration, sampled every interval; the bounds its verdicts use.
type SoakSpec struct {
	Duration     Duration `yaml:"duration"` // 0: none, unless --soak
	Interval     Duration `yaml:"interval"` // 0: 10s
	MemoryGrowth Percent  `yaml:"memory_growth"`
	P99Drift     Percent  `yaml:"p99_drift"`
}

// Percent is a YAML percentage such as 10%.
type Percent float64

// Soak defaults: memory may grow by 10% plus 4 MiB (allocator noise, the
// runtime's own growth) from the first samples to the last; p99 may drift
// by 50% from the first tenth of the soak to the last.
const (
	defaultSoakInterval = 10 * time.Second
	defaultMemoryGrowth = 10
	memorySlackKiB      = 4096
	defaultP99Drift     = 50
)

// SoakSample is one sample of a soak run.
type SoakSample struct {
	AtSec   float64 `json:"at_s"`
	LiveQPs int     `json:"live_qps"` // -1: not read
	RSSKB   int64   `json:"rss_kb"`   // the workers', summed
	PSSKB   int64   `json:"pss_kb"`
}

// SoakRun is one workload of the soak.
type SoakRun struct {
	Name     string       `json:"name"`
	Dir      string       `json:"dir"`
	QPMethod string       `json:"qp_method"` // how LiveQPs was read
	Samples  []SoakSample `json:"samples"`
	P99      []float64    `json:"p99_ns"` // per .hlog interval, the kind the verdict uses
	P99Kind  string       `json:"p99_kind"`
	// Warnings are the run's own, as runWarnings gives them.
	Warnings []results.Warning `json:"warnings,omitempty"`
}

// soakSteps are the soak's runs.
var soakSteps = []RunStep{
	{Name: "soak-lifecycle", Workload: "lifecycle", Procs: Count{N: 2}, Threads: Count{N: 2}, QPs: 4},
	{Name: "soak-churn", Workload: "churn", Procs: Count{N: 2}, Threads: Count{N: 1}, QPs: 4},
}

// soak runs the soak and judges it: rows for the junit and the page.
func soak(ctx context.Context, o Options, d time.Duration, logf func(string, ...any)) ([]SoakRun, []Row) {
	spec := o.Plan.Soak
	every := time.Duration(spec.Interval)
	if every <= 0 {
		every = defaultSoakInterval
	}
	var runs []SoakRun
	var rows []Row
	for _, step := range soakSteps {
		sr, res, err := soakRun(ctx, o, step, d/time.Duration(len(soakSteps)), every, logf)
		runs = append(runs, sr)
		rows = append(rows, judgeSoak(o, sr, res, err)...)
	}
	return runs, rows
}

func soakRun(ctx context.Context, o Options, step RunStep, d, every time.Duration, logf func(string, ...any)) (SoakRun, *report.Run, error) {
	sr := SoakRun{Name: step.Name, Dir: filepath.Join(RunsDir, step.Name)}
	// The qualification's settings, as its steps': the plan's QP state.
	s := o.settings()
	s.Workload, s.Procs, s.Threads, s.QPs = step.Workload, step.Procs.N, step.Threads.N, step.QPs
	s.Duration, s.Warmup, s.Repetitions, s.Interval = d, 0, 1, every
	s.Out = filepath.Join(o.Out, sr.Dir)
	cfg, err := s.Config()
	if err != nil {
		return sr, nil, err
	}
	logf("soak %s: %s for %v, sampled every %v", step.Name, step.Workload, d, every)
	done := make(chan error, 1)
	go func() {
		_, err := bench.Run(ctx, cfg, o.Engine)
		done <- err
	}()
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-tick.C:
			s := SoakSample{AtSec: math.Round(time.Since(start).Seconds()*10) / 10, LiveQPs: -1}
			for _, pid := range host.ChildPIDs(os.Getpid()) {
				if rss, pss, err := host.ProcessMemory(pid); err == nil {
					s.RSSKB += rss
					s.PSSKB += pss
				}
			}
			var how string
			s.LiveQPs, how = liveQPs(o)
			sr.countedBy(s.LiveQPs, how)
			if s.RSSKB > 0 {
				sr.Samples = append(sr.Samples, s)
			}
		}
	}
	run, lerr := report.LoadRun(cfg.Out)
	if lerr != nil && runErr == nil {
		runErr = lerr
	}
	if run != nil {
		sr.Warnings = runWarnings(run.Result)
		sr.P99Kind = results.OpUnregLast
		for _, iv := range run.Timelines[sr.P99Kind] {
			sr.P99 = append(sr.P99, float64(iv.P99))
		}
	}
	return sr, run, runErr
}

// countedBy records how a sample's live QPs (n, -1 when not read) were
// read: the method of the counts taken; a failed read's reason only while
// no read has succeeded, so a method never names a reason beside counts.
func (sr *SoakRun) countedBy(n int, how string) {
	if n >= 0 || sr.QPMethod == "" || strings.HasPrefix(sr.QPMethod, "none: ") {
		sr.QPMethod = how
	}
}

// liveQPs reads the device's live QP count, and says how: the sim's and
// the double's device inspected; a real device through the kernel's own
// list of its QPs (RDMA netlink, device.LiveQPs, as devices reads it), or
// in one line why the kernel could not be asked. device.CountQPs knows
// which is which.
func liveQPs(o Options) (int, string) {
	var simDir string
	switch {
	case o.Provider == "sim":
		devs := runfolder.LiveSimDevices()
		if len(devs) != 1 {
			return -1, device.BySimInspect
		}
		simDir = devs[0]
	case o.Device == "":
		return -1, "none: no --device named, so no device to ask the kernel about"
	}
	n, how, err := device.CountQPs(o.Provider, o.Device, simDir)
	if how == device.ByNetlink {
		return kernelQPs(n, err)
	}
	if err != nil {
		return -1, how
	}
	return n, how
}

// kernelQPs is the count in the kernel's answer (n QPs listed, or its
// error): every QP it lists for the device, the device's own GSI
// included, as devices counts them; where the kernel could not be asked,
// -1 and its reason.
func kernelQPs(n int, err error) (int, string) {
	if err != nil {
		return -1, "none: " + err.Error()
	}
	return n, device.ByNetlink
}

// judgeSoak gives a soak run's verdicts: QPs, memory, p99 drift.
func judgeSoak(o Options, sr SoakRun, run *report.Run, err error) []Row {
	ev := []string{sr.Dir, filepath.Join(PlotsDir, sr.Name+"-qps.svg"), filepath.Join(PlotsDir, sr.Name+"-memory.svg"), filepath.Join(PlotsDir, sr.Name+"-p99.svg")}
	row := func(what string) Row { return Row{Name: sr.Name + ": " + what, Run: sr.Name, Evidence: ev} }
	if err != nil || run == nil || run.Result.Status != results.StatusOK {
		r := row("ran")
		r.Verdict, r.Message = Error, fmt.Sprintf("the soak run failed: %v", err)
		return []Row{r}
	}
	growth := float64(o.Plan.Soak.MemoryGrowth)
	if growth == 0 {
		growth = defaultMemoryGrowth
	}
	drift := float64(o.Plan.Soak.P99Drift)
	if drift == 0 {
		drift = defaultP99Drift
	}
	qp := QPVerdict(sr.Samples, sr.QPMethod, run.Result.Leaks)
	qp.Name, qp.Run, qp.Evidence = sr.Name+": live QPs return to their start", sr.Name, ev
	mem := MemoryVerdict(sr.Samples, growth)
	mem.Name, mem.Run, mem.Evidence = sr.Name+fmt.Sprintf(": memory flat within %g%% + %d KiB", growth, memorySlackKiB), sr.Name, ev
	p99 := DriftVerdict(sr.P99, sr.P99Kind, drift)
	p99.Name, p99.Run, p99.Evidence = sr.Name+fmt.Sprintf(": %s p99 drift within %g%%", sr.P99Kind, drift), sr.Name, ev
	return []Row{qp, mem, p99}
}

// QPVerdict: the device's live QP count must come back to its start. A
// sample falls anywhere in a round, so the count at round boundaries is
// taken as the lowest count of each part of the soak (tenths, or fewer
// parts of at least minPartSamples): a window whose samples all fell inside
// rounds may read high, but a leak raises the floor for good. It fails
// when the last part's floor is above the first's, naming the part from
// which every floor stayed above it. QPs left after the teardown (the
// result's leak check) fail too.
func QPVerdict(samples []SoakSample, method string, leaks *results.LeakCheck) Row {
	var r Row
	var counts []int
	var at []float64
	for _, s := range samples {
		if s.LiveQPs >= 0 {
			counts = append(counts, s.LiveQPs)
			at = append(at, s.AtSec)
		}
	}
	if leaks != nil && len(leaks.Leaked) > 0 {
		r.Verdict, r.Message = Fail, fmt.Sprintf("%d QP(s) outlived the run (%s)", len(leaks.Leaked), leaks.Method)
		return r
	}
	if len(counts) < 2*minPartSamples {
		r.Verdict = Skipped
		r.Message = fmt.Sprintf("live QPs not sampled (%s; %d sample(s)); the teardown's leak check found none", method, len(counts))
		return r
	}
	floors := tenths(counts)
	v := float64(floors[len(floors)-1] - floors[0])
	r.Value = &v
	r.Unit = "QPs"
	if last := floors[len(floors)-1]; last > floors[0] {
		k := len(floors) - 1
		for k > 0 && floors[k-1] > floors[0] {
			k--
		}
		r.Verdict = Fail
		i, j := k*len(counts)/len(floors), (k+1)*len(counts)/len(floors)
		r.Message = fmt.Sprintf("live QPs (%s) grew: the lowest count was %d in the first of %d parts of the soak, above it from part %d on (intervals %d-%d, from %gs), %d in the last",
			method, floors[0], len(floors), k+1, i+1, j, at[i], last)
		return r
	}
	r.Verdict = Pass
	r.Message = fmt.Sprintf("live QPs (%s) came back to %d by the end (lowest of each of %d parts of the soak; %d samples, at most %d at once)",
		method, floors[0], len(floors), len(counts), slices.Max(counts))
	return r
}

// minPartSamples is the fewest samples of a part of the soak whose lowest
// count stands for a round boundary: fewer may all fall inside rounds (a
// churning device nearly always holds a QP or two).
const minPartSamples = 10

// tenths is the lowest count of each tenth of counts (fewer parts when
// there are fewer than ten counts).
func tenths(counts []int) []int {
	n := min(10, len(counts)/minPartSamples)
	var out []int
	for k := 0; k < n; k++ {
		out = append(out, slices.Min(counts[k*len(counts)/n:(k+1)*len(counts)/n]))
	}
	return out
}

// MemoryVerdict: the workers' PSS (and RSS), median of the last three
// samples against the first three after the first tenth of the soak (the
// workers start, map the device and grow their heaps then), within
// growth% + memorySlackKiB.
func MemoryVerdict(samples []SoakSample, growth float64) Row {
	var r Row
	samples = samples[len(samples)/10:]
	if len(samples) < 6 {
		r.Verdict, r.Message = Skipped, fmt.Sprintf("%d memory sample(s): a soak needs 6 intervals or more to judge", len(samples))
		return r
	}
	med := func(get func(SoakSample) int64, s []SoakSample) int64 {
		var v []float64
		for _, x := range s {
			v = append(v, float64(get(x)))
		}
		return int64(stats.Median(v)) // of 3 samples: one of them
	}
	var msgs []string
	r.Verdict = Pass
	for _, m := range []struct {
		name string
		get  func(SoakSample) int64
	}{{"PSS", func(s SoakSample) int64 { return s.PSSKB }}, {"RSS", func(s SoakSample) int64 { return s.RSSKB }}} {
		first, last := med(m.get, samples[:3]), med(m.get, samples[len(samples)-3:])
		bound := int64(float64(first)*(1+growth/100)) + memorySlackKiB
		msgs = append(msgs, fmt.Sprintf("%s %d → %d KiB (bound %d)", m.name, first, last, bound))
		if last > bound {
			r.Verdict = Fail
		}
		if m.name == "PSS" {
			g := 100 * (float64(last)/float64(max(first, 1)) - 1)
			r.Value, r.Unit = &g, "%"
		}
	}
	r.Message = "workers' memory, first samples → last: " + strings.Join(msgs, "; ")
	return r
}

// DriftVerdict: the median per-interval p99 of the last tenth of the soak
// against the first tenth, within drift%.
func DriftVerdict(p99 []float64, kind string, drift float64) Row {
	var r Row
	if len(p99) < 10 {
		r.Verdict, r.Message = Skipped, fmt.Sprintf("%d interval(s) of %s: the drift needs 10 or more", len(p99), kind)
		return r
	}
	tenth := len(p99) / 10
	first, last := stats.Median(p99[:tenth]), stats.Median(p99[len(p99)-tenth:])
	d := 100 * (last/math.Max(first, 1) - 1)
	r.Value, r.Unit = &d, "%"
	lim := drift
	r.Limit = &lim
	r.Verdict = Pass
	if d > drift {
		r.Verdict = Fail
	}
	r.Message = fmt.Sprintf("%s p99 per interval: %s in the first tenth, %s in the last (%+.1f%%, limit %g%%)",
		kind, units.FormatNS(first), units.FormatNS(last), d, drift)
	return r
}
