package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/runfolder"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// runFlags are the flags `run` and `sweep` share, bound to a run's
// settings (bench.Settings, whose Defaults are theirs); sweep reads procs,
// threads, qps and nodes as lists.
type runFlags struct {
	s                   bench.Settings
	procs, threads, qps string   // sweep: lists
	nodes               string   // sweep: a list
	simCosts            []string // sweep: --sim-cost given once per cost model
	progress            string
	quiet, verbose      bool
	json                bool // --json: the summary as one JSON document on stdout
}

func (f *runFlags) register(fs *pflag.FlagSet, sweep bool) {
	d := bench.Defaults()
	s := &f.s
	fs.StringVar(&s.Provider, "provider", d.Provider, "provider: "+bench.ProviderNames())
	fs.StringVarP(&s.Device, "device", "d", d.Device, "device name (rdma, legacy); default the first with XRC")
	registerPath(fs, &s.IBPort, &s.GIDIndex)
	fs.StringVar(&s.Workload, "workload", d.Workload, "built-in workload ("+strings.Join(workloads.Names(), ", ")+") or a YAML file")
	if sweep {
		fs.StringVar(&f.procs, "procs", fmt.Sprint(d.Procs), "worker processes, a list: 1,2,4")
		fs.StringVar(&f.threads, "threads", fmt.Sprint(d.Threads), "threads per process, a list: 1,2")
		fs.StringVar(&f.qps, "qps", fmt.Sprint(d.QPs), "QPs (per round, shared, or per thread for per_thread workloads), a list: 1,16")
		fs.StringVar(&f.nodes, "nodes", "", "storm workloads: the job's nodes, this one included, a list: 9,17,33 (default the workload's storm.nodes)")
	} else {
		fs.IntVar(&s.Procs, "procs", d.Procs, "worker processes")
		fs.IntVar(&s.Threads, "threads", d.Threads, "threads per process, each its own registrant")
		fs.IntVar(&s.QPs, "qps", d.QPs, "QPs: per round (rounds workloads), shared by all, or per thread (per_thread workloads)")
		fs.IntVar(&s.Nodes, "nodes", d.Nodes, "storm workloads: the job's nodes, this one included (default the workload's storm.nodes)")
	}
	fs.VarP(newSecondsDuration(d.Duration, &s.Duration), "duration", "D", "measured time of each repetition (excludes --warmup); a bare number is seconds, as perftest's -D")
	fs.Int64VarP(&s.Iterations, "iterations", "n", d.Iterations, "instead of --duration: passes per thread (loop workloads) or rounds (rounds workloads)")
	fs.DurationVar(&s.Warmup, "warmup", d.Warmup, "run and discard this long before measuring (0 for none)")
	fs.IntVar(&s.Repetitions, "repetitions", d.Repetitions, "independent runs of the whole configuration, each with fresh workers")
	fs.StringVar(&s.Pin, "pin", d.Pin, "bind threads to CPUs: auto (a storm's ranks each on a CPU of its own when they fit, NUMA-local to the device first, as MPI launchers bind; other workloads unbound), cpu (every thread, round-robin) or none; --pin alone is cpu")
	fs.Lookup("pin").NoOptDefVal = string(host.PinCPU)
	fs.BoolVarP(&s.NoCPUCheck, "no-cpu-check", "F", d.NoCPUCheck, "record the CPUs' frequency governor, turbo/boost and busy SMT siblings without warning about them (perftest's -F)")
	fs.Int64Var(&s.Seed, "seed", d.Seed, "seed of each thread's QP order")
	fs.StringVar(&s.Out, "out", "", "output folder: new, empty, or an earlier run's (yours, not a symbolic link; as root, in a folder only root can write, or a sticky one), whose files alone are replaced (default runs/<UTC time>-<workload>-<provider>)")
	fs.StringVar(&s.SimSemantics, "sim-semantics", d.SimSemantics, "sim provider: legacy (ibv_reg_xrc_rcv_qp, a registrant per thread), legacy-mlnx (the same calls as MLNX_OFED implements them, a registrant per process: --threads 1) or upstream (ibv_open_qp)")
	const simCost = "sim provider: busy-wait per op, e.g. reg=2us,unreg=2us,destroy=200us; cmdq=N command-queue depth (default 31); lookup=list,scan=20ns for the kernel before 5.9"
	if sweep {
		fs.StringArrayVar(&f.simCosts, "sim-cost", nil, simCost+"; repeat the flag to sweep cost models: --sim-cost lookup=xarray --sim-cost lookup=list,scan=20ns")
	} else {
		fs.StringVar(&s.SimCost, "sim-cost", d.SimCost, simCost)
	}
	fs.StringVar(&s.QPState, "qp-state", d.QPState, "state the creator moves each QP to before anyone registers, timed as op kind modify: reset (none), init, or rtr (as MPI does)")
	fs.IntVar(&s.SimMaxQP, "sim-max-qp", d.SimMaxQP, fmt.Sprintf("sim provider: the device's capacity in live QPs (default %d)", verbs.DefaultSimMaxQPs))
	fs.DurationVar(&s.Interval, "interval", d.Interval, "interval of the .hlog timelines")
	fs.StringVar(&f.progress, "progress", progressAuto, "live progress on stderr: auto (on a terminal), always or never")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing but errors (the run folder is written as always)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "print the run's notices too (facts about how it was measured that do not change what its figures mean; summary.md lists them either way)")
	fs.BoolVar(&f.json, "json", false, "print the summary as one JSON document on stdout (status, folder, per op kind figures) in place of the table; progress and warnings stay on stderr")
	fs.StringArrayVar(&s.Labels, "label", nil, "key=value stored in result.json and shown in every report, e.g. fw=22.31.1014 (repeatable); compare --by KEY groups runs by it")
	fs.IntVar(&s.BatchOps, "batch-ops", d.BatchOps, "steps per op program; one call into C runs at most these (a program that leaves the registrations as it found them runs as a ring, call after call, until the interval ends)")
	fs.DurationVar(&s.BatchTime, "batch-time", d.BatchTime, "or about this much work per call, whichever is less; a ring looks at the clock and for a stop this often")
	fs.Float64Var(&s.Rate, "rate", d.Rate, "open loop: operations per second per thread, each with an intended start (0: closed loop, as fast as possible)")
	fs.Float64Var(&s.RateTotal, "rate-total", d.RateTotal, "open loop: operations per second of all threads together, spread evenly")
	fs.StringVar(&s.Arrival, "arrival", d.Arrival, "open loop: arrivals "+bench.ArrivalFixed+" (evenly spaced, the default) or "+bench.ArrivalPoisson+" (exponential gaps, seeded by --seed)")
	fs.DurationVar(&s.StallTimeout, "stall-timeout", d.StallTimeout, "stop the run when a worker sends nothing (no interval, no heartbeat) this long, naming it; 0: 10 intervals, at least 10s")
}

