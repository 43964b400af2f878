package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/report"
)

func init() { subcommands = append(subcommands, newExportCmd) }

// exportFlags are export's flags as given.
type exportFlags struct {
	format, out, metrics, threshold, gates string
	allowDiff                              bool
	nameLabels                             []string
}

// exportPlan is what export was asked, checked: the latency metrics, and
// for junit the gates and threshold of the comparison.
type exportPlan struct {
	format, out string
	metrics     []report.Metric
	nameLabels  []string
	threshold   float64
	gates       []report.Gate
	allowDiff   bool // junit: compare's --allow-config-diff
}

func newExportCmd(stdout, stderr io.Writer) *cobra.Command {
	var fl exportFlags
	cmd := &cobra.Command{
		Use:   "export RUN_DIR... --format F [--out FILE]",
		Short: "Write run folders' figures for CI tools: github-action-benchmark, Bencher, CSV, JUnit",
		Long: `export writes the figures of run folders in a format another tool reads:

  github-action-benchmark  the custom-tool JSON of github-action-benchmark:
                one entry per op kind and latency metric (--metric), named
                "workload/kind [configuration] metric" (lifecycle/unreg_last
                [sim 2x1 16 QPs rtr] p99: provider, device, procs x threads,
                QPs, QP state, rate, and the labels --name-labels names, so
                a CI matrix is one chart per configuration), unit ns,
                for tool customSmallerIsBetter in --out; ops/s per op kind
                for tool customBiggerIsBetter in a second file beside it,
                named like --out with -throughput before the extension.
                Needs --out.
  bencher       Bencher Metric Format JSON: a benchmark per workload, op
                kind and configuration (named as above), Bencher's built-in
                measures latency (the p50, ns) and throughput (ops/s), and
                latency-p99, ... (ns) for the other metrics, for bencher
                run --adapter json.
  csv           tidy CSV, one row per run, repetition, op kind and
                statistic (count, errors, ops_per_sec, min, p50, p90, p99,
                p999, max, mean, stddev), with the run's configuration
                and environment as columns (labels as label:KEY), for
                pandas or R. A text cell starting with =, +, -, @, a tab
                or a CR (a formula to a spreadsheet) gets a leading ';
                numbers, negative ones too, stay numbers.
  junit         the gate result of compare BASE_DIR NEW_DIR as JUnit XML,
                for a CI server's test report: a test case per gated
                metric (--gate, --threshold as compare), failed on a
                significant regression, skipped when the repetitions are
                too few to decide. Takes exactly two run folders; exits 0
                whatever the verdict (compare's exit status gates), 2 when
                their configurations differ, as compare, unless
                --allow-config-diff.

The value of every JSON entry is the median over the run's repetitions; the
range (github-action-benchmark) and lower/upper values (Bencher) bound its
90% confidence interval, and are left out when the repetitions are too few
to bound it. A storm's makespan and teardown are latencies of kind storm
everywhere ("storm/storm makespan", latency-makespan, CSV rows of kind
storm). Runs of one workload would give the same names and are
refused: export them into separate files. A failed run is refused; a
partial one is exported and marked so.`,
		Example: `  # a CI job's numbers for github-action-benchmark (two files)
  xrcbench export runs/candidate --format github-action-benchmark --out bench.json
  #   bench.json: customSmallerIsBetter; bench-throughput.json: customBiggerIsBetter

  # for Bencher
  xrcbench export runs/candidate --format bencher --out bmf.json
  bencher run --adapter json --file bmf.json

  # every run of a campaign as one table for pandas
  xrcbench export runs/fw-* --format csv --out campaign.csv

  # compare's gates as a JUnit test report
  xrcbench export runs/baseline runs/candidate --format junit --out compare-junit.xml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("export needs at least one RUN_DIR")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			plan, err := fl.plan(len(args))
			if err != nil {
				return err
			}
			var runs []*report.Run
			for _, d := range args {
				run, err := report.LoadRun(d)
				if err != nil {
					return inputErr(err)
				}
				runs = append(runs, run)
			}
			names, files, err := plan.export(runs)
			if err != nil {
				return err
			}
			return writeOutputs(stdout, names, files)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.format, "format", "", "github-action-benchmark, bencher, csv or junit")
	f.StringVar(&fl.out, "out", "", "file to write (default: standard output; github-action-benchmark needs it)")
	f.StringVar(&fl.metrics, "metric", "p50,p99", "latency metrics exported per op kind (github-action-benchmark, bencher): some of p50, p90, p99, p999, max, mean")
	f.StringVar(&fl.threshold, "threshold", "5%", "junit: smallest change that counts as a regression, as compare's")
	f.StringVar(&fl.gates, "gate", "", "junit: the metrics that decide, KIND.METRIC comma-separated, as compare's (default: the workload's)")
	f.BoolVar(&fl.allowDiff, "allow-config-diff", false, "junit: compare runs whose configurations differ, as compare's")
	f.StringSliceVar(&fl.nameLabels, "name-labels", nil, "github-action-benchmark, bencher: run labels (--label KEY=...) to put in every benchmark name beside the configuration, KEY[,KEY...], so runs that differ only in them chart apart")
	return cmd
}

// plan checks the flags for an export of n run folders; a bad value is
// bad usage (exit 2).
func (fl *exportFlags) plan(n int) (*exportPlan, error) {
	formats := fmt.Sprintf("%s, %s, %s or %s", report.ExportFormatGAB, report.ExportFormatBencher, report.ExportFormatCSV, report.ExportFormatJUnit)
	switch fl.format {
	case report.ExportFormatGAB, report.ExportFormatBencher, report.ExportFormatCSV:
	case report.ExportFormatJUnit:
		if n != 2 {
			return nil, usagef("--format junit is the gate result of a compare: give BASE_DIR and NEW_DIR, got %d run folder(s)", n)
		}
	case "":
		return nil, usagef("export needs --format: %s", formats)
	default:
		return nil, usagef("--format %q: want %s", fl.format, formats)
	}
	p := &exportPlan{format: fl.format, out: fl.out, allowDiff: fl.allowDiff, nameLabels: fl.nameLabels}
	var err error
	if p.threshold, err = parsePercent(fl.threshold); err != nil {
		return nil, usagef("--threshold %q: %v", fl.threshold, err)
	}
	if fl.gates != "" {
		if p.gates, err = report.ParseGates(fl.gates); err != nil {
			return nil, inputErr(err)
		}
	}
	if fl.format == report.ExportFormatGAB && fl.out == "" {
		return nil, usagef("--format %s writes two files (latencies and ops/s): give --out FILE", report.ExportFormatGAB)
	}
	if p.metrics, err = parseMetrics(fl.metrics); err != nil {
		return nil, err
	}
	for _, m := range p.metrics {
		if !m.Latency {
			return nil, usagef("--metric %s: not a latency; ops/s is always exported", m.Name)
		}
	}
	return p, nil
}

// export renders the runs in the plan's format: the files to write, by
// name ("" is standard output), in order.
func (p *exportPlan) export(runs []*report.Run) ([]string, map[string][]byte, error) {
	opt := report.ExportOptions{Metrics: p.metrics, NameLabels: p.nameLabels}
	files := map[string][]byte{}
	var names []string
	add := func(name string, data []byte) {
		names = append(names, name)
		files[name] = data
	}
	switch p.format {
	case report.ExportFormatGAB:
		smaller, bigger, err := report.ExportGitHubActionBenchmark(runs, opt)
		if err != nil {
			return nil, nil, inputErr(err)
		}
		add(p.out, smaller)
		add(ThroughputFile(p.out), bigger)
	case report.ExportFormatBencher:
		data, err := report.ExportBencher(runs, opt)
		if err != nil {
			return nil, nil, inputErr(err)
		}
		add(p.out, data)
	case report.ExportFormatCSV:
		data, err := report.ExportCSV(runs)
		if err != nil {
			return nil, nil, inputErr(err)
		}
		add(p.out, data)
	case report.ExportFormatJUnit:
		c, err := report.Compare(runs[0], runs[1], report.CompareOptions{Threshold: p.threshold, Alpha: report.DefaultAlpha, Gates: p.gates, AllowConfigDiff: p.allowDiff})
		if err != nil {
			return nil, nil, inputErr(err)
		}
		var b bytes.Buffer
		if err := report.WriteJUnit(&b, c.JUnit(runs[1].Result.Started)); err != nil {
			return nil, nil, failure{err: err}
		}
		add(p.out, b.Bytes())
	}
	return names, files, nil
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
		// Beneath a handle of the file's folder, which another user
		// cannot re-point (a folder of theirs, for root, is refused).
		dir, err := safedir.OpenOut(filepath.Dir(name), false)
		if errors.Is(err, safedir.ErrRefused) {
			return usagef("--out %s: %v: write it elsewhere", name, err)
		}
		if err != nil {
			return outputErr(err)
		}
		err = dir.WriteFile(filepath.Base(name), files[name], 0o644)
		dir.Close()
		if err != nil {
			return outputErr(err)
		}
	}
	return nil
}
