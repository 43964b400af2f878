package qualify

// The measurement-quality gate: a qualification whose runs were disturbed
// (starved of CPU, stretched far past the asked duration, warned so by
// the engine) says more about the machine than about the firmware, so it
// is not judged: neither PASS nor FAIL, unless --accept-disturbed.

import (
	"fmt"
	"slices"
	"time"

	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/workloads"
)

// Quality is a plan's thresholds on disturbed runs (the plan's quality:),
// recorded in qualification.json as applied.
type Quality struct {
	// MinCPUShare: in each repetition of a loop workload (whose threads
	// never wait), the workers' CPU time over what their threads could
	// use (one CPU each, all CPUs together, over the repetition and its
	// warm-up), in percent; 0 turns it off.
	MinCPUShare Percent `yaml:"min_cpu_share" json:"min_cpu_share_pct"`
	// MaxDurationDeparture: how far a repetition of a run measured by
	// time may last from the asked duration, in percent; 0 turns it off
	// (no repetition lasts exactly as asked).
	MaxDurationDeparture Percent `yaml:"max_duration_departure" json:"max_duration_departure_pct"`
	// Warnings are the kinds of the runs' result.json warnings that make
	// a run disturbed whatever the figures above say.
	Warnings []string `yaml:"warnings" json:"warnings"`
}

// DefaultQuality is a plan's quality when it does not say: half the CPU
// time (a share under it is a machine busy with something else; the
// engine's cpu_starved warning, under 75 %, refuses it earlier), a quarter
// of the duration (the engine warns at 5 %; a stall at a repetition's
// start or end is beyond 25 %), and cpu_starved.
func DefaultQuality() Quality {
	return Quality{MinCPUShare: 50, MaxDurationDeparture: 25, Warnings: []string{results.WarnCPUStarved}}
}

// warningKinds are the kinds a plan's quality.warnings may name.
var warningKinds = []string{
	results.WarnCPUShared, results.WarnCPUStarved, results.WarnStartSkew, results.WarnDuration,
	results.WarnLatencyCount, results.WarnTimerDrift, results.WarnCoverage, results.WarnUntimedGap,
	results.WarnOpenLoopSaturated, results.WarnOpenLoopEndStall, results.WarnLateReports,
	results.WarnHolderRelease, results.WarnSimOnDisk, results.WarnLeak, results.WarnDestroyUnconfirmed,
	results.WarnCPUSetup, results.WarnFirmwareFailed,
}

// check says what is wrong with the thresholds, "" nothing.
func (q Quality) check() string {
	switch {
	case q.MinCPUShare > 100:
		return fmt.Sprintf("quality min_cpu_share %g%%: want 0%% (off) to 100%%", float64(q.MinCPUShare))
	}
	for _, k := range q.Warnings {
		if !slices.Contains(warningKinds, k) {
			return fmt.Sprintf("quality warnings: unknown warning kind %q; want some of %v", k, warningKinds)
		}
	}
	return ""
}

// disturbed gives the reasons the plan's runs were disturbed beyond its
// thresholds, in the plan's order, each naming the run, the repetition
// (from 1) and the figure against its threshold. A repetition starved of
// CPU by the share is not said again by its cpu_starved warning, nor one
// stretched by the duration by its duration warning.
func disturbed(qc Quality, steps []RunStep, runs map[string]*report.Run) []string {
	var out []string
	for _, s := range steps {
		run := runs[s.Name]
		if run == nil {
			continue
		}
		r := run.Result
		said := map[[2]any]bool{} // {kind, repetition}
		spec, err := workloads.Get(s.Workload)
		loop := err == nil && spec.Mode == workloads.Loop
		for _, rep := range r.Repetitions {
			n := rep.Index + 1
			wall := rep.Duration.D()
			if loop && qc.MinCPUShare > 0 {
				var cpu float64
				for _, w := range r.Workers {
					if w.Repetition == rep.Index {
						cpu += w.CPUSeconds
					}
				}
				// As the engine's cpu_starved: threads use a CPU each at
				// most, all CPUs together; under half a CPU-second the
				// share is noise.
				usable := r.Config.Procs * r.Config.Threads
				if c := r.Environment.CPUs; c > 0 {
					usable = min(usable, c)
				}
				want := float64(usable) * (wall + r.Config.Warmup.D()).Seconds()
				if share := 100 * cpu / want; want > 0.5 && share < float64(qc.MinCPUShare) {
					out = append(out, fmt.Sprintf("%s repetition %d: the workers got %.0f%% of the CPU time their threads could use (%.1f of %.1f CPU-seconds; min_cpu_share %g%%)",
						s.Name, n, share, cpu, want, float64(qc.MinCPUShare)))
					said[[2]any{results.WarnCPUStarved, n}] = true
				}
			}
			if asked := r.Config.Duration.D(); asked > 0 && qc.MaxDurationDeparture > 0 {
				dev := 100 * float64(wall-asked) / float64(asked)
				if dev > float64(qc.MaxDurationDeparture) || -dev > float64(qc.MaxDurationDeparture) {
					out = append(out, fmt.Sprintf("%s repetition %d: measured %v of the asked %v (%+.0f%%; max_duration_departure %g%%)",
						s.Name, n, wall.Round(time.Millisecond), asked, dev, float64(qc.MaxDurationDeparture)))
					said[[2]any{results.WarnDuration, n}] = true
				}
			}
		}
		for _, w := range r.Warnings {
			if !slices.Contains(qc.Warnings, w.Kind) || said[[2]any{w.Kind, w.Repetition}] {
				continue
			}
			said[[2]any{w.Kind, w.Repetition}] = true
			// The fact names its repetition itself ("repetition 2: ...").
			out = append(out, fmt.Sprintf("%s: %s: %s", s.Name, w.Kind, w.Fact()))
		}
	}
	return out
}
