package qualify

import (
	"fmt"
	"path/filepath"

	"github.com/xrcbench/xrcbench/report"
)

// judge evaluates every criterion of the plan. Absolute limits are judged
// on the run's figure over all its repetitions (result.json's ops); limits
// relative to the baseline with compare's test: each run's relative
// criteria are its gates, Holm-corrected together, and a criterion fails
// when its change is significant and worse than its limit.
func judge(o Options, base *Qualification, runs map[string]*report.Run) []Row {
	var rows []Row
	comparisons := map[string]*report.Comparison{}
	compareErr := map[string]error{}
	for _, c := range o.Plan.Criteria {
		row := Row{Name: c.Name(), Run: c.Run, Evidence: []string{filepath.Join(RunsDir, c.Run)}}
		run := runs[c.Run]
		if run == nil {
			row.Verdict, row.Message = Error, fmt.Sprintf("run %s did not measure: nothing to judge", c.Run)
			rows = append(rows, row)
			continue
		}
		if !c.Relative {
			rows = append(rows, absolute(c, run, row))
			continue
		}
		if base == nil {
			row.Verdict, row.Message = Skipped, "no --baseline: a limit relative to the baseline is not judged"
			rows = append(rows, row)
			continue
		}
		cmp, ok := comparisons[c.Run]
		if !ok && compareErr[c.Run] == nil {
			cmp, compareErr[c.Run] = compareRun(o, c.Run, run)
			comparisons[c.Run] = cmp
		}
		if err := compareErr[c.Run]; err != nil {
			row.Verdict, row.Message = Error, err.Error()
			rows = append(rows, row)
			continue
		}
		row.Evidence = append(row.Evidence, filepath.Join(o.Baseline, RunsDir, c.Run))
		rows = append(rows, relative(c, cmp, row))
	}
	return rows
}

func absolute(c Criterion, run *report.Run, row Row) Row {
	s, ok := run.Result.Ops[c.Kind]
	if !ok || s.Count == 0 {
		row.Verdict, row.Message = Error, fmt.Sprintf("run %s measured no %s", c.Run, c.Kind)
		return row
	}
	v := c.Metric.Get(s)
	row.Value, row.Limit = &v, &c.Limit
	row.Unit = unit(c.Metric)
	held := v <= c.Limit
	if c.Op == ">=" {
		held = v >= c.Limit
	}
	row.Verdict = Pass
	if !held {
		row.Verdict = Fail
	}
	row.Message = fmt.Sprintf("%s %s %s over %d repetition(s): %s the limit %s %s", c.Kind, c.Metric.Name, c.Metric.Format(v),
		len(run.Result.Repetitions), map[bool]string{true: "within", false: "beyond"}[held], c.Op, c.Metric.Format(c.Limit))
	return row
}

// compareRun compares the run with the baseline's run of the same name,
// gated on the run's relative criteria.
func compareRun(o Options, name string, run *report.Run) (*report.Comparison, error) {
	dir := filepath.Join(o.Baseline, RunsDir, name)
	b, err := report.LoadRun(dir)
	if err != nil {
		return nil, fmt.Errorf("baseline run %s: %v", name, err)
	}
	var gates []report.Gate
	for _, c := range o.Plan.Criteria {
		if c.Run == name && c.Relative {
			g := report.Gate{Kind: c.Kind, Metric: c.Metric.Name}
			if !containsGate(gates, g) {
				gates = append(gates, g)
			}
		}
	}
	// The baseline ran the same plan; whether its settings may differ
	// (a sim cost standing in for firmware) is the qualification's own
	// question, not compare's refusal (report.ConfigDiff).
	cmp, err := report.Compare(b, run, report.CompareOptions{Threshold: 0, Alpha: o.Alpha, Metrics: nil, Gates: gates, AllowConfigDiff: true})
	if err != nil {
		return nil, fmt.Errorf("comparing with baseline run %s: %v", name, err)
	}
	return cmp, nil
}

func containsGate(gs []report.Gate, g report.Gate) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

func relative(c Criterion, cmp *report.Comparison, row Row) Row {
	var r *report.CompareRow
	for i := range cmp.Rows {
		if cmp.Rows[i].Kind == c.Kind && cmp.Rows[i].Metric == c.Metric.Name {
			r = &cmp.Rows[i]
		}
	}
	lim := c.Limit
	row.Limit, row.Unit = &lim, "%"
	switch {
	case r == nil:
		row.Verdict, row.Message = Error, fmt.Sprintf("%s is not in both the baseline's and this run", c.Kind)
		return row
	case r.Verdict == report.VerdictTooFew || r.PAdj == nil || r.DeltaPct == nil:
		row.Verdict = Error
		row.Message = fmt.Sprintf("%s %s: too few repetitions for compare's test (baseline %d, candidate %d; need %d each)",
			c.Kind, c.Metric.Name, r.Base.N, r.New.N, cmp.NeedReps)
		return row
	}
	d, p := *r.DeltaPct, *r.PAdj
	row.Value, row.P = &d, &p
	worse := d
	if c.Metric.BetterHigher {
		worse = -d
	}
	regressed := r.Significant && worse > lim
	row.Verdict = Pass
	if regressed {
		row.Verdict = Fail
	}
	how := "not significant"
	if r.Significant {
		how = "significant"
	}
	row.Message = fmt.Sprintf("%s %s %s → %s (%+.1f%%, Holm p %.3g, %s at alpha %g): %s the %g%% limit",
		c.Kind, c.Metric.Name, c.Metric.Format(r.Base.Median), c.Metric.Format(r.New.Median), d, p, how, cmp.Alpha,
		map[bool]string{true: "a regression beyond", false: "within"}[regressed], lim)
	return row
}

func unit(m report.Metric) string {
	if m.Latency {
		return "ns"
	}
	return "ops/s"
}
