package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

func init() { subcommands = append(subcommands, newCompareCmd) }

// compareFlags are compare's flags as given.
type compareFlags struct {
	threshold string
	alpha     float64
	metrics   string
	gates     string
	format    string
	by        string
	plots     string
	allowDiff bool
}

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var fl compareFlags
	cmd := &cobra.Command{
		Use:   "compare BASE_DIR NEW_DIR [DIR...]",
		Short: "Compare two run folders: medians, confidence intervals, Mann-Whitney U; exit 1 on a regression",
		Long: `compare compares the repetitions of two run folders of one workload, op kind
by op kind and metric by metric, as benchstat does.

For every op kind and metric it prints the base and new medians over repetitions with
90% confidence intervals (as benchstat does, ±percent of the median; an
interval wider than ±100% as its bounds, [low, high], in the metric's
unit), the change, and the p-value of a Mann-Whitney U test; the verdict
column says "~" when the change is not significant, but the change and p
are always shown.

Only the gated metrics decide (--gate; by default those the workload's spec
declares in gates: steady and sharded reg.p50,unreg.p50; lifecycle
reg.p50,unreg_last.p50; churn create.p50,unreg_last.p50; errors
reg_invalid.p50,reg_foreign.p50; storm storm.makespan,storm.teardown, a
storm's own figures, kind storm). Their p-values are corrected together
with Holm's method, so testing several does not raise the chance of a false
regression; every other row is information. The runs' own warnings (a busy
machine, low coverage, ...) are listed and the rows they concern marked !N;
--format md lists them one line a kind, said once for both runs where both
gave it (a shared runner's), the detail left to each run's summary.md.
Notices mark no row.

Exit status: 0 no significant regression beyond the threshold in a gated
metric; 1 a gated metric is worse by more than --threshold and significant
at --alpha after the correction; 2 bad input (a missing folder, another
schema, a truncated result.json, different workloads, an unknown --gate) or
too few repetitions for the gate to decide: it says how many are needed,
the same number the report warns with (the test at --alpha over the gated
metrics and a 90% interval of the median), or runs of different
configurations: a difference in provider, device, workload text, procs,
threads, QPs, QP state, open-loop rate or arrival, or the sim's cost model
or semantics makes them not comparable, said in one line naming the
differences. --allow-config-diff compares them anyway, and the verdict line
then names the settings that differ. Firmware versions, labels, hosts and
the libibverbs test double's own cost model (XRCBENCH_FAKEVERBS_COST, which
stands in for the device under test) are what a comparison is for: they
never block it and are named in the header. A qualification folder is not a
run folder: compare its runs/<name>.
One run given twice (the same
run id: one folder twice, or a copy of it) is warned about on stderr: the
comparison runs, but it is one measurement against itself.

With more than two folders, or --by KEY, compare prints one table with a
column per run set, each tested against the first set exactly as a two-folder
compare would (Holm's correction over the gated metrics within each set's
test), the device's firmware version in each column's header. --by KEY groups
the folders by their --label KEY value (every folder must have it), pooling
each group's repetitions; the group of the first folder is the baseline. A
group whose runs report different device builds (firmware version, PSID,
driver version) is refused (exit 2), naming them: label them apart. Two
sets that report one firmware version but differ significantly in a gated
metric are warned about: the version does not identify what was measured.
--plots DIR writes a plot of each gated metric across the sets (SVG and PNG).
Exit status as above: 1 when any set regresses against the first.`,
		Example: `  # did the new firmware make registration slower? (5 repetitions each)
  xrcbench run --provider rdma --workload steady --repetitions 5 --out runs/base
  xrcbench run --provider rdma --workload steady --repetitions 5 --out runs/new
  xrcbench compare runs/base runs/new

  # a CI gate on reg p99 only, a 10% threshold, Markdown for the job summary
  xrcbench compare runs/base runs/new --gate reg.p99 --threshold 10% --format md

  # unreg_last across firmware builds, runs labelled --label fw=..., a plot per gate
  xrcbench compare --by fw runs/fw-* --gate unreg_last.p99 --plots runs/fw-plots`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("compare needs BASE_DIR and NEW_DIR (or more folders), got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			opts, write, err := fl.options()
			if err != nil {
				return err
			}
			if len(args) > 2 || fl.by != "" || fl.plots != "" {
				return compareMany(stdout, stderr, args, fl.by, fl.plots, fl.format, opts)
			}
			return compareTwo(stdout, stderr, args[0], args[1], opts, write, fl.format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.threshold, "threshold", "5%", "smallest change that counts as a regression, in percent (\"5%\" or \"5\")")
	f.Float64Var(&fl.alpha, "alpha", report.DefaultAlpha, "significance level of the Mann-Whitney U test, over the gated metrics together (Holm)")
	f.StringVar(&fl.metrics, "metric", "p50,p99,ops_per_sec", "metrics to show for every op kind, comma-separated: "+report.MetricNames())
	f.StringVar(&fl.gates, "gate", "", "metrics that decide the verdict, KIND.METRIC comma-separated (e.g. reg.p50,unreg_last.p50 or storm.makespan); default: the workload's spec's gates")
	f.StringVar(&fl.format, "format", "text", "output format: text, md (for a CI step summary: the verdict on its first line, the table, the rest collapsed) or json")
	f.StringVar(&fl.by, "by", "", "group the folders into sets by this --label key (N-way: a column per value)")
	f.StringVar(&fl.plots, "plots", "", "N-way: write a plot of each gated metric across the sets into this folder")
	f.BoolVar(&fl.allowDiff, "allow-config-diff", false, "compare runs whose configurations differ (provider, device, procs, threads, QPs, QP state, sim cost, ...); the verdict names the differences")
	return cmd
}

// options reads the flags into the comparison's options and the writer
// of the chosen format; a bad value is bad usage.
func (fl *compareFlags) options() (report.CompareOptions, func(*report.Comparison, io.Writer) error, error) {
	var none report.CompareOptions
	thr, err := parsePercent(fl.threshold)
	if err != nil {
		return none, nil, usagef("--threshold %q: %v", fl.threshold, err)
	}
	if !(fl.alpha > 0 && fl.alpha < 1) {
		return none, nil, usagef("--alpha %g: want a level between 0 and 1, such as 0.05", fl.alpha)
	}
	ms, err := parseMetrics(fl.metrics)
	if err != nil {
		return none, nil, err
	}
	var gs []report.Gate
	if fl.gates != "" {
		if gs, err = report.ParseGates(fl.gates); err != nil {
			return none, nil, inputErr(err)
		}
	}
	write, ok := map[string]func(*report.Comparison, io.Writer) error{
		"text": (*report.Comparison).WriteText,
		"md":   (*report.Comparison).WriteMarkdown,
		"json": (*report.Comparison).WriteJSON,
	}[fl.format]
	if !ok {
		return none, nil, usagef("--format %q: want text, md or json", fl.format)
	}
	return report.CompareOptions{Threshold: thr, Alpha: fl.alpha, Metrics: ms, Gates: gs, AllowConfigDiff: fl.allowDiff}, write, nil
}

// compareTwo compares the run in newDir against the one in baseDir and
// writes the comparison. A significant regression in a gated metric fails
// (exit 1; the text format has said so already); a gate that had too few
// repetitions to decide is not a pass either.
func compareTwo(stdout, stderr io.Writer, baseDir, newDir string, opts report.CompareOptions, write func(*report.Comparison, io.Writer) error, format string) error {
	base, err := loadCompared(baseDir)
	if err != nil {
		return err
	}
	new, err := loadCompared(newDir)
	if err != nil {
		return err
	}
	warnDuplicates(stderr, base, new)
	c, err := report.Compare(base, new, opts)
	if err != nil {
		return inputErr(err)
	}
	if err := write(c, stdout); err != nil {
		return failure{err: err}
	}
	switch {
	case c.Regressions > 0:
		return failure{err: errors.New(c.Verdict()), quiet: format == "text"}
	case c.TooFew:
		// Not a pass: a gate that cannot decide must not let a change
		// through as if it had been tested.
		return usagef("%s", c.Verdict())
	}
	return nil
}

// loadCompared loads a run folder to compare. A qualification folder
// holds a run folder per run of its plan, under runs/: the line says to
// compare one of those.
func loadCompared(dir string) (*report.Run, error) {
	if _, err := os.Stat(filepath.Join(dir, qualify.JSONFile)); err == nil {
		if _, err := os.Stat(filepath.Join(dir, results.FileName)); errors.Is(err, os.ErrNotExist) {
			return nil, usagef("%s is a qualification folder, not a run folder: compare its %s", dir, qualificationRuns(dir))
		}
	}
	run, err := report.LoadRun(dir)
	if err != nil {
		return nil, inputErr(err)
	}
	return run, nil
}

// qualificationRuns names a qualification folder's run folders:
// "runs/<name> (runs/steady-1, runs/lifecycle, ...)".
func qualificationRuns(dir string) string {
	entries, err := os.ReadDir(filepath.Join(dir, qualify.RunsDir))
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, filepath.Join(dir, qualify.RunsDir, e.Name()))
		}
	}
	if err != nil || len(names) == 0 {
		return qualify.RunsDir + "/<name>"
	}
	return qualify.RunsDir + "/<name> (" + strings.Join(names, ", ") + ")"
}

