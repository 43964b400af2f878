package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/results"
)

func loadFixture(t *testing.T, f fixture) *Run {
	t.Helper()
	run, err := LoadRun(fixtureDir(t, f))
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestGolden(t *testing.T) {
	for _, f := range allFixtures() {
		t.Run(f.name, func(t *testing.T) {
			run := loadFixture(t, f)
			var md, bench bytes.Buffer
			if err := WriteMarkdown(&md, []*Run{run}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, f.name+".summary.md", md.Bytes())
			if err := writeBench(&bench, []*Run{run}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, f.name+".bench.txt", bench.Bytes())
		})
	}
}

// TestBenchParses reads bench.txt back with benchfmt, as benchstat does, and
// checks every line against the repetition it came from.
func TestBenchParses(t *testing.T) {
	for _, f := range append(allFixtures(), fixture{name: "open loop"}, fixture{name: "stalled"}) {
		t.Run(f.name, func(t *testing.T) {
			var run *Run
			switch f.name {
			case "open loop":
				run = openLoopRun(t)
			case "stalled":
				run = stalledRun(t)
			default:
				run = loadFixture(t, f)
			}
			var buf bytes.Buffer
			if err := writeBench(&buf, []*Run{run}); err != nil {
				t.Fatal(err)
			}
			rd := benchfmt.NewReader(&buf, "bench.txt")
			var got []*benchfmt.Result
			units := 0
			for rd.Scan() {
				switch rec := rd.Result().(type) {
				case *benchfmt.SyntaxError:
					t.Fatalf("benchfmt: %v", rec)
				case *benchfmt.UnitMetadata:
					units++
				case *benchfmt.Result:
					got = append(got, rec.Clone())
				}
			}
			if err := rd.Err(); err != nil {
				t.Fatal(err)
			}
			if want := len(benchUnits) + len(respUnits)*btoi(openLoop([]*Run{run})); units != want {
				t.Errorf("read %d Unit lines, want %d", units, want)
			}
			// The lines come in repetition order, kinds in report order.
			i := 0
			for _, rep := range run.Result.Repetitions {
				for _, kind := range run.Kinds {
					s := rep.Ops[kind]
					if s.Count == 0 && run.Result.Ops[kind].Count == 0 {
						continue
					}
					if i >= len(got) {
						t.Fatalf("only %d results", len(got))
					}
					res := got[i]
					i++
					if s.Count == 0 {
						// A stall: 0 ops/s and nothing else, as the report counts it.
						if v, ok := res.Value("ops/s"); !ok || v != 0 || res.Iters != 0 || len(res.Values) != 1 {
							t.Errorf("%s rep %d stalled: iters %d, values %v; want 0 iterations and 0 ops/s alone", kind, rep.Index, res.Iters, res.Values)
						}
						continue
					}
					if name := "Benchmark" + string(res.Name); name != benchTxtName(run.Result, kind) {
						t.Errorf("name %q, want %q", name, benchTxtName(run.Result, kind))
					}
					if res.Iters != int(s.Count) {
						t.Errorf("%s rep %d: iters %d, want %d", kind, rep.Index, res.Iters, s.Count)
					}
					checks := map[string]float64{"p50-ns": float64(s.NS.P50), "p99-ns": float64(s.NS.P99), "ops/s": s.OpsPerSec}
					if s.ResponseNS != nil {
						checks["resp-p50-ns"], checks["resp-p99-ns"] = float64(s.ResponseNS.P50), float64(s.ResponseNS.P99)
					} else if _, ok := res.Value("resp-p50-sec"); ok {
						t.Errorf("%s rep %d: a response time in a closed loop", kind, rep.Index)
					}
					for unit, want := range checks {
						v, ok := res.Value(unit)
						if !ok {
							// benchfmt tidies "-ns" units to seconds.
							v, ok = res.Value(strings.Replace(unit, "ns", "sec", 1))
							want /= 1e9
						}
						if !ok || !near(v, want, 0.06) {
							t.Errorf("%s rep %d %s = %v (found %v), want %v", kind, rep.Index, unit, v, ok, want)
						}
					}
					if q := string(res.GetConfig("qps")); q != itoa(run.Result.Config.QPs) {
						t.Errorf("config qps %q, want %d", q, run.Result.Config.QPs)
					}
				}
			}
			if i != len(got) {
				t.Errorf("%d results, want %d", len(got), i)
			}
		})
	}
}

// stalledRun is the lifecycle fixture with reg stalled in its second
// repetition (no operations, the kind left out of the repetition) and
// unreg in its third (a count of zero).
func stalledRun(t *testing.T) *Run {
	run := loadFixture(t, lifecycleFixture())
	reps := run.Result.Repetitions
	if len(reps) < 3 {
		t.Fatalf("the lifecycle fixture has %d repetitions, want 3 or more", len(reps))
	}
	delete(reps[1].Ops, results.OpReg)
	reps[2].Ops[results.OpUnreg] = results.OpStats{}
	return run
}

// TestStalledRepetitionOneRule holds bench.txt to the report's rule for a
// repetition without operations: benchstat's median of ops/s (benchmath,
// over what benchfmt reads back) is RepetitionStats', the stall counted
// as 0 ops/s, and the p50 across repetitions leaves it out in both.
func TestStalledRepetitionOneRule(t *testing.T) {
	run := stalledRun(t)
	var buf bytes.Buffer
	if err := writeBench(&buf, []*Run{run}); err != nil {
		t.Fatal(err)
	}
	values := map[string][]float64{}
	rd := benchfmt.NewReader(&buf, "bench.txt")
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			for _, v := range res.Values {
				key := string(res.Name) + " " + v.Unit
				values[key] = append(values[key], v.Value)
			}
		}
	}
	for _, kind := range []string{results.OpReg, results.OpUnreg} {
		name := strings.TrimPrefix(benchTxtName(run.Result, kind), "Benchmark")
		for _, c := range []struct{ metric, unit string }{{"ops_per_sec", "ops/s"}, {"p50", "p50-sec"}} {
			m, _ := MetricByName(c.metric)
			rs := RepetitionStats(run.Result, kind, m)
			got := values[name+" "+c.unit]
			bench := benchmath.AssumeNothing.Summary(benchmath.NewSample(got, &benchmath.DefaultThresholds), 0.95).Center
			if c.unit == "p50-sec" {
				bench *= 1e9
			}
			if len(got) != len(rs.Values) || math.Abs(bench-rs.Median) > 0.06 {
				t.Errorf("%s %s: bench.txt has %d values, median %g; the report %d, median %g", kind, c.metric, len(got), bench, len(rs.Values), rs.Median)
			}
		}
	}
}

