package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

// synth describes synthetic repetition data: each repetition's p50 of a
// kind is medianNS·scale·(1 + noise·N(0,1)); p99 is 3·p50; ops/s is
// inversely proportional to p50, as it is for a thread doing one thing.
type synth struct {
	workload string
	reps     int
	noise    float64
	seed     int64
	scale    map[string]float64 // per kind, default 1
	host     string
	fw       string
	status   string
	labels   map[string]string
}

var synthMedians = map[string]float64{results.OpReg: 1000, results.OpUnreg: 800, results.OpUnregLast: 5000}

func (s synth) run(dir string) *Run {
	rng := rand.New(rand.NewSource(s.seed))
	r := &results.Result{
		Schema: results.Schema, Status: results.StatusOK,
		Config:      results.Config{Workload: "lifecycle", Provider: "sim", Procs: 2, Threads: 2, QPs: 16, WorkloadSpec: "name: lifecycle\n"},
		Environment: results.Environment{Host: "h1", Device: &results.Device{Name: "sim0", FWVer: "1.0", NUMANode: -1}},
		Ops:         map[string]results.OpStats{},
	}
	if s.workload != "" {
		r.Config.Workload = s.workload
		r.Config.WorkloadSpec = "name: " + s.workload + "\n"
	}
	if s.host != "" {
		r.Environment.Host = s.host
	}
	if s.fw != "" {
		r.Environment.Device.FWVer = s.fw
	}
	r.Labels = s.labels
	if s.status != "" {
		r.Status, r.Error = s.status, "worker 1 exited: signal: killed"
	}
	for i := 0; i < s.reps; i++ {
		rep := results.Repetition{Index: i, Ops: map[string]results.OpStats{}}
		for _, kind := range slices.Sorted(maps.Keys(synthMedians)) {
			med := synthMedians[kind]
			scale := 1.0
			if v, ok := s.scale[kind]; ok {
				scale = v
			}
			p50 := med * scale * (1 + s.noise*rng.NormFloat64())
			rep.Ops[kind] = results.OpStats{
				Count: 1000, OpsPerSec: 4e9 / p50,
				NS: results.Latency{Min: int64(p50 / 2), P50: int64(p50), P90: int64(2 * p50), P99: int64(3 * p50), P999: int64(4 * p50), Max: int64(5 * p50), Mean: 1.2 * p50},
			}
			r.Ops[kind] = rep.Ops[kind]
		}
		r.Repetitions = append(r.Repetitions, rep)
	}
	return &Run{Dir: dir, Label: dir, Result: r, Kinds: results.KindsOf(r)}
}

func metrics(names ...string) []Metric {
	var ms []Metric
	for _, n := range names {
		m, ok := MetricByName(n)
		if !ok {
			panic(n)
		}
		ms = append(ms, m)
	}
	return ms
}

func defaultOpts() CompareOptions {
	return CompareOptions{Threshold: 5, Alpha: 0.05, Metrics: metrics("p50", "p99", "ops_per_sec")}
}

// costOpts compares the engine pairs, whose second run has a dearer sim
// cost model: a setting of the harness, so compared at --allow-config-diff.
func costOpts() CompareOptions {
	o := defaultOpts()
	o.AllowConfigDiff = true
	return o
}

