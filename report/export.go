package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// Export formats: what CI dashboards and analysis tools read.
const (
	// ExportFormatGAB is github-action-benchmark's custom tool input: a JSON
	// array of {name, unit, value, range, extra}, latencies as
	// customSmallerIsBetter, ops/s as customBiggerIsBetter in a second file.
	ExportFormatGAB = "github-action-benchmark"
	// ExportFormatBencher is the Bencher Metric Format: benchmark → measure →
	// {value, lower_value, upper_value}.
	ExportFormatBencher = "bencher"
	// ExportFormatCSV is tidy data: one row per run, repetition, op kind and
	// statistic, with the run's labels, configuration and environment.
	ExportFormatCSV = "csv"
)

// ExportOptions tune Export*.
type ExportOptions struct {
	// Metrics are the latency metrics exported per op kind (gab and
	// bencher); nil: p50 and p99. ops/s is always exported.
	Metrics []Metric
	// Confidence of the bounds around the medians (DefaultConfidence
	// when zero).
	Confidence float64
	// NameLabels are the run labels (--label KEY=...) that go into every
	// benchmark name beside the configuration, so a matrix of runs that
	// differ only in them (fw=..., board=...) is one chart each.
	NameLabels []string
}

func (o ExportOptions) metrics() []Metric {
	if o.Metrics != nil {
		return o.Metrics
	}
	p50, _ := MetricByName("p50")
	p99, _ := MetricByName("p99")
	return []Metric{p50, p99}
}

func (o ExportOptions) confidence() float64 {
	if o.Confidence == 0 {
		return DefaultConfidence
	}
	return o.Confidence
}

// exported is one op kind's metric of one run as the exports give it: the
// median over repetitions and its confidence interval.
type exported struct {
	run    *Run
	bench  string // workload/kind and the configuration (benchName)
	metric Metric
	center Center
}

