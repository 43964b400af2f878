package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/internal/runfolder"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Config is one benchmark configuration: what `xrcbench run` was asked.
type Config struct {
	Provider    string
	Device      string
	Workload    *workloads.Spec
	WorkloadArg string // as given: a built-in name or a file
	Procs       int
	Threads     int // per process
	QPs         int // per round (rounds), shared set, or per thread (per_thread scope)
	Duration    time.Duration
	Iterations  int64 // passes (loop) or rounds (rounds); 0: use Duration
	Warmup      time.Duration
	Repetitions int
	Pin         host.Placement // "" is host.PinAuto
	// NoCPUCheck records the CPUs' setup without judging it (the CPU
	// check's warnings, internal/host/cpucheck.go); it changes nothing measured.
	NoCPUCheck   bool
	Seed         int64
	Interval     time.Duration // of the .hlog timelines
	SimSemantics verbs.Semantics
	SimCost      verbs.Cost
	// QPState is the state the creator moves each QP it creates to
	// before anyone registers (production: RTR), timed as op kind
	// modify. The zero value, reset, moves nothing.
	QPState verbs.QPState
	// IBPort and GIDIndex are the port and GID table entry the rdma and
	// legacy providers move QPs through (--ib-port, --gid-index); 0 and
	// nil are automatic (verbs.Options).
	IBPort   int
	GIDIndex *int
	// SimMaxQPs is the sim device's capacity in live QPs; 0 is
	// verbs.DefaultSimMaxQPs.
	SimMaxQPs int
	// Nodes is a storm's node count (mode storm); 0 takes the workload's.
	Nodes int
	// Op programs: at most BatchOps steps per C call, about BatchTime of
	// work (a ring: the time between its looks at the clock and a stop).
	// Run reads 0 as DefaultBatchOps, DefaultBatchTime (Config.defaults);
	// Validate, as run's flags, refuses 0: Settings always state them.
	BatchOps  int
	BatchTime time.Duration
	// Open loop: Rate operations per second per thread, or RateTotal
	// spread over all threads, arriving per Arrival (ArrivalFixed or
	// ArrivalPoisson, seeded by Seed); both 0: a closed loop.
	Rate        float64
	RateTotal   float64
	Arrival     string
	Out         string // run folder, created
	CommandLine []string
	// Fleet, when set, is this node's place in a fleet run: recorded in
	// the result as it is.
	Fleet *results.Fleet
	// StallTimeout: a worker that sends nothing (no interval, no
	// heartbeat) for this long is stalled, and the run is stopped. 0 is
	// DefaultStallTimeout.
	StallTimeout time.Duration
	// Labels are the user's key=value labels, written to result.json.
	Labels map[string]string
}

// DefaultStallTimeout is the stall timeout for an interval: ten intervals,
// at least 10s, so a busy machine does not pass for a stalled worker.
func DefaultStallTimeout(interval time.Duration) time.Duration {
	return max(10*interval, 10*time.Second)
}

func (c *Config) stallTimeout() time.Duration {
	if c.StallTimeout > 0 {
		return c.StallTimeout
	}
	return DefaultStallTimeout(c.Interval)
}

// Limits of a configuration, to refuse what cannot run before starting.
const (
	MaxProcs   = 1024
	MaxThreads = 1024
	MaxQPs     = 1 << 16
	// Times: far beyond any sensible benchmark, and far below what would
	// overflow a deadline (CLOCK_MONOTONIC ns in 64 bits).
	MaxDuration     = 7 * 24 * time.Hour
	MaxWarmup       = time.Hour
	MaxInterval     = time.Hour
	MinInterval     = time.Millisecond
	MaxStallTimeout = 24 * time.Hour
	// MaxSimQPs is the largest sim device --sim-max-qp makes (its file
	// grows with it).
	MaxSimQPs   = 1 << 20
	MaxBatchOps = 1 << 20
	MaxRate     = 1e9 // operations per second: one per ns
	// MinRate is the slowest open loop a thread may run: one arrival per
	// MaxDuration, the longest run. A gap longer than that is never
	// reached, and a far longer one (1e9/rate ns past 2^63, below about
	// 1.1e-10/s) wrapped in the schedule's integer arithmetic and ran as
	// a closed loop.
	MinRate = 1e9 / float64(MaxDuration)
)