// openLoopRun is the lifecycle fixture as an open loop would have it:
// response times beside the service times (the service p50 and p99 plus
// a backlog that differs by kind and repetition).
func openLoopRun(t *testing.T) *Run {
	run := loadFixture(t, lifecycleFixture())
	for r := range run.Result.Repetitions {
		rep := &run.Result.Repetitions[r]
		for kind, s := range rep.Ops {
			backlog := int64(1000*(r+1) + len(kind))
			s.ResponseNS = &results.Latency{P50: s.NS.P50 + backlog, P99: s.NS.P99 + 10*backlog}
			rep.Ops[kind] = s
		}
	}
	return run
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// near reports whether got is within abs of want (ops/s is printed to 0.1).
func near(got, want, abs float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= abs || d <= 1e-9*abs*want
}

// TestGoldenEngineModify: the report of a run the engine wrote at
// --qp-state rtr on the sim with a modify cost (testdata/README.md) has a
// modify row beside create, reg, unreg and unreg_last, in summary.md and
// bench.txt; at 5µs per transition and two transitions to RTR, its p50
// is 10µs and more (the harness adds to it).
func TestGoldenEngineModify(t *testing.T) {
	run, err := LoadRun(filepath.Join("testdata", "runs", "engine-lifecycle-rtr"))
	if err != nil {
		t.Fatal(err)
	}
	if s := run.Result.Ops["modify"]; run.Result.Config.QPState != "rtr" || s.Count == 0 || s.Count != run.Result.Ops["create"].Count ||
		s.NS.P50 < 10_000 || s.NS.P50 > 20_000 {
		t.Errorf("qp_state %q, modify %+v: want one modify per create, p50 10-20µs", run.Result.Config.QPState, s)
	}
	var md, bench bytes.Buffer
	if err := WriteMarkdown(&md, []*Run{run}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| modify |") {
		t.Errorf("summary.md has no modify row:\n%s", md.String())
	}
	golden.Check(t, "engine-rtr.summary.md", md.Bytes())
	if err := writeBench(&bench, []*Run{run}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bench.String(), "/modify/") {
		t.Errorf("bench.txt has no modify line:\n%s", bench.String())
	}
	golden.Check(t, "engine-rtr.bench.txt", bench.Bytes())
}
