package report

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// lifecycleResult is a result whose repetitions have the given unreg and
// unreg_last p50s (ns); the totals are their first values.
func lifecycleResult(unreg, last []int64) *results.Result {
	r := &results.Result{Ops: map[string]results.OpStats{
		results.OpUnreg:     {Count: 100, NS: results.Latency{P50: unreg[0]}},
		results.OpUnregLast: {Count: 100, NS: results.Latency{P50: last[0]}},
	}}
	for i := range unreg {
		r.Repetitions = append(r.Repetitions, results.Repetition{Index: i, Ops: map[string]results.OpStats{
			results.OpUnreg:     {Count: 10, NS: results.Latency{P50: unreg[i]}},
			results.OpUnregLast: {Count: 10, NS: results.Latency{P50: last[i]}},
		}})
	}
	return r
}

// TestDestructionCI checks the interval against order statistics worked
// out by hand: the range of n paired differences holds their median with
// probability 1 − 2·2⁻ⁿ, and for n = 10 the 95% interval is [x(2), x(9)]
// (1 − 2·(1+10)/1024 = 97.9%, while [x(3), x(8)] reaches only 89%).
func TestDestructionCI(t *testing.T) {
	seq := func(n int, f func(i int) int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	tests := []struct {
		name         string
		unreg, last  []int64
		haveCI       bool
		lo, hi       float64
		wantSentence []string
	}{
		{"one repetition", []int64{700}, []int64{4700}, false, 0, 0,
			[]string{"Destruction adds 4.00µs (unreg_last p50 4.70µs − unreg p50 700ns)", "a confidence interval needs repetitions (1 repetition here): rerun with --repetitions 6 or more"}},
		{"five repetitions", seq(5, func(int) int64 { return 1000 }), seq(5, func(i int) int64 { return 1000 + 1000*int64(5-i) }), false, 0, 0,
			[]string{"across the 5 repetitions it ranged [1.00µs, 5.00µs], a 93.8% confidence interval: a 95% CI needs 6 repetitions or more"}},
		{"ten repetitions", seq(10, func(int) int64 { return 500 }), seq(10, func(i int) int64 { return 500 + 1000*int64((i*7)%10+1) }), true, 2000, 9000,
			[]string{"95% CI [2.00µs, 9.00µs] across 10 repetitions"}},
		{"negative difference", seq(6, func(int) int64 { return 5000 }), seq(6, func(i int) int64 { return 4000 - 100*int64(i) }), true, -1500, -1000,
			[]string{"Destruction adds -1.00µs", "95% CI [-1.50µs, -1.00µs] across 6 repetitions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := destructionCost(lifecycleResult(tt.unreg, tt.last))
			if d == nil {
				t.Fatal("no destruction cost for a run with unreg and unreg_last")
			}
			if want := float64(tt.last[0] - tt.unreg[0]); d.AddsNS != want {
				t.Errorf("adds %v, want %v", d.AddsNS, want)
			}
			if d.HaveCI != tt.haveCI || (tt.haveCI && (d.Lo != tt.lo || d.Hi != tt.hi || d.Confidence < ciLevel)) {
				t.Errorf("CI %v [%v, %v] at %v, want %v [%v, %v]", d.HaveCI, d.Lo, d.Hi, d.Confidence, tt.haveCI, tt.lo, tt.hi)
			}
			s := d.sentence()
			for _, w := range tt.wantSentence {
				if !strings.Contains(s, w) {
					t.Errorf("sentence %q lacks %q", s, w)
				}
			}
		})
	}
	// No unreg_last, no destruction to speak of.
	r := lifecycleResult([]int64{1}, []int64{2})
	delete(r.Ops, results.OpUnregLast)
	if d := destructionCost(r); d != nil {
		t.Errorf("destruction cost %+v of a run without unreg_last", d)
	}
}

func TestExpectedFailures(t *testing.T) {
	tests := []struct {
		kind   string
		s      results.OpStats
		errno  string
		n      int64
		ok     bool
		column string
	}{
		{"reg_invalid", results.OpStats{Count: 10, Errors: 2, Expect: "EINVAL"}, "EINVAL", 8, true, "expected EINVAL: 8"},
		{"reg_invalid", results.OpStats{Count: 10, Expect: "ENOENT"}, "ENOENT", 10, true, "expected ENOENT: 10"},
		// A result written before OpStats.Expect: the engine then allowed
		// these kinds nothing but EINVAL.
		{"reg_foreign", results.OpStats{Count: 5, Errors: 1}, "EINVAL", 4, true, "expected EINVAL: 4"},
		{"reg", results.OpStats{Count: 10, Errors: 3}, "", 0, false, "–"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.kind, tt.s.Expect), func(t *testing.T) {
			errno, n, ok := ExpectedFailures(tt.kind, tt.s)
			if errno != tt.errno || n != tt.n || ok != tt.ok {
				t.Errorf("ExpectedFailures = %q %d %v, want %q %d %v", errno, n, ok, tt.errno, tt.n, tt.ok)
			}
			if c := expectedCell(tt.kind, tt.s); c != tt.column {
				t.Errorf("cell %q, want %q", c, tt.column)
			}
		})
	}
}

