package qualify

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/internal/yamlstrict"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

//go:embed default.yaml
var defaultPlan []byte

// DefaultPlan is the embedded plan's text.
func DefaultPlan() []byte { return bytes.Clone(defaultPlan) }

// Plan is a qualification plan.
type Plan struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Repetitions int         `yaml:"repetitions"`
	Duration    Duration    `yaml:"duration"`
	Iterations  int64       `yaml:"iterations"`
	Warmup      Duration    `yaml:"warmup"`
	QPState     string      `yaml:"qp_state"` // "": rtr, as run's --qp-state
	Conformance Conformance `yaml:"conformance"`
	Runs        []RunStep   `yaml:"runs"`
	Criteria    []Criterion `yaml:"criteria"`
	Soak        SoakSpec    `yaml:"soak"`
	// MinChange is the smallest latency change a relative criterion
	// judges; 0: two reads of the runs' timer (report's floorTimerReads).
	MinChange Duration `yaml:"min_change"`
	// Quality: the thresholds beyond which the runs are too disturbed to
	// judge (quality.go); DefaultQuality where the plan does not say.
	Quality Quality `yaml:"quality"`
	// Source is the plan's text, File where it came from ("" embedded).
	Source string `yaml:"-"`
	File   string `yaml:"-"`
}

// RunStep is one benchmark run of the battery.
type RunStep struct {
	Name        string   `yaml:"name"`
	Workload    string   `yaml:"workload"`
	Procs       Count    `yaml:"procs"`
	Threads     Count    `yaml:"threads"`
	QPs         int      `yaml:"qps"`
	Repetitions int      `yaml:"repetitions"` // 0: the plan's
	Duration    Duration `yaml:"duration"`    // 0: the plan's
	Iterations  int64    `yaml:"iterations"`  // 0: the plan's
	QPState     string   `yaml:"qp_state"`    // "": the plan's
	// Oversubscribe lets the run ask for more threads (procs × threads)
	// than this machine's CPUs; without it such a run is scaled down to
	// fit them (Fit), and the plan as run says so.
	Oversubscribe bool `yaml:"oversubscribe"`
	Line          int  `yaml:"-"`
}

// Fit is the step's processes and threads on a machine with cpus CPUs:
// as asked, unless they are more threads than CPUs and the step does not
// say oversubscribe, then scaled down to fit, the processes kept (they
// are what a cross-process workload shares across) and their threads cut
// to cpus / procs, or one process per CPU of one thread each when even
// the processes are too many. A thread that waits for a CPU measures the
// scheduler, not the device: 2 × 2 threads of lifecycle on 2 CPUs failed
// the default plan's unreg_last.p99 limit. scaled says what was asked and
// why it was cut, "" when it was not.
func (s RunStep) Fit(cpus int) (procs, threads int, scaled string) {
	procs, threads = s.Procs.Resolve(cpus), s.Threads.Resolve(cpus)
	if s.Oversubscribe || cpus < 1 || procs < 1 || threads < 1 || (procs <= cpus && threads <= cpus/procs) {
		return procs, threads, ""
	}
	scaled = fmt.Sprintf("scaled down from %s × %s (%d × %d threads) to fit %d CPUs; oversubscribe: true keeps it", s.Procs, s.Threads, procs, threads, cpus)
	if procs > cpus {
		return cpus, 1, scaled
	}
	return procs, cpus / procs, scaled
}

// Criterion is one check of a run's figure: an absolute limit, or a
// limit on the regression against the baseline.
type Criterion struct {
	Run   string `yaml:"run"`
	Check string `yaml:"check"`
	Line  int    `yaml:"-"`
	// Parsed from Check.
	Kind     string        `yaml:"-"`
	Metric   report.Metric `yaml:"-"`
	Relative bool          `yaml:"-"` // "regression <= N%"
	Op       string        `yaml:"-"` // "<=" or ">="
	Limit    float64       `yaml:"-"` // ns, ops/s, or percent when Relative
	// Firmware: the check is FirmwareCheck, judged on the adapter's own
	// failure counters rather than a figure; with no run, on every run.
	Firmware bool `yaml:"-"`
}

// FirmwareCheck is the criterion that no firmware command failed during
// the run (mlx5's per-command failed counters, read around each run). A
// plan writes it without a run to judge it over every run.
const FirmwareCheck = "no firmware command failed"

// Name is the criterion as the plan writes it, with its run.
func (c Criterion) Name() string {
	if c.Run == "" {
		return "every run: " + c.Check
	}
	return c.Run + ": " + c.Check
}

// Conformance is which conformance checks must pass: all that can run, a
// list of ids, or none.
type Conformance struct {
	All  bool
	None bool
	IDs  []string
}