// checkOutput checks --progress.
func (f *runFlags) checkOutput() error {
	switch f.progress {
	case progressAuto, progressAlways, progressNever:
		return nil
	}
	return usagef("--progress %q: want auto, always or never", f.progress)
}

// watch connects a progress view to the engine's options.
func (f *runFlags) watch(opts *bench.Options, stderr io.Writer, cfg bench.Config, label string) *progressView {
	v := newProgressView(stderr, f.progress, f.quiet, cfg.Kinds(), label)
	opts.Stderr, opts.Progress, opts.Quiet, opts.Verbose = v, v.update, f.quiet, f.verbose
	return v
}

// config builds the engine configuration of one point (run's, or one of
// a sweep's) through bench.Settings, the one path every description of a
// run takes, whose rules (bench.Config.Validate) check it: errors are
// usage errors, except a provider that is not available here (a
// failure). Only what the settings cannot say is checked here: which
// flags were given (givenFlags).
func (f *runFlags) config(fs *pflag.FlagSet, procs, threads, qps, nodes int) (bench.Config, error) {
	if err := providerAvailable(f.s.Provider); err != nil {
		return bench.Config{}, err
	}
	spec, err := workloads.Get(f.s.Workload)
	if err != nil {
		return bench.Config{}, usageError{err}
	}
	if err := f.givenFlags(fs, spec); err != nil {
		return bench.Config{}, err
	}
	s := f.s
	s.Procs, s.Threads, s.QPs, s.Nodes = procs, threads, qps, nodes
	cfg, err := s.Config()
	if err != nil {
		return bench.Config{}, usageError{err}
	}
	if err := checkDevice(cfg); err != nil {
		return bench.Config{}, err
	}
	return cfg, nil
}