// TestMeasuredDuration: a run stopped early says what it measured, not
// what was asked for.
func TestMeasuredDuration(t *testing.T) {
	reps := func(ds ...time.Duration) []results.Repetition {
		var out []results.Repetition
		for i, d := range ds {
			out = append(out, results.Repetition{Index: i, Duration: results.Duration(d)})
		}
		return out
	}
	tests := []struct {
		name     string
		cfg      results.Config
		reps     []results.Repetition
		early    bool
		note     string
		length   string
		notInLen string
	}{
		{"complete", results.Config{Duration: results.Duration(2 * time.Second), Repetitions: 2}, reps(2001*time.Millisecond, 2003*time.Millisecond),
			false, "", "2 repetitions of 2s", "measured"},
		{"interrupted in the second", results.Config{Duration: results.Duration(10 * time.Second), Repetitions: 3}, reps(10*time.Second, 1234*time.Millisecond),
			true, "Stopped early: 2 repetitions measured 11.23s in all, of 3 repetitions of 10s requested", "2 repetitions, 11.23s measured in all (stopped early: 3 repetitions of 10s requested)", "2 repetitions of 10s"},
		{"interrupted in the only one", results.Config{Duration: results.Duration(60 * time.Second), Repetitions: 1}, reps(4500 * time.Millisecond),
			true, "1 repetition measured 4.5s in all, of 1 repetition of 1m0s requested", "1 repetition, 4.5s measured", "of 1m0s,"},
		{"iterations, complete", results.Config{Iterations: 100, Repetitions: 2}, reps(time.Second, 3*time.Second),
			false, "", "2 repetitions of 100 iterations", "measured"},
		{"iterations, one missing", results.Config{Iterations: 100, Repetitions: 2}, reps(time.Second),
			true, "1 repetition measured 1s in all, of 2 repetitions requested", "1 repetition, 1s measured in all (stopped early: 2 repetitions of 100 iterations requested)", "1 repetition of 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Result{Config: tt.cfg, Repetitions: tt.reps}
			if got := stoppedEarly(r); got != tt.early {
				t.Errorf("stoppedEarly = %v, want %v", got, tt.early)
			}
			if note := measuredNote(r); (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("note %q, want one with %q", note, tt.note)
			}
			l := runLength(r)
			if !strings.Contains(l, tt.length) || strings.Contains(l, tt.notInLen) {
				t.Errorf("runLength %q: want %q, not %q", l, tt.length, tt.notInLen)
			}
		})
	}
}

