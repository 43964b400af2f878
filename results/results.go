package results

import (
	"strings"
	"time"
)

// Schema is the value of Result.Schema this package writes and reads.
const Schema = "xrcbench.result/v1"

// FileName is the name of the result file in a run folder.
const FileName = "result.json"

// Status of a run. A run is partial when it failed after measuring: it was
// stopped early, a later repetition failed, or operations had unexpected
// outcomes (Error then names the kinds, counts and errnos). Its figures are
// kept: they are what happened.
const (
	StatusOK      = "ok"
	StatusPartial = "partial" // failed after measuring; what was measured is kept
	StatusFailed  = "failed"  // nothing trustworthy was measured
)

// Operation kinds that appear in Result.Ops.
const (
	OpCreate = "create"
	OpModify = "modify" // the creator moving its QP out of RESET (--qp-state)
	// A modify of a shared QP refused (EINVAL) because another process
	// had made the transition: GASNet's ibv-conduit tolerates it (the
	// gasnet workload, where every process moves the QP it holds).
	OpModifyRaced = "modify_raced"
	OpReg         = "reg"
	OpUnreg       = "unreg"
	OpUnregLast   = "unreg_last"
	OpRegInvalid  = "reg_invalid"
	OpRegForeign  = "reg_foreign"
	// A storm's registration that found its QP destroyed (EINVAL, as it
	// must), and the creation the restarted handshake made instead.
	OpRegRetry = "reg_retry"
	OpRestart  = "restart"
)

// OpKinds lists the operation kinds in the order reports show them.
var OpKinds = []string{OpCreate, OpModify, OpModifyRaced, OpReg, OpUnreg, OpUnregLast, OpRegInvalid, OpRegForeign, OpRegRetry, OpRestart}

