package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/analysis"
	"github.com/xrcbench/xrcbench/report"
)

func init() { subcommands = append(subcommands, newReportCmd) }

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, counts, minEffect string
	var fleet, failOnOutlier, verbose bool
	var threshold float64
	cmd := &cobra.Command{
		Use:   "report RUN_DIR... [--out DIR]",
		Short: "Write report.html, summary.md, bench.txt and plots/ for run or sweep folders",
		Long: `report reads run folders (result.json and the <kind>.hlog interval logs) and
writes, into the run folder or --out:

  report.html   one self-contained page: first a headline (p50 and p99 per
                op kind; for lifecycle runs what destruction adds, with a
                95% CI across repetitions) over every op kind on one axis,
                then environment, the bill of materials, configuration,
                summary, repetitions, warnings and every plot as inline
                SVG
  summary.md    the headline, the summary table and warnings, for CI job
                summaries
  bench.txt     Go benchmark format, one line per repetition and op kind
                (p50, p99, ops/s; an open loop's response p50 and p99 too):
                benchstat bench.txt reads it
  plots/        overlay-spectrum and overlay-histogram (all op kinds); per op
                kind: latency histogram, percentile spectrum (the median
                of the repetitions in a band from the lowest to the
                highest), timeline (each repetition shaded; at most 1,000
                points: a longer log is summed into spans of 2, 4, 8, ...
                intervals); per-worker throughput, sorted, with each
                worker's range over the repetitions; SVG and a 240 dpi
                PNG (1680×960) of each, the version and repetition count
                in its footer

Several run folders make one combined report (with overlaid spectra) and
need --out. A sweep folder (with sweep.json) adds throughput and p99 against
total threads (processes × threads) and, when the sweep varies it, the QP
count.

--fleet DIR reads a fleet folder (run --fleet --out DIR: one run folder per
node) and writes fleet.json and fleet.html into it (or --out): a row per node
(device, fw_ver, driver, kernel, status, p50/p99/max and ops/s per op kind),
grouped by firmware when the nodes have several, a heatmap of nodes x metrics,
the fleet-wide merged histogram per op kind, and the nodes that failed or
wrote nothing. A node departs from the fleet when its robust score in p50,
p99 or ops/s of an op kind passes --outlier-threshold (default 3.5):
0.6745 x (ln value - median of ln values) / MAD of ln values across the
nodes, the MAD at least ln 1.1 (so a node must differ from the median by
1.64x or more); max is shown, not scored. A node also departs when its
repetitions differ from the other nodes' pooled repetitions by at least
--min-effect (default 5%) and the Mann-Whitney U test says so at 0.05,
Holm-adjusted over every node, op kind and metric: that sees a node 10% off
in 6 nodes x 5 repetitions, which the score cannot. Nodes are compared only
with nodes of the same firmware (fw_ver). With --fail-on-outlier the exit
status is 1 when a node is flagged (for scheduled health checks). Two
folders claiming the same node are refused (exit status 2): which of them
measured it?`,
		Example: `  # the report of one run, written into its folder
  xrcbench report runs/lifecycle

  # two runs in one report, their spectra overlaid
  xrcbench report runs/fw-16.35 runs/fw-16.36 --out runs/fw-report

  # a sweep: every point, plus throughput and p99 against the sweep's axes
  xrcbench report runs/steady-sweep

  # every histogram with a log count axis
  xrcbench report runs/lifecycle --counts log

  # a fleet run's nodes side by side; exit 1 if one departs from the rest
  xrcbench report --fleet /shared/runs/fw-22.41 --fail-on-outlier`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs at least one RUN_DIR")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			scale, err := report.ParseCountScale(counts)
			if err != nil {
				return usagef("--counts: %v", err)
			}
			if fleet {
				eff, err := parsePercent(minEffect)
				if err != nil {
					return usagef("--min-effect %q: %v", minEffect, err)
				}
				return fleetReport(stdout, args, out, analysis.FleetOptions{Threshold: threshold, MinEffect: &eff, Counts: scale}, failOnOutlier)
			}
			if failOnOutlier || cmd.Flags().Changed("outlier-threshold") || cmd.Flags().Changed("min-effect") {
				return usagef("--fail-on-outlier, --outlier-threshold and --min-effect need --fleet")
			}
			rep, err := report.GenerateWith(args, out, report.Options{Counts: scale})
			if err != nil {
				return inputErr(err)
			}
			for _, w := range rep.Warnings {
				fmt.Fprintln(stderr, "warning: "+w)
			}
			if verbose {
				for _, n := range rep.Notices {
					fmt.Fprintln(stderr, "notice: "+n)
				}
			}
			fmt.Fprintf(stdout, "wrote %s (%d files; open %s)\n", rep.Out, len(rep.Files), filepath.Join(rep.Out, report.HTMLFile))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder for the report (default: the run folder; required with several)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print the report's notices too (outlier repetitions, a tail's spread: facts that do not change what the figures mean; summary.md lists them either way)")
	cmd.Flags().BoolVar(&fleet, "fleet", false, "DIR is a fleet folder (run --fleet): write fleet.html and fleet.json comparing its nodes")
	cmd.Flags().BoolVar(&failOnOutlier, "fail-on-outlier", false, "with --fleet: exit 1 when a node is flagged")
	cmd.Flags().Float64Var(&threshold, "outlier-threshold", analysis.DefaultOutlierThreshold, "with --fleet: |robust score| beyond which a node is flagged")
	cmd.Flags().StringVar(&minEffect, "min-effect", fmt.Sprintf("%g%%", analysis.DefaultFleetMinEffect), "with --fleet: smallest difference of a node's repetitions from its peers' that the U test flags")
	cmd.Flags().StringVar(&counts, "counts", "auto", "count axis of the latency histograms: auto (log where a long tail beyond p99 would be invisible), log or linear")
	return cmd
}

// fleetReport writes a fleet folder's report and says who is flagged.
func fleetReport(stdout io.Writer, args []string, out string, opts analysis.FleetOptions, failOnOutlier bool) error {
	if len(args) != 1 {
		return usagef("report --fleet takes one fleet folder, got %d", len(args))
	}
	if !(opts.Threshold > 0) || math.IsInf(opts.Threshold, 0) {
		return usagef("--outlier-threshold %v: want a positive number such as 3.5", opts.Threshold)
	}
	fr, files, err := analysis.GenerateFleet(args[0], out, opts)
	if err != nil {
		return inputErr(err)
	}
	for _, l := range fr.Headline() {
		fmt.Fprintln(stdout, l)
	}
	for _, n := range fr.Missing {
		fmt.Fprintf(stdout, "missing %s: in the job, no run folder\n", n)
	}
	for _, n := range fr.Nodes {
		if slices.Contains(fr.Failed, n.Node) {
			fmt.Fprintf(stdout, "failed %s: %s\n", n.Node, oneLine(n.Error))
		}
	}
	fmt.Fprintf(stdout, "wrote %s\n", strings.Join(files, ", "))
	if failOnOutlier && len(fr.Flagged) > 0 {
		return failure{err: fmt.Errorf("fleet: flagged: %s", strings.Join(fr.Flagged, ", "))}
	}
	return nil
}