// warnDuplicates warns of a run given twice (compare X X, or a copy of
// X): the comparison still runs, but shows no change whatever changed.
func warnDuplicates(stderr io.Writer, runs ...*report.Run) {
	for _, w := range report.DuplicateRuns(runs) {
		fmt.Fprintln(stderr, "warning: "+w)
	}
}

// inputErr maps the report's input errors to exit status 2 and anything
// else (an I/O failure while reading) to exit status 1.
func inputErr(err error) error {
	if errors.Is(err, results.ErrInput) || errors.Is(err, safedir.ErrRefused) {
		return usageError{err}
	}
	return failure{err: err}
}

// parsePercent reads "5%" or "5" as 5.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("want a percentage such as 5%% or 5")
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a percentage of 0 or more")
	}
	return v, nil
}

func parseMetrics(s string) ([]report.Metric, error) {
	var ms []report.Metric
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		m, ok := report.MetricByName(name)
		if !ok {
			return nil, usagef("--metric %q: unknown metric; want some of %s", name, report.MetricNames())
		}
		seen[name] = true
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, usagef("--metric: no metric given; want some of %s", report.MetricNames())
	}
	return ms, nil
}

// compareMany is the N-way compare: a set per folder, or per value of
// the label by; each set against the first.
func compareMany(stdout, stderr io.Writer, dirs []string, by, plots, format string, opts report.CompareOptions) error {
	write, ok := map[string]func(*report.MultiComparison, io.Writer) error{
		"text": (*report.MultiComparison).WriteText,
		"md":   (*report.MultiComparison).WriteMarkdown,
		"json": (*report.MultiComparison).WriteJSON,
	}[format]
	if !ok {
		return usagef("--format %q: want text, md or json", format)
	}
	var runs []*report.Run
	for _, d := range dirs {
		run, err := loadCompared(d)
		if err != nil {
			return err
		}
		runs = append(runs, run)
	}
	warnDuplicates(stderr, runs...)
	var sets []report.RunSet
	if by == "" {
		report.LabelRuns(runs)
		for _, run := range runs {
			sets = append(sets, report.RunSet{Name: run.Label, Runs: []*report.Run{run}})
		}
	} else {
		group := map[string]int{}
		for _, run := range runs {
			v, ok := run.Result.Labels[by]
			if !ok {
				return usagef("--by %s: %s has no label %s (it has: %s)", by, run.Dir, by, labelsOrNone(run.Result.Labels))
			}
			i, seen := group[v]
			if !seen {
				i = len(sets)
				group[v] = i
				sets = append(sets, report.RunSet{Name: by + "=" + v})
			}
			sets[i].Runs = append(sets[i].Runs, run)
		}
		if len(sets) < 2 {
			return usagef("--by %s: every folder has %s, one set: nothing to compare", by, sets[0].Name)
		}
	}
	mc, err := report.CompareMany(sets, by, opts)
	if err != nil {
		return inputErr(err)
	}
	if plots != "" {
		if err := writeFigures(plots, mc); err != nil {
			return failure{err: err}
		}
	}
	if err := write(mc, stdout); err != nil {
		return outputErr(err)
	}
	switch {
	case mc.Regressions > 0:
		return failure{err: errors.New(mc.Verdict()), quiet: format == "text"}
	case mc.TooFew:
		return usagef("%s", mc.Verdict())
	}
	return nil
}

// writeFigures writes the N-way plots, SVG and PNG, into dir.
func writeFigures(dir string, mc *report.MultiComparison) error {
	figs, err := mc.Figures()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		if err := results.WriteFileAtomic(filepath.Join(dir, f.Name+".svg"), f.SVG, 0o644); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, f.Name+".png"), f.PNG, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func labelsOrNone(m map[string]string) string {
	if len(m) == 0 {
		return "no labels"
	}
	return results.LabelString(m)
}