// Result is result.json.
type Result struct {
	Schema string `json:"schema"`
	// RunID names this run: the same id heads each of its .hlog files
	// (see HlogRunIDPrefix), so a reader can tell the run's own logs from
	// another run's left beside its result. Empty in results that predate
	// it.
	RunID  string `json:"run_id,omitempty"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Warnings are what a reader must know about the figures (warning.go);
	// results that predate typed warnings wrote them as strings, which
	// read as WarnUnclassified.
	Warnings []Warning `json:"warnings,omitempty"`
	// Labels are the user's --label key=value pairs (firmware build,
	// board, ticket): shown in every report, and what compare --by groups
	// runs by.
	Labels      map[string]string  `json:"labels,omitempty"`
	Started     time.Time          `json:"started"`
	Finished    time.Time          `json:"finished"`
	Config      Config             `json:"config"`
	Environment Environment        `json:"environment"`
	Harness     Harness            `json:"harness"`
	Ops         map[string]OpStats `json:"ops"`
	// OpenLoop is what became of an open loop's schedule (--rate);
	// absent in a closed loop.
	OpenLoop    *OpenLoop    `json:"open_loop,omitempty"`
	Workers     []Worker     `json:"workers"`
	Repetitions []Repetition `json:"repetitions"`
	Leaks       *LeakCheck   `json:"leaks,omitempty"`
	// Fleet is the run's place in a fleet (run --fleet): one run per node,
	// started by the cluster's launcher. Absent for a plain run.
	Fleet *Fleet `json:"fleet,omitempty"`
	// Storm is what a storm workload measured: makespan and teardown.
	Storm *Storm `json:"storm,omitempty"`
	// Histograms holds, per op kind, the merged latency histogram of all
	// measured repetitions (HdrHistogram V2 compressed, base64), so a
	// report can draw distributions without the .hlog files.
	Histograms map[string]string `json:"histograms,omitempty"`
	// Files lists what the run wrote into its folder (names relative to
	// it, result.json included): a later run into the same folder removes
	// these and nothing else.
	Files []string `json:"files,omitempty"`
	// Logs describes each op kind's .hlog as written: a reader checks that
	// the file it finds is this one.
	Logs map[string]LogFile `json:"logs,omitempty"`
}

// LogFile is one <kind>.hlog as the run wrote it.
type LogFile struct {
	File      string `json:"file"`
	Intervals int64  `json:"intervals"` // interval lines: a late report is a line of its own
	Count     int64  `json:"count"`     // latencies recorded, all intervals
}

// HlogRunIDPrefix starts the comment line of a .hlog that names its run:
// "#xrcbench-run-id: <id>". HdrHistogram readers skip it as a comment.
const HlogRunIDPrefix = "#xrcbench-run-id: "

// Config is everything needed to rerun the run.
type Config struct {
	CommandLine []string `json:"command_line"`
	// CommandEnv is the environment the command line needs to measure
	// the same again (NAME=VALUE): set when the run went through the
	// libibverbs test double, whose library path, devices, costs and
	// firmware are chosen by environment variables.
	CommandEnv   []string `json:"command_env,omitempty"`
	Workload     string   `json:"workload"`      // name, or file path for a user spec
	WorkloadSpec string   `json:"workload_spec"` // the spec's YAML text
	// WorkloadName is the spec's own name (its `name:`), what reports
	// and exports call the workload; Workload keeps the argument, which
	// reruns it.
	WorkloadName string            `json:"workload_name,omitempty"`
	Provider     string            `json:"provider"`
	Device       string            `json:"device,omitempty"`
	Procs        int               `json:"procs"`
	Threads      int               `json:"threads"`
	QPs          int               `json:"qps"`
	Duration     Duration          `json:"duration,omitempty"`
	Iterations   int               `json:"iterations,omitempty"`
	Warmup       Duration          `json:"warmup"`
	Repetitions  int               `json:"repetitions"`
	Pin          bool              `json:"pin"`                 // threads bound to CPUs (workers[].cpus)
	Placement    string            `json:"placement,omitempty"` // --pin's choice: auto, cpu or none (empty before it: bound only with --pin)
	Seed         int64             `json:"seed"`
	Interval     Duration          `json:"interval"`
	ProviderOpts map[string]string `json:"provider_options,omitempty"` // e.g. sim_semantics, sim_cost
	// QPState is the state the creator moved each QP to before anyone
	// registered: reset, init or rtr. Empty in results that predate it,
	// whose QPs stayed in RESET.
	QPState string `json:"qp_state,omitempty"`
	// The op programs' limits (steps per C call, time per call), when
	// not the defaults.
	BatchOps  int      `json:"batch_ops,omitempty"`
	BatchTime Duration `json:"batch_time,omitempty"`
	// Open loop: the requested rate per thread (ops/s) and the arrival
	// process; absent in a closed loop.
	Rate    float64 `json:"rate,omitempty"`
	Arrival string  `json:"arrival,omitempty"`
	// Gates are the metrics the workload's spec says a comparison gates
	// on ("reg.p50", "storm.makespan"), Headline the figure it exists to
	// measure; absent in results that predate them (GatesOf, HeadlineOf).
	Gates    []string `json:"gates,omitempty"`
	Headline string   `json:"headline,omitempty"`
}

// WorkloadLabel is what reports and exports call the workload: the
// spec's name, or for a result written before workload_name, the file's
// name without folders and extension.
func (c Config) WorkloadLabel() string {
	if c.WorkloadName != "" {
		return c.WorkloadName
	}
	w := c.Workload
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		w = w[i+1:]
	}
	for _, ext := range []string{".yaml", ".yml"} {
		w = strings.TrimSuffix(w, ext)
	}
	return w
}

// QPStateOf is the QP state a result's run used: its Config.QPState, or
// reset for results that predate the field.
func (c Config) QPStateOf() string {
	if c.QPState == "" {
		return "reset"
	}
	return c.QPState
}

// Environment describes where the run happened.
type Environment struct {
	Host      string `json:"host"`
	Kernel    string `json:"kernel"`
	CPUModel  string `json:"cpu_model"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	Version   string `json:"xrcbench_version"` // VCS revision (+dirty)
	Provider  string `json:"provider"`
	// Device is the device measured (device.go); nil when none opened.
	Device *Device `json:"device,omitempty"`
	// ProviderDetail is what the provider says of itself beyond Device
	// (the sim's cost model, the library path of the test double).
	ProviderDetail map[string]string `json:"provider_detail,omitempty"`
	// Firmware is the adapter's own command counters over the run
	// (firmware.go); nil where the run did not look (sim, null).
	Firmware *FirmwareCounters `json:"firmware_commands,omitempty"`
	// BOM is the bill of materials a release attachment needs (bom.go);
	// nil in results that predate it.
	BOM *BOM `json:"bom,omitempty"`
}

