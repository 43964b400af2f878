package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/fleet"
)

// Fleet runs: one `run --fleet` per node, started by srun or mpirun.
const (
	defaultFleetSyncDeadline = 5 * time.Minute
	maxFleetSyncDeadline     = 24 * time.Hour
	// fleetStartMargin is how long after the last node's arrival the
	// fleet starts: every node polls the barrier folder ten times a
	// second, and a shared file system shows a new file a little late.
	fleetStartMargin = 2 * time.Second
)

type fleetFlags struct {
	fleet bool
	sync  string // "" without --fleet-sync; a duration with it
}

func (f *fleetFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.fleet, "fleet", false, "one run per node of a fleet, started by srun or mpirun -npernode 1: the run folder is <out>/<node>/, the result records job id, node, rank and node count")
	fs.StringVar(&f.sync, "fleet-sync", "", "with --fleet: meet the other nodes at a barrier in --out and start together; =DEADLINE is how long to wait for them (default 5m)")
	fs.Lookup("fleet-sync").NoOptDefVal = defaultFleetSyncDeadline.String()
}

// apply makes cfg and opts a fleet node's: its identity from the
// launcher's environment, its folder under --out, and with --fleet-sync
// the barrier before the start.
func (f *fleetFlags) apply(cmd *cobra.Command, cfg *bench.Config, opts *bench.Options, getenv func(string) string) error {
	fs := cmd.Flags()
	if !f.fleet {
		if fs.Changed("fleet-sync") {
			return usagef("--fleet-sync needs --fleet")
		}
		return nil
	}
	if cfg.Out == "" {
		return usagef("--fleet needs --out: a folder every node shares, which gets one run folder per node")
	}
	var deadline time.Duration
	if fs.Changed("fleet-sync") {
		d, err := time.ParseDuration(f.sync)
		if err != nil || d <= 0 || d > maxFleetSyncDeadline {
			return usagef("--fleet-sync=%s: want a deadline such as 5m, up to %v", f.sync, maxFleetSyncDeadline)
		}
		deadline = d
	}
	host, _ := os.Hostname()
	id, err := fleet.Identity(getenv, host)
	if err != nil {
		return usageError{err}
	}
	shared := cfg.Out
	cfg.Out = filepath.Join(shared, id.Node)
	cfg.Fleet = id
	if deadline > 0 {
		b := &fleet.Barrier{
			Dir: shared, Fleet: id, Deadline: deadline, Margin: fleetStartMargin,
			Expected: id.NodeList,
		}
		if err := b.Check(); err != nil {
			return usageError{err}
		}
		opts.BeforeStart = b.BeforeStart
	}
	return nil
}
