package qualify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Files of a qualification folder.
const (
	JSONFile  = "qualification.json"
	JUnitFile = "junit.xml"
	HTMLFile  = "qualification.html"
	PlanFile  = "plan.yaml"        // the plan as run: --resume checks it is the same
	ConfFile  = "conformance.json" // the conformance report, reused by --resume
	RunsDir   = "runs"
	PlotsDir  = "plots"
	Schema    = "xrcbench.qualification/v1"
)

// Verdicts of criteria, conformance rows and the whole qualification.
const (
	Pass    = "pass"
	Fail    = "fail"
	Error   = "error"   // could not be judged: the run failed, too few repetitions
	Skipped = "skipped" // not judged: no baseline, a check the provider cannot do
)

// Options configure Run.
type Options struct {
	Provider, Device string
	Plan             *Plan
	Baseline         string // an earlier qualification's folder; "" none
	Out              string
	Resume           bool
	Labels           map[string]string
	SimSemantics     verbs.Semantics
	SimCost          verbs.Cost
	Engine           bench.Options // how workers are started
	Log              io.Writer     // one line per step
	Alpha            float64       // compare's; 0: report.DefaultAlpha
	Soak             time.Duration // the soak's length; 0: the plan's (none when it has none)
}

// Qualification is qualification.json.
type Qualification struct {
	Schema      string            `json:"schema"`
	Verdict     string            `json:"verdict"` // pass or fail
	Summary     string            `json:"summary"`
	Started     time.Time         `json:"started"`
	Finished    time.Time         `json:"finished"`
	Plan        string            `json:"plan"` // its name
	PlanFile    string            `json:"plan_file,omitempty"`
	Provider    string            `json:"provider"`
	Device      map[string]any    `json:"device,omitempty"` // the first run's device: name, fw_ver, ...
	Labels      map[string]string `json:"labels,omitempty"`
	Baseline    *BaselineInfo     `json:"baseline,omitempty"`
	Conformance []Row             `json:"conformance"`
	Runs        []RunInfo         `json:"runs"`
	Criteria    []Row             `json:"criteria"`
	SoakRuns    []SoakRun         `json:"soak_runs,omitempty"`
	Soak        []Row             `json:"soak,omitempty"`
}