// Harness records how the measurements were taken.
type Harness struct {
	Timer string `json:"timer"`
	// TimerOverheadNS is the cost of one timer read, with the fraction:
	// the median of the measurements every worker thread took before and
	// after its run (TimerOverhead), or one measurement in the coordinator
	// in results that predate them.
	TimerOverheadNS float64        `json:"timer_overhead_ns"`
	TimerOverhead   *TimerOverhead `json:"timer_overhead,omitempty"`
	StartSkewNS     int64          `json:"start_skew_ns"`
	Warmup          Duration       `json:"warmup"`
	Repetitions     int            `json:"repetitions"`
	// BatchSize is not written any more: batch sizes vary by phase, and
	// OpStats.Batches records the batches actually run.
	BatchSize int `json:"batch_size,omitempty"`
	// Scheduling is the real-time policy the run was started under
	// ("SCHED_FIFO priority 1"), which its measured threads ran at;
	// empty: none, and they ran SCHED_OTHER. The harness's other threads
	// run SCHED_BATCH either way.
	Scheduling string `json:"scheduling,omitempty"`
	// Coverage is how much of the threads' working time was inside timed
	// operations. A closed-loop harness times only the operations it
	// runs: a stall between two batches delays the next operation but is
	// in no latency (coordinated omission). Time a thread waits at a
	// rounds barrier is the workload's and counts as neither.
	Coverage *Coverage `json:"coverage,omitempty"`
	// MaxGapNS is, per op kind, the longest untimed stretch of a thread
	// before a batch of that kind: a stall there would have been that
	// kind's latency had it fallen inside the operation.
	MaxGapNS map[string]int64 `json:"max_gap_ns,omitempty"`
	// MaxGap is the longest untimed stretch of all, and when it was.
	MaxGap *Gap `json:"max_gap,omitempty"`
	// Memory is the workers' memory summed over the processes of a
	// repetition (the largest repetition), measured as they finish.
	Memory *Memory `json:"memory,omitempty"`
	// Waits is what the measured threads' working time went to while
	// they were not running their own code.
	Waits *Waits `json:"waits,omitempty"`
}

// Waits are shares of the measured threads' working time (the time
// Coverage divides, over all repetitions): on the run queue, runnable but
// not running (the machine's doing: /proc/thread-self/schedstat; absent
// where unreadable), and blocked on the device's locks and waiting for
// its command queue (the device model's doing: the sim's; 0 elsewhere).
// Only the run queue makes a run CPU-starved.
type Waits struct {
	RunQueueShare     *float64 `json:"run_queue_share,omitempty"`
	DeviceLockShare   float64  `json:"device_lock_share"`
	CommandQueueShare float64  `json:"command_queue_share"`
}

// TimerOverhead is the timer's cost as the worker threads measured it,
// each once before and once after its run, in ns with the fraction.
type TimerOverhead struct {
	MedianNS float64 `json:"median_ns"`
	MinNS    float64 `json:"min_ns"`
	MaxNS    float64 `json:"max_ns"`
	BeforeNS float64 `json:"before_ns"` // median of the measurements before the runs
	AfterNS  float64 `json:"after_ns"`  // median of those after
	Samples  int     `json:"samples"`
}

// Coverage is the timed share of the threads' working time (wall time
// less barrier waits), 0 to 1.
type Coverage struct {
	Share          float64            `json:"share"`            // all threads, all kinds
	MinThreadShare float64            `json:"min_thread_share"` // the least covered thread
	ByKind         map[string]float64 `json:"by_kind"`          // share of the working time timed in each kind
}

// Gap is an untimed stretch of one thread's run.
type Gap struct {
	NS         int64  `json:"ns"`
	Kind       string `json:"kind"` // of the batch that followed it
	Thread     int    `json:"thread"`
	Repetition int    `json:"repetition"`
	AtNS       int64  `json:"at_ns"` // when it began, since the thread's measurement start
}

// Memory is resident memory in KiB: RSS counts every page mapped, shared
// ones (the binary, libraries, the sim device) in full in each process;
// PSS divides each shared page among the processes that map it, so PSS
// sums to what the workers really take. RSSKB and PSSKB are as the
// threads stopped measuring, before any tore down; the peaks are the
// largest of the samples taken while they measured (each worker's own,
// summed), absent in results that predate them.
type Memory struct {
	RSSKB     int64 `json:"rss_kb"`
	PSSKB     int64 `json:"pss_kb"`
	PeakRSSKB int64 `json:"peak_rss_kb,omitempty"`
	PeakPSSKB int64 `json:"peak_pss_kb,omitempty"`
}

