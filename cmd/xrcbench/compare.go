package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/report"
)

func init() { subcommands = append(subcommands, newCompareCmd) }

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		threshold string
		alpha     float64
		metrics   string
		format    string
	)
	cmd := &cobra.Command{
		Use:   "compare BASE_DIR NEW_DIR",
		Short: "Compare two run folders: medians, confidence intervals, Mann-Whitney U; exit 1 on a regression",
		Long: `compare compares the repetitions of two run folders of one workload. For every
op kind and metric it prints the base and new medians over repetitions with
confidence intervals, the change, and the p-value of a Mann-Whitney U test
("~" when not significant).

Exit status: 0 no significant regression beyond the threshold; 1 a metric is
worse by more than --threshold and significant at --alpha; 2 bad input (a
missing folder, another schema, a truncated result.json, different
workloads) or too few repetitions for the test to decide (it says how many
are needed). Different devices, firmware or hosts are compared but named in
the header.`,
		Example: `  # did the new firmware make registration slower? (5 repetitions each)
  xrcbench run --provider rdma --workload steady --repetitions 5 --out runs/base
  xrcbench run --provider rdma --workload steady --repetitions 5 --out runs/new
  xrcbench compare runs/base runs/new

  # a CI gate: only p99, a 10% threshold, Markdown for the job summary
  xrcbench compare runs/base runs/new --metric p99 --threshold 10% --format md`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare needs BASE_DIR and NEW_DIR, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			thr, err := parsePercent(threshold)
			if err != nil {
				return usagef("--threshold %q: %v", threshold, err)
			}
			if !(alpha > 0 && alpha < 1) {
				return usagef("--alpha %g: want a level between 0 and 1, such as 0.05", alpha)
			}
			ms, err := parseMetrics(metrics)
			if err != nil {
				return err
			}
			write, ok := map[string]func(*report.Comparison, io.Writer) error{
				"text": (*report.Comparison).WriteText,
				"md":   (*report.Comparison).WriteMarkdown,
				"json": (*report.Comparison).WriteJSON,
			}[format]
			if !ok {
				return usagef("--format %q: want text, md or json", format)
			}
			base, err := report.LoadRun(args[0])
			if err != nil {
				return inputErr(err)
			}
			new, err := report.LoadRun(args[1])
			if err != nil {
				return inputErr(err)
			}
			c, err := report.Compare(base, new, report.CompareOptions{Threshold: thr, Alpha: alpha, Metrics: ms})
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
				// Not a pass: a gate that cannot decide must not let a
				// change through as if it had been tested.
				return usagef("%s", c.Verdict())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&threshold, "threshold", "5%", "smallest change that counts as a regression, in percent (\"5%\" or \"5\")")
	f.Float64Var(&alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test")
	f.StringVar(&metrics, "metric", "p50,p99,ops_per_sec", "metrics to compare, comma-separated: "+report.MetricNames())
	f.StringVar(&format, "format", "text", "output format: text, md or json")
	return cmd
}

// inputErr maps the report's input errors to exit status 2 and anything
// else (an I/O failure while reading) to exit status 1.
func inputErr(err error) error {
	if errors.Is(err, report.ErrInput) {
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