func (c *Conformance) UnmarshalYAML(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode && n.Value == "all":
		c.All = true
	case n.Kind == yaml.ScalarNode && n.Value == "none":
		c.None = true
	case n.Kind == yaml.SequenceNode:
		return n.Decode(&c.IDs)
	default:
		return fmt.Errorf("line %d: conformance %q: want all, none or a list of check ids such as [S1, S2]", n.Line, n.Value)
	}
	return nil
}

// Duration is a YAML duration such as 10s.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: duration %q: want a duration such as 10s", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	f, err := strconv.ParseFloat(strings.TrimSuffix(n.Value, "%"), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || !strings.HasSuffix(n.Value, "%") {
		return fmt.Errorf("line %d: %q: want a percentage such as 10%%", n.Line, n.Value)
	}
	*p = Percent(f)
	return nil
}

// Count is a process or thread count: a number, "cpus" or "Nxcpus".
type Count struct {
	N      int // a fixed count
	PerCPU int // else this many per allowed CPU
}

var countRE = regexp.MustCompile(`^(?:(\d+)x)?cpus$`)

func (c *Count) UnmarshalYAML(n *yaml.Node) error {
	if v, err := strconv.Atoi(n.Value); err == nil && v > 0 {
		c.N = v
		return nil
	}
	if m := countRE.FindStringSubmatch(n.Value); m != nil {
		c.PerCPU = 1
		if m[1] != "" {
			c.PerCPU, _ = strconv.Atoi(m[1])
		}
		if c.PerCPU > 0 {
			return nil
		}
	}
	return fmt.Errorf("line %d: count %q: want a positive number, cpus or Nxcpus", n.Line, n.Value)
}

// Resolve is the count on a machine with cpus CPUs; one too large for an
// int is math.MaxInt, too many, not a product wrapped negative.
func (c Count) Resolve(cpus int) int {
	if c.PerCPU > 0 {
		if cpus > 0 && c.PerCPU > math.MaxInt/cpus {
			return math.MaxInt
		}
		return c.PerCPU * cpus
	}
	return c.N
}

func (c Count) String() string {
	switch {
	case c.PerCPU == 1:
		return "cpus"
	case c.PerCPU > 1:
		return fmt.Sprintf("%dxcpus", c.PerCPU)
	}
	return strconv.Itoa(c.N)
}

// AllowedCPUs is the number of CPUs this process may run on.
func AllowedCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil && set.Count() > 0 {
		return set.Count()
	}
	return runtime.NumCPU()
}

// PlanError is a bad plan: the file, the line (0 unknown) and why.
type PlanError struct {
	File string
	Line int
	Msg  string
}

func (e *PlanError) Error() string {
	where := e.File
	if where == "" {
		where = "plan"
	}
	if e.Line > 0 {
		where += fmt.Sprintf(":%d", e.Line)
	}
	return where + ": " + e.Msg
}