// threadRate is the open loop's rate per thread, 0 in a closed loop.
func (c *Config) threadRate() float64 {
	if c.RateTotal > 0 {
		return c.RateTotal / float64(c.Procs*c.Threads)
	}
	return c.Rate
}

// histKinds names the run's histograms: one per op kind, and in an open
// loop one more per kind for the response times.
func (c *Config) histKinds() []string {
	kinds := c.Kinds()
	if c.threadRate() > 0 {
		for _, k := range c.Kinds() {
			kinds = append(kinds, k+results.ResponseSuffix)
		}
	}
	return kinds
}

func (c *Config) arrival() string {
	if c.Arrival == "" && c.threadRate() > 0 {
		return ArrivalFixed
	}
	return c.Arrival
}

// threadCPUs is the run's placement on this machine, for a device on NUMA
// node numa (-1: unknown): see host.ThreadCPUs.
func (c *Config) threadCPUs(numa int) []int {
	return host.ThreadCPUs(c.placement(), c.Workload.Mode, c.Procs*c.Threads, host.AllowedCPUs(), host.NodeCPUs(numa))
}

func (c *Config) placement() host.Placement {
	if c.Pin == "" {
		return host.PinAuto
	}
	return c.Pin
}

// Options are how the engine starts its workers and where it talks.
type Options struct {
	// WorkerExe, WorkerArgs and WorkerEnv start a worker process: the
	// xrcbench binary with its hidden worker subcommand, or a test binary.
	WorkerExe  string
	WorkerArgs []string
	WorkerEnv  []string
	// Stderr receives the workers' stderr, each line prefixed with the
	// worker, and the run's warnings.
	Stderr io.Writer
	// Quiet keeps the warnings off Stderr (they stay in the result).
	Quiet bool
	// Verbose shows the notices on Stderr too: facts about how the run
	// was measured that do not change what its figures mean (they are in
	// the result and its summary either way).
	Verbose bool
	// Progress, when set, is told how each repetition is going: about
	// once a second and at each change of phase (see Progress). It is
	// called from the engine's own goroutine and must return quickly.
	Progress func(Progress)
	// TempDir is the parent of the run's private directory, used as is;
	// "" lets the engine choose a memory file system (see runfolder.OpenPrivDir).
	TempDir string
	// BeforeStart, when set, runs once the output folder is locked and
	// before the first worker starts (a fleet's barrier). It may fill in
	// the result; an error fails the run, which still writes its result.
	BeforeStart func(ctx context.Context, res *results.Result) error
}

// RunError is a run that failed after it started; the result was still
// written with status partial or failed.
type RunError struct {
	Status string
	Err    error
}

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Run runs the configuration and writes the run folder: result.json and
// one .hlog per op kind. A failed run still writes its result and returns
// it with a *RunError.
//
// The story: check the configuration, claim the output folder and a
// private directory, say the warnings known before the start, run the
// repetitions, then judge what they measured (status, warnings) and write
// it, failed or not.
func Run(ctx context.Context, cfg Config, opts Options) (*results.Result, error) {
	if err := prepareRun(&cfg, &opts); err != nil {
		return nil, err
	}
	// Before anything else runs: the runtime's threads must not spin at a
	// real-time priority (internal/host/realtime.go).
	rt := host.StartRealTime()
	runID := results.NewRunID()
	rf, err := runfolder.Open(cfg.Out, runID)
	if err != nil {
		return nil, err
	}
	rf.Tell(opts.Quiet, opts.Stderr)
	committed := false
	defer func() {
		if !committed {
			rf.Discard()
		}
	}()
	priv, err := runfolder.OpenPrivDir(opts.TempDir, cfg.Repetitions)
	if err != nil {
		return nil, err
	}
	defer priv.Remove()

	c := &coordinator{cfg: cfg, opts: opts, priv: priv.Path}
	res := c.newResult(runID, rt.String())
	if c.logs, err = newHlogs(rf.TmpDir(), runID, cfg.histKinds(), res.Started, cfg.Interval); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	// What is known before the start is said before the start, once.
	early := StartWarnings(cfg)
	c.warn(early, nil)

	fw := host.SnapshotFirmware(verbs.Options{Provider: cfg.Provider, Device: cfg.Device})
	c.ticks = host.ReadCPUTicks() // the CPU check's start: how busy SMT siblings were
	runErr := c.preflight(ctx, res, fw)
	var done []*repOutcome
	if runErr == nil {
		done, runErr = c.repetitions(ctx, res)
	}
	files, err := c.keepLogs(res, len(done) > 0)
	runErr = alsoFailed(runErr, err)
	c.describeEnvironment(res, fw)
	if d := res.Environment.Device; d != nil && d.TestDouble {
		// What the workers measured with: this process's environment
		// and what the options add to it (coordinator.go).
		res.Config.CommandEnv = MeasuredEnv(append(os.Environ(), opts.WorkerEnv...))
	}
	if err := assemble(res, done, cfg); err != nil {
		runErr = errors.Join(runErr, err)
	}
	res.Finished = time.Now().UTC()
	runErr = alsoFailed(runErr, unexpectedOutcomes(res.Ops))
	res.Status, res.Error = runStatus(runErr, len(done))
	res.Warnings = append(res.Warnings, resultWarnings(res, &cfg, priv)...)
	c.warn(res.Warnings, early)
	res.Files = append(files, results.FileName)
	committed, err = rf.Write(res, cfg.Out)
	rf.Tell(opts.Quiet, opts.Stderr)
	if err != nil {
		return res, err
	}
	if runErr != nil {
		return res, &RunError{Status: res.Status, Err: runErr}
	}
	return res, nil
}