// OpStats summarises one operation kind.
type OpStats struct {
	Count     int64   `json:"count"`
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	NS        Latency `json:"ns"`
	// ResponseNS is the response time in an open loop (--rate): from each
	// operation's intended start to its end, so time spent behind the
	// schedule counts (corrected for coordinated omission); NS stays the
	// service time, from the actual start. Absent in a closed loop.
	ResponseNS *Latency `json:"response_ns,omitempty"`
	// ErrnoCounts counts failures by errno name (e.g. "EINVAL"), when any:
	// unexpected outcomes only, like Errors.
	ErrnoCounts map[string]int64 `json:"errno_counts,omitempty"`
	// Expect is the errno name every operation of the kind must fail
	// with (the errors workload's "EINVAL"); empty when they must succeed.
	// Count − Errors operations failed so, as intended. Empty in results
	// that predate it.
	Expect string `json:"expect,omitempty"`
	// Batches is how many calls into C (each timing op by op) ran the
	// Count operations: Count/Batches is the mean measured, which varies
	// by phase and workload (a ring, steady or sharded, comes back once
	// per measurement, before 2026-12-05 once per interval). 0 in results
	// that predate it.
	Batches int64 `json:"batches,omitempty"`
}

// Latency is a latency distribution in nanoseconds.
type Latency struct {
	Min    int64   `json:"min"`
	P50    int64   `json:"p50"`
	P90    int64   `json:"p90"`
	P99    int64   `json:"p99"`
	P999   int64   `json:"p999"`
	Max    int64   `json:"max"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
}

// Worker is one worker process.
type Worker struct {
	Index     int              `json:"index"`
	PID       int              `json:"pid"`
	Threads   int              `json:"threads"`
	CPUs      []int            `json:"cpus,omitempty"` // per thread, when pinned
	Counts    map[string]int64 `json:"counts"`         // per op kind, all threads
	Errors    map[string]int64 `json:"errors,omitempty"`
	Exit      string           `json:"exit,omitempty"` // "ok", "exit status 3", "signal: killed"
	PerThread []ThreadCounts   `json:"per_thread,omitempty"`
	// Repetition is the repetition the process ran (each repetition
	// starts fresh worker processes).
	Repetition int `json:"repetition"`
	// MaxRSSKB is the process's peak resident memory in KiB (getrusage).
	MaxRSSKB int64 `json:"max_rss_kb,omitempty"`
	// CPUSeconds is the CPU time (user + system) the process used, all
	// threads: against the wall time it shows whether the workers had the
	// CPUs they needed.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// RSSKB and PSSKB are the process's resident memory as its threads
	// stopped measuring, the peaks the largest sampled while they
	// measured (/proc/self/smaps_rollup): see Memory.
	RSSKB     int64 `json:"rss_kb,omitempty"`
	PSSKB     int64 `json:"pss_kb,omitempty"`
	PeakRSSKB int64 `json:"peak_rss_kb,omitempty"`
	PeakPSSKB int64 `json:"peak_pss_kb,omitempty"`
}

// ThreadCounts is one worker thread's operation counts.
type ThreadCounts struct {
	Thread int              `json:"thread"`
	CPU    int              `json:"cpu"` // -1 when not pinned
	Counts map[string]int64 `json:"counts"`
	// StartOffsetNS is when the thread started measuring, after the
	// earliest thread of its repetition: what start_skew_ns is the max of.
	StartOffsetNS int64 `json:"start_offset_ns"`
	// StartRunQueueNS is how much of its lateness past the planned start
	// the thread spent runnable but not running (its schedstat): the
	// machine's part of its start offset, the rest the harness's.
	StartRunQueueNS int64 `json:"start_run_queue_ns,omitempty"`
	// Coverage is the thread's timed share of its working time, MaxGap its
	// longest untimed stretch (see Harness.Coverage).
	Coverage float64 `json:"coverage,omitempty"`
	MaxGap   *Gap    `json:"max_gap,omitempty"`
	// TimerBeforeNS and TimerAfterNS are the timer overhead this thread
	// measured before and after its run.
	TimerBeforeNS float64 `json:"timer_before_ns,omitempty"`
	TimerAfterNS  float64 `json:"timer_after_ns,omitempty"`
}

// Repetition is one independent run of the whole configuration.
type Repetition struct {
	Index    int                `json:"index"`
	Duration Duration           `json:"duration"` // measured wall time
	Rounds   int64              `json:"rounds,omitempty"`
	Ops      map[string]OpStats `json:"ops"`
	// StartSkewNS is the spread of the threads' measurement start times in
	// this repetition; Harness.StartSkewNS is the largest over repetitions.
	StartSkewNS int64 `json:"start_skew_ns,omitempty"`
}

// LeakCheck is the teardown's verification that no QP outlived the run.
type LeakCheck struct {
	Checked bool     `json:"checked"`
	Method  string   `json:"method"` // "sim_inspect" or "reg_probe"
	Leaked  []uint32 `json:"leaked,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	// The rdma provider: after the probe, the QP numbers the run created
	// that the device itself still lists (RDMA netlink; the test double's
	// own device list): destructions ibv_destroy_qp reported that did
	// not happen. DeviceList names where the list came from, or says
	// "n/a: why" when the device cannot be asked (then nothing is
	// confirmed, and the count is absent); absent for the other providers.
	DestroysUnconfirmed *int     `json:"destroys_unconfirmed,omitempty"`
	UnconfirmedQPNs     []uint32 `json:"unconfirmed_qpns,omitempty"`
	DeviceList          string   `json:"device_list,omitempty"`
}