// registerPath adds -i/--ib-port and -x/--gid-index, perftest's flags,
// as run, sweep, conform and qualify take them.
func registerPath(fs *pflag.FlagSet, port, gid *int) {
	d := bench.Defaults()
	fs.IntVarP(port, "ib-port", "i", d.IBPort, "port QPs are moved through (rdma, legacy; as perftest's -i); 0: the first ACTIVE port (xrcbench devices lists the ports)")
	fs.IntVarP(gid, "gid-index", "x", d.GIDIndex, "GID table entry of the port RTR addresses (rdma, legacy; as perftest's -x); -1: on RoCE the first RoCE v2 entry, on InfiniBand none (the LID); xrcbench devices lists each port's GIDs")
}

// pathChoice checks --ib-port and --gid-index for conform and qualify
// (run's go through bench.Settings), and that the device has them: the
// GID index as verbs.Options takes it, or a usage error.
func pathChoice(provider, device string, port, gidIndex int) (*int, error) {
	gid, err := bench.PathChoice(provider, port, gidIndex)
	if err != nil {
		return nil, usageError{err}
	}
	return gid, checkPath(provider, device, verbs.QPRTR, port, gid)
}

// checkPath opens the device once with the port and GID index the user
// chose, so one the device lacks (no such port, a port that is not
// ACTIVE, an index past the GID table) is bad input, said in one line
// before anything runs. Any other failure to open is the run's to report.
func checkPath(provider, device string, state verbs.QPState, port int, gid *int) error {
	if port == 0 && gid == nil {
		return nil
	}
	dev, err := verbs.Open(verbs.Options{Provider: provider, Device: device, QPState: state, Port: port, GIDIndex: gid})
	if errors.Is(err, verbs.ErrBadPath) {
		return usageError{err}
	}
	if err == nil {
		dev.Close()
	}
	return nil
}

// checkDevice opens run's device once, before anything is written, so a
// configuration it cannot run is bad input said in one line (exit 2): a
// device name none has, a port or GID index it lacks, threads of one
// process sharing MLNX_OFED's per-process registration. Any other failure
// to open, and a device without XRC, is the run's to report.
func checkDevice(cfg bench.Config) error {
	if cfg.Provider != "rdma" && cfg.Provider != "legacy" {
		return nil
	}
	dev, err := verbs.Open(verbs.Options{Provider: cfg.Provider, Device: cfg.Device, QPState: cfg.QPState, Port: cfg.IBPort, GIDIndex: cfg.GIDIndex})
	if errors.Is(err, verbs.ErrBadPath) || errors.Is(err, verbs.ErrNoSuchDevice) {
		return usageError{err}
	}
	if err != nil {
		return nil
	}
	defer dev.Close()
	if !dev.Info().XRC {
		// Left to the run, which writes a failed result that names the
		// device (make vmtest holds soft-RoCE to that).
		return nil
	}
	if err := bench.DeviceRefusal(cfg, dev.Info()); err != nil {
		return usageError{err}
	}
	return nil
}

// checkProvider refuses a provider name xrcbench does not know (bad
// usage), and one it knows but this machine lacks. The latter is not bad
// input: the same command works elsewhere, so it is a failure (exit 1),
// as conform and devices say too.
func checkProvider(name string) error {
	if !verbs.IsProvider(name) {
		return usagef("unknown provider %q: want one of %s", name, bench.ProviderNames())
	}
	return providerAvailable(name)
}