func verdicts(c *Comparison) map[string]string {
	v := map[string]string{}
	for _, r := range c.Rows {
		v[r.Kind+" "+r.Metric] = r.Verdict
	}
	return v
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		base, new synth
		want      map[string]string // verdicts that must hold; others must not be regressions
		regs      int
		tooFew    bool
		notes     []string
	}{
		{
			name: "A/A", base: synth{reps: 5, noise: 0.02, seed: 1}, new: synth{reps: 5, noise: 0.02, seed: 2},
			regs: 0,
		},
		{
			name: "reg +25%", base: synth{reps: 5, noise: 0.02, seed: 1}, new: synth{reps: 5, noise: 0.02, seed: 2, scale: map[string]float64{"reg": 1.25}},
			// Only reg p50 is gated (lifecycle: reg.p50, unreg_last.p50); the
			// other two rows say regression as information.
			want: map[string]string{"reg p50": VerdictRegression, "reg p99": VerdictRegression, "reg ops_per_sec": VerdictRegression},
			regs: 1,
		},
		{
			name: "reg −25%", base: synth{reps: 5, noise: 0.02, seed: 1}, new: synth{reps: 5, noise: 0.02, seed: 2, scale: map[string]float64{"reg": 0.75}},
			want: map[string]string{"reg p50": verdictImprovement, "reg ops_per_sec": verdictImprovement},
		},
		{
			// Significant (no noise at all) but smaller than the threshold.
			name: "unreg +2%", base: synth{reps: 5, seed: 1}, new: synth{reps: 5, seed: 2, scale: map[string]float64{"unreg": 1.02}},
			want: map[string]string{"unreg p50": verdictSmall, "reg p50": verdictSame},
		},
		{
			name: "3 reps", base: synth{reps: 3, noise: 0.02, seed: 1}, new: synth{reps: 3, noise: 0.02, seed: 2, scale: map[string]float64{"reg": 2}},
			want:   map[string]string{"reg p50": VerdictTooFew},
			tooFew: true,
		},
		{
			name: "another host and firmware", base: synth{reps: 5, noise: 0.02, seed: 1}, new: synth{reps: 5, noise: 0.02, seed: 2, host: "h2", fw: "2.0"},
			notes: []string{"host: h1 → h2", "device fw_ver: 1.0 → 2.0"},
		},
		{
			name: "partial new run", base: synth{reps: 5, noise: 0.02, seed: 1}, new: synth{reps: 5, noise: 0.02, seed: 2, status: results.StatusPartial},
			notes: []string{"new is a partial run"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compare(tt.base.run("base"), tt.new.run("new"), defaultOpts())
			if err != nil {
				t.Fatal(err)
			}
			got := verdicts(c)
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%s: verdict %q, want %q", k, got[k], want)
				}
			}
			if c.Regressions != tt.regs {
				t.Errorf("%d regressions, want %d: %v", c.Regressions, tt.regs, got)
			}
			if c.TooFew != tt.tooFew {
				t.Errorf("TooFew = %v, want %v", c.TooFew, tt.tooFew)
			}
			notes := strings.Join(c.Notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
			if len(c.Rows) != 3*len(synthMedians) {
				t.Errorf("%d rows, want %d", len(c.Rows), 3*len(synthMedians))
			}
		})
	}
}

// TestCompareAAFalsePositives: the gate needs both significance and a change
// beyond the threshold, so A/A pairs whose repetitions scatter by 1% (the
// difference of two medians of 5 then has a spread near 0.75%, and 5% is
// more than 6 of those) never fail it, although the U test alone rejects
// about 5% of them.
func TestCompareAAFalsePositives(t *testing.T) {
	significant := 0
	for i := int64(0); i < 200; i++ {
		c, err := Compare(synth{reps: 5, noise: 0.01, seed: 2 * i}.run("a"), synth{reps: 5, noise: 0.01, seed: 2*i + 1}.run("b"), defaultOpts())
		if err != nil {
			t.Fatal(err)
		}
		if c.Regressions != 0 {
			t.Fatalf("A/A pair %d flagged: %s", i, c.Verdict())
		}
		for _, r := range c.Rows {
			if r.Significant {
				significant++
			}
		}
	}
	t.Logf("U test significant in %d of %d A/A rows; none beyond the threshold", significant, 200*9)
}

func TestCompareRefuses(t *testing.T) {
	tests := []struct {
		name      string
		base, new synth
		want      string
	}{
		{"different workloads", synth{reps: 5}, synth{reps: 5, workload: "steady"}, "different workloads"},
		{"failed run", synth{reps: 5}, synth{reps: 5, status: results.StatusFailed}, "failed run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(tt.base.run("base"), tt.new.run("new"), defaultOpts())
			if !errors.Is(err, results.ErrInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want results.ErrInput with %q", err, tt.want)
			}
		})
	}
}

