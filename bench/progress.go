package bench

import (
	"fmt"
	"runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// Phase is where a repetition is, as its progress reports it.
type Phase string

const (
	PhaseStarting  Phase = "starting"  // workers start and open their registrants
	PhaseWarmup    Phase = "warm-up"   // run and discarded
	PhaseMeasuring Phase = "measuring" // measured
	PhaseDone      Phase = "done"      // the repetition ended; figures are its totals
)

// Progress is a snapshot of a running repetition, for a live display. The
// engine sends one about once a second and at each change of phase, from
// the interval reports it receives anyway; the figures are those of the
// repetition so far, not the final result.
type Progress struct {
	Repetition  int // 1-based
	Repetitions int
	Phase       Phase
	// Elapsed is the time spent in the phase; Planned its planned length
	// (0 when it is not known: starting, or a run by iterations).
	Elapsed, Planned time.Duration
	// Iterations is the planned passes (loop) or rounds (rounds) of a run
	// by iterations, 0 for a run by duration; Done is what the slowest
	// thread has completed, as of its last interval report.
	Iterations, Done int64
	// Kinds are the op kinds measured so far, in the order of results.
	Kinds []KindProgress
}

// KindProgress is one op kind's figures so far in the repetition.
type KindProgress struct {
	Kind      string
	Count     int64
	Errors    int64 // unexpected outcomes
	OpsPerSec float64
	P50, P99  time.Duration
}

// StartWarnings are the warnings a configuration gets before it runs: the
// run prints them before the start (and once), not only with the result.
func StartWarnings(cfg Config) []results.Warning {
	var out []results.Warning
	total := cfg.Procs * cfg.Threads
	if cpus := runtime.NumCPU(); total > cpus {
		out = append(out, warnf(results.WarnCPUShared, 0, "", fmt.Sprintf("threads share CPUs, so latencies include time spent preempted: run at most %d threads (--procs × --threads)", cpus), "%d threads on %d CPUs", total, cpus))
	}
	return out
}

// warnf is a warning of kind about repetition rep (from 1; 0: the run)
// and op kind op ("": all): its fact formatted, then what the fact means
// for the figures and what to do (results.Warning.Means). means comes
// first so that no warning can be written without it
// (TestEveryWarningSaysWhatToDo holds the rest of the tree to that).
func warnf(kind string, rep int, op, means, format string, args ...any) results.Warning {
	return results.NewWarning(kind, results.SeverityWarning, rep, op, fmt.Sprintf(format, args...)).WithMeans(means)
}

// live follows one repetition for its progress reports.
type live struct {
	rep, reps  int
	cfg        *Config
	start      uint64 // the first start deadline (CLOCK_MONOTONIC ns); 0 before it
	errors     map[string]int64
	rounds     map[int]int64 // thread → passes or rounds completed
	threads    int
	lastReport time.Time
}

func newLive(cfg *Config, rep int) *live {
	return &live{rep: rep + 1, reps: cfg.Repetitions, cfg: cfg, errors: map[string]int64{},
		rounds: map[int]int64{}, threads: cfg.Procs * cfg.Threads}
}

func (l *live) interval(m *intervalMsg) {
	for k, n := range m.Errors {
		l.errors[k] += n
	}
	l.rounds[m.Thread] = max(l.rounds[m.Thread], m.Rounds)
}

// snapshot says where the repetition is at now. measureStart is the
// deadline the threads measure from (after a warm-up, a later one than
// start); totals the histograms merged so far.
func (l *live) snapshot(now, measureStart uint64, totals map[string]*hdrhistogram.Histogram) Progress {
	p := Progress{Repetition: l.rep, Repetitions: l.reps, Iterations: l.cfg.Iterations}
	warm := uint64(l.cfg.Warmup)
	switch {
	case l.start == 0 || now < l.start:
		p.Phase = PhaseStarting
		return p
	case warm > 0 && (measureStart == l.start || now < measureStart):
		// Warm-up until the threads have set the measurement's start and
		// reached it.
		p.Phase, p.Elapsed, p.Planned = PhaseWarmup, time.Duration(now-l.start), l.cfg.Warmup
		return p
	}
	p.Phase, p.Elapsed = PhaseMeasuring, time.Duration(now-measureStart)
	if l.cfg.Iterations == 0 {
		p.Planned = l.cfg.Duration
	}
	if len(l.rounds) == l.threads {
		p.Done = -1
		for _, r := range l.rounds {
			if p.Done < 0 || r < p.Done {
				p.Done = r
			}
		}
	}
	p.Kinds = l.kinds(totals, p.Elapsed)
	return p
}

func (l *live) kinds(totals map[string]*hdrhistogram.Histogram, elapsed time.Duration) []KindProgress {
	var out []KindProgress
	for _, k := range results.OpKinds {
		h := totals[k]
		if h == nil {
			continue
		}
		kp := KindProgress{Kind: k, Count: h.TotalCount(), Errors: l.errors[k],
			P50: time.Duration(h.ValueAtQuantile(50)), P99: time.Duration(h.ValueAtQuantile(99))}
		if elapsed > 0 {
			kp.OpsPerSec = float64(kp.Count) / elapsed.Seconds()
		}
		out = append(out, kp)
	}
	return out
}

// report sends a snapshot to the observer, at most about once a second
// unless force (a change of phase, the end).
func (c *coordinator) report(l *live, sh *shm, force bool) {
	if c.opts.Progress == nil || l == nil {
		return
	}
	if !force && time.Since(l.lastReport) < 900*time.Millisecond {
		return
	}
	l.lastReport = time.Now()
	var measureStart uint64
	if sh != nil {
		measureStart = sh.deadline()
	}
	c.opts.Progress(l.snapshot(verbs.Now(), measureStart, c.logs.totals))
}

// reportDone sends the repetition's final figures.
func (c *coordinator) reportDone(l *live, out *repOutcome) {
	if c.opts.Progress == nil || l == nil {
		return
	}
	// The threads' own counts of unexpected outcomes are final.
	clear(l.errors)
	p := Progress{Repetition: l.rep, Repetitions: l.reps, Phase: PhaseDone, Elapsed: out.wall,
		Iterations: l.cfg.Iterations, Done: -1}
	for _, tr := range out.threads {
		if p.Done < 0 || tr.Rounds < p.Done {
			p.Done = tr.Rounds
		}
		for k, kr := range tr.Kinds {
			l.errors[k] += kr.Errors
		}
	}
	p.Done = max(p.Done, 0)
	p.Kinds = l.kinds(out.hists, out.wall)
	c.opts.Progress(p)
}
