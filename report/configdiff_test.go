package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/workloads"
)

// TestCompareConfigDiff: runs of different configurations are not
// comparable (one line naming the differences) unless AllowConfigDiff,
// when the verdict names them; the device's firmware, the runs' labels
// and the test double's cost model are what a comparison is for and
// never block it.
func TestCompareConfigDiff(t *testing.T) {
	tests := []struct {
		name    string
		change  func(r *results.Result)
		refused []string // the differences named; nil: comparable
	}{
		{"the issue's case: sim 1x1 1 QP against rdma 2x2 16 QPs at rtr", func(r *results.Result) {
			r.Config.Provider, r.Config.Procs, r.Config.Threads, r.Config.QPs, r.Config.QPState = "rdma", 1, 1, 1, "rtr"
			r.Environment.Device.Name = "mlx5_0"
		}, []string{"provider: sim → rdma", "procs: 2 → 1", "threads: 2 → 1", "qps: 16 → 1", "qp_state: reset → rtr", "device: sim0 → mlx5_0"}},
		{"the sim's cost model", func(r *results.Result) {
			r.Config.ProviderOpts = map[string]string{"sim_cost": "reg=2.5µs"}
		}, []string{"sim_cost: (none) → reg=2.5µs"}},
		{"the sim's semantics", func(r *results.Result) {
			r.Config.ProviderOpts = map[string]string{"sim_semantics": "upstream"}
		}, []string{"sim_semantics: (none) → upstream"}},
		{"the workload's text", func(r *results.Result) { r.Config.WorkloadSpec += "# changed\n" }, []string{"workload spec: its text changed"}},
		{"firmware and labels", func(r *results.Result) {
			r.Environment.Device.FWVer = "2.0"
			r.Labels = map[string]string{"fw": "2.0"}
		}, nil},
		{"the test double's own cost model", func(r *results.Result) {
			r.Environment.BOM = &results.BOM{Device: results.DeviceBOM{TestDoubleCost: "reg=3us"}}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := synth{reps: 5, noise: 0.01}.run("runs/base")
			new := synth{reps: 5, noise: 0.01, seed: 2}.run("runs/new")
			tt.change(new.Result)
			c, err := Compare(base, new, defaultOpts())
			if tt.refused == nil {
				if err != nil || len(c.ConfigDiffs) > 0 || strings.Contains(c.Verdict(), "different configurations") {
					t.Fatalf("refused or flagged: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, results.ErrInput) || strings.Contains(err.Error(), "\n") ||
				!strings.HasPrefix(err.Error(), "not comparable: runs/base and runs/new differ in configuration (") ||
				!strings.Contains(err.Error(), "--allow-config-diff") {
				t.Fatalf("err = %v, want one line refusing the comparison", err)
			}
			for _, d := range tt.refused {
				if !strings.Contains(err.Error(), d) {
					t.Errorf("the refusal does not name %q: %v", d, err)
				}
			}
			opt := defaultOpts()
			opt.AllowConfigDiff = true
			c, err = Compare(base, new, opt)
			if err != nil {
				t.Fatal(err)
			}
			v := c.Verdict()
			if !strings.Contains(v, "; across different configurations (") {
				t.Errorf("verdict %q does not say the configurations differ", v)
			}
			for _, d := range tt.refused {
				if !strings.Contains(v, d) {
					t.Errorf("verdict %q does not name %q", v, d)
				}
			}
		})
	}
}

// TestConfigDiffDeviceFacts: a change of the device's own facts (its
// firmware, the test double's cost model) is what compare and history
// follow, never a difference of configuration.
func TestConfigDiffDeviceFacts(t *testing.T) {
	a, b := synth{reps: 1}.run("a").Result, synth{reps: 1}.run("b").Result
	a.Environment.BOM = &results.BOM{Device: results.DeviceBOM{TestDoubleCost: "none"}}
	b.Environment.BOM = &results.BOM{Device: results.DeviceBOM{TestDoubleCost: "reg=2us"}}
	b.Environment.Device.FWVer = "1.1"
	if d := ConfigDiff(a, b); len(d) != 0 {
		t.Errorf("ConfigDiff = %q, want nothing: firmware and the double's cost are the device's", d)
	}
}

// TestCompareManyConfigDiff: an N-way set pooling runs of different
// configurations is refused the same way, and named in the verdict when
// allowed.
func TestCompareManyConfigDiff(t *testing.T) {
	a := synth{reps: 5, noise: 0.01}.run("runs/a")
	b1 := synth{reps: 5, noise: 0.01, seed: 2}.run("runs/b1")
	b2 := synth{reps: 5, noise: 0.01, seed: 3}.run("runs/b2")
	b2.Result.Config.Threads = 8
	sets := []RunSet{{Name: "fw=1", Runs: []*Run{a}}, {Name: "fw=2", Runs: []*Run{b1, b2}}}
	_, err := CompareMany(sets, "fw", defaultOpts())
	if err == nil || !errors.Is(err, results.ErrInput) || !strings.Contains(err.Error(), "not comparable: set fw=2: runs/b1 and runs/b2 differ in configuration (threads: 2 → 8)") {
		t.Fatalf("err = %v", err)
	}
	opt := defaultOpts()
	opt.AllowConfigDiff = true
	mc, err := CompareMany(sets, "fw", opt)
	if err != nil {
		t.Fatal(err)
	}
	if v := mc.Verdict(); !strings.Contains(v, "across different configurations (within fw=2: threads: 2 → 8)") {
		t.Errorf("verdict %q does not name the difference", v)
	}
}

// A built-in's spec from before the built-ins declared their gates and
// headline (the frozen engine fixture's) is the same workload as today's:
// those keys judge the runs, they do not change what runs, nor does the
// description. Any other change of the text, a comment too, is a
// different spec. The storm built-in of before its description named
// whose wiring it replays is today's.
func TestSameWorkloadSpec(t *testing.T) {
	old, err := results.Load("testdata/runs/engine-lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := workloads.Get("lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	now := spec.Source
	if now == old.Config.WorkloadSpec || !strings.Contains(now, "gates:") {
		t.Fatalf("the built-in lifecycle declares no gates, or the fixture already has them: the test checks nothing")
	}
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"before and after the declared gates", old.Config.WorkloadSpec, now, true},
		{"other gates", now, strings.Replace(now, "unreg_last.p50]", "unreg_last.p99]", 1), true},
		{"a comment", now, now + "# changed\n", false},
		{"the description", now, strings.Replace(now, "description: ", "description: said otherwise, ", 1), true},
		{"a phase", now, strings.Replace(now, "by: closer", "by: creator", 1), false},
		{"not YAML", now, "{", false},
	} {
		if got := sameWorkloadSpec(tc.a, tc.b); got != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, got, tc.same)
		}
	}
	storm, err := workloads.Get("storm")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"storm before its description said historical", stormBefore, storm.Source, true},
		{"storm before, another node count", stormBefore, strings.Replace(storm.Source, "nodes: 9", "nodes: 17", 1), false},
	} {
		if got := sameWorkloadSpec(tc.a, tc.b); got != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, got, tc.same)
		}
	}
}

// stormBefore is the storm built-in as it was before its description
// named whose wiring it replays (commit 141bf17).
const stormBefore = `# storm: an MPI job's XRC wiring on one node, as Open MPI's XOOB and
# MVAPICH2 do it. Every remote process contacts this node once per rail:
# the first local rank it reaches creates the receive QP, every other
# local rank registers with it. The ranks are the worker threads; the
# headline is the makespan, the time until every rank holds all its QPs.
# --nodes overrides nodes (a list in sweep).
name: storm
description: MPI job start-up wiring, (nodes-1) x ranks x rails receive QPs created and registered at once (makespan)
mode: storm
storm:
  nodes: 9
  rails: 1
  arrival: burst
  teardown: unreg
  reconnect: 0
  creators: round-robin
gates: [storm.makespan, storm.teardown]
headline: storm.makespan
`