// threadsShareQPs reports whether two threads of one process register the
// same QP in spec. Where the process is the registrant (MLNX_OFED's legacy
// layer) they would share one registration, and every reg after the first
// would be EEXIST, so such a run needs one thread per process; a loop on
// each thread's own QPs (sharded, churn), or one whose regs all fail by
// design (errors), has one registering thread per QP as it is.
func threadsShareQPs(spec *workloads.Spec) bool {
	if spec == nil || spec.Mode != workloads.Loop {
		return true // rounds hand QPs between threads; a storm's ranks share theirs
	}
	if spec.QPs.Scope == workloads.PerThread {
		return false
	}
	for _, p := range spec.Phases {
		if p.Op != workloads.OpRegInvalid && p.Op != workloads.OpRegForeign {
			return true
		}
	}
	return false
}

// defaults fills in what a Config may leave to the engine: a storm's
// time and QPs, and the op programs' batch (0: DefaultBatchOps,
// DefaultBatchTime), so that a Config built in code runs as the flags'
// defaults do. Settings state both, and Validate refuses a 0 from them.
func (c *Config) defaults() {
	c.StormDefaults()
	c.BatchOps = cmp.Or(c.BatchOps, DefaultBatchOps)
	c.BatchTime = cmp.Or(c.BatchTime, DefaultBatchTime)
}

// prepareRun fills in the defaults of the configuration and options and
// refuses what cannot run.
func prepareRun(cfg *Config, opts *Options) error {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.WorkerExe == "" {
		return errors.New("bench: no worker executable")
	}
	if err := host.CheckAddressSpace(); err != nil {
		return err
	}
	return host.CheckProcesses()
}

// warn prints warnings on stderr, but none of those already said, and
// nothing when quiet.
func (c *coordinator) warn(warnings, said []results.Warning) {
	if c.opts.Quiet {
		return
	}
	// Said once each, notices only when asked for (-v), a kind's warnings
	// folded into one line of bounded length (results.TerminalLines):
	// summary.md, written beside result.json, says them in full.
	var warn, notice []results.Warning
	for _, w := range warnings {
		switch {
		case slices.Contains(said, w):
		case w.Severity == results.SeverityNotice:
			notice = append(notice, w)
		default:
			warn = append(warn, w)
		}
	}
	for _, l := range results.TerminalLines(warn, results.SeverityWarning, results.SummaryDetail) {
		fmt.Fprintln(c.opts.Stderr, l)
	}
	if c.opts.Verbose {
		for _, l := range results.TerminalLines(notice, results.SeverityNotice, results.SummaryDetail) {
			fmt.Fprintln(c.opts.Stderr, l)
		}
	}
}

