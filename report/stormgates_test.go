package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

// stormRun is resultstest.Storm as a run read from dir.
func stormRun(dir string, reps int, makespanNS, noise float64, seed uint64, gates []string) *Run {
	r := resultstest.Storm(reps, makespanNS, noise, seed, gates)
	return &Run{Dir: dir, Label: dir, Result: r, Kinds: results.KindsOf(r)}
}

var stormGates = []string{"storm.makespan", "storm.teardown"}

// A storm whose makespan regressed is flagged by compare on the gate its
// spec declares, though no operation's latency moved; an A/A pair is not.
// A storm result that predates declared gates gates on its makespan.
func TestCompareStormMakespan(t *testing.T) {
	base := stormRun("base", 8, 1e6, 0.02, 1, stormGates)
	for _, tc := range []struct {
		name       string
		new        *Run
		regression bool
		gates      string
	}{
		{"makespan +30%", stormRun("new", 8, 1.3e6, 0.02, 2, stormGates), true, "storm.makespan,storm.teardown"},
		{"A/A", stormRun("new", 8, 1e6, 0.02, 3, stormGates), false, "storm.makespan,storm.teardown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(base, tc.new, defaultOpts())
			if err != nil {
				t.Fatal(err)
			}
			var gates []string
			for _, g := range c.Gates {
				gates = append(gates, g.String())
			}
			if strings.Join(gates, ",") != tc.gates {
				t.Fatalf("gates %v, want %s", gates, tc.gates)
			}
			row := rowOf(c, results.StormKind, "makespan")
			if !row.Gated || row.Base.N != 8 || (row.Verdict == VerdictRegression) != tc.regression || (c.Regressions > 0) != tc.regression {
				t.Errorf("makespan row %+v, %d regressions; want regression %v", row, c.Regressions, tc.regression)
			}
			if r := rowOf(c, results.OpReg, "p50"); r.Gated || r.Verdict == VerdictRegression {
				t.Errorf("reg p50 row %+v: neither gated nor changed", r)
			}
			var text strings.Builder
			if err := c.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "makespan") {
				t.Errorf("the comparison's text does not show the makespan:\n%s", text.String())
			}
		})
	}
	old := stormRun("old", 8, 1e6, 0.02, 4, nil)
	c, err := Compare(old, stormRun("new", 8, 1.3e6, 0.02, 5, nil), defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Gates) != 1 || c.Gates[0].String() != "storm.makespan" || c.Regressions != 1 {
		t.Errorf("a storm before declared gates: gates %v, %d regressions; want storm.makespan, one", c.Gates, c.Regressions)
	}
	if _, err := ParseGates("storm.p50"); err == nil || !strings.Contains(err.Error(), "makespan, teardown") {
		t.Errorf("ParseGates(storm.p50) = %v, want the storm's metrics named", err)
	}
	if _, err := Compare(runOf("a", map[string][]float64{results.OpReg: {1, 2, 3, 4, 5}}), runOf("b", map[string][]float64{results.OpReg: {1, 2, 3, 4, 5}}),
		CompareOptions{Alpha: 0.05, Gates: []Gate{{results.StormKind, "makespan"}}}); err == nil {
		t.Error("a storm gate on runs that are no storm was accepted")
	}
}

// Every export carries a storm's makespan and teardown: the dashboards'
// latency files and the CSV's rows, per repetition.
func TestExportStormMakespan(t *testing.T) {
	run := stormRun("runs/storm", 6, 1e6, 0.02, 6, stormGates)
	smaller, _, err := ExportGitHubActionBenchmark([]*Run{run}, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gab []gabEntry
	if err := json.Unmarshal(smaller, &gab); err != nil {
		t.Fatal(err)
	}
	med := RepetitionStats(run.Result, results.StormKind, stormMetrics[0]).Median
	named := func(e gabEntry, metric string) bool {
		return strings.HasPrefix(e.Name, "storm/storm [") && strings.HasSuffix(e.Name, "] "+metric)
	}
	i := slices.IndexFunc(gab, func(e gabEntry) bool { return named(e, "makespan") })
	if i < 0 || gab[i].Unit != "ns" || gab[i].Value != units.Round3(med) || med < 9e5 {
		t.Fatalf("github-action-benchmark latencies %s: want storm/storm makespan of %g ns", smaller, med)
	}
	if !slices.ContainsFunc(gab, func(e gabEntry) bool { return named(e, "teardown") }) {
		t.Errorf("no teardown in %s", smaller)
	}
	bmf, err := ExportBencher([]*Run{run}, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]map[string]bmfMetric
	if err := json.Unmarshal(bmf, &b); err != nil {
		t.Fatal(err)
	}
	var m bmfMetric
	ok := false
	for bench, ms := range b {
		if strings.HasPrefix(bench, "storm/storm [") {
			m, ok = ms["latency-makespan"]
		}
	}
	if !ok || m.Value != units.Round3(med) {
		t.Errorf("bencher %s: want storm/storm latency-makespan %g", bmf, med)
	}
	data, err := ExportCSV([]*Run{run})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var makespans []string
	for _, row := range rows[1:] {
		if row[5] == results.StormKind && row[6] == "makespan" && row[8] == "ns" {
			v, err := strconv.ParseFloat(row[7], 64)
			if err != nil {
				t.Fatal(err)
			}
			makespans = append(makespans, fmt.Sprint(int64(v)))
		}
	}
	var want []string
	for _, ns := range run.Result.Storm.MakespanNS {
		want = append(want, fmt.Sprint(ns))
	}
	if strings.Join(makespans, ",") != strings.Join(want, ",") {
		t.Errorf("CSV makespans %v, want each repetition's %v", makespans, want)
	}
}

// The report leads with the figure the workload's spec names as its
// headline; a result that predates it keeps the kinds in results order.
func TestHeadlineLeads(t *testing.T) {
	vals := map[string][]float64{results.OpReg: {1000, 1100}, results.OpUnreg: {800, 810}, results.OpUnregLast: {5000, 5100}}
	run := runOf("r", vals)
	first := func() string { return strings.SplitN(newHeadline(run).Kinds[0], ":", 2)[0] }
	if got := first(); got != results.OpReg {
		t.Errorf("no headline declared: first %q, want reg (results order)", got)
	}
	run.Result.Config.Headline = "unreg_last.p50"
	if got, kinds := first(), newHeadline(run).Kinds; got != results.OpUnregLast || len(kinds) != 3 || !strings.HasPrefix(kinds[1], "reg:") || !strings.HasPrefix(kinds[2], "unreg:") {
		t.Errorf("headline unreg_last.p50: kinds %q, want unreg_last first, the others in order", kinds)
	}
}

// A declared storm gate a run could not measure (its teardown) is left
// out with a note, not passed as checked.
func TestCompareStormTeardownUnmeasured(t *testing.T) {
	base, new := stormRun("base", 8, 1e6, 0.02, 1, stormGates), stormRun("new", 8, 1e6, 0.02, 2, stormGates)
	new.Result.Storm.TeardownNS, new.Result.Storm.TeardownNote = nil, "teardown exit: no device to ask"
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Gates) != 1 || c.Gates[0].String() != "storm.makespan" || !slices.Contains(c.Notes, "storm.teardown not gated: new measured none") {
		t.Errorf("gates %v, notes %q", c.Gates, c.Notes)
	}
}
