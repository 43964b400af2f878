package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/sweep"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// parseList reads a list flag such as "1,2,4": positive integers, no
// duplicates.
func parseList(flag, s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		n, err := strconv.Atoi(part)
		if err != nil || n <= 0 {
			return nil, usagef("--%s %q: want a list of positive numbers such as 1,2,4", flag, s)
		}
		if seen[n] {
			return nil, usagef("--%s %q: %d given twice", flag, s, n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

func init() {
	subcommands = append(subcommands, func(stdout, stderr io.Writer) *cobra.Command {
		var f runFlags
		cmd := &cobra.Command{
			Use:   "sweep",
			Short: "Run the cartesian product of --procs, --threads and --qps lists",
			Long: `sweep runs one configuration per point of a grid of list-valued flags, one
run folder per point under one sweep folder indexed by sweep.json, and exits
1 when any point failed (a failed point does not stop the sweep).

The grid is the product of --procs, --threads and --qps (and --nodes for a
storm workload, whose QPs follow from it; --sim-cost given more than once, a
point per cost model); every other flag is as in run. sweep.json has the
schema xrcbench.sweep/v1.`,
			Example: `  # how registration scales with processes and threads
  xrcbench sweep --workload steady --procs 1,2,4 --threads 1,2 --qps 1,16 --duration 5s

  # a storm's makespan against the job's size, with a linear-scaling line
  xrcbench sweep --workload storm --procs 4 --nodes 9,17,33,65 \
      --sim-cost create=100us,reg=10us --repetitions 3 --out runs/storm-sweep

  # the kernel's target-QP lookup since Linux 5.9 and before, against the
  # domain's live QPs: --sim-cost once per model, one line each in the plots
  xrcbench sweep --workload steady --threads 1,4 --qps 1,256,4096,65536 --sim-max-qp 65536 \
      --sim-cost lookup=xarray --sim-cost lookup=list,scan=20ns --duration 2s

  # lifecycle over thread counts, 3 repetitions per point
  xrcbench sweep --workload lifecycle --threads 1,2,4 --sim-cost destroy=200us \
      --iterations 500 --repetitions 3 --out runs/lifecycle-sweep`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := f.checkOutput(); err != nil {
					return err
				}
				failed := func(folder string, err error) error {
					return jsonBeforeStart(stdout, f.json, func() any {
						return sweepJSON{envelope: newEnvelope("sweep", results.StatusFailed, folder, err), Points: []sweepPointJSON{}}
					}, err)
				}
				cfgs, err := f.sweepConfigs(cmd)
				if err != nil {
					return failed(f.s.Out, err)
				}
				root := f.s.Out
				if root == "" {
					root = defaultOut("sweep-", cfgs[0].Workload, cfgs[0].Provider)
				}
				if err := os.MkdirAll(root, 0o755); err != nil {
					return failed("", failure{err: fmt.Errorf("sweep folder: %w", err)})
				}
				opts, err := engineOptions(stderr)
				if err != nil {
					return failed(root, failure{err: err})
				}
				ctx, cancel := interruptible(stderr)
				defer cancel()
				return f.runSweep(ctx, stdout, stderr, root, cfgs, opts)
			},
		}
		f.register(cmd.Flags(), true)
		return cmd
	})
}

// sweepConfigs is every point of the sweep, each checked before any runs:
// the product of the --procs, --threads, --qps and --nodes lists.
func (f *runFlags) sweepConfigs(cmd *cobra.Command) ([]bench.Config, error) {
	procs, err := parseList("procs", f.procs)
	if err != nil {
		return nil, err
	}
	threads, err := parseList("threads", f.threads)
	if err != nil {
		return nil, err
	}
	qps, err := parseList("qps", f.qps)
	if err != nil {
		return nil, err
	}
	nodes := []int{0} // the workload's
	if cmd.Flags().Changed("nodes") {
		if nodes, err = parseList("nodes", f.nodes); err != nil {
			return nil, err
		}
	}
	costs, err := costList(f.simCosts)
	if err != nil {
		return nil, err
	}
	var cfgs []bench.Config
	for _, c := range costs {
		f.s.SimCost = c
		for _, p := range procs {
			for _, t := range threads {
				for _, q := range qps {
					for _, n := range nodes {
						cfg, err := f.config(cmd.Flags(), p, t, q, n)
						if err != nil {
							return nil, err
						}
						cfgs = append(cfgs, cfg)
					}
				}
			}
		}
	}
	return cfgs, nil
}

// costList reads sweep's --sim-cost values, one cost model each: none is
// the default model; the same model twice (reg=2us and reg=2000ns) is
// refused, as a list flag's duplicate is.
func costList(specs []string) ([]string, error) {
	if len(specs) == 0 {
		return []string{bench.Defaults().SimCost}, nil
	}
	seen := map[verbs.Cost]string{}
	for _, s := range specs {
		c, err := verbs.ParseCost(s)
		if err != nil {
			return nil, usagef("--sim-cost: %v", err)
		}
		if first, dup := seen[c]; dup {
			return nil, usagef("--sim-cost %q: the same cost model as %q, given twice", s, first)
		}
		seen[c] = s
	}
	return specs, nil
}

// runSweep runs the points in turn into root (sweep.Run), indexing sweep.json after
// each, so an interrupted sweep keeps what it measured. A failed point
// does not stop the others, but fails the sweep (exit 1), as an
// interruption does.
func (f *runFlags) runSweep(ctx context.Context, stdout, stderr io.Writer, root string, cfgs []bench.Config, opts bench.Options) error {
	// With --json stdout is the document's alone: each point's own
	// lines go to stderr, its table nowhere.
	human, pointLog := stdout, stdout
	if f.json {
		human, pointLog = io.Discard, stderr
	}
	idx, failed, err := sweep.Run(ctx, root, cfgs, func(p sweep.Point) error {
		if !f.quiet {
			fmt.Fprintf(pointLog, "== point %d/%d: %s\n", p.Index+1, len(cfgs), p.Name)
		}
		popts := opts
		view := f.watch(&popts, stderr, p.Cfg, fmt.Sprintf("point %d/%d: ", p.Index+1, len(cfgs)))
		_, err := runOne(ctx, human, p.Cfg, popts, view)
		if err != nil {
			fmt.Fprintln(stderr, "xrcbench: "+oneLine(err.Error()))
		}
		return err
	})
	if err != nil {
		return failure{err: err}
	}
	switch {
	case len(failed) > 0:
		err = failure{err: errors.New("sweep: point(s) failed: " + strings.Join(failed, ", ")), quiet: false}
	case ctx.Err() != nil:
		err = failure{err: fmt.Errorf("sweep interrupted after %d of %d points", len(idx.Points), len(cfgs))}
	}
	if f.json {
		return cmp.Or(err, writeJSON(stdout, newSweepJSON(root, idx, err, len(idx.Points) < len(cfgs))))
	}
	if !f.quiet {
		printSweep(stdout, root, idx)
		fmt.Fprintf(stdout, "sweep folder: %s (%d points)\n", root, len(idx.Points))
	}
	return err
}

// printSweep is the sweep's overview: per point, the p50 and rate of each
// op kind, so scaling shows at a glance.
func printSweep(w io.Writer, root string, idx *results.Sweep) {
	var kinds []string
	runs := map[string]*results.Result{}
	for _, p := range idx.Points {
		r, err := results.Load(filepath.Join(root, p.Dir))
		if err != nil {
			continue
		}
		runs[p.Dir] = r
		for _, k := range results.OpKinds {
			if _, ok := r.Ops[k]; ok && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	slices.SortFunc(kinds, func(a, b string) int { return slices.Index(results.OpKinds, a) - slices.Index(results.OpKinds, b) })
	costs := slices.ContainsFunc(idx.Points, func(p results.SweepPoint) bool { return p.SimCost != "" })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "procs\tthreads\tqps\tstatus\t")
	for _, k := range kinds {
		fmt.Fprintf(tw, "%s p50\t%s ops/s\t", k, k)
	}
	if costs {
		fmt.Fprint(tw, "sim cost\t")
	}
	fmt.Fprintln(tw)
	for _, p := range idx.Points {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t", p.Procs, p.Threads, p.QPs, p.Status)
		var ops map[string]results.OpStats
		if r := runs[p.Dir]; r != nil {
			ops = r.Ops
		}
		for _, k := range kinds {
			if s, ok := ops[k]; ok && s.Count > 0 {
				fmt.Fprintf(tw, "%s\t%.0f\t", ns(s.NS.P50), s.OpsPerSec)
			} else {
				fmt.Fprint(tw, "-\t-\t")
			}
		}
		if costs {
			fmt.Fprintf(tw, "%s\t", p.SimCost)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
