package bench

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Settings are a run's settings as a user states them: run's flags, a
// sweep point, a qualification plan's step, a fleet node's run. They are
// the one way into a Config (Config) and the one way out to the command
// line that reproduces it (CommandLine), so the two cannot drift apart:
// whatever describes a run starts from Defaults and overlays its own.
type Settings struct {
	Provider, Device string
	Workload         string // a built-in's name or a YAML file
	Procs, Threads   int
	QPs              int
	Nodes            int // storm workloads; 0: the workload's
	// Duration is each repetition's measured time, unless Iterations
	// (passes or rounds) is positive, which then counts instead.
	Duration     time.Duration
	Iterations   int64
	Warmup       time.Duration
	Repetitions  int
	QPState      string // reset, init or rtr
	IBPort       int    // rdma, legacy: 0 automatic
	GIDIndex     int    // rdma, legacy: -1 automatic
	Seed         int64
	Pin          string // --pin: auto, cpu or none (ParsePlacement; true and false as before)
	NoCPUCheck   bool   // record the CPUs' setup without judging it
	Interval     time.Duration
	SimSemantics string
	SimCost      string
	SimMaxQP     int // 0: verbs.DefaultSimMaxQPs
	BatchOps     int
	BatchTime    time.Duration
	Rate         float64
	RateTotal    float64
	Arrival      string
	StallTimeout time.Duration
	Labels       []string // key=value, in the order given
	Out          string   // not part of the command line: a rerun writes a new folder
}

// Defaults are the settings of a plain `xrcbench run`: run's flags
// default to these, and a plan step or a soak run starts from them.
func Defaults() Settings {
	return Settings{
		Provider: "sim", Workload: "steady",
		Procs: 1, Threads: 1, QPs: 16,
		Duration: 10 * time.Second, Warmup: time.Second, Repetitions: 1,
		QPState:  verbs.QPRTR.String(), // as MPI does
		GIDIndex: -1,
		Seed:     1, Interval: time.Second, Pin: string(host.PinAuto),
		SimSemantics: string(verbs.Legacy),
		BatchOps:     DefaultBatchOps, BatchTime: DefaultBatchTime,
	}
}