func TestHeadlineSentences(t *testing.T) {
	run := &Run{Kinds: []string{results.OpReg, results.OpRegInvalid, results.OpUnregLast}, Result: &results.Result{
		Config:      results.Config{Workload: "x", Repetitions: 1},
		Environment: results.Environment{Device: &results.Device{TestDouble: true, NUMANode: -1}},
		Ops: map[string]results.OpStats{
			results.OpReg:        {Count: 1, OpsPerSec: 10, NS: results.Latency{P50: 900, P99: 2500}},
			results.OpRegInvalid: {Count: 20, OpsPerSec: 2000, Expect: "EINVAL", NS: results.Latency{P50: 1500, P99: 30000}},
			results.OpUnregLast:  {},
		},
		Repetitions: []results.Repetition{{}},
	}}
	h := newHeadline(run)
	want := []string{
		"reg: p50 900ns, p99 2.50µs (1 operation, 10.0/s).",
		"reg_invalid (must fail with EINVAL): p50 1.50µs, p99 30.0µs (20 operations, 2.00k/s).",
	}
	if strings.Join(h.Kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("kinds:\n%s\nwant:\n%s", strings.Join(h.Kinds, "\n"), strings.Join(want, "\n"))
	}
	if h.Destruction != nil {
		t.Errorf("destruction %+v without unreg", h.Destruction)
	}
	if len(h.Notes) == 0 || h.Notes[0] != TestDoubleBanner {
		t.Errorf("notes %q: want the test-double banner first", h.Notes)
	}
	run.Result.Environment.Device.TestDouble = false
	if h := newHeadline(run); len(h.Notes) != 0 {
		t.Errorf("notes %q of a run on no double", h.Notes)
	}
}

func TestSILabel(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 5: "5", 500: "500", 2500: "2.5k", 25000: "25k", 40000: "40k", 1e6: "1M", 1.25e6: "1.25M", 3e9: "3G", 0.5: "0.5"} {
		if got := siLabel(v); got != want {
			t.Errorf("siLabel(%v) = %q, want %q", v, got, want)
		}
	}
	// Every major tick of a linear axis reads alike: no 25000.00, no
	// 0.30000000000000004.
	for _, r := range [][2]float64{{0, 100000}, {0, 0.9}, {0, 87654}, {0, 4.4e6}, {0, 7}} {
		for _, tk := range linearTicks.Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			if strings.Contains(tk.Label, "e") || strings.HasSuffix(tk.Label, ".0") || strings.Contains(tk.Label, ".00") || len(tk.Label) > 5 {
				t.Errorf("range %v: tick %v labelled %q", r, tk.Value, tk.Label)
			}
		}
	}
	for _, tk := range logCountTicks.Ticks(0.5, 4e5) {
		if tk.Label != "" && tk.Label != siLabel(tk.Value) || (tk.Label != "" && math.Log10(tk.Value) != math.Round(math.Log10(tk.Value))) {
			t.Errorf("log count tick %v labelled %q", tk.Value, tk.Label)
		}
	}
}

// The headline and the warnings ask for one count of repetitions: a
// lifecycle run of one repetition once read "--repetitions 6" in its
// headline (the destruction cost's 95% interval) and "--repetitions 5" in
// its warning (compare's 90% interval of the median).
func TestRerunRepetitionsOneTruth(t *testing.T) {
	rerun := regexp.MustCompile(`--repetitions (\d+)`)
	tests := []struct {
		name string
		r    *results.Result
		want string // the count asked for; "" none
	}{
		{"lifecycle, 1 repetition", lifecycleResult([]int64{700}, []int64{4700}), "6"},
		{"lifecycle, 5 repetitions", lifecycleResult([]int64{700, 710, 720, 730, 740}, []int64{4700, 4710, 4720, 4730, 4740}), "6"},
		{"lifecycle, 6 repetitions", lifecycleResult([]int64{700, 710, 720, 730, 740, 750}, []int64{4700, 4710, 4720, 4730, 4740, 4750}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Config.Workload = "lifecycle"
			run := &Run{Result: tt.r, Kinds: results.KindsOf(tt.r)}
			texts := warningLines(run)
			if d := newHeadline(run).Destruction; d != nil {
				texts = append(texts, d.sentence())
			}
			asked := map[string]bool{}
			for _, s := range texts {
				for _, m := range rerun.FindAllStringSubmatch(s, -1) {
					asked[m[1]] = true
				}
			}
			switch {
			case tt.want == "" && len(asked) > 0:
				t.Errorf("asks for --repetitions %v with enough: %q", asked, texts)
			case tt.want != "" && (len(asked) != 1 || !asked[tt.want]):
				t.Errorf("asks for --repetitions %v, want %s alone: %q", asked, tt.want, texts)
			}
		})
	}
}
