package qualify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/conform"
	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/internal/runfolder"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
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
	// Inconclusive: a change beyond a relative limit that compare's test
	// cannot tell from noise. Not a pass; the whole qualification is
	// inconclusive when it is the worst verdict.
	Inconclusive = "inconclusive"
	// NotJudged: the whole qualification's verdict when its runs were
	// disturbed beyond the plan's quality thresholds (quality.go): its
	// figures say more about the machine than the firmware, so it neither
	// passes nor fails.
	NotJudged = "not_judged"
)

// Options configure Run.
type Options struct {
	Provider, Device string
	// IBPort and GIDIndex: the port and GID every step and conform use
	// (rdma, legacy); 0 and nil automatic.
	IBPort       int
	GIDIndex     *int
	Plan         *Plan
	Baseline     string // an earlier qualification's folder; "" none
	Out          string
	Resume       bool
	Labels       map[string]string
	SimSemantics verbs.Semantics
	SimCost      verbs.Cost
	Engine       bench.Options // how workers are started
	Log          io.Writer     // one line per step
	Alpha        float64       // compare's; 0: report.DefaultAlpha
	Soak         time.Duration // the soak's length; 0: the plan's (none when it has none)
	Overrides    Overrides     // the command line's replacements of the plan's figures
	// NoPDF leaves qualification.pdf out (Chromium takes seconds to start);
	// pdf_error says it was not asked for.
	NoPDF bool
	// AcceptBaseline judges against a baseline whose own verdict was fail
	// or not judged, which is otherwise refused; the verdict says so.
	AcceptBaseline bool
	// AcceptDisturbed judges runs disturbed beyond the plan's quality
	// thresholds, which are otherwise not judged; the verdict says so.
	AcceptDisturbed bool
}

// Overrides replace the plan's duration, repetitions and warm-up in every
// step (a step's own included): a quick qualification, such as a CI
// smoke test, from the default plan or any other, unedited. Unset fields
// (nil, 0) leave the plan's. qualification.json records them.
type Overrides struct {
	Duration    *results.Duration `json:"duration,omitempty"` // measured by time, the steps' iterations replaced too
	Repetitions int               `json:"repetitions,omitempty"`
	Warmup      *results.Duration `json:"warmup,omitempty"`
}

func (v Overrides) none() bool { return v == Overrides{} }

// Qualification is qualification.json.
type Qualification struct {
	Schema  string `json:"schema"`
	Verdict string `json:"verdict"` // pass, fail or inconclusive
	Summary string `json:"summary"`
	// Headline is the verdict in one short line (Headline), the page's
	// and the terminal's first; Summary says it all in one long one.
	Headline    string            `json:"headline,omitempty"`
	Started     time.Time         `json:"started"`
	Finished    time.Time         `json:"finished"`
	Plan        string            `json:"plan"` // its name
	PlanFile    string            `json:"plan_file,omitempty"`
	Provider    string            `json:"provider"`
	Device      *results.Device   `json:"device,omitempty"` // the first run's device: name, fw_ver, ...
	Labels      map[string]string `json:"labels,omitempty"`
	Baseline    *BaselineInfo     `json:"baseline,omitempty"`
	Overrides   *Overrides        `json:"overrides,omitempty"` // the plan's figures the command line replaced
	Conformance []Row             `json:"conformance"`
	Runs        []RunInfo         `json:"runs"`
	Criteria    []Row             `json:"criteria"`
	SoakRuns    []SoakRun         `json:"soak_runs,omitempty"`
	Soak        []Row             `json:"soak,omitempty"`
	// Warnings are the runs' own (result.json's warnings, and the test
	// double's banner), each once with the runs that gave it.
	Warnings []RunWarning `json:"warnings,omitempty"`
	// TestDouble names the runs measured through the libibverbs test
	// double: not hardware.
	TestDouble []string `json:"test_double_runs,omitempty"`
	// Wall time of the conformance checks and of the soak, in seconds.
	ConformanceSeconds float64 `json:"conformance_seconds,omitempty"`
	SoakSeconds        float64 `json:"soak_seconds,omitempty"`
	// BOM is the first measured run's bill of materials (bom.go),
	// PlanAsRun the plan with its real durations and repetitions.
	BOM       *results.BOM `json:"bom,omitempty"`
	PlanAsRun *PlanAsRun   `json:"plan_as_run,omitempty"`
	// Quality is the plan's thresholds on disturbed runs as applied,
	// Disturbed the reasons the runs were beyond them (quality.go): with
	// any, the verdict is not_judged unless AcceptedDisturbed.
	Quality           *Quality `json:"quality,omitempty"`
	Disturbed         []string `json:"disturbed,omitempty"`
	AcceptedDisturbed bool     `json:"accepted_disturbed,omitempty"`
	// PDF is qualification.html printed by headless Chromium (pdf.go),
	// relative to the folder; PDFError why there is none (no Chromium,
	// it failed or ran past its time), which is no failed qualification.
	PDF      string `json:"pdf,omitempty"`
	PDFError string `json:"pdf_error,omitempty"`
}