// preflight is what must hold before any worker starts: a device with
// XRC, and the caller's BeforeStart (a fleet's barrier).
func (c *coordinator) preflight(ctx context.Context, res *results.Result, fw *host.Firmware) error {
	if fw.Taken {
		if err := DeviceRefusal(c.cfg, fw.Info); err != nil {
			return err
		}
	}
	if c.opts.BeforeStart != nil {
		return c.opts.BeforeStart(ctx, res)
	}
	return nil
}

// DeviceRefusal says why cfg cannot run on the device info describes, or
// nil: the CLI asks it before anything is written (bad input, exit 2), and
// the run again once it has the device (the run's own error).
func DeviceRefusal(cfg Config, info verbs.DeviceInfo) error {
	if !info.XRC {
		// A device named on purpose opens without XRC (conform's S11
		// needs that), but a run on it measures nothing (soft-RoCE under
		// make vmtest).
		return fmt.Errorf("device %s lacks XRC (IBV_DEVICE_XRC is not in its device_cap_flags), so there is nothing to measure on it; "+
			"xrcbench devices lists which devices have it", info.Name)
	}
	if info.Registrant == verbs.RegistrantProcess && cfg.Threads > 1 && threadsShareQPs(cfg.Workload) {
		// MLNX_OFED's legacy layer keeps one handle per QP number per
		// process: threads of one registering the same QP would share one
		// registration, and every reg but the first would be EEXIST. One
		// thread per process is one registrant each, as the workloads
		// assume.
		return fmt.Errorf("the legacy API here is MLNX_OFED's compatibility layer (mlnx-compat), where a process is one registrant, "+
			"so the %d threads of a process would share one registration of each QP %s shares; run one thread per process: --threads 1 --procs %d",
			cfg.Threads, cfg.Workload.Name, cfg.Procs*cfg.Threads)
	}
	return nil
}

// repetitions runs the repetitions in turn until one fails. Each one's
// warnings, leaks and workers go into res, whatever became of it; those
// that measured are returned, to be assembled.
func (c *coordinator) repetitions(ctx context.Context, res *results.Result) ([]*repOutcome, error) {
	var done []*repOutcome
	for i := 0; i < c.cfg.Repetitions; i++ {
		rep, err := c.repetition(ctx, i)
		if rep != nil {
			if rep.info.Name != "" && res.Environment.Provider == "" {
				res.Environment = host.Environment(rep.info)
			}
			res.Warnings = append(res.Warnings, rep.warnings...)
			res.Leaks = leaks.Merge(res.Leaks, rep.leaks)
			res.Workers = mergeWorkers(res.Workers, rep)
			if rep.measured {
				done = append(done, rep)
			}
		}
		if err != nil {
			return done, fmt.Errorf("repetition %d: %w", i+1, err)
		}
	}
	return done, nil
}

// keepLogs closes the .hlog timelines and returns the files kept. Timelines
// that lost intervals would contradict the result: none is kept, and the
// error says why. A run that measured nothing keeps no empty ones.
func (c *coordinator) keepLogs(res *results.Result, measured bool) ([]string, error) {
	if err := c.logs.close(); err != nil {
		c.logs.remove()
		return nil, fmt.Errorf("writing the interval logs (.hlog), none kept: %w", err)
	}
	if !measured && c.logs.removeIfEmpty() {
		return nil, nil
	}
	res.Logs = c.logs.logs()
	var files []string
	for _, k := range c.cfg.Kinds() {
		files = append(files, k+".hlog")
	}
	return files, nil
}

// describeEnvironment completes the result's environment: when no worker
// described the device, the coordinator's own look at it, where it had
// one, still says what the run was on; then the firmware's snapshot.
func (c *coordinator) describeEnvironment(res *results.Result, fw *host.Firmware) {
	if res.Environment.Provider == "" {
		info := verbs.DeviceInfo{Provider: c.cfg.Provider, NUMANode: -1}
		if fw.Taken {
			info = fw.Info
		}
		res.Environment = host.Environment(info)
	}
	fw.Record(&res.Environment)
	if w, ok := res.Environment.Firmware.FailedWarning(); ok {
		res.Warnings = append(res.Warnings, w)
	}
	numa := -1
	if d := res.Environment.Device; d != nil {
		numa = d.NUMANode
	}
	cpus := host.PlaceCPUs(res.Environment.BOM, res.Workers, numa)
	for _, w := range res.Workers {
		res.Config.Pin = res.Config.Pin || len(w.CPUs) > 0
	}
	busy := host.CheckSiblings(res.Environment.BOM, cpus, c.ticks, host.ReadCPUTicks())
	if b := res.Environment.BOM; b != nil {
		if c.cfg.NoCPUCheck {
			b.CPU.Check = "off (--no-cpu-check)"
		} else {
			b.CPU.Check = "on"
			res.Warnings = append(res.Warnings, host.CPUCheckWarnings(b, busy)...)
		}
	}
}