// Config is the engine configuration of the settings, its CommandLine
// included. Every error is bad input, worded as run's flags name it: what
// does not parse (a workload, the sim's semantics and costs, a QP state,
// --pin, a label), then the first of the rules it breaks (Validate).
func (s Settings) Config() (Config, error) {
	spec, err := workloads.Get(s.Workload)
	if err != nil {
		return Config{}, err
	}
	sem, err := verbs.ParseSemantics(s.SimSemantics)
	if err != nil {
		return Config{}, fmt.Errorf("--sim-semantics: %w", err)
	}
	cost, err := verbs.ParseCost(s.SimCost)
	if err != nil {
		return Config{}, fmt.Errorf("--sim-cost: %w", err)
	}
	state, err := verbs.ParseQPState(s.QPState)
	if err != nil {
		return Config{}, fmt.Errorf("--qp-state: %w", err)
	}
	pin, err := host.ParsePlacement(s.Pin)
	if err != nil {
		return Config{}, fmt.Errorf("--pin: %w", err)
	}
	labels, err := results.ParseLabels(s.Labels)
	if err != nil {
		return Config{}, fmt.Errorf("--label: %w", err)
	}
	cfg := Config{
		Labels:   labels,
		BatchOps: s.BatchOps, BatchTime: s.BatchTime, Rate: s.Rate, RateTotal: s.RateTotal, Arrival: s.Arrival,
		Provider: s.Provider, Device: s.Device, Workload: spec, WorkloadArg: s.Workload,
		Procs: s.Procs, Threads: s.Threads, QPs: s.QPs,
		Duration: s.Duration, Iterations: s.Iterations, Warmup: s.Warmup, Repetitions: s.Repetitions,
		Pin: pin, NoCPUCheck: s.NoCPUCheck, Seed: s.Seed, Interval: s.Interval, SimSemantics: sem, SimCost: cost, QPState: state, SimMaxQPs: s.SimMaxQP,
		IBPort: s.IBPort, GIDIndex: gidIndex(s.GIDIndex),
		Nodes: s.Nodes, Out: s.Out, CommandLine: s.CommandLine(), StallTimeout: s.StallTimeout,
	}
	if cfg.Iterations > 0 {
		cfg.Duration = 0
	}
	if spec.Mode == workloads.StormMode {
		// One storm per repetition, on the QPs its plan makes.
		cfg.Iterations, cfg.Duration, cfg.Warmup, cfg.QPs = 1, 0, 0, 0
		cfg.StormDefaults()
	}
	if cfg.Out == "" {
		cfg.Out = "." // a placeholder for Validate: the caller names the folder
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	cfg.Out = s.Out
	return cfg, nil
}

// gidIndex is --gid-index as Config holds it: nil is -1, automatic.
func gidIndex(i int) *int {
	if i == -1 {
		return nil
	}
	return &i
}

// PathChoice checks --ib-port (0: automatic) and --gid-index (-1:
// automatic) as run, conform and qualify take them, by the rules of a
// run's (Validate), and returns the GID index as Config and verbs.Options
// hold it (nil: automatic). Whether the device has them is the device's
// to say (verbs.ErrBadPath).
func PathChoice(provider string, port, gid int) (*int, error) {
	c := Config{Provider: provider, IBPort: port, GIDIndex: gidIndex(gid)}
	for _, r := range rules {
		switch r.flags {
		case "--ib-port", "--gid-index", "--ib-port, --gid-index, --provider":
			if r.bad(&c) {
				return nil, errors.New(r.msg(&c))
			}
		}
	}
	return c.GIDIndex, nil
}

// CommandLine is the `xrcbench run` command that reproduces the settings:
// every setting that is not its default, as run's flags write it, in the
// flags' order, then the point's --procs, --threads and --qps (or a
// storm's --nodes, its QPs following from them). A storm's measured time
// is its own, so no --duration, --iterations or --warmup; --out is left
// out, as a rerun writes a new folder.
func (s Settings) CommandLine() []string {
	d := Defaults()
	storm := false
	if spec, err := workloads.Get(s.Workload); err == nil {
		storm = spec.Mode == workloads.StormMode
	}
	args := []string{"xrcbench", "run"}
	add := func(name, v, def string) {
		if v != def {
			args = append(args, "--"+name+"="+v)
		}
	}
	dur := func(v time.Duration) string { return v.String() }
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	float := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	add("arrival", s.Arrival, d.Arrival)
	add("batch-ops", num(int64(s.BatchOps)), num(int64(d.BatchOps)))
	add("batch-time", dur(s.BatchTime), dur(d.BatchTime))
	add("device", s.Device, d.Device)
	if !storm && s.Iterations <= 0 {
		add("duration", dur(s.Duration), dur(d.Duration))
	}
	add("gid-index", num(int64(s.GIDIndex)), num(int64(d.GIDIndex)))
	add("ib-port", num(int64(s.IBPort)), num(int64(d.IBPort)))
	add("interval", dur(s.Interval), dur(d.Interval))
	if !storm && s.Iterations > 0 {
		add("iterations", num(s.Iterations), "")
	}
	for _, l := range s.Labels { // repeatable: one flag per label, as given
		args = append(args, "--label="+l)
	}
	add("no-cpu-check", strconv.FormatBool(s.NoCPUCheck), strconv.FormatBool(d.NoCPUCheck))
	pin := s.Pin // written as run's flag now spells it: --pin=true is cpu
	if p, err := host.ParsePlacement(s.Pin); err == nil {
		pin = string(p)
	}
	add("pin", pin, d.Pin)
	add("provider", s.Provider, d.Provider)
	add("qp-state", s.QPState, d.QPState)
	add("rate", float(s.Rate), float(d.Rate))
	add("rate-total", float(s.RateTotal), float(d.RateTotal))
	add("repetitions", num(int64(s.Repetitions)), num(int64(d.Repetitions)))
	add("seed", num(s.Seed), num(d.Seed))
	add("sim-cost", s.SimCost, d.SimCost)
	add("sim-max-qp", num(int64(s.SimMaxQP)), num(int64(d.SimMaxQP)))
	add("sim-semantics", s.SimSemantics, d.SimSemantics)
	add("stall-timeout", dur(s.StallTimeout), dur(d.StallTimeout))
	if !storm {
		add("warmup", dur(s.Warmup), dur(d.Warmup))
	}
	add("workload", s.Workload, d.Workload)
	args = append(args, fmt.Sprintf("--procs=%d", s.Procs), fmt.Sprintf("--threads=%d", s.Threads))
	switch {
	case !storm:
		args = append(args, fmt.Sprintf("--qps=%d", s.QPs))
	case s.Nodes > 0:
		args = append(args, fmt.Sprintf("--nodes=%d", s.Nodes))
	}
	return args
}

// measuredEnv are the environment variables that change what a run
// through the libibverbs test double measures: the library loaded, and
// the double's devices, costs and firmware. XRCBENCH_FAKEVERBS_DIR only
// says where the double keeps its state, which no figure depends on.
var measuredEnv = []string{
	"LD_LIBRARY_PATH",
	"XRCBENCH_FAKEVERBS_COST",
	"XRCBENCH_FAKEVERBS_DEVICES",
	"XRCBENCH_FAKEVERBS_FW_VER",
	"XRCBENCH_FAKEVERBS_NOXRC",
}

// MeasuredEnv is the part of environ (NAME=VALUE entries, a later one
// replacing an earlier one, as exec does) that a run through the test
// double needs to measure the same again, sorted by name.
func MeasuredEnv(environ []string) []string {
	last := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && slices.Contains(measuredEnv, k) {
			last[k] = v
		}
	}
	var out []string
	for _, k := range measuredEnv {
		if v, ok := last[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}
