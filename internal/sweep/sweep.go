// Package sweep runs a sweep: one run per point of a product of
// configurations, each into its own run folder under the sweep's, indexed
// by sweep.json (results.Sweep), which is rewritten after every point so
// that an interrupted sweep keeps what it measured.
package sweep

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Point is a point of a sweep as Run hands it to the caller: its
// index among the points, its configuration (Out is its run folder), and
// how a progress line names it.
type Point struct {
	Index int
	Cfg   bench.Config
	Name  string
}

// Run runs the points cfgs in turn into root, one run folder each,
// rewriting sweep.json after each point, so an interrupted sweep keeps
// what it measured. run runs one point (bench.Run, with the caller's progress
// and summary around it); a point whose run fails is indexed with the
// status its folder holds and named in failed, and the next point runs.
// It stops after the point during which ctx was cancelled. The error is
// only sweep.json's, which ends the sweep.
func Run(ctx context.Context, root string, cfgs []bench.Config, run func(Point) error) (idx *results.Sweep, failed []string, err error) {
	idx = &results.Sweep{Schema: results.SweepSchema}
	models := costModels(cfgs)
	for i, cfg := range cfgs {
		dir, name := pointName(cfg)
		if len(models) > 1 {
			// The sweep varies the sim's cost model: each point says which.
			m := slices.Index(models, cfg.SimCost) + 1
			dir += fmt.Sprintf("-c%d", m)
			name += ", sim cost " + cmp.Or(cfg.SimCost.String(), "zero")
		}
		cfg.Out = filepath.Join(root, dir)
		status := results.StatusOK
		if err := run(Point{Index: i, Cfg: cfg, Name: name}); err != nil {
			status = results.StatusFailed
			if r, lerr := results.Load(cfg.Out); lerr == nil {
				status = r.Status
			}
			failed = append(failed, dir)
		}
		pt := results.SweepPoint{Dir: dir, Procs: cfg.Procs, Threads: cfg.Threads, QPs: cfg.QPs, Status: status}
		if len(models) > 1 {
			pt.SimCost = cmp.Or(cfg.SimCost.String(), "zero")
		}
		if cfg.Workload.Mode == workloads.StormMode {
			pt.Nodes = cfg.StormNodes()
		}
		idx.Points = append(idx.Points, pt)
		if werr := results.WriteSweep(root, idx); werr != nil {
			return idx, failed, fmt.Errorf("writing sweep.json: %w", werr)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return idx, failed, nil
}

// costModels is the sim cost models of the points, each once, in the
// order first met.
func costModels(cfgs []bench.Config) []verbs.Cost {
	var ms []verbs.Cost
	for _, c := range cfgs {
		if !slices.Contains(ms, c.SimCost) {
			ms = append(ms, c.SimCost)
		}
	}
	return ms
}

// pointName names a point: its folder under the sweep's, and how the
// progress line says it. A storm's point is named by its nodes.
func pointName(cfg bench.Config) (dir, point string) {
	if cfg.Workload.Mode == workloads.StormMode {
		return fmt.Sprintf("p%d-t%d-n%d", cfg.Procs, cfg.Threads, cfg.StormNodes()),
			fmt.Sprintf("%d procs x %d threads, %d nodes (%d QPs)", cfg.Procs, cfg.Threads, cfg.StormNodes(), cfg.QPs)
	}
	return fmt.Sprintf("p%d-t%d-q%d", cfg.Procs, cfg.Threads, cfg.QPs),
		fmt.Sprintf("%d procs x %d threads, %d QPs", cfg.Procs, cfg.Threads, cfg.QPs)
}