// alsoFailed adds err to the run's error, if any: the first failure
// leads, the later ones follow it.
func alsoFailed(runErr, err error) error {
	switch {
	case err == nil:
		return runErr
	case runErr == nil:
		return err
	}
	return fmt.Errorf("%w; %w", runErr, err)
}

// unexpectedOutcomes is an error naming the op kinds with operations that
// had an unexpected outcome, and their errnos. Such an operation is an
// error of its kind: the device did not do what the workload measures, so
// the run fails (partial: the figures are kept, they are what happened).
func unexpectedOutcomes(ops map[string]results.OpStats) error {
	var unexpected []string
	for _, kind := range results.OpKinds {
		if s := ops[kind]; s.Errors > 0 {
			var why []string
			for _, name := range slices.Sorted(maps.Keys(s.ErrnoCounts)) {
				why = append(why, fmt.Sprintf("%s x%d", name, s.ErrnoCounts[name]))
			}
			unexpected = append(unexpected, fmt.Sprintf("%s %d of %d (%s)", kind, s.Errors, s.Count, strings.Join(why, ", ")))
		}
	}
	if len(unexpected) == 0 {
		return nil
	}
	return errors.New("operations with an unexpected outcome: " + strings.Join(unexpected, "; "))
}

// runStatus is the result's status and error text: a failed run that
// measured something is partial, one that measured nothing failed.
func runStatus(runErr error, measured int) (status, msg string) {
	switch {
	case runErr == nil:
		return results.StatusOK, ""
	case measured > 0:
		return results.StatusPartial, runErr.Error()
	}
	return results.StatusFailed, runErr.Error()
}

// resultWarnings are the warnings about what the figures mean, known once
// the run is over.
func resultWarnings(res *results.Result, cfg *Config, priv *runfolder.PrivDir) []results.Warning {
	var out []results.Warning
	if d := res.Environment.Device; d != nil && d.TestDouble {
		out = append(out, warnf(results.WarnTestDouble, 0, "", "these figures say nothing about an adapter", "measured through the libibverbs test double (%s), not RDMA hardware", res.Environment.ProviderDetail["libibverbs"]))
	}
	if !priv.OnMemory && cfg.Provider == "sim" && cfg.Warmup+cfg.Duration >= 30*time.Second {
		out = append(out, warnf(results.WarnSimOnDisk, 0, "", "once writeback cleans its pages (after 30 s by default), the first write to each faults into the file system inside an operation, adding microseconds; set TMPDIR to a memory file system such as /dev/shm", "the sim device lives on a disk file system (%s)", priv.Parent))
	}
	if res.Environment.Version == "unknown" {
		out = append(out, warnf(results.WarnVersionUnknown, 0, "", "the result cannot name the code that measured it; build with make build, which stamps the revision", "xrcbench version unknown: built without VCS information (-buildvcs=false)"))
	}
	if res.Leaks != nil && len(res.Leaks.Leaked) > 0 {
		out = append(out, warnf(results.WarnLeak, 0, "", "registrations were not undone, and the next run on this device starts beside them; see leaks in result.json and the device's QPs with xrcbench devices", "%d QP(s) outlived the run: %v", len(res.Leaks.Leaked), res.Leaks.Leaked))
	}
	return out
}

