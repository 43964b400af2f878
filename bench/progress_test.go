package bench

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// The progress observer sees each repetition start, warm up, measure and
// end, in that order, with figures that grow towards the result's, and
// the final figures of each repetition are the result's own.
func TestProgress(t *testing.T) {
	cfg := testConfig(t, "steady", "sim", 2, 1, 4)
	cfg.Duration = 2500 * time.Millisecond
	cfg.Warmup = 300 * time.Millisecond
	cfg.Repetitions = 2
	opts, stderr := testOptions(t)
	var mu sync.Mutex
	var seen []Progress
	opts.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, p)
	}
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	order := []Phase{PhaseStarting, PhaseWarmup, PhaseMeasuring, PhaseDone}
	for rep := 1; rep <= 2; rep++ {
		var phases []Phase
		var last Progress
		for _, p := range seen {
			if p.Repetition != rep {
				continue
			}
			if p.Repetitions != 2 {
				t.Errorf("repetition %d of %d, want of 2", rep, p.Repetitions)
			}
			if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
				phases = append(phases, p.Phase)
			}
			if p.Phase == PhaseMeasuring && (p.Planned != cfg.Duration || p.Elapsed < 0 || p.Elapsed > cfg.Duration+10*time.Second) {
				t.Errorf("measuring: elapsed %v of %v", p.Elapsed, p.Planned)
			}
			last = p
		}
		// Warm-up and measuring each last long enough for a report
		// here only when the machine is not too busy; the order holds
		// whatever is seen.
		i := 0
		for _, ph := range phases {
			for i < len(order) && order[i] != ph {
				i++
			}
			if i == len(order) {
				t.Fatalf("repetition %d: phases %v, want an order of %v", rep, phases, order)
			}
		}
		if phases[0] != PhaseStarting || phases[len(phases)-1] != PhaseDone {
			t.Fatalf("repetition %d: phases %v: want starting first and done last", rep, phases)
		}
		want := res.Repetitions[rep-1].Ops
		for _, k := range last.Kinds {
			if k.Count != want[k.Kind].Count || k.Errors != 0 || k.P50 <= 0 || k.P99 < k.P50 {
				t.Errorf("repetition %d done: %+v, result %+v", rep, k, want[k.Kind])
			}
		}
		if len(last.Kinds) != len(want) {
			t.Errorf("repetition %d done: %d kinds, result %d", rep, len(last.Kinds), len(want))
		}
	}
	// The measuring reports' counts never shrink and never pass the total.
	var prev int64
	for _, p := range seen {
		if p.Repetition != 1 || p.Phase != PhaseMeasuring {
			continue
		}
		for _, k := range p.Kinds {
			if k.Kind == results.OpReg {
				if k.Count < prev || k.Count > res.Repetitions[0].Ops[k.Kind].Count {
					t.Errorf("reg count %d after %d, total %d", k.Count, prev, res.Repetitions[0].Ops[k.Kind].Count)
				}
				prev = k.Count
			}
		}
	}
}

// A run by iterations reports what the slowest thread completed.
func TestProgressIterations(t *testing.T) {
	cfg := testConfig(t, "lifecycle", "sim", 1, 2, 2)
	cfg.Iterations = 40
	opts, stderr := testOptions(t)
	var last Progress
	opts.Progress = func(p Progress) { last = p }
	if _, err := Run(context.Background(), cfg, opts); err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if last.Phase != PhaseDone || last.Iterations != 40 || last.Done != 40 {
		t.Errorf("last report %+v: want done, 40 of 40 iterations", last)
	}
}

// Oversubscription is known before the start: it is said then, and once.
func TestStartWarningsOnce(t *testing.T) {
	cfg := testConfig(t, "steady", "null", 1, runtime.NumCPU()+1, 2)
	cfg.Iterations = 5
	if w := StartWarnings(cfg); len(w) != 1 || !strings.Contains(w[0].Text, "threads share CPUs") || w[0].Kind != results.WarnCPUShared {
		t.Fatalf("StartWarnings = %q", w)
	}
	opts, stderr := testOptions(t)
	var before string
	opts.Progress = func(p Progress) {
		if p.Phase == PhaseStarting && before == "" {
			before = stderr.String()
		}
	}
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if !strings.Contains(before, "threads share CPUs") {
		t.Errorf("stderr before the start %q: want the oversubscription warning", before)
	}
	if n := strings.Count(stderr.String(), "threads share CPUs"); n != 1 {
		t.Errorf("the warning is printed %d times:\n%s", n, stderr)
	}
	if !slices.ContainsFunc(res.Warnings, func(w results.Warning) bool { return strings.Contains(w.Text, "threads share CPUs") }) {
		t.Errorf("the result lacks the warning: %q", res.Warnings)
	}
	// Quiet keeps warnings off stderr, not out of the result.
	opts, stderr = testOptions(t)
	opts.Quiet = true
	cfg.Out = t.TempDir() + "/quiet"
	if _, err := Run(context.Background(), cfg, opts); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("quiet: stderr %q", stderr)
	}
}