// BaselineInfo identifies the baseline qualification.
type BaselineInfo struct {
	Dir    string            `json:"dir"`
	Device map[string]any    `json:"device,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// RunInfo is one run of the battery.
type RunInfo struct {
	Name    string `json:"name"`
	Dir     string `json:"dir"` // relative to the qualification folder
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
	Reused  bool   `json:"reused,omitempty"` // --resume found it finished
	Command string `json:"command"`
}

// Row is one judged item: a criterion or a conformance check.
type Row struct {
	Name     string   `json:"name"`
	Run      string   `json:"run,omitempty"`
	Verdict  string   `json:"verdict"`
	Value    *float64 `json:"value,omitempty"` // ns, ops/s, or the change in percent
	Limit    *float64 `json:"limit,omitempty"`
	Unit     string   `json:"unit,omitempty"` // ns, ops/s or %
	P        *float64 `json:"p,omitempty"`    // Holm-adjusted, relative criteria
	Message  string   `json:"message"`
	Evidence []string `json:"evidence,omitempty"` // paths relative to the folder
}

// ErrUsage marks errors that are bad input (the folder, the baseline).
var ErrUsage = errors.New("bad usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, args...)...)
}

// Run qualifies: conformance, the plan's runs, the criteria; it writes the
// folder's files and returns the qualification. An error is returned only
// when nothing could be judged (bad input, the folder cannot be written).
func Run(ctx context.Context, o Options) (*Qualification, error) {
	if o.Alpha == 0 {
		o.Alpha = report.DefaultAlpha
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "qualify: "+format+"\n", args...)
		}
	}
	var base *Qualification
	if o.Baseline != "" {
		b, err := Load(o.Baseline)
		if err != nil {
			return nil, usagef("--baseline: %v", err)
		}
		base = b
	}
	// Locked for the whole qualification, as run locks its --out: two
	// qualifications (two --resume of one folder) would both run and the
	// last to finish would decide qualification.json.
	unlock, err := bench.LockFolder(o.Out)
	if errors.Is(err, bench.ErrOutFolder) {
		return nil, usagef("--out %v", err)
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := prepareOut(o); err != nil {
		return nil, err
	}
	q := &Qualification{Schema: Schema, Started: time.Now().UTC(), Plan: o.Plan.Name, PlanFile: o.Plan.File,
		Provider: o.Provider, Labels: o.Labels}
	if base != nil {
		q.Baseline = &BaselineInfo{Dir: o.Baseline, Device: base.Device, Labels: base.Labels}
	}

	// Conformance.
	conf, err := conformance(o, logf)
	if err != nil {
		return nil, err
	}
	q.Conformance = conformanceRows(o.Plan.Conformance, conf)

	// The battery.
	cpus := AllowedCPUs()
	runs := map[string]*report.Run{}
	for _, step := range o.Plan.Runs {
		if err := ctx.Err(); err != nil {
			q.Runs = append(q.Runs, RunInfo{Name: step.Name, Dir: filepath.Join(RunsDir, step.Name), Status: results.StatusFailed, Error: "not run: " + context.Cause(ctx).Error()})
			continue
		}
		info, run := runStep(ctx, o, step, cpus, logf)
		q.Runs = append(q.Runs, info)
		if run != nil {
			runs[step.Name] = run
			if q.Device == nil {
				q.Device = run.Result.Environment.Device
			}
		}
	}

	// The criteria.
	q.Criteria = judge(o, base, runs)

	// The soak.
	if d := o.soakDuration(); d > 0 {
		q.SoakRuns, q.Soak = soak(ctx, o, d, logf)
	}
	q.Finished = time.Now().UTC()
	q.Verdict, q.Summary = verdict(q)
	if err := write(o.Out, q, runs, base, o); err != nil {
		return q, err
	}
	return q, nil
}

// prepareOut makes the folder, or checks that --resume continues the same
// plan in it.
func prepareOut(o Options) error {
	planPath := filepath.Join(o.Out, PlanFile)
	entries, err := os.ReadDir(o.Out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if o.Resume {
			return usagef("--resume: %s does not exist; nothing to resume", o.Out)
		}
	case err != nil:
		return err
	case len(entries) > 0 && !o.Resume:
		return usagef("--out %s is not empty: give a new folder, or --resume to continue the qualification in it", o.Out)
	case o.Resume:
		old, err := os.ReadFile(planPath)
		if err != nil {
			return usagef("--resume: %s holds no %s: not a qualification folder", o.Out, PlanFile)
		}
		if string(old) != o.Plan.Source {
			return usagef("--resume: the plan differs from the one %s was started with (%s); give the same --plan", o.Out, planPath)
		}
	}
	if err := os.MkdirAll(filepath.Join(o.Out, RunsDir), 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(planPath, []byte(o.Plan.Source), 0o644)
}

func conformance(o Options, logf func(string, ...any)) (*verbs.ConformReport, error) {
	path := filepath.Join(o.Out, ConfFile)
	if o.Plan.Conformance.None {
		return nil, nil
	}
	if o.Resume {
		if data, err := os.ReadFile(path); err == nil {
			var rep verbs.ConformReport
			if json.Unmarshal(data, &rep) == nil && len(rep.Checks) > 0 {
				logf("conformance: reusing %s", path)
				return &rep, nil
			}
		}
	}
	logf("conformance on %s %s", o.Provider, o.Device)
	work, err := os.MkdirTemp("", "xrcbench-qualify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rep, err := verbs.Conform(verbs.Options{Provider: o.Provider, Device: o.Device, Sim: verbs.SimOptions{Semantics: o.SimSemantics}}, work)
	if err != nil {
		// Not fatal: every conformance row is then an error, and the runs
		// still say what they can.
		rep = verbs.ConformReport{Provider: o.Provider, Device: o.Device,
			Checks: []verbs.Check{{ID: "conform", Name: "conformance could run", Status: verbs.CheckFail, Detail: err.Error()}}}
	}
	data, _ := json.MarshalIndent(rep, "", "  ")
	if err := results.WriteFileAtomic(path, append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return &rep, nil
}

// conformanceRows judges the checks the plan requires.
func conformanceRows(req Conformance, rep *verbs.ConformReport) []Row {
	if rep == nil {
		return nil
	}
	var rows []Row
	for _, c := range rep.Checks {
		required := req.All || slices.Contains(req.IDs, c.ID)
		r := Row{Name: c.ID + " " + c.Name, Message: c.Detail, Evidence: []string{ConfFile}}
		switch {
		case c.Status == verbs.CheckFail && required:
			r.Verdict = Fail
		case c.Status == verbs.CheckPass || c.Status == verbs.CheckSelfTest:
			r.Verdict = Pass
			if c.Status == verbs.CheckSelfTest {
				r.Message = "self-test (passes by construction, not evidence): " + c.Detail
			}
		case c.Status == verbs.CheckSkip && required && !req.All:
			// Named in the plan, so it must run.
			r.Verdict, r.Message = Fail, "required by the plan but skipped: "+c.Detail
		default:
			r.Verdict = Skipped
			if c.Status == verbs.CheckFail {
				r.Message = "failed, not required by the plan: " + c.Detail
			}
		}
		rows = append(rows, r)
	}
	for _, id := range req.IDs {
		if !slices.ContainsFunc(rep.Checks, func(c verbs.Check) bool { return c.ID == id }) {
			rows = append(rows, Row{Name: id, Verdict: Fail, Message: "required by the plan, but conform has no check " + id})
		}
	}
	return rows
}

// stepConfig is the engine configuration of one step.
func stepConfig(o Options, p *Plan, s RunStep, cpus int) (bench.Config, error) {
	spec, err := workloads.Get(s.Workload)
	if err != nil {
		return bench.Config{}, err
	}
	reps, dur, iters := p.Repetitions, time.Duration(p.Duration), p.Iterations
	if s.Repetitions > 0 {
		reps = s.Repetitions
	}
	if s.Duration > 0 || s.Iterations > 0 {
		dur, iters = time.Duration(s.Duration), s.Iterations
	}
	procs, threads := s.Procs.Resolve(cpus), s.Threads.Resolve(cpus)
	cmd := []string{"xrcbench", "run", "--provider=" + o.Provider, "--workload=" + s.Workload,
		fmt.Sprintf("--procs=%d", procs), fmt.Sprintf("--threads=%d", threads), fmt.Sprintf("--qps=%d", s.QPs),
		fmt.Sprintf("--repetitions=%d", reps), "--warmup=" + time.Duration(p.Warmup).String()}
	if o.Device != "" {
		cmd = append(cmd, "--device="+o.Device)
	}
	if o.Provider == "sim" {
		cmd = append(cmd, "--sim-semantics="+string(o.SimSemantics))
		if c := o.SimCost.String(); c != "" {
			cmd = append(cmd, "--sim-cost="+c)
		}
	}
	if iters > 0 {
		cmd = append(cmd, fmt.Sprintf("--iterations=%d", iters))
	} else {
		cmd = append(cmd, "--duration="+dur.String())
	}
	for _, k := range slices.Sorted(mapsKeys(o.Labels)) {
		cmd = append(cmd, "--label="+k+"="+o.Labels[k])
	}
	cfg := bench.Config{
		Provider: o.Provider, Device: o.Device, Workload: spec, WorkloadArg: s.Workload,
		Procs: procs, Threads: threads, QPs: s.QPs, Duration: dur, Iterations: iters,
		Warmup: time.Duration(p.Warmup), Repetitions: reps, Seed: 1, Interval: time.Second,
		SimSemantics: o.SimSemantics, SimCost: o.SimCost, Labels: o.Labels, CommandLine: cmd,
		Out: filepath.Join(o.Out, RunsDir, s.Name),
	}
	if iters > 0 {
		cfg.Duration = 0
	}
	return cfg, cfg.Validate()
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// CheckRuns checks every step's configuration before anything runs: a
// plan whose run cannot be configured here is bad input.
func CheckRuns(o Options) error {
	cpus := AllowedCPUs()
	for _, s := range o.Plan.Runs {
		if _, err := stepConfig(o, o.Plan, s, cpus); err != nil {
			return &PlanError{File: o.Plan.File, Line: s.Line, Msg: fmt.Sprintf("run %s: %v", s.Name, err)}
		}
	}
	return nil
}

// runStep runs one step, or reuses its finished folder under --resume.
func runStep(ctx context.Context, o Options, s RunStep, cpus int, logf func(string, ...any)) (RunInfo, *report.Run) {
	cfg, err := stepConfig(o, o.Plan, s, cpus)
	info := RunInfo{Name: s.Name, Dir: filepath.Join(RunsDir, s.Name), Command: strings.Join(cfg.CommandLine, " ")}
	if err != nil {
		info.Status, info.Error = results.StatusFailed, err.Error()
		return info, nil
	}
	if o.Resume {
		if run, err := report.LoadRun(cfg.Out); err == nil && run.Result.Status == results.StatusOK &&
			slices.Equal(run.Result.Config.CommandLine, cfg.CommandLine) {
			logf("run %s: reusing the finished run in %s", s.Name, cfg.Out)
			info.Status, info.Reused = results.StatusOK, true
			return info, run
		}
	}
	logf("run %s: %s", s.Name, info.Command)
	res, err := bench.Run(ctx, cfg, o.Engine)
	if res != nil {
		info.Status = res.Status
	}
	if err != nil {
		info.Error = err.Error()
		if info.Status == "" {
			info.Status = results.StatusFailed
		}
	}
	run, lerr := report.LoadRun(cfg.Out)
	if lerr != nil {
		if info.Error == "" {
			info.Error = lerr.Error()
		}
		return info, nil
	}
	if run.Result.Status == results.StatusFailed {
		return info, nil
	}
	return info, run
}

// Load reads a qualification folder's qualification.json.
func Load(dir string) (*Qualification, error) {
	data, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return nil, fmt.Errorf("%s: not a finished qualification folder (%v)", dir, err)
	}
	var q Qualification
	if err := json.Unmarshal(data, &q); err != nil || q.Schema != Schema {
		return nil, fmt.Errorf("%s: not a qualification.json of schema %s", filepath.Join(dir, JSONFile), Schema)
	}
	return &q, nil
}

// verdict is the whole qualification's verdict and its one-line summary.
func verdict(q *Qualification) (string, string) {
	var failed, errored, skipped []string
	for _, set := range [][]Row{q.Conformance, q.Criteria, q.Soak} {
		for _, r := range set {
			switch r.Verdict {
			case Fail:
				failed = append(failed, r.Name)
			case Error:
				errored = append(errored, r.Name)
			case Skipped:
				skipped = append(skipped, r.Name)
			}
		}
	}
	var bad []string
	for _, r := range q.Runs {
		if r.Status != results.StatusOK {
			bad = append(bad, r.Name+" "+r.Status)
		}
	}
	n := len(q.Conformance) + len(q.Criteria) + len(q.Soak)
	switch {
	case len(failed)+len(errored)+len(bad) == 0:
		s := fmt.Sprintf("PASS: %d of %d checks passed", n-len(skipped), n)
		if len(skipped) > 0 {
			s += fmt.Sprintf(", %d not judged (%s)", len(skipped), strings.Join(skipped, "; "))
		}
		return Pass, s
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d failed: %s", len(failed), strings.Join(failed, "; ")))
	}
	if len(errored) > 0 {
		parts = append(parts, fmt.Sprintf("%d could not be judged: %s", len(errored), strings.Join(errored, "; ")))
	}
	if len(bad) > 0 {
		parts = append(parts, fmt.Sprintf("runs not ok: %s", strings.Join(bad, ", ")))
	}
	return Fail, "FAIL: " + strings.Join(parts, "; ")
}

// soakDuration is --soak, or the plan's.
func (o Options) soakDuration() time.Duration {
	if o.Soak > 0 {
		return o.Soak
	}
	return time.Duration(o.Plan.Soak.Duration)
}