// newResult is the run's result before anything is measured: what was
// asked, and how the harness runs (scheduling: the real-time policy).
func (c *coordinator) newResult(runID, scheduling string) *results.Result {
	cfg := c.cfg
	r := &results.Result{
		Schema:  results.Schema,
		RunID:   runID,
		Started: time.Now().UTC(),
		Config: results.Config{
			CommandLine:  cfg.CommandLine,
			Workload:     cfg.WorkloadArg,
			WorkloadSpec: cfg.Workload.Source,
			WorkloadName: cfg.Workload.Name,
			Gates:        cfg.Workload.Gates,
			Headline:     cfg.Workload.Headline,
			Provider:     cfg.Provider,
			Device:       cfg.Device,
			Procs:        cfg.Procs,
			Threads:      cfg.Threads,
			QPs:          cfg.QPs,
			Duration:     results.Duration(cfg.Duration),
			Iterations:   int(cfg.Iterations),
			Warmup:       results.Duration(cfg.Warmup),
			Repetitions:  cfg.Repetitions,
			Placement:    string(cfg.placement()),
			Seed:         cfg.Seed,
			Interval:     results.Duration(cfg.Interval),
			QPState:      cfg.QPState.String(),
			BatchOps:     nonDefault(cfg.BatchOps, DefaultBatchOps),
			BatchTime:    results.Duration(nonDefault(cfg.BatchTime, DefaultBatchTime)),
			Rate:         cfg.threadRate(),
			Arrival:      cfg.arrival(),
		},
		Harness: results.Harness{
			// Replaced by the threads' own measurements when they report.
			Timer:           verbs.TimerName,
			Scheduling:      scheduling,
			TimerOverheadNS: verbs.TimerOverheadNS(),
			Warmup:          results.Duration(cfg.Warmup),
			Repetitions:     cfg.Repetitions,
			// No BatchSize: batches vary by phase (a thread takes only its
			// share of the QPs); OpStats.Batches records what was run.
		},
		Ops:    map[string]results.OpStats{},
		Labels: cfg.Labels,
	}
	if cfg.Fleet != nil {
		f := *cfg.Fleet // the barrier fills in the result's copy
		r.Fleet = &f
	}
	if r.Config.Workload == "" {
		r.Config.Workload = cfg.Workload.Name
	}
	if cfg.Provider == "sim" {
		r.Config.ProviderOpts = map[string]string{"sim_semantics": string(cfg.semantics())}
		if s := cfg.SimCost.String(); s != "" {
			r.Config.ProviderOpts["sim_cost"] = s
		}
		if cfg.SimMaxQPs != 0 {
			r.Config.ProviderOpts["sim_max_qp"] = fmt.Sprint(cfg.SimMaxQPs)
		}
	}
	// The port and GID asked for (the ones used are the device's, in
	// Environment.Device: port, gid_index, gid, gid_type).
	if cfg.IBPort != 0 || cfg.GIDIndex != nil {
		r.Config.ProviderOpts = map[string]string{}
		if cfg.IBPort != 0 {
			r.Config.ProviderOpts["ib_port"] = fmt.Sprint(cfg.IBPort)
		}
		if cfg.GIDIndex != nil {
			r.Config.ProviderOpts["gid_index"] = fmt.Sprint(*cfg.GIDIndex)
		}
	}
	return r
}

// Kinds lists the op kinds the run measures, in results order: the
// workload's, with modify after create when the creator moves its QPs out
// of RESET.
func (c *Config) Kinds() []string {
	kinds := c.Workload.Kinds()
	if !modifies(c.Workload, c.QPState) {
		return kinds
	}
	out := make([]string, 0, len(kinds)+2)
	for _, k := range kinds {
		out = append(out, k)
		if k == workloads.OpCreate {
			out = append(out, modifyKinds(c.Workload)...)
		}
	}
	return out
}

// modifyKinds are the kinds a run that modifies adds: modify, and where
// every rank moves the shared QP it holds (a storm's elected creators, as
// GASNet's processes do) the modifies another rank's made moot.
func modifyKinds(spec *workloads.Spec) []string {
	if spec.Storm != nil && spec.Storm.Creators == workloads.CreatorsElect {
		return []string{results.OpModify, results.OpModifyRaced}
	}
	return []string{results.OpModify}
}

// modifies reports whether the measured threads time a modify: they
// create QPs, and --qp-state is not reset.
func modifies(spec *workloads.Spec, s verbs.QPState) bool {
	return s != verbs.QPReset && spec.Creates()
}

// nonDefault is v, or 0 (left out of result.json) when it is the default.
func nonDefault[T comparable](v, def T) T {
	var zero T
	if v == def {
		return zero
	}
	return v
}

func (c *Config) semantics() verbs.Semantics {
	if c.SimSemantics == "" {
		return verbs.Legacy
	}
	return c.SimSemantics
}