// benchName is a benchmark's name in the dashboards: workload/kind and,
// in brackets, what else tells one configuration from another (provider,
// device, procs×threads, QPs, QP state, an open loop's rate, and the
// labels asked for), so a CI matrix of configurations is one chart each
// instead of points that overwrite one another.
func benchName(run *Run, kind string, nameLabels []string) string {
	c := run.Result.Config
	parts := []string{c.Provider}
	if d := run.Result.Environment.Device; d.Known() && c.Provider != "sim" && c.Provider != "null" {
		parts = append(parts, d.Name)
	}
	if run.Result.Storm != nil {
		parts = append(parts, fmt.Sprintf("%dx%d", c.Procs, c.Threads), fmt.Sprintf("nodes=%d", run.Result.Storm.Nodes))
	} else {
		parts = append(parts, fmt.Sprintf("%dx%d", c.Procs, c.Threads), units.Plural(c.QPs, "QP"))
	}
	parts = append(parts, c.QPStateOf())
	if c.Rate > 0 {
		parts = append(parts, "rate="+strconv.FormatFloat(c.Rate, 'g', -1, 64))
	}
	labels := runLabels(run.Result)
	for _, k := range nameLabels {
		if v, ok := labels[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return c.WorkloadLabel() + "/" + kind + " [" + asciiSI(strings.Join(parts, " ")) + "]"
}

// asciiSI writes a micro sign as ASCII "u" (2µs → 2us): the names and
// values exports write are read by tools that take bytes for characters.
func asciiSI(s string) string { return strings.ReplaceAll(s, "µ", "u") }

// exportable checks that runs can be exported together: none failed, and
// no two give the same benchmark names (two runs of one workload would
// overwrite each other's points in a dashboard).
func exportable(runs []*Run, nameLabels []string) error {
	if len(runs) == 0 {
		return inputErrorf("no run folder given")
	}
	seen := map[string]string{}
	for _, run := range runs {
		if run.Result.Status == results.StatusFailed {
			return inputErrorf("%s: a failed run (%s) has nothing to export", run.Dir, run.Result.Error)
		}
		w := benchName(run, "*", nameLabels)
		if other, ok := seen[w]; ok {
			return inputErrorf("%s and %s both ran %s: their benchmark names would collide; tell them apart with --name-labels KEY (a --label they differ in) or export them into separate files", other, run.Dir, w)
		}
		seen[w] = run.Dir
	}
	return nil
}

// collectExported lists, per run and op kind that measured anything, the
// given metrics' medians over repetitions; with latencies among them, a
// storm's own figures too (stormMetrics, as kind results.StormKind: the
// makespan is a storm's headline).
func collectExported(runs []*Run, ms []Metric, conf float64, nameLabels []string) []exported {
	var out []exported
	latencies := slices.ContainsFunc(ms, func(m Metric) bool { return m.Latency })
	for _, run := range runs {
		kinds := run.Kinds
		if run.Result.Storm != nil && latencies {
			kinds = append(slices.Clone(kinds), results.StormKind)
		}
		for _, kind := range kinds {
			kms := ms
			if kind == results.StormKind {
				kms = stormMetrics
			} else if run.Result.Ops[kind].Count == 0 {
				continue
			}
			for _, m := range kms {
				v := RepetitionStats(run.Result, kind, m).Values
				if len(v) == 0 {
					continue
				}
				out = append(out, exported{
					run: run, bench: benchName(run, kind, nameLabels), metric: m,
					center: center(v, conf),
				})
			}
		}
	}
	return out
}

// gabEntry is one entry of github-action-benchmark's custom JSON.
type gabEntry struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

// ExportGitHubActionBenchmark returns the two files github-action-benchmark
// reads with tool customSmallerIsBetter (latencies, ns) and
// customBiggerIsBetter (ops/s): one entry per op kind and metric, named
// "workload/kind metric", its value the median over repetitions, its range
// the half-width of the median's confidence interval (none when the
// repetitions are too few to bound it).
func ExportGitHubActionBenchmark(runs []*Run, opt ExportOptions) (smaller, bigger []byte, err error) {
	if err := exportable(runs, opt.NameLabels); err != nil {
		return nil, nil, err
	}
	ops, _ := MetricByName("ops_per_sec")
	entries := func(ms []Metric) ([]byte, error) {
		list := []gabEntry{}
		for _, e := range collectExported(runs, ms, opt.confidence(), opt.NameLabels) {
			unit := "ns"
			if !e.metric.Latency {
				unit = "ops/s"
			}
			g := gabEntry{Name: e.bench + " " + e.metric.Name, Unit: unit, Value: units.Round3(e.center.Median), Extra: exportExtra(e, opt.confidence())}
			if e.center.Lo != nil {
				g.Range = "± " + strconv.FormatFloat(units.Round3(math.Max(e.center.Median-*e.center.Lo, *e.center.Hi-e.center.Median)), 'f', -1, 64)
			}
			list = append(list, g)
		}
		return marshalIndent(list)
	}
	var lat []Metric
	for _, m := range opt.metrics() {
		if m.Latency {
			lat = append(lat, m)
		}
	}
	if smaller, err = entries(lat); err != nil {
		return nil, nil, err
	}
	if bigger, err = entries([]Metric{ops}); err != nil {
		return nil, nil, err
	}
	return smaller, bigger, nil
}

// exportExtra is the entry's context, shown in the dashboard's tooltip.
func exportExtra(e exported, conf float64) string {
	r := e.run.Result
	s := fmt.Sprintf("median of %s", units.Plural(e.center.N, "repetition"))
	if e.center.Lo != nil {
		s += fmt.Sprintf(", %.0f%% CI %s–%s", 100*conf, e.metric.Format(*e.center.Lo), e.metric.Format(*e.center.Hi))
	}
	s += fmt.Sprintf("; %s on %s, %d×%d, %s", r.Config.Provider, r.Environment.Host, r.Config.Procs, r.Config.Threads, units.Plural(r.Config.QPs, "QP"))
	if r.Environment.Version != "" {
		s += "; xrcbench " + r.Environment.Version
	}
	if r.Status != results.StatusOK {
		s += "; " + r.Status + " run"
	}
	return s
}

// bmfMetric is one measure of a Bencher Metric Format benchmark.
type bmfMetric struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// ExportBencher returns Bencher Metric Format JSON: one benchmark per
// workload, op kind and configuration ("lifecycle/reg [sim 2x1 16 QPs
// rtr]"), with Bencher's built-in measures "latency" (the p50, ns) and
// "throughput" (ops/s), and a measure of its own per other latency metric
// ("latency-p99", ns; Bencher creates a measure it does not know yet).
// The value is the median over repetitions; lower_value and upper_value
// bound its confidence interval and are left out when the repetitions are
// too few to bound it.
func ExportBencher(runs []*Run, opt ExportOptions) ([]byte, error) {
	if err := exportable(runs, opt.NameLabels); err != nil {
		return nil, err
	}
	ops, _ := MetricByName("ops_per_sec")
	var ms []Metric
	for _, m := range opt.metrics() {
		if m.Latency {
			ms = append(ms, m)
		}
	}
	out := map[string]map[string]bmfMetric{}
	for _, e := range collectExported(runs, append(ms, ops), opt.confidence(), opt.NameLabels) {
		// Bencher's built-in measures where one exists: latency (ns) for
		// the median, throughput (ops/s); the other percentiles and a
		// storm's figures are measures of their own.
		measure := "throughput"
		switch {
		case e.metric.Latency && e.metric.Name == "p50":
			measure = "latency"
		case e.metric.Latency:
			measure = "latency-" + e.metric.Name
		}
		m := bmfMetric{Value: units.Round3(e.center.Median)}
		if e.center.Lo != nil {
			lo, hi := units.Round3(*e.center.Lo), units.Round3(*e.center.Hi)
			m.Lower, m.Upper = &lo, &hi
		}
		if out[e.bench] == nil {
			out[e.bench] = map[string]bmfMetric{}
		}
		out[e.bench][measure] = m
	}
	return marshalIndent(out) // encoding/json sorts map keys: stable output
}

// csvStats are the statistics of a repetition's OpStats in the CSV, with
// their units.
var csvStats = []struct {
	name, unit string
	get        func(results.OpStats) float64
}{
	{"count", "ops", func(s results.OpStats) float64 { return float64(s.Count) }},
	{"errors", "ops", func(s results.OpStats) float64 { return float64(s.Errors) }},
	{"ops_per_sec", "ops/s", func(s results.OpStats) float64 { return s.OpsPerSec }},
	{"min", "ns", func(s results.OpStats) float64 { return float64(s.NS.Min) }},
	{"p50", "ns", func(s results.OpStats) float64 { return float64(s.NS.P50) }},
	{"p90", "ns", func(s results.OpStats) float64 { return float64(s.NS.P90) }},
	{"p99", "ns", func(s results.OpStats) float64 { return float64(s.NS.P99) }},
	{"p999", "ns", func(s results.OpStats) float64 { return float64(s.NS.P999) }},
	{"max", "ns", func(s results.OpStats) float64 { return float64(s.NS.Max) }},
	{"mean", "ns", func(s results.OpStats) float64 { return s.NS.Mean }},
	{"stddev", "ns", func(s results.OpStats) float64 { return s.NS.Stddev }},
}

// csvStatistics names the statistic column's values, in row order.
func csvStatistics() []string {
	var s []string
	for _, st := range csvStats {
		s = append(s, st.name)
	}
	return s
}

// ExportCSV returns tidy CSV: one row per run, repetition (counted from
// 1, as run's warnings and qualify count them), op kind and statistic (count, errors, ops_per_sec, latencies in ns; a storm's
// makespan and teardown as kind storm, in ns), each row with
// the run's labels (label:KEY), configuration and environment as columns
// (provider options as option:KEY, device facts as device:KEY), as pandas'
// read_csv or R's read.csv load it. Every run's columns are present in
// every row, empty where a run has no such value. A text cell that a
// spreadsheet would take for a formula starts with ' (see csvText).
func ExportCSV(runs []*Run) ([]byte, error) {
	if len(runs) == 0 {
		return nil, inputErrorf("no run folder given")
	}
	labelKeys, optKeys, devKeys := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, run := range runs {
		r := run.Result
		for k := range runLabels(r) {
			labelKeys[k] = true
		}
		for k := range r.Config.ProviderOpts {
			optKeys[k] = true
		}
		for _, f := range r.Environment.Device.Facts() {
			devKeys[f[0]] = true
		}
	}
	head := []string{"run", "run_id", "started", "status", "repetition", "kind", "statistic", "value", "unit"}
	for _, k := range slices.Sorted(maps.Keys(labelKeys)) {
		head = append(head, "label:"+k)
	}
	head = append(head, "workload", "provider", "device", "procs", "threads", "qps", "duration_s", "iterations",
		"warmup_s", "repetitions", "pin", "seed", "interval_s")
	for _, k := range slices.Sorted(maps.Keys(optKeys)) {
		head = append(head, "option:"+k)
	}
	head = append(head, "host", "kernel", "cpu_model", "cpus", "go_version", "xrcbench_version")
	for _, k := range slices.Sorted(maps.Keys(devKeys)) {
		head = append(head, "device:"+k)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(head); err != nil {
		return nil, err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	secs := func(d results.Duration) string { return num(d.D().Seconds()) }
	for _, run := range runs {
		r := run.Result
		c, env := r.Config, r.Environment
		var fixed []string
		labels := runLabels(r)
		for _, k := range slices.Sorted(maps.Keys(labelKeys)) {
			fixed = append(fixed, csvText(labels[k]))
		}
		// The device measured: the one asked for, or the one chosen when
		// none was (its facts are in the device:* columns too).
		dev := c.Device
		if dev == "" && env.Device.Known() {
			dev = env.Device.Name
		}
		fixed = append(fixed, csvText(c.WorkloadLabel()), csvText(c.Provider), csvText(dev), strconv.Itoa(c.Procs), strconv.Itoa(c.Threads),
			strconv.Itoa(c.QPs), secs(c.Duration), strconv.Itoa(c.Iterations), secs(c.Warmup), strconv.Itoa(c.Repetitions),
			strconv.FormatBool(c.Pin), strconv.FormatInt(c.Seed, 10), secs(c.Interval))
		for _, k := range slices.Sorted(maps.Keys(optKeys)) {
			fixed = append(fixed, csvText(asciiSI(c.ProviderOpts[k])))
		}
		fixed = append(fixed, csvText(env.Host), csvText(env.Kernel), csvText(env.CPUModel), strconv.Itoa(env.CPUs),
			csvText(env.GoVersion), csvText(env.Version))
		facts := map[string]string{}
		for _, f := range env.Device.Facts() {
			facts[f[0]] = f[1]
		}
		for _, k := range slices.Sorted(maps.Keys(devKeys)) {
			fixed = append(fixed, csvText(facts[k])) // "" where this run's device has no such fact
		}
		for _, rep := range r.Repetitions {
			for _, kind := range run.Kinds {
				s, ok := rep.Ops[kind]
				if !ok {
					continue
				}
				for _, st := range csvStats {
					row := []string{csvText(run.Dir), csvText(r.RunID), r.Started.UTC().Format(time.RFC3339Nano), csvText(r.Status),
						strconv.Itoa(rep.Index + 1), csvText(kind), st.name, num(st.get(s)), st.unit}
					if err := w.Write(append(row, fixed...)); err != nil {
						return nil, err
					}
				}
			}
		}
		// A storm's own figures per repetition, as kind storm.
		if r.Storm != nil {
			for i := range r.Storm.MakespanNS {
				for _, m := range stormMetrics {
					v, ok := m.Storm(r.Storm, i)
					if !ok {
						continue
					}
					row := []string{csvText(run.Dir), csvText(r.RunID), r.Started.UTC().Format(time.RFC3339Nano), csvText(r.Status),
						strconv.Itoa(i + 1), results.StormKind, m.Name, num(v), "ns"}
					if err := w.Write(append(row, fixed...)); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// csvText makes a text cell safe to open in a spreadsheet: a cell that
// starts with =, +, -, @, a tab or a carriage return is a formula to Excel,
// LibreOffice and Google Sheets (a label of "=HYPERLINK(...)", a host name
// of "@SUM(...)"), so it gets a leading ' (OWASP's CSV injection rule),
// which the spreadsheet shows as text. A plain decimal number is left as it
// is ("-1" is a number, not a formula, in a label or a device fact too);
// numeric columns never come here.
func csvText(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) || decimalRE.MatchString(s) {
		return s
	}
	return "'" + s
}

var decimalRE = regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

func marshalIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// runLabels are the run's --label pairs.
func runLabels(r *results.Result) map[string]string { return r.Labels }

// ExportFormatJUnit is the gate result of a compare of two runs as JUnit
// XML: one test case per gated metric.
const ExportFormatJUnit = "junit"

// JUnit is c's gate result for a CI server's test report: a suite named
// after the workload, a test case per gated metric (a failure for a
// regression, skipped when the repetitions are too few to decide, passed
// otherwise), each with the medians, the change and p as its output, and
// both runs as the suite's properties.
func (c *Comparison) JUnit(started time.Time) JUnitReport {
	suite := JUnitSuite{
		Name:      "xrcbench compare " + c.Workload,
		Timestamp: started,
		Hostname:  c.New.Host,
		Properties: []JUnitProperty{
			{Name: "base", Value: c.Base.Dir}, {Name: "new", Value: c.New.Dir},
			{Name: "threshold_pct", Value: strconv.FormatFloat(c.Threshold, 'g', -1, 64)},
			{Name: "alpha", Value: strconv.FormatFloat(c.Alpha, 'g', -1, 64)},
			{Name: "verdict", Value: c.Verdict()},
		},
	}
	for _, r := range c.Rows {
		if !r.Gated {
			continue
		}
		jc := JUnitCase{
			Name:      r.Kind + " " + r.Metric,
			Classname: "xrcbench.compare." + c.Workload,
			SystemOut: fmt.Sprintf("base %s, new %s, delta %s, p %s: %s", r.ci(r.Base), r.ci(r.New), r.delta(), r.pValue(), r.Verdict),
		}
		switch r.Verdict {
		case VerdictRegression:
			jc.Failure = &JUnitOutcome{Type: "regression",
				Message: fmt.Sprintf("%s %s changed %s: a significant regression beyond %g%% (p %s)", r.Kind, r.Metric, r.delta(), c.Threshold, r.pValue()),
				Text:    jc.SystemOut}
		case VerdictTooFew, verdictNoData:
			jc.Skipped = &JUnitOutcome{Type: "undecided", Message: fmt.Sprintf("%s: %s", r.Verdict, c.needWhy())}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	return JUnitReport{Name: "xrcbench", Suites: []JUnitSuite{suite}}
}
