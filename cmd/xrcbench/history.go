package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/internal/analysis"
	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

func init() { subcommands = append(subcommands, newHistoryCmd) }

func newHistoryCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		out, orderBy, gates, minEffect, xLabel string
		alpha                                  float64
		asJSON                                 bool
	)
	cmd := &cobra.Command{
		Use:   "history DIR... [--out DIR]",
		Short: "A gated metric's history across runs, with change points; exit 1 when the latest run is after a regression",
		Long: `history reads run folders (or folders of them), orders the runs by their start
time or by a label (--order-by label:commit), and follows each gated metric
(--gate, by default the workload's, as compare) across them: per run the
median over its repetitions and their range.

Over each series it looks for change points with E-divisive (Matteson and
James 2014, as MongoDB's performance CI uses it): the split where the runs
before and after differ most, kept when a permutation test finds it
significant (p ≤ --alpha) and the median moved by at least --min-effect,
then the same on either side. A stretch that a straight line (Theil-Sen)
fits at least as well as a step is reported as a drift, with its slope per
run and the Mann-Kendall test's p, not as a change point. Each change point
is named with the first run after it, the change, and p.

Runs whose configuration differs from the run before them (workload spec,
provider, procs, threads, QPs, QP state, open-loop rate or arrival,
provider options such as the sim's cost model and semantics, device; never
the firmware or the labels, which a history follows) are warned about on
stderr, one line each naming the run and what differs, and marked in
history.html and history.json. A change point where the configuration
changed is "configuration changed", not a regression: it does not set the
exit status. A run given more than once (the same run id
in two folders, or one folder twice) is warned about on stderr, once, naming
the folders: the history counts it as that many runs.

It writes history.json and history.html (a plot per metric with the change
points marked; each point links to its run's report.html) into --out, by
default the folder of runs when one is given, and prints a summary.

A series of fewer runs than a step needs at --alpha (10 at 0.01, 5 on each
side: the permutation test cannot reach p ≤ alpha with fewer) is not
searched, and the summary says so. A series longer than 100 runs is
searched in windows of 100, each half over the one before (exact
E-divisive within each; docs/analysis.md says what that misses); 10,000 runs
take well under a minute. A long history prints what it is doing on stderr
every second; ^C stops it at once, writing nothing (exit 1).

Exit status: 0; 1 when the most recent run of a gated metric sits after a
regression change point (a scheduled CI job alerts on it; a change point
where the configuration changed is none), or on ^C; 2 bad input
(no run folder, runs of different workloads, a run without the label to
order by).`,
		Example: `  # every nightly run kept under runs/nightly/
  xrcbench history runs/nightly

  # ordered by the commit timestamp each run was labelled with
  xrcbench history runs/nightly --order-by label:commit_time --out public/history

  # reg p99 instead of the default gates, 3% minimum change
  xrcbench history runs/nightly --gate reg.p99 --min-effect 3%`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("history needs at least one run folder or folder of runs")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			eff, err := parsePercent(minEffect)
			if err != nil {
				return usagef("--min-effect %q: %v", minEffect, err)
			}
			if !(alpha > 0 && alpha < 1) {
				return usagef("--alpha %g: want a level between 0 and 1, such as 0.01", alpha)
			}
			var gs []report.Gate
			if gates != "" {
				if gs, err = report.ParseGates(gates); err != nil {
					return inputErr(err)
				}
			}
			if out == "" {
				if len(args) == 1 && !isRunFolder(args[0]) {
					out = args[0]
				} else {
					return usagef("history of run folders needs --out DIR for history.html and history.json (it defaults only to a single folder of runs)")
				}
			}
			// ^C stops it at once: nothing is written.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			h, err := analysis.BuildHistoryContext(ctx, args, analysis.HistoryOptions{OrderBy: orderBy, XLabel: xLabel, Gates: gs, MinEffect: eff, Alpha: alpha, Seed: 1,
				Progress: historyProgress(stderr, time.Second)})
			if ctx.Err() != nil {
				return failure{err: errors.New("interrupted: nothing written")}
			}
			if err != nil {
				return inputErr(err)
			}
			js, err := h.JSON()
			if err != nil {
				return failure{err: err}
			}
			page, err := h.HTML(out, func(run string) bool {
				_, err := os.Stat(filepath.Join(run, report.HTMLFile))
				return err == nil
			})
			if err != nil {
				return failure{err: err}
			}
			// Written beneath a handle of the folder, which another user
			// cannot re-point (a folder of theirs, for root, is refused).
			dir, err := safedir.OpenOut(out, true)
			if errors.Is(err, safedir.ErrRefused) {
				return usagef("history folder %v: write the history elsewhere (--out)", err)
			}
			if err != nil {
				return outputErr(err)
			}
			defer dir.Close()
			for name, data := range map[string][]byte{analysis.HistoryJSONFile: js, analysis.HistoryHTMLFile: page} {
				if err := dir.WriteFile(name, data, 0o644); err != nil {
					return outputErr(err)
				}
			}
			for _, w := range append(h.DuplicateRuns(), h.ConfigWarnings()...) {
				fmt.Fprintln(stderr, "warning: "+w)
			}
			// Exit 0 would otherwise read as "no regression": it is "not
			// looked for", which a CI log must show.
			for _, sr := range h.Series {
				if sr.TooFew != "" {
					fmt.Fprintf(stderr, "warning: %s %s: no change point looked for: %s\n", sr.Kind, sr.Metric, sr.TooFew)
				}
			}
			if asJSON {
				doc := historyJSON{envelope: newEnvelope("history", "ok", out, nil), History: js}
				if h.Regressed() {
					doc.Status = "regressed"
				}
				if err := writeJSON(stdout, doc); err != nil {
					return err
				}
			} else {
				if err := h.WriteText(stdout); err != nil {
					return outputErr(err)
				}
				fmt.Fprintf(stdout, "wrote %s and %s\n", filepath.Join(out, analysis.HistoryHTMLFile), filepath.Join(out, analysis.HistoryJSONFile))
			}
			if h.Regressed() {
				return failure{err: errors.New("the latest run sits after a regression change point"), quiet: false}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print history.json as one JSON document on stdout ({command, status: ok or regressed, folder, history}) in place of the text; warnings stay on stderr")
	f.StringVar(&out, "out", "", "folder for history.html and history.json (default: the folder of runs, when one is given)")
	f.StringVar(&orderBy, "order-by", "start", "order of the runs: start (their start time) or label:KEY (their --label KEY, numerically when all are numbers)")
	f.StringVar(&gates, "gate", "", "metrics to follow, KIND.METRIC comma-separated (default: the workload's, as compare)")
	f.StringVar(&minEffect, "min-effect", "5%", "smallest change of the median that is a change point or a drift")
	f.Float64Var(&alpha, "alpha", 0.01, "significance level of each change point's permutation test")
	f.StringVar(&xLabel, "x-label", "", "what history.html's x axis names each run by: date (its start) or a --label KEY (default: commit when the runs carry --label commit=..., else date)")
	return cmd
}

// historyProgress prints what a long history is doing on stderr, a line
// at most every, the first after every has passed: a short one prints
// nothing.
func historyProgress(stderr io.Writer, every time.Duration) func(string) {
	next := time.Now().Add(every)
	return func(what string) {
		if now := time.Now(); now.After(next) {
			next = now.Add(every)
			fmt.Fprintln(stderr, "history: "+what)
		}
	}
}

// isRunFolder reports whether dir holds a result.json.
func isRunFolder(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, results.FileName))
	return err == nil
}
