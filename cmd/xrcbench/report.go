package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/report"
)

func init() { subcommands = append(subcommands, newReportCmd) }

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, counts string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR... [--out DIR]",
		Short: "Write report.html, summary.md, bench.txt and plots/ for run or sweep folders",
		Long: `report reads run folders (result.json and the <kind>.hlog interval logs) and
writes, into the run folder or --out:

  report.html   one self-contained page: first a headline (p50 and p99 per
                op kind; for lifecycle runs what destruction adds, with a
                95% CI across repetitions) over every op kind on one axis,
                then environment, configuration, summary, repetitions,
                warnings and every plot as inline SVG
  summary.md    the headline, the summary table and warnings, for CI job
                summaries
  bench.txt     Go benchmark format, one line per repetition and op kind:
                benchstat bench.txt reads it
  plots/        overlay-spectrum and overlay-histogram (all op kinds); per op
                kind: latency histogram, percentile spectrum, timeline;
                per-worker throughput; PNG and SVG

Several run folders make one combined report (with overlaid spectra) and
need --out. A sweep folder (with sweep.json) adds throughput and p99 against
total threads (processes × threads) and, when the sweep varies it, the QP
count.`,
		Example: `  # the report of one run, written into its folder
  xrcbench report runs/lifecycle

  # two runs in one report, their spectra overlaid
  xrcbench report runs/fw-16.35 runs/fw-16.36 --out runs/fw-report

  # a sweep: every point, plus throughput and p99 against the sweep's axes
  xrcbench report runs/steady-sweep

  # every histogram with a log count axis
  xrcbench report runs/lifecycle --counts log`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs at least one RUN_DIR")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			scale, err := report.ParseCountScale(counts)
			if err != nil {
				return usagef("--counts: %v", err)
			}
			rep, err := report.GenerateWith(args, out, report.Options{Counts: scale})
			if err != nil {
				return inputErr(err)
			}
			for _, w := range rep.Warnings {
				fmt.Fprintln(stderr, "warning: "+w)
			}
			fmt.Fprintf(stdout, "wrote %s (%d files; open %s)\n", rep.Out, len(rep.Files), filepath.Join(rep.Out, report.HTMLFile))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder for the report (default: the run folder; required with several)")
	cmd.Flags().StringVar(&counts, "counts", "auto", "count axis of the latency histograms: auto (log where a long tail beyond p99 would be invisible), log or linear")
	return cmd
}