// Fleet is one node's run of a fleet run, as its launcher (Slurm, Open MPI,
// PMIx) described it in the environment.
type Fleet struct {
	Launcher string `json:"launcher"` // "slurm", "openmpi" or "pmix"
	JobID    string `json:"job_id,omitempty"`
	// StepID is the job's step (Slurm's SLURM_STEP_ID: each srun of a
	// batch job is one); the --fleet-sync barrier is one per job and step.
	StepID string `json:"step_id,omitempty"`
	Node   string `json:"node"`            // the node's name, and its folder under --out
	Rank   int    `json:"rank"`            // the task's rank in the job
	Nodes  int    `json:"nodes,omitempty"` // nodes in the job; 0 when the launcher does not say
	// NodeList names the job's nodes when the launcher lists them
	// (SLURM_JOB_NODELIST): the fleet report names those that wrote nothing.
	NodeList []string `json:"node_list,omitempty"`
	// Sync is the common start (run --fleet-sync); absent when the node
	// started when it was launched.
	Sync *FleetSync `json:"sync,omitempty"`
}

// FleetSync is how a node met the others at the barrier on the shared
// output folder and when it started.
type FleetSync struct {
	// Deadline is how long the node would wait for the others.
	Deadline Duration `json:"deadline"`
	// WaitedNS is how long it waited at the barrier.
	WaitedNS int64 `json:"waited_ns"`
	// StartAt is the common start on the shared folder's clock (the
	// latest arrival's mtime plus a margin).
	StartAt time.Time `json:"start_at"`
	// LateNS is how far past the common start, on its own clock corrected
	// by its offset, this node began; 0 when it was in time.
	LateNS int64 `json:"late_ns"`
	// ClockOffsetNS is this node's clock minus the shared folder's, as
	// estimated at the barrier: the midpoint of the local clock around
	// writing its arrival file, minus the file's mtime. It includes the
	// file system's timestamp granularity.
	ClockOffsetNS int64 `json:"clock_offset_ns"`
	// Offsets is every node's own estimate, as read from the arrival
	// files at the barrier.
	Offsets map[string]int64 `json:"clock_offsets_ns,omitempty"`
}