func TestCompareFormats(t *testing.T) {
	c, err := Compare(synth{reps: 5, noise: 0.02, seed: 1}.run("base"),
		synth{reps: 5, noise: 0.02, seed: 2, scale: map[string]float64{"reg": 1.25}}.run("new"), defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	var text, md, js bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var row CompareRow
	for _, r := range c.Rows {
		if r.Kind == "reg" && r.Metric == "p50" {
			row = r
		}
	}
	delta := strings.TrimSuffix(row.delta(), "%")
	for name, out := range map[string]string{"text": text.String(), "md": md.String()} {
		for _, want := range []string{"verdict", "regression", delta, row.pValue(), "gate", "info"} {
			if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
	var back struct {
		Regressions int    `json:"regressions"`
		Verdict     string `json:"verdict"`
		Rows        []struct {
			Kind, Metric, Verdict string
			DeltaPct              *float64 `json:"delta_pct"`
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if back.Regressions != c.Regressions || len(back.Rows) != len(c.Rows) || back.Verdict != c.Verdict() {
		t.Errorf("json round trip: %+v", back)
	}
}

// TestCompareEngineRuns reads run folders the engine wrote with the sim
// cost model (testdata/README.md): the A/A pair has no regression, the
// +25% reg cost is flagged on reg p50.
func TestCompareEngineRuns(t *testing.T) {
	load := func(name string) *Run {
		r, err := LoadRun("testdata/runs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := load("engine-lifecycle")
	aa, err := Compare(base, load("engine-lifecycle-again"), defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if aa.Regressions != 0 {
		t.Errorf("A/A: %s", aa.Verdict())
	}
	ab, err := Compare(base, load("engine-lifecycle-reg25"), costOpts())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts(ab)["reg p50"]; v != VerdictRegression {
		t.Errorf("+25%% reg cost: reg p50 verdict %q; %s", v, ab.Verdict())
	}
	if !strings.Contains(strings.Join(ab.Notes, "\n"), "sim_cost=reg=2.5µs") {
		t.Errorf("the changed sim cost is not named: %v", ab.Notes)
	}
}

// TestCompareNoRepetitions: a result with overall figures but no
// repetitions cannot be tested, and must not pass as "no regression".
func TestCompareNoRepetitions(t *testing.T) {
	base := synth{reps: 5, noise: 0.01, seed: 1}.run("base")
	new := synth{reps: 5, noise: 0.01, seed: 2}.run("new")
	new.Result.Repetitions = nil
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if !c.TooFew || c.NeedReps != 5 {
		t.Errorf("TooFew %v, NeedReps %d; want true, 5", c.TooFew, c.NeedReps)
	}
	for _, r := range c.Rows {
		if r.Verdict != VerdictTooFew {
			t.Errorf("%s %s: verdict %q", r.Kind, r.Metric, r.Verdict)
		}
	}
}

// A repetition in which a kind stalled (count 0, or missing from the
// repetition) did 0 ops/s: compare counts it, so stalls in the new run are
// a throughput regression; its latencies do not exist and are not counted.
func TestCompareStalledRepetition(t *testing.T) {
	base := synth{reps: 8, noise: 0.01, seed: 1}.run("base")
	new := synth{reps: 8, noise: 0.01, seed: 2}.run("new")
	for i := range 6 {
		if i%2 == 0 {
			new.Result.Repetitions[i].Ops[results.OpReg] = results.OpStats{}
		} else {
			delete(new.Result.Repetitions[i].Ops, results.OpReg)
		}
	}
	rs := RepetitionStats(new.Result, results.OpReg, metrics("ops_per_sec")[0])
	if len(rs.Values) != 8 || rs.Values[0] != 0 || rs.Values[1] != 0 {
		t.Errorf("ops/s values %v, want 8 with the stalled ones 0", rs.Values)
	}
	if rs := RepetitionStats(new.Result, results.OpReg, metrics("p50")[0]); len(rs.Values) != 2 {
		t.Errorf("p50 values %v, want only the 2 repetitions that ran", rs.Values)
	}
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts(c)["reg ops_per_sec"]; v != VerdictRegression {
		t.Errorf("reg ops_per_sec verdict %q, want %q", v, VerdictRegression)
	}
}

// runOf is resultstest.Lifecycle as a run read from dir.
func runOf(dir string, vals map[string][]float64) *Run {
	r := resultstest.Lifecycle(vals)
	return &Run{Dir: dir, Label: dir, Result: r, Kinds: results.KindsOf(r)}
}

func rowOf(c *Comparison, kind, metric string) CompareRow {
	for _, r := range c.Rows {
		if r.Kind == kind && r.Metric == metric {
			return r
		}
	}
	return CompareRow{}
}

// Holm's step-down adjustment, known answer: of m gated p-values the i-th
// smallest is multiplied by m−i, then made monotone; information rows are
// left alone.
func TestHolm(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	rows := []CompareRow{{Gated: true, P: p(0.04)}, {Gated: true, P: p(0.01)}, {Gated: false, P: p(0.001)}, {Gated: true, P: p(0.03)}, {Gated: true}}
	holm(rows)
	want := []float64{0.06, 0.03, -1, 0.06, -1}
	for i, w := range want {
		switch {
		case w < 0 && rows[i].PAdj != nil:
			t.Errorf("row %d: adjusted %g, want none", i, *rows[i].PAdj)
		case w >= 0 && (rows[i].PAdj == nil || math.Abs(*rows[i].PAdj-w) > 1e-12):
			t.Errorf("row %d: adjusted %v, want %g", i, rows[i].PAdj, w)
		}
	}
}

// Only gated metrics decide, corrected together: a change in a metric
// nobody gated on (the issue: reg p50 −28% p=0.048 in a change that
// touched destruction) is shown as information and fails nothing; two
// gated metrics each at p≈0.03 are not significant after Holm.
func TestCompareGates(t *testing.T) {
	five := func(x ...float64) []float64 { return x }
	base := runOf("base", map[string][]float64{
		"reg":        five(1000, 1010, 990, 1005, 995),
		"unreg":      five(800, 810, 790, 805, 795),
		"unreg_last": five(5000, 5050, 4950, 5025, 4975),
	})
	// unreg +25%, clearly; reg and unreg_last overlap the base in one
	// repetition each: U test p about 0.016-0.03.
	new := runOf("new", map[string][]float64{
		"reg":        five(1080, 1090, 1000, 1085, 1075),
		"unreg":      five(1000, 1010, 990, 1005, 995),
		"unreg_last": five(5400, 5450, 5000, 5425, 5375),
	})
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if g := c.gateList(); g != "reg.p50, unreg_last.p50" {
		t.Errorf("default gates of lifecycle %q", g)
	}
	u := rowOf(c, "unreg", "p50")
	if u.Gated || u.Verdict != VerdictRegression || u.PAdj != nil {
		t.Errorf("unreg p50 %+v: want an information row saying regression", u)
	}
	for _, kind := range []string{"reg", "unreg_last"} {
		r := rowOf(c, kind, "p50")
		if !r.Gated || r.P == nil || *r.P > 0.05 || r.PAdj == nil || *r.PAdj <= 0.05 || r.Verdict != verdictSame {
			t.Errorf("%s p50: p %v, Holm %v, verdict %q: want p ≤ 0.05 raw, > 0.05 after Holm, ~", kind, deref(r.P), deref(r.PAdj), r.Verdict)
		}
	}
	if c.Regressions != 0 {
		t.Errorf("%d regressions: %s", c.Regressions, c.Verdict())
	}
	// Gate on unreg: now it decides.
	opt := defaultOpts()
	opt.Gates = []Gate{{"unreg", "p50"}}
	c, err = Compare(base, new, opt)
	if err != nil {
		t.Fatal(err)
	}
	if c.Regressions != 1 || !strings.Contains(c.Verdict(), "unreg p50 +25.0%") {
		t.Errorf("gated on unreg.p50: %s", c.Verdict())
	}
	// A gate on a kind the runs do not have is bad input.
	opt.Gates = []Gate{{"create", "p50"}}
	if _, err := Compare(runOf("a", map[string][]float64{"reg": five(1, 2, 3, 4, 5)}), runOf("b", map[string][]float64{"reg": five(1, 2, 3, 4, 5)}), opt); !errors.Is(err, results.ErrInput) {
		t.Errorf("gate on a missing kind: err %v, want results.ErrInput", err)
	}
	for _, bad := range []string{"reg", "reg.p42", ".p50", ","} {
		if _, err := ParseGates(bad); !errors.Is(err, results.ErrInput) {
			t.Errorf("ParseGates(%q): err %v, want results.ErrInput", bad, err)
		}
	}
	if gs, err := ParseGates("reg.p50, unreg_last.p99"); err != nil || len(gs) != 2 || gs[1] != (Gate{"unreg_last", "p99"}) {
		t.Errorf("ParseGates: %v %v", gs, err)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A change that is not significant still shows its size and p beside the
// "~" (the issue: reg ops/s 135k → 85.2k showed only "~").
func TestCompareDeltaAlwaysShown(t *testing.T) {
	base := runOf("base", map[string][]float64{"reg": {29630, 20000, 45000, 25000, 35000}, "unreg_last": {5000, 5000, 5000, 5000, 5000}})
	new := runOf("new", map[string][]float64{"reg": {46950, 20500, 60000, 30000, 70000}, "unreg_last": {5000, 5000, 5000, 5000, 5000}})
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	r := rowOf(c, "reg", "ops_per_sec")
	if r.Verdict != verdictSame || r.DeltaPct == nil || r.P == nil {
		t.Fatalf("reg ops/s: %+v, want ~ with a delta and p", r)
	}
	var text bytes.Buffer
	c.WriteText(&text)
	want := fmt.Sprintf("%+.1f%%  %.3f", *r.DeltaPct, *r.P)
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q next to the ~:\n%s", want, text.String())
	}
}

// One minimum number of repetitions: compare's refusal, its ±∞ note and
// the report's warning name the same number, derived from the test over
// the gated metrics and the interval's confidence (5 by default), and
// with that many the gate decides.
func TestOneMinimumRepetitions(t *testing.T) {
	if n := MinRepetitions(DefaultAlpha, DefaultConfidence, 2); n != 5 {
		t.Fatalf("MinRepetitions(0.05, 0.90, 2 gates) = %d, want 5", n)
	}
	if n := MinRepetitions(0.05, 0.95, 2); n != 6 {
		t.Errorf("MinRepetitions(0.05, 0.95, 2) = %d, want 6 (a 95%% interval of a median needs 6)", n)
	}
	if n := MinRepetitions(0.05, 0.90, 8); n != 6 {
		t.Errorf("MinRepetitions(0.05, 0.90, 8 gates) = %d, want 6 (2/C(10,5) = 0.0079 > 0.05/8)", n)
	}
	four := synth{reps: 4, noise: 0.02, seed: 1}
	c, err := Compare(four.run("base"), four.run("new"), defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	c.WriteText(&text)
	warn := strings.Join(warningLines(four.run("base")), "\n")
	for where, s := range map[string]string{"verdict": c.Verdict(), "table": text.String(), "report warning": warn} {
		if !strings.Contains(s, "at least 5 per run") || strings.Contains(s, "at least 4") || strings.Contains(s, "at least 6") {
			t.Errorf("%s does not name 5 alone:\n%s", where, s)
		}
	}
	if !c.TooFew || c.NeedReps != 5 || !strings.Contains(text.String(), "±∞") {
		t.Errorf("4 repetitions: TooFew %v NeedReps %d", c.TooFew, c.NeedReps)
	}
	five := synth{reps: 5, noise: 0.02, seed: 1}
	if c, _ := Compare(five.run("base"), five.run("new"), defaultOpts()); c.TooFew || strings.Contains(strings.Join(warningLines(five.run("base")), "\n"), "per run") {
		t.Errorf("5 repetitions: TooFew %v; %s", c.TooFew, c.Verdict())
	}
}

// The runs' own warnings travel into the comparison, and the rows they
// concern are marked: a busy machine marks every row, a warning about reg
// only reg's (the issue: a "machine busy" pair compared as if nothing
// happened).
func TestCompareCarriesWarnings(t *testing.T) {
	base := synth{reps: 5, noise: 0.02, seed: 1}.run("base")
	new := synth{reps: 5, noise: 0.02, seed: 2}.run("new")
	base.Result.Warnings = []results.Warning{results.NewWarning(results.WarnCPUStarved, results.SeverityWarning, 2, "", "workers got 1.1 CPU-seconds of the 4.0 their 4 thread(s) could use (28%): the machine is busy, throughput is understated")}
	new.Result.Warnings = []results.Warning{results.NewWarning(results.WarnUntimedGap, results.SeverityWarning, 0, "reg", "an untimed stretch of 200ms before one of its batches exceeds its p99.9 4µs")}
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 2 || !strings.HasPrefix(c.Warnings[0].Text, "base: repetition 2: workers got") || !strings.HasPrefix(c.Warnings[1].Text, "new: reg: ") {
		t.Fatalf("warnings %q", c.Warnings)
	}
	// They stay typed: kind, repetition and op kind as the runs said them.
	if w := c.Warnings[0]; w.Kind != results.WarnCPUStarved || w.Repetition != 2 || w.Op != "" {
		t.Errorf("base's warning %+v lost its fields", w)
	}
	if w := c.Warnings[1]; w.Kind != results.WarnUntimedGap || w.Op != "reg" {
		t.Errorf("new's warning %+v lost its fields", w)
	}
	// The busy machine concerns every row: said once in the legend, not
	// marked on each; the reg warning marks reg's rows.
	for _, r := range c.Rows {
		var want []int
		if r.Kind == "reg" {
			want = []int{2}
		}
		if !slices.Equal(r.Warned, want) {
			t.Errorf("%s %s: marked %v, want %v", r.Kind, r.Metric, r.Warned, want)
		}
	}
	var text bytes.Buffer
	c.WriteText(&text)
	for _, s := range []string{"!2", "(!N on a row: warning N concerns that row's op kind; the others concern every row)", "1. base: repetition 2: workers got", "2. new: reg: an untimed"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
}

// Labels are in every compare header: once when both runs share them,
// else side by side; a run without any shows a dash.
func TestCompareShowsLabels(t *testing.T) {
	tests := []struct {
		base, new map[string]string
		want      string
	}{
		{map[string]string{"fw": "1"}, map[string]string{"fw": "1"}, "labels (both): fw=1\n"},
		{map[string]string{"fw": "1", "board": "a"}, map[string]string{"fw": "2"}, "labels: base board=a fw=1; new fw=2\n"},
		{nil, map[string]string{"fw": "2"}, "labels: base –; new fw=2\n"},
		{nil, nil, ""},
	}
	for _, tt := range tests {
		c, err := Compare(synth{reps: 5, seed: 1, labels: tt.base}.run("base"), synth{reps: 5, seed: 2, labels: tt.new}.run("new"), defaultOpts())
		if err != nil {
			t.Fatal(err)
		}
		var text, md bytes.Buffer
		c.WriteText(&text)
		c.WriteMarkdown(&md)
		if tt.want == "" {
			if strings.Contains(text.String(), "labels") || strings.Contains(md.String(), "labels") {
				t.Errorf("no labels, but the header names some:\n%s", text.String())
			}
			continue
		}
		if !strings.Contains(text.String(), tt.want) || !strings.Contains(md.String(), "- "+tt.want) {
			t.Errorf("want %q in both:\n%s\n%s", tt.want, text.String(), md.String())
		}
	}
}

// TestCompareMarkdownGolden: compare --format md as a CI step summary
// shows it, for the engine's frozen A/A and +25% pairs: the verdict is the
// first line, the table follows, everything else is collapsed.
func TestCompareMarkdownGolden(t *testing.T) {
	for _, tc := range []struct{ name, new, outcome string }{
		{"aa", "engine-lifecycle-again", "PASS"},
		{"reg25", "engine-lifecycle-reg25", "FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := LoadRun("testdata/runs/engine-lifecycle")
			if err != nil {
				t.Fatal(err)
			}
			new, err := LoadRun("testdata/runs/" + tc.new)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compare(base, new, costOpts())
			if err != nil {
				t.Fatal(err)
			}
			var md bytes.Buffer
			if err := c.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(md.String(), "\n")
			if want := "**xrcbench compare lifecycle: " + tc.outcome + "**"; !strings.HasPrefix(lines[0], want) {
				t.Errorf("first line %q, want it to start with %q", lines[0], want)
			}
			if !strings.HasPrefix(lines[2], "| op |") {
				t.Errorf("line 3 %q is not the table's header", lines[2])
			}
			if !strings.Contains(md.String(), "<details>") || !strings.HasSuffix(md.String(), "</details>\n") {
				t.Errorf("no collapsed details at the end:\n%s", md.String())
			}
			golden.Check(t, "compare-"+tc.name+".md", md.Bytes())
		})
	}
}

// TestCompareModifyGolden: two runs the engine wrote at --qp-state rtr on
// the sim, the second with a 25% dearer modify (5µs → 6.25µs per
// transition, testdata/README.md): compare has a modify row, up by about
// 25% (the harness's own share makes it a little less) and significant,
// though modify is no gate of lifecycle, so the verdict stays PASS.
func TestCompareModifyGolden(t *testing.T) {
	base, err := LoadRun("testdata/runs/engine-lifecycle-rtr")
	if err != nil {
		t.Fatal(err)
	}
	new, err := LoadRun("testdata/runs/engine-lifecycle-rtr-modify25")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(base, new, costOpts())
	if err != nil {
		t.Fatal(err)
	}
	row := rowOf(c, "modify", "p50")
	if row.DeltaPct == nil || *row.DeltaPct < 15 || *row.DeltaPct > 35 || row.Gated || row.P == nil || *row.P > 0.05 {
		t.Errorf("modify p50 row %+v: want an ungated, significant rise of about 25%%", row)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "sim_cost=reg=2µs,modify=5µs sim_semantics=legacy → sim_cost=reg=2µs,modify=6.25µs") {
		t.Errorf("the changed sim cost is not named: %v", c.Notes)
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| modify | p50 |") {
		t.Errorf("no modify p50 row in the table:\n%s", md.String())
	}
	golden.Check(t, "compare-modify25.md", md.Bytes())
}

// An undecided verdict names the gated row that lacked repetitions and how
// many of each run's repetitions gave it a value: 5 and 5 repetitions can
// still be too few, when a repetition measured nothing of the kind.
func TestVerdictTooFewWhere(t *testing.T) {
	base := synth{reps: 5, noise: 0.01, seed: 1}.run("base")
	new := synth{reps: 5, noise: 0.01, seed: 2}.run("new")
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	// As Compare leaves it when one of new's repetitions had no reg p50.
	c.TooFew, c.Regressions = true, 0
	for i := range c.Rows {
		r := &c.Rows[i]
		r.Verdict = verdictSame
		if r.Gated && r.Kind == results.OpReg && r.Metric == "p50" {
			r.Verdict, r.New.N = VerdictTooFew, 4
		}
	}
	v := c.Verdict()
	if !strings.Contains(v, "undecided: too few repetitions (reg p50: base 5 of 5 repetitions, new 4 of 5)") {
		t.Errorf("verdict %q does not name reg p50 with 4 of new's 5 repetitions", v)
	}
}
