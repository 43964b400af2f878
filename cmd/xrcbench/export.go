package main

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

func init() { subcommands = append(subcommands, newExportCmd) }

func newExportCmd(stdout, stderr io.Writer) *cobra.Command {
	var format, out, metrics string
	cmd := &cobra.Command{
		Use:   "export RUN_DIR... --format F [--out FILE]",
		Short: "Write run folders' figures for CI tools: github-action-benchmark, Bencher, CSV",
		Long: `export writes the figures of run folders in a format another tool reads:

  github-action-benchmark  the custom-tool JSON of github-action-benchmark:
                one entry per op kind and latency metric (--metric), named
                "workload/kind metric" (lifecycle/unreg_last p99), unit ns,
                for tool customSmallerIsBetter in --out; ops/s per op kind
                for tool customBiggerIsBetter in a second file beside it,
                named like --out with -throughput before the extension.
                Needs --out.
  bencher       Bencher Metric Format JSON: a benchmark per workload and op
                kind, measures latency-p50, latency-p99, ... (ns) and
                throughput (ops/s), for bencher run --adapter json.
  csv           tidy CSV, one row per run, repetition, op kind and
                statistic (count, errors, ops_per_sec, min, p50, p90, p99,
                p999, max, mean, stddev), with the run's configuration
                and environment as columns, for pandas or R.

The value of every JSON entry is the median over the run's repetitions; the
range (github-action-benchmark) and lower/upper values (Bencher) bound its
90% confidence interval, and are left out when the repetitions are too few
to bound it. Runs of one workload would give the same names and are
refused: export them into separate files. A failed run is refused; a
partial one is exported and marked so.`,
		Example: `  # a CI job's numbers for github-action-benchmark (two files)
  xrcbench export runs/candidate --format github-action-benchmark --out bench.json
  #   bench.json: customSmallerIsBetter; bench-throughput.json: customBiggerIsBetter

  # for Bencher
  xrcbench export runs/candidate --format bencher --out bmf.json
  bencher run --adapter json --file bmf.json

  # every run of a campaign as one table for pandas
  xrcbench export runs/fw-* --format csv --out campaign.csv`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("export needs at least one RUN_DIR")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			switch format {
			case report.ExportFormatGAB, report.ExportFormatBencher, report.ExportFormatCSV:
			case "":
				return usagef("export needs --format: %s, %s or %s", report.ExportFormatGAB, report.ExportFormatBencher, report.ExportFormatCSV)
			default:
				return usagef("--format %q: want %s, %s or %s", format, report.ExportFormatGAB, report.ExportFormatBencher, report.ExportFormatCSV)
			}
			if format == report.ExportFormatGAB && out == "" {
				return usagef("--format %s writes two files (latencies and ops/s): give --out FILE", report.ExportFormatGAB)
			}
			ms, err := parseMetrics(metrics)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if !m.Latency {
					return usagef("--metric %s: not a latency; ops/s is always exported", m.Name)
				}
			}
			var runs []*report.Run
			for _, d := range args {
				run, err := report.LoadRun(d)
				if err != nil {
					return inputErr(err)
				}
				runs = append(runs, run)
			}
			opt := report.ExportOptions{Metrics: ms}
			files := map[string][]byte{}
			var names []string
			add := func(name string, data []byte) {
				names = append(names, name)
				files[name] = data
			}
			switch format {
			case report.ExportFormatGAB:
				smaller, bigger, err := report.ExportGitHubActionBenchmark(runs, opt)
				if err != nil {
					return inputErr(err)
				}
				add(out, smaller)
				add(ThroughputFile(out), bigger)
			case report.ExportFormatBencher:
				data, err := report.ExportBencher(runs, opt)
				if err != nil {
					return inputErr(err)
				}
				add(out, data)
			case report.ExportFormatCSV:
				data, err := report.ExportCSV(runs)
				if err != nil {
					return inputErr(err)
				}
				add(out, data)
			}
			return writeOutputs(stdout, names, files)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "", "github-action-benchmark, bencher or csv")
	f.StringVar(&out, "out", "", "file to write (default: standard output; github-action-benchmark needs it)")
	f.StringVar(&metrics, "metric", "p50,p99", "latency metrics exported per op kind (github-action-benchmark, bencher): some of p50, p90, p99, p999, max, mean")
	return cmd
}

// ThroughputFile is the name of github-action-benchmark's second file,
// beside out: bench.json → bench-throughput.json.
func ThroughputFile(out string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-throughput" + ext
}

// writeOutputs writes each named file atomically (all computed before the
// first is written, so bad input leaves nothing behind), or the one
// unnamed output to stdout.
func writeOutputs(stdout io.Writer, names []string, files map[string][]byte) error {
	for _, name := range names {
		if name == "" {
			if _, err := stdout.Write(files[name]); err != nil {
				return outputErr(err)
			}
			continue
		}
		if err := results.WriteFileAtomic(name, files[name], 0o644); err != nil {
			return outputErr(err)
		}
	}
	return nil
}