// Storm is a storm workload's headline (mode storm): how long the job's
// XRC wiring took on the node, per repetition. A rank's completion time
// runs from the storm's start, a deadline every rank sleeps to once it is
// ready, until it holds every QP of its plan; the makespan is the largest.
type Storm struct {
	Nodes         int     `json:"nodes"`
	Ranks         int     `json:"ranks"`
	Rails         int     `json:"rails"`
	QPs           int     `json:"qps"`           // receive QPs planned: (nodes-1) x ranks x rails
	Registrations int     `json:"registrations"` // planned: qps x (ranks-1)
	Arrival       string  `json:"arrival"`
	WindowNS      int64   `json:"window_ns,omitempty"`
	Teardown      string  `json:"teardown"`
	Reconnect     float64 `json:"reconnect"`
	Creators      string  `json:"creators"`
	// MakespanNS is, per repetition, the largest rank completion time;
	// -1 when a rank did not finish (the run was stopped).
	MakespanNS []int64 `json:"makespan_ns"`
	// RankDoneNS is, per repetition, each rank's completion time (-1: not
	// finished).
	RankDoneNS [][]int64 `json:"rank_done_ns"`
	// RankRunQueueNS is, per repetition, how long each rank's thread
	// waited on a run queue (runnable, not running) from the start until
	// it was done, the window of RankDoneNS, from the kernel's schedstat;
	// -1 where unknown. On a machine busy
	// with other work it is part of the rank's completion time that is
	// not the storm's.
	RankRunQueueNS [][]int64 `json:"rank_runq_ns,omitempty"`
	// RankBusyNS is, per repetition, each rank's own work: the sum of its
	// timed operations until it was done (-1: not finished). A completion
	// time beyond it is the rank's waits: for the numbers other ranks
	// send back, for a CPU (RankRunQueueNS), and the harness's own.
	RankBusyNS [][]int64 `json:"rank_busy_ns,omitempty"`
	// CriticalPathNS is, per repetition, the makespan the storm's plan
	// allows with the repetition's measured operation costs (each rank's
	// mean per op kind) and no other time: the plan's rank rule replayed
	// (workloads.StormPlan.CriticalPath); -1 where it could not be
	// computed. Absent in results from before it; a report derives
	// nothing of it from the other fields, which lack the plan.
	CriticalPathNS []int64 `json:"critical_path_ns,omitempty"`
	// TeardownNS is, per repetition, the teardown's duration: for
	// teardown unreg the largest of the ranks' (RankTeardownNS), from a
	// common start; for exit, from the ranks' exit until the device shows
	// none of the job's QPs. Absent when not measurable (TeardownNote).
	TeardownNS     []int64   `json:"teardown_ns,omitempty"`
	RankTeardownNS [][]int64 `json:"rank_teardown_ns,omitempty"`
	TeardownMethod string    `json:"teardown_method,omitempty"` // "ranks_unreg", "sim_inspect" or "netlink"
	TeardownNote   string    `json:"teardown_note,omitempty"`
}

// OpenLoop is what became of an open loop's schedule over all threads and
// repetitions.
type OpenLoop struct {
	Arrival string `json:"arrival"` // fixed or poisson
	// Wait is how the measured threads waited for an intended start:
	// "spin" (busy, never leaving the CPU: they left one to the harness)
	// or "sleep" (to 50 µs before a far start, then a spin); "" in results
	// from before it was recorded.
	Wait string `json:"wait,omitempty"`
	// RequestedOpsPerSec is the rate asked of all threads together,
	// AchievedOpsPerSec the operations done per second of measurement.
	RequestedOpsPerSec float64 `json:"requested_ops_per_sec"`
	AchievedOpsPerSec  float64 `json:"achieved_ops_per_sec"`
	// BacklogEndNS is how far behind its intended start the last
	// operation of the most behind thread began; BacklogMaxNS the most
	// any operation was.
	BacklogEndNS int64 `json:"backlog_end_ns"`
	BacklogMaxNS int64 `json:"backlog_max_ns"`
	// BacklogOverShare is the largest share of a thread's measured time
	// (from its first intended start to its last backlog sample) during
	// which it was more than BacklogLimitNS behind its schedule, 0 to 1;
	// Saturated when it is at least half: a sustained backlog, not one
	// stall at the end.
	BacklogLimitNS   int64   `json:"backlog_limit_ns,omitempty"`
	BacklogOverShare float64 `json:"backlog_over_share"`
	Saturated        bool    `json:"saturated"`
	// Waits is how many operations waited for their intended start;
	// WakeLateMeanNS and WakeLateMaxNS how late the waits ended (sleep and
	// spin overshoot), which is in the response times but not the service
	// times.
	Waits          int64   `json:"waits"`
	WakeLateMeanNS float64 `json:"wake_late_mean_ns"`
	WakeLateMaxNS  int64   `json:"wake_late_max_ns"`
}

// ResponseSuffix names the response time histogram of an op kind among
// Histograms and the .hlog files: "reg" + ResponseSuffix.
const ResponseSuffix = ".response"