// providerAvailable refuses a provider xrcbench knows but this machine
// lacks (exit 1); any other name is left to the rules of a run
// (bench.Config.Validate) or to checkProvider.
func providerAvailable(name string) error {
	for _, p := range verbs.Providers() {
		if p.Name == name && !p.Available {
			return failure{err: fmt.Errorf("provider %s is not available here: %s", p.Name, p.Reason)}
		}
	}
	return nil
}

// givenFlags refuses what only the flag set can tell, not the settings
// it fills in, whose defaults are values: --iterations, given, counts
// instead of --duration, so not with it, and not 0 passes (Settings read
// an Iterations of 0 as "by --duration", and a negative count is the
// rules'); a storm measures one storm per repetition on the QPs its plan
// makes, so --duration, --iterations, --warmup and --qps given to it do
// not apply (Settings.Config sets them for a storm).
func (f *runFlags) givenFlags(fs *pflag.FlagSet, spec *workloads.Spec) error {
	switch {
	case fs.Changed("duration") && fs.Changed("iterations"):
		return usagef("give --duration or --iterations, not both")
	case fs.Changed("iterations") && f.s.Iterations == 0:
		return usagef("--iterations 0: want a positive number")
	case spec.Mode != workloads.StormMode:
		return nil
	}
	for _, name := range []string{"duration", "iterations", "warmup", "qps"} {
		if fs.Changed(name) {
			return usagef("--%s does not apply to the storm workload %s: it runs one storm per repetition, on (nodes-1) x ranks x rails QPs", name, spec.Name)
		}
	}
	return nil
}

func defaultOut(kind string, spec *workloads.Spec, provider string) string {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	return filepath.Join("runs", fmt.Sprintf("%s-%s%s-%s", stamp, kind, spec.Name, provider))
}

// engineOptions start workers as this very image, re-executed through
// /proc/self/exe: by its path (os.Executable), a binary replaced during
// the run measured the later repetitions, and a deleted one failed them.
func engineOptions(stderr io.Writer) (bench.Options, error) {
	if _, err := os.Stat(bench.SelfExe); err != nil {
		return bench.Options{}, fmt.Errorf("finding the xrcbench image to start workers (is /proc mounted?): %w", err)
	}
	return bench.Options{WorkerExe: bench.SelfExe, WorkerArgs: []string{workerCommand}, Stderr: stderr}, nil
}

// stopSignals stop a run, a sweep or a qualification as ^C does. SIGHUP
// is there because a run started over ssh gets it when the connection
// drops, and by default it killed the coordinator with nothing written
// and its .lock and temporary folder left behind; SIGQUIT, because Go's
// default for it is a goroutine dump and the same leftovers.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// interruptible is a context cancelled by the first of stopSignals, so a
// stopped run still stops its workers and writes a partial result. A
// second one exits at once: the workers die with their coordinator
// (PR_SET_PDEATHSIG), and nothing more is written.
func interruptible(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "xrcbench: %v: stopping, keeping what was measured (again to quit at once)\n", s)
			cancel(fmt.Errorf("%v", s))
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "xrcbench: %v again: stopped at once; the workers are killed, nothing more is written\n", s)
			os.Exit(exitFailed)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

