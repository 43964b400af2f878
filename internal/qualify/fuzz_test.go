package qualify

import (
	"math"
	"strings"
	"testing"
)

// FuzzParsePlan: any bytes given as --plan parse or fail with a PlanError;
// never a panic, a hang, or a plan whose criteria name no run (but the
// firmware criterion, which without a run judges every run).
func FuzzParsePlan(f *testing.F) {
	f.Add(DefaultPlan())
	f.Add([]byte("name: t\nrepetitions: 5\niterations: 10\nconformance: [S1]\nruns:\n  - {name: lc, workload: lifecycle, procs: 2xcpus, threads: cpus, qps: 4}\n" +
		"criteria:\n  - {run: lc, check: reg.ops_per_sec >= 1.5k}\nsoak: {duration: 1h, memory_growth: 10%}\n"))
	// An Nxcpus whose product overflows (once named -2), a limit finite
	// until multiplied (1.7e308M: +Inf).
	f.Add([]byte("name: t\nrepetitions: 1\nduration: 1s\nruns:\n  - {name: s, workload: steady, procs: 1, threads: 9223372036854775807xcpus, qps: 4}\n"))
	f.Add([]byte("name: t\nrepetitions: 1\nduration: 1s\nruns:\n  - {name: s, workload: steady, procs: 1, threads: 1, qps: 4}\ncriteria:\n  - {run: s, check: reg.ops_per_sec >= 1.7e308M}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan(data, "fuzz.yaml")
		if err != nil {
			if p != nil || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("plan %v with error %q", p != nil, err)
			}
			return
		}
		runs := map[string]bool{}
		for _, r := range p.Runs {
			runs[r.Name] = true
			if r.Procs.Resolve(4) <= 0 || r.Threads.Resolve(4) <= 0 {
				t.Fatalf("run %s: procs %v threads %v", r.Name, r.Procs, r.Threads)
			}
		}
		for _, c := range p.Criteria {
			if c.Firmware {
				// FirmwareCheck: every run, or one of the plan's.
				if c.Run != "" && !runs[c.Run] {
					t.Fatalf("criterion %+v", c)
				}
				continue
			}
			if !runs[c.Run] || c.Kind == "" || c.Metric.Name == "" || math.IsInf(c.Limit, 0) || math.IsNaN(c.Limit) {
				t.Fatalf("criterion %+v", c)
			}
		}
	})
}