// RunWarning is one warning and the runs that gave it.
type RunWarning struct {
	Runs     []string `json:"runs"`
	Kind     string   `json:"kind,omitempty"`     // results.Warning's
	Severity string   `json:"severity,omitempty"` // results.Warning's
	Text     string   `json:"text"`
}

// BaselineInfo identifies the baseline qualification and what it was:
// its own verdict, date, bill of materials and plan, so that a reader of
// the candidate's sees what it was judged against.
type BaselineInfo struct {
	Dir       string            `json:"dir"`
	Verdict   string            `json:"verdict,omitempty"`
	Summary   string            `json:"summary,omitempty"`
	Headline  string            `json:"headline,omitempty"`
	Started   time.Time         `json:"started"`
	Finished  time.Time         `json:"finished"`
	Device    *results.Device   `json:"device,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	BOM       *results.BOM      `json:"bom,omitempty"`
	PlanAsRun *PlanAsRun        `json:"plan_as_run,omitempty"`
	// Accepted: its verdict was fail or not judged, and --accept-baseline
	// said to judge against it all the same.
	Accepted bool `json:"accepted,omitempty"`
}

// checkBaseline refuses a baseline whose own verdict was fail or not
// judged, unless accepted: a candidate measured against a failed
// qualification would inherit its failure as its reference, silently.
// An inconclusive baseline is taken: its own measurements passed or
// failed nothing, only its comparison with its baseline was undecided.
func checkBaseline(dir string, b *Qualification, accept bool) (accepted bool, err error) {
	if b.Verdict != Fail && b.Verdict != NotJudged {
		return false, nil
	}
	if accept {
		return true, nil
	}
	return false, usagef("--baseline %s: its own verdict was %s (%s); qualify the baseline again, or give --accept-baseline to judge against it anyway",
		dir, verdictWord(b.Verdict), notPassed(b, 3))
}

// verdictWord is a verdict as the summary line writes it.
func verdictWord(v string) string { return strings.ToUpper(strings.ReplaceAll(v, "_", " ")) }

// notPassed names up to n of q's checks that did not pass, or the runs
// that were not ok, or its reasons for not being judged, in few words.
func notPassed(q *Qualification, n int) string {
	var named []string
	named = append(named, q.Disturbed...)
	for _, set := range [][]Row{q.Conformance, q.Criteria, q.Soak} {
		for _, r := range set {
			if r.Verdict == Fail || r.Verdict == Error {
				b := r.Brief
				if b == "" {
					b = r.Name
				}
				named = append(named, b)
			}
		}
	}
	for _, r := range q.Runs {
		if r.Status != results.StatusOK {
			named = append(named, "run "+r.Name+" "+r.Status)
		}
	}
	if len(named) == 0 {
		return "nothing named"
	}
	return firstN(named, n)
}

// RunInfo is one run of the battery.
type RunInfo struct {
	Name    string `json:"name"`
	Dir     string `json:"dir"` // relative to the qualification folder
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
	Reused  bool   `json:"reused,omitempty"` // --resume found it finished
	Command string `json:"command"`
	// Seconds is the run's wall time: its result's start to finish, or
	// the time the step took when it left no result.
	Seconds float64 `json:"seconds"`
	// CommandEnv is the environment Command needs to measure the same
	// again, from the run's result (command_env): the test double's.
	CommandEnv []string `json:"command_env,omitempty"`
	// Report is the run's report.html, relative to the qualification
	// folder, which the page links to; ReportError why it is missing.
	Report      string `json:"report,omitempty"`
	ReportError string `json:"report_error,omitempty"`
}

// Row is one judged item: a criterion or a conformance check.
type Row struct {
	Name    string   `json:"name"`
	Run     string   `json:"run,omitempty"`
	Verdict string   `json:"verdict"`
	Value   *float64 `json:"value,omitempty"` // ns or ops/s (an absolute limit's worst repetition), or the change in percent
	Limit   *float64 `json:"limit,omitempty"`
	Unit    string   `json:"unit,omitempty"` // ns, ops/s or %
	P       *float64 `json:"p,omitempty"`    // Holm-adjusted, relative criteria
	// Absolute limits: the repetition that decided (the worst, counted
	// from 1) and the figure over all repetitions, shown, not judged.
	Repetition *int     `json:"repetition,omitempty"`
	Pooled     *float64 `json:"pooled,omitempty"`
	Message    string   `json:"message"`
	// Brief is the criterion and its magnitude in a few words, for the
	// one-line summary: "steady-1 reg.p50 +18.1% (limit 5%, p 0.016)".
	Brief    string   `json:"brief,omitempty"`
	Evidence []string `json:"evidence,omitempty"` // paths relative to the folder
	Seconds  float64  `json:"seconds,omitempty"`  // the time judging took
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
	var acceptedBaseline bool
	if base != nil {
		a, err := checkBaseline(o.Baseline, base, o.AcceptBaseline)
		if err != nil {
			return nil, err
		}
		acceptedBaseline = a
	}
	// Locked for the whole qualification, as run locks its --out: two
	// qualifications (two --resume of one folder) would both run and the
	// last to finish would decide qualification.json.
	unlock, err := runfolder.Lock(o.Out)
	if errors.Is(err, runfolder.ErrOutFolder) {
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
		Provider: o.Provider, Labels: o.Labels, PlanAsRun: planAsRun(o)}
	if base != nil {
		q.Baseline = &BaselineInfo{Dir: o.Baseline, Verdict: base.Verdict, Summary: base.Summary, Headline: base.Headline, Started: base.Started, Finished: base.Finished,
			Device: base.Device, Labels: base.Labels, BOM: base.BOM, PlanAsRun: base.PlanAsRun, Accepted: acceptedBaseline}
	}
	if !o.Overrides.none() {
		v := o.Overrides
		q.Overrides = &v
	}

	// Conformance.
	t0 := time.Now()
	conf, err := conformance(o, logf)
	if err != nil {
		return nil, err
	}
	q.ConformanceSeconds = time.Since(t0).Seconds()
	q.Conformance = conformanceRows(o.Plan.Conformance, conf)

	// The battery.
	cpus := AllowedCPUs()
	runs := map[string]*report.Run{}
	for _, step := range o.Plan.Runs {
		if err := ctx.Err(); err != nil {
			q.Runs = append(q.Runs, RunInfo{Name: step.Name, Dir: filepath.Join(RunsDir, step.Name), Status: results.StatusFailed, Error: "not run: " + context.Cause(ctx).Error()})
			continue
		}
		t0 := time.Now()
		info, run := runStep(ctx, o, step, cpus, logf)
		info.Seconds = time.Since(t0).Seconds()
		if run != nil {
			info.Seconds = run.Result.Finished.Sub(run.Result.Started).Seconds()
		}
		q.Runs = append(q.Runs, info)
		if run != nil {
			runs[step.Name] = run
			if q.Device == nil {
				q.Device = run.Result.Environment.Device
			}
			if q.BOM == nil {
				q.BOM = run.Result.Environment.BOM
			}
		}
	}

	// Each measured run's own report, which the page links to: the
	// evidence behind a criterion is the run's full figures.
	for i := range q.Runs {
		if runs[q.Runs[i].Name] != nil {
			q.Runs[i].Report, q.Runs[i].ReportError = runReport(o.Out, q.Runs[i].Dir)
		}
	}

	// The criteria.
	q.Criteria = judge(o, base, runs)

	// The soak.
	if d := o.soakDuration(); d > 0 {
		t0 := time.Now()
		q.SoakRuns, q.Soak = soak(ctx, o, d, logf)
		q.SoakSeconds = time.Since(t0).Seconds()
	}
	q.Warnings, q.TestDouble = gatherWarnings(o.Plan.Runs, runs, q.SoakRuns)
	qc := o.Plan.Quality
	q.Quality = &qc
	q.Disturbed = disturbed(qc, o.Plan.Runs, runs)
	q.AcceptedDisturbed = o.AcceptDisturbed && len(q.Disturbed) > 0
	q.Finished = time.Now().UTC()
	q.Verdict, q.Summary = verdict(q)
	q.Headline = Headline(q)
	if err := write(ctx, o.Out, q, runs, base, o); err != nil {
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
		// Bounded, regular files only: a FIFO planted as plan.yaml hung
		// --resume, and a link to /dev/zero grew it past 3.6 GB.
		old, err := regfile.ReadFile(planPath, regfile.MaxPlan)
		if errors.Is(err, regfile.ErrRefused) {
			return usagef("--resume: %v", err)
		}
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

func conformance(o Options, logf func(string, ...any)) (*conform.ConformReport, error) {
	path := filepath.Join(o.Out, ConfFile)
	if o.Plan.Conformance.None {
		return nil, nil
	}
	if o.Resume {
		// What is not a regular file of a sane size is not reused (and
		// is replaced below), not read: a FIFO would hang the read.
		data, err := regfile.ReadFile(path, regfile.MaxConformance)
		if err == nil {
			var rep conform.ConformReport
			if json.Unmarshal(data, &rep) == nil && len(rep.Checks) > 0 {
				logf("conformance: reusing %s", path)
				return &rep, nil
			}
		} else if errors.Is(err, regfile.ErrRefused) {
			logf("conformance: not reusing %v", err)
		}
	}
	logf("conformance on %s %s", o.Provider, o.Device)
	work, err := os.MkdirTemp("", "xrcbench-qualify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rep, err := conform.Conform(verbs.Options{Provider: o.Provider, Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, Sim: verbs.SimOptions{Semantics: o.SimSemantics}}, work)
	if err != nil {
		// Not fatal: every conformance row is then an error, and the runs
		// still say what they can.
		rep = conform.ConformReport{Provider: o.Provider, Device: o.Device,
			Checks: []conform.Check{{ID: "conform", Name: "conformance could run", Status: conform.CheckFail, Detail: err.Error()}}}
	}
	data, _ := json.MarshalIndent(rep, "", "  ")
	if err := results.WriteFileAtomic(path, append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return &rep, nil
}

// conformanceRows judges the checks the plan requires.
func conformanceRows(req Conformance, rep *conform.ConformReport) []Row {
	if rep == nil {
		return nil
	}
	var rows []Row
	for _, c := range rep.Checks {
		required := req.All || slices.Contains(req.IDs, c.ID)
		r := Row{Name: c.ID + " " + c.Name, Message: c.Detail, Evidence: []string{ConfFile}}
		switch {
		case c.Status == conform.CheckFail && required:
			r.Verdict = Fail
		case c.Status == conform.CheckPass || c.Status == conform.CheckSelfTest:
			r.Verdict = Pass
			if c.Status == conform.CheckSelfTest {
				r.Message = "self-test (passes by construction, not evidence): " + c.Detail
			}
		case c.Status == conform.CheckSkip && required && !req.All:
			// Named in the plan, so it must run.
			r.Verdict, r.Message = Fail, "required by the plan but skipped: "+c.Detail
		default:
			r.Verdict = Skipped
			if c.Status == conform.CheckFail {
				r.Message = "failed, not required by the plan: " + c.Detail
			}
		}
		rows = append(rows, r)
	}
	for _, id := range req.IDs {
		if !slices.ContainsFunc(rep.Checks, func(c conform.Check) bool { return c.ID == id }) {
			rows = append(rows, Row{Name: id, Verdict: Fail, Message: "required by the plan, but conform has no check " + id})
		}
	}
	return rows
}

// settings are the qualification's own run settings, which every step
// and the soak start from: run's defaults, then the provider, device, sim
// model and labels of the options and the plan's QP state.
func (o Options) settings() bench.Settings {
	s := bench.Defaults()
	s.Provider, s.Device, s.IBPort = o.Provider, o.Device, o.IBPort
	if o.GIDIndex != nil {
		s.GIDIndex = *o.GIDIndex
	}
	if o.SimSemantics != "" {
		s.SimSemantics = string(o.SimSemantics)
	}
	s.SimCost = o.SimCost.String()
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		s.Labels = append(s.Labels, k+"="+o.Labels[k])
	}
	if o.Plan.QPState != "" {
		s.QPState = o.Plan.QPState
	}
	return s
}

// stepConfig is the engine configuration of one step: the qualification's
// settings, overlaid by the plan's figures, the step's own, then the
// command line's overrides. bench.Settings makes the Config and the
// command line that reproduces it, as for run.
func stepConfig(o Options, p *Plan, step RunStep, cpus int) (bench.Config, error) {
	s := o.settings()
	s.Workload = step.Workload
	s.Procs, s.Threads, s.QPs = step.Procs.Resolve(cpus), step.Threads.Resolve(cpus), step.QPs
	// Nxcpus is named as written: the count it makes here (an overflow
	// can make it negative) says little. Checked as asked, before any
	// scaling down: a count no machine could run is a bad plan.
	for _, n := range []struct {
		name  string
		c     Count
		got   int
		limit int
	}{{"procs", step.Procs, s.Procs, bench.MaxProcs}, {"threads", step.Threads, s.Threads, bench.MaxThreads}} {
		if n.c.PerCPU > 0 && (n.got > n.limit || n.got < 1) {
			return bench.Config{}, fmt.Errorf("%s %s: more than %d on this machine's %d CPUs", n.name, n.c, n.limit, cpus)
		}
	}
	s.Procs, s.Threads, _ = step.Fit(cpus)
	s.Repetitions, s.Duration, s.Iterations, s.Warmup = p.Repetitions, time.Duration(p.Duration), p.Iterations, time.Duration(p.Warmup)
	if step.Repetitions > 0 {
		s.Repetitions = step.Repetitions
	}
	if step.Duration > 0 || step.Iterations > 0 {
		s.Duration, s.Iterations = time.Duration(step.Duration), step.Iterations
	}
	if step.QPState != "" {
		s.QPState = step.QPState
	}
	if v := o.Overrides; v.Duration != nil {
		s.Duration, s.Iterations = v.Duration.D(), 0
	}
	if v := o.Overrides; v.Repetitions > 0 {
		s.Repetitions = v.Repetitions
	}
	if v := o.Overrides; v.Warmup != nil {
		s.Warmup = v.Warmup.D()
	}
	s.Out = filepath.Join(o.Out, RunsDir, step.Name)
	return s.Config()
}

// StepConfig is the engine configuration the step runs with here.
func StepConfig(o Options, step RunStep) (bench.Config, error) {
	return stepConfig(o, o.Plan, step, AllowedCPUs())
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
			slices.Equal(run.Result.Config.CommandLine, cfg.CommandLine) && o.sameEnv(run.Result.Config.CommandEnv) {
			logf("run %s: reusing the finished run in %s", s.Name, cfg.Out)
			info.Status, info.Reused, info.CommandEnv = results.StatusOK, true, run.Result.Config.CommandEnv
			return info, run
		}
	}
	if _, _, scaled := s.Fit(cpus); scaled != "" {
		logf("run %s: %s", s.Name, scaled)
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
	info.CommandEnv = run.Result.Config.CommandEnv
	if run.Result.Status == results.StatusFailed {
		return info, nil
	}
	return info, run
}

// sameEnv reports whether an earlier run's measured environment (its
// command_env, the test double's) is this one's: a run through another
// library, devices or costs measured something else and is not reused.
func (o Options) sameEnv(earlier []string) bool {
	return len(earlier) == 0 || slices.Equal(earlier, bench.MeasuredEnv(append(os.Environ(), o.Engine.WorkerEnv...)))
}

// Load reads a qualification folder's qualification.json.
func Load(dir string) (*Qualification, error) {
	// A baseline is often another user's folder: bounded, regular files
	// only, so that its qualification.json cannot hang or exhaust this.
	data, err := regfile.ReadFile(filepath.Join(dir, JSONFile), regfile.MaxQualification)
	if errors.Is(err, regfile.ErrRefused) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a finished qualification folder (%v)", dir, err)
	}
	var q Qualification
	if err := json.Unmarshal(data, &q); err != nil || q.Schema != Schema {
		return nil, fmt.Errorf("%s: not a qualification.json of schema %s", filepath.Join(dir, JSONFile), Schema)
	}
	return &q, nil
}

// soakDuration is --soak, or the plan's.
func (o Options) soakDuration() time.Duration {
	if o.Soak > 0 {
		return o.Soak
	}
	return time.Duration(o.Plan.Soak.Duration)
}

// runReport writes the report of the run folder dir (relative to out)
// into it, unless a --resume finds one there already, and returns its
// path relative to out; a report that cannot be written is not a failed
// qualification, and the error says why it is missing.
func runReport(out, dir string) (string, string) {
	rel := filepath.Join(dir, report.HTMLFile)
	if _, err := os.Stat(filepath.Join(out, rel)); err == nil {
		return rel, ""
	}
	if _, err := report.Generate([]string{filepath.Join(out, dir)}, ""); err != nil {
		return "", err.Error()
	}
	return rel, ""
}