func init() {
	subcommands = append(subcommands, func(stdout, stderr io.Writer) *cobra.Command {
		var f runFlags
		var fleet fleetFlags
		cmd := &cobra.Command{
			Use:   "run",
			Short: "Run one benchmark configuration and write a run folder",
			Long: `run times the workload's XRC registrations on --procs processes x --threads
OS threads, each thread its own registrant, prints a summary table and writes
a run folder (result.json, one .hlog per op kind, summary.md, bench.txt).

Every repetition starts fresh workers on a fresh device, after a warm-up that
is run and discarded. The run folder holds result.json (schema
xrcbench.result/v1), one HdrHistogram interval log per op kind (<kind>.hlog),
summary.md (the summary table, for CI job summaries) and bench.txt (Go
benchmark format, for benchstat); xrcbench report adds report.html and plots/.

--qp-state (default rtr, as Open MPI and MVAPICH2 do) is the state each QP is
moved to by its creator before anyone registers with it: init sets the port,
pkey index and access flags; rtr also a loopback path on the same port (its
LID, or a GID on RoCE), the path MTU and a destination QP number (a local XRC
send QP made for it). The move is timed as its own op kind, modify, and a QP
destroyed out of INIT or RTR is reset first by the driver, which its last
unreg pays. reset moves nothing. rtr needs an ACTIVE port with an address: on
a port without one, use --qp-state init. On the sim, --sim-cost modify=...
(per transition) and reset=... model those costs.

On a terminal, stderr shows the progress live (repetition, warm-up or
measuring, time or iterations left, per op kind ops/s, p50, p99 and errors so
far); elsewhere (CI, pipes) it shows none, and one line per repetition when
there are several. --quiet prints nothing but errors.

^C (or SIGTERM, SIGHUP, SIGQUIT) stops the run at once, warm-up included: threads end their current pass or
round (within a second; workers still busy then are killed, and what they
reported interval by interval is kept) and the result keeps what was measured
(status partial). A repetition whose workers were not all ready yet is
dropped; if that was the first, nothing was measured and the status is
failed. A second ^C exits at once, killing the workers and writing nothing.

--out must be a new or empty folder, or an earlier run's: then only the files
that run (and report on it) wrote are replaced, and anything else in it
stays. A folder that holds other files is refused, as is one another run is
writing (the error names its pid). The folder appears, or changes, only when
the run is complete.

A worker that sends nothing for --stall-timeout (no interval report, no
heartbeat: stopped with SIGSTOP, wedged) is named with its pid and state,
killed, and the run stopped as by ^C: status partial, exit 1.

--fleet makes the run one node's of a fleet: started on every node by the
cluster's launcher (srun --ntasks-per-node=1, mpirun -npernode 1), it reads
the launcher's environment (Slurm's SLURM_JOB_ID, SLURM_PROCID, SLURM_NNODES,
SLURMD_NODENAME; Open MPI's OMPI_COMM_WORLD_*; PMIx's PMIX_RANK), writes its
run folder under --out/<node>/ and records job id, node, rank and node count
in result.json (fleet). A second task on a node is refused (exit 2), as is
--fleet outside a launcher or a fleet of more than 65536 nodes (SLURM_NNODES,
SLURM_JOB_NODELIST, OMPI_COMM_WORLD_SIZE). --fleet-sync[=DEADLINE] makes the
nodes meet at a barrier in --out (default deadline 5m; the error names the
nodes that never arrived) and start at one wall-clock time, 2s after the last
arrival; each node records its clock's offset to the shared folder's. The
barrier's folder, --out/.fleet-sync-<job>, must be the user's own and not a
link; links and anything but regular files in it are ignored. xrcbench report
--fleet DIR then compares the nodes.

--rate and --rate-total (open loop) lower than the time asked holds still end
on time: a loop workload's thread does not wait for an arrival due after the
end of --duration or --warmup (--rate 0.05 in a 300ms run measures the one
operation due at its start). A rate too low for what must run to its end is
refused (exit 2), naming the smallest that fits: --iterations beyond 7 days
at one arrival each, or a rounds workload whose first arrival after the start
lies past the end of --duration or --warmup. Below one arrival a thread per
week (1.66e-06/s) a rate is refused whatever the run.

What a latency figure contains (the call and one clock read, chained in C) and
what is not timed: docs/design.md, "Measurement method".

Exit status: 0 ok; 1 the run failed (result.json still written, status partial
or failed, the error names the worker); 2 bad usage or input.`,
			Example: `  # registration under contention: 2 processes x 2 threads on 16 shared QPs
  xrcbench run --workload steady --procs 2 --threads 2 --qps 16 --duration 10s

  # destruction made visible: the last unreg pays a 200us destroy
  xrcbench run --workload lifecycle --procs 2 --threads 2 \
      --sim-cost reg=2us,unreg=2us,destroy=200us --duration 10s --out runs/lifecycle

  # destruction of QPs left in RESET, as older versions measured it
  xrcbench run --workload lifecycle --qp-state reset --sim-cost destroy=200us,reset=50us

  # exactly 1000 rounds, 5 independent repetitions, threads pinned
  xrcbench run --workload lifecycle --iterations 1000 --repetitions 5 --pin

  # labelled with the firmware under test, for compare --by fw later
  xrcbench run --provider rdma --workload steady --repetitions 5 --label fw=22.31.1014 --label board=b7

  # an MPI job's wiring storm: 128 nodes, 16 ranks on this node, 2 rails
  # (4064 receive QPs, each created once and registered 15 times)
  xrcbench list --show storm | sed 's/rails: 1/rails: 2/' > storm2.yaml
  xrcbench run --workload ./storm2.yaml --nodes 128 --procs 16 \
      --sim-cost create=100us,reg=10us --repetitions 5

  # the harness's own overhead
  xrcbench run --provider null --workload steady --qps 256 --duration 5s

  # one run per node of a Slurm job, all starting together, into a shared folder
  srun -N 64 --ntasks-per-node=1 xrcbench run --fleet --fleet-sync \
      --provider rdma --workload lifecycle --out /shared/runs/fw-22.41

  # a workload of your own, starting from a built-in's spec
  xrcbench list --show steady > mine.yaml
  xrcbench run --workload ./mine.yaml`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := f.checkOutput(); err != nil {
					return err
				}
				failed := func(err error) error {
					return jsonBeforeStart(stdout, f.json, func() any { return newRunJSON(f.s.Out, nil, false, err) }, err)
				}
				cfg, err := f.config(cmd.Flags(), f.s.Procs, f.s.Threads, f.s.QPs, f.s.Nodes)
				if err != nil {
					return failed(err)
				}
				opts, err := engineOptions(stderr)
				if err != nil {
					return failed(failure{err: err})
				}
				if err := fleet.apply(cmd, &cfg, &opts, os.Getenv); err != nil {
					return failed(err)
				}
				if cfg.Out == "" {
					cfg.Out = defaultOut("", cfg.Workload, cfg.Provider)
				}
				ctx, cancel := interruptible(stderr)
				defer cancel()
				if !f.json {
					_, err := runOne(ctx, stdout, cfg, opts, f.watch(&opts, stderr, cfg, ""))
					return err
				}
				res, err := runOne(ctx, io.Discard, cfg, opts, f.watch(&opts, stderr, cfg, ""))
				if errors.As(err, new(usageError)) {
					return err
				}
				jerr := writeJSON(stdout, newRunJSON(cfg.Out, res, !errors.As(err, new(*runfolder.NotWrittenError)), err))
				return cmp.Or(err, jerr)
			},
		}
		f.register(cmd.Flags(), false)
		fleet.register(cmd.Flags())
		return cmd
	})
}