// ParsePlan reads a plan strictly: unknown keys, bad values, unknown runs
// or metrics are errors naming the line.
func ParsePlan(data []byte, file string) (*Plan, error) {
	fail := func(line int, format string, args ...any) error {
		return &PlanError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	// Decoded over the defaults: a plan's quality: keeps those it omits.
	p := Plan{Quality: DefaultQuality()}
	doc, yerr := yamlstrict.Decode(data, &p)
	if yerr != nil {
		return nil, fail(yerr.Line, "%s", yerr.Msg)
	}
	if doc == nil {
		return nil, fail(0, "empty plan")
	}
	p.Source, p.File = string(data), file
	lines := func(key string) []int {
		var ls []int
		if n := yamlstrict.Find(doc, key); n != nil {
			for _, c := range n.Content {
				ls = append(ls, c.Line)
			}
		}
		return ls
	}
	for i, l := range lines("runs") {
		if i < len(p.Runs) {
			p.Runs[i].Line = l
		}
	}
	for i, l := range lines("criteria") {
		if i < len(p.Criteria) {
			p.Criteria[i].Line = l
		}
	}
	line := func(key string) int {
		if n := yamlstrict.Find(doc, key); n != nil {
			return n.Line
		}
		return doc.Line
	}
	switch {
	case p.Name == "":
		return nil, fail(doc.Line, "no name")
	case p.Repetitions <= 0 || p.Repetitions > 1000:
		return nil, fail(line("repetitions"), "repetitions %d: want 1 to 1000", p.Repetitions)
	case p.Duration > 0 && p.Iterations > 0:
		return nil, fail(line("iterations"), "give duration or iterations, not both")
	case p.Duration == 0 && p.Iterations <= 0:
		return nil, fail(doc.Line, "no duration (such as 10s) or iterations")
	case len(p.Runs) == 0:
		return nil, fail(line("runs"), "no runs")
	case p.QPState != "" && !validQPState(p.QPState):
		return nil, fail(line("qp_state"), "qp_state %q: want reset, init or rtr", p.QPState)
	case p.Quality.check() != "":
		return nil, fail(line("quality"), "%s", p.Quality.check())
	}
	names := map[string]*RunStep{}
	for i := range p.Runs {
		r := &p.Runs[i]
		switch {
		case !nameRE.MatchString(r.Name):
			return nil, fail(r.Line, "run name %q: want letters, digits, '-' and '_' (it names a folder)", r.Name)
		case names[r.Name] != nil:
			return nil, fail(r.Line, "run %s named twice", r.Name)
		case r.Procs == (Count{}) || r.Threads == (Count{}):
			return nil, fail(r.Line, "run %s: procs and threads are required", r.Name)
		case r.QPs <= 0:
			return nil, fail(r.Line, "run %s: qps %d: want a positive number", r.Name, r.QPs)
		case r.Repetitions < 0 || r.Iterations < 0:
			return nil, fail(r.Line, "run %s: negative repetitions or iterations", r.Name)
		case r.Duration > 0 && r.Iterations > 0:
			return nil, fail(r.Line, "run %s: give duration or iterations, not both", r.Name)
		case r.QPState != "" && !validQPState(r.QPState):
			return nil, fail(r.Line, "run %s: qp_state %q: want reset, init or rtr", r.Name, r.QPState)
		}
		if _, err := workloads.Get(r.Workload); err != nil {
			return nil, fail(r.Line, "run %s: %v", r.Name, err)
		}
		names[r.Name] = r
	}
	for i := range p.Criteria {
		c := &p.Criteria[i]
		if c.Firmware = strings.TrimSpace(c.Check) == FirmwareCheck; c.Firmware && c.Run == "" {
			continue
		}
		if names[c.Run] == nil {
			return nil, fail(c.Line, "criterion %q: no run named %q", c.Check, c.Run)
		}
		if c.Firmware {
			continue
		}
		if err := c.parse(); err != nil {
			return nil, fail(c.Line, "criterion %q: %v", c.Check, err)
		}
	}
	return &p, nil
}

func validQPState(s string) bool {
	_, err := verbs.ParseQPState(s)
	return err == nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

var checkRE = regexp.MustCompile(`^\s*([a-z_]+)\.([a-z0-9_.]+)\s+(regression\s+)?(<=|>=)\s*(\S+)\s*$`)

// parse reads Check: "KIND.METRIC <= VALUE", "KIND.METRIC >= VALUE" or
// "KIND.METRIC regression <= N%".
func (c *Criterion) parse() error {
	m := checkRE.FindStringSubmatch(c.Check)
	if m == nil {
		return errors.New("want KIND.METRIC <= VALUE, KIND.METRIC >= VALUE or KIND.METRIC regression <= N%")
	}
	metric, ok := report.MetricByName(m[2])
	if !ok {
		return fmt.Errorf("unknown metric %q; want one of %s", m[2], report.MetricNames())
	}
	c.Kind, c.Metric, c.Relative, c.Op = m[1], metric, m[3] != "", m[4]
	v := m[5]
	switch {
	case c.Relative:
		if c.Op != "<=" || !strings.HasSuffix(v, "%") {
			return errors.New("a regression limit is written regression <= N%")
		}
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("limit %q: want a percentage of 0 or more", v)
		}
		c.Limit = f
	case metric.Latency:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("limit %q: %s is a latency: want a duration such as 2ms", v, metric.Name)
		}
		c.Limit = float64(d.Nanoseconds())
	default:
		f, err := parseRate(v)
		if err != nil {
			return fmt.Errorf("limit %q: %s is a rate: want a number such as 150k", v, metric.Name)
		}
		c.Limit = f
	}
	return nil
}

// parseRate reads 1500, 1.5k or 2M.
func parseRate(s string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	}
	f, err := strconv.ParseFloat(s, 64)
	f *= mult // 1.7e308M is +Inf only once multiplied
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errors.New("not a rate")
	}
	return f, nil
}

// LoadPlan reads a plan file, or the default plan when path is "".
func LoadPlan(path string) (*Plan, error) {
	if path == "" {
		return ParsePlan(defaultPlan, "")
	}
	// Not os.Open: a FIFO given as --plan would block it for good.
	data, err := regfile.ReadFile(path, regfile.MaxPlan)
	if errors.Is(err, regfile.ErrRefused) {
		return nil, fmt.Errorf("plan file %w", err)
	}
	if err != nil {
		return nil, &PlanError{File: path, Msg: err.Error()}
	}
	return ParsePlan(data, path)
}