// runOne runs cfg, prints the summary, writes the run folder's summary.md
// and bench.txt, and maps the outcome to an exit; the result is the
// engine's (nil when it had none).
func runOne(ctx context.Context, stdout io.Writer, cfg bench.Config, opts bench.Options, view *progressView) (*results.Result, error) {
	view.start(cfg.Repetitions)
	res, err := bench.Run(ctx, cfg, opts)
	view.finish()
	var nw *runfolder.NotWrittenError
	errors.As(err, &nw)
	if res != nil {
		where := "run folder: " + cfg.Out
		if nw != nil {
			// The folder holds the earlier run, or nothing: no summaries.
			where = oneLine(nw.Error())
		} else if serr := report.WriteSummaries(cfg.Out); serr != nil && !opts.Quiet {
			fmt.Fprintln(view, "warning: "+oneLine(serr.Error()))
		}
		if !opts.Quiet {
			printSummary(stdout, res, where)
			// run's default is one repetition, which compare refuses:
			// said where a person looks, once the run is over.
			if note := report.TooFewRepetitions(res); note != "" && nw == nil && res.Status == results.StatusOK {
				fmt.Fprintln(view, "note: "+note)
			}
		}
	}
	if err != nil {
		var re *bench.RunError
		switch {
		case errors.Is(err, runfolder.ErrOutFolder):
			return res, usageError{err}
		case nw != nil:
			return res, failure{err: fmt.Errorf("run %s: %w", res.Status, err)}
		case errors.As(err, &re):
			return res, failure{err: fmt.Errorf("run %s: %w (result.json written to %s)", re.Status, err, cfg.Out)}
		}
		return res, failure{err: err}
	}
	return res, nil
}

// printSummary is the compact table of a run.
func printSummary(w io.Writer, r *results.Result, where string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Intended failures (the errors workload's EINVAL) get a column of
	// their own: "errors" counts unexpected outcomes only.
	expected := false
	for kind, s := range r.Ops {
		if _, _, ok := report.ExpectedFailures(kind, s); ok {
			expected = true
		}
	}
	// An open loop leads with its rate verdict and the response time,
	// what a caller waited, as wrk2 does; the service time follows. A
	// saturated run's service p50 alone once read as a fast device.
	ol := r.OpenLoop
	if ol != nil {
		fmt.Fprintf(w, "open loop: %.0f ops/s requested (%s arrivals), %.0f achieved", ol.RequestedOpsPerSec, ol.Arrival, ol.AchievedOpsPerSec)
		if ol.Saturated {
			fmt.Fprintf(w, ": SATURATED, the device could not keep up (last operation %s behind its intended start); the response times are the backlog's", ns(ol.BacklogEndNS))
		}
		fmt.Fprintln(w)
	}
	head := "op\tcount\terrors\t"
	if expected {
		head += "expected\t"
	}
	if ol != nil {
		head += "ops/s\tresp p50\tresp p99\tresp p99.9\tresp max\tsvc p50\tsvc p99\t"
	} else {
		head += "ops/s\tp50\tp99\tp99.9\tmax\t"
	}
	fmt.Fprintln(tw, head)
	for _, kind := range results.OpKinds {
		s, ok := r.Ops[kind]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t", kind, s.Count, s.Errors)
		if expected {
			exp := "–"
			if errno, n, ok := report.ExpectedFailures(kind, s); ok {
				exp = fmt.Sprintf("%s: %d", errno, n)
			}
			fmt.Fprintf(tw, "%s\t", exp)
		}
		if ol != nil && s.ResponseNS != nil {
			rs := s.ResponseNS
			fmt.Fprintf(tw, "%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.OpsPerSec,
				ns(rs.P50), ns(rs.P99), ns(rs.P999), ns(rs.Max), ns(s.NS.P50), ns(s.NS.P99))
			continue
		}
		if ol != nil {
			fmt.Fprintf(tw, "%.0f\t–\t–\t–\t–\t%s\t%s\t\n", s.OpsPerSec, ns(s.NS.P50), ns(s.NS.P99))
			continue
		}
		fmt.Fprintf(tw, "%.0f\t%s\t%s\t%s\t%s\t\n", s.OpsPerSec,
			ns(s.NS.P50), ns(s.NS.P99), ns(s.NS.P999), ns(s.NS.Max))
	}
	tw.Flush()
	if st := r.Storm; st != nil {
		fmt.Fprintln(w, report.StormLine(st))
	}
	fmt.Fprintf(w, "status %s, start skew %s, timer %s (%.0fns per read)", r.Status,
		ns(r.Harness.StartSkewNS), r.Harness.Timer, r.Harness.TimerOverheadNS)
	if r.Leaks != nil {
		switch {
		case !r.Leaks.Checked:
			fmt.Fprintf(w, ", leak check: not done (%s)", r.Leaks.Detail)
		case len(r.Leaks.Leaked) == 0:
			fmt.Fprintf(w, ", no QP leaked")
		default:
			fmt.Fprintf(w, ", %d QP(s) LEAKED", len(r.Leaks.Leaked))
		}
	}
	fmt.Fprintf(w, "\n%s\n", where)
}

// ns formats nanoseconds for a table: 850ns, 2.13µs, 201µs, 1.50ms.
func ns(v int64) string {
	d := time.Duration(v)
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", v)
	case d < 10*time.Microsecond:
		return fmt.Sprintf("%.2fµs", float64(v)/1e3)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(v)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(v)/1e6)
	}
	return fmt.Sprintf("%.2fs", float64(v)/1e9)
}
