package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

func init() { subcommands = append(subcommands, newQualifyCmd) }

// qualifyFlags are qualify's flags as given.
type qualifyFlags struct {
	provider, device, baseline, planFile, out string
	simSemantics, simCost                     string
	resume, showPlan, quiet, noPDF            bool
	allowInconclusive, json                   bool
	acceptBaseline, acceptDisturbed           bool
	ibPort, gidIndex                          int
	soak                                      time.Duration
	labels                                    []string
	duration, warmup                          time.Duration // overrides of the plan's, when given
	repetitions                               int
}

func newQualifyCmd(stdout, stderr io.Writer) *cobra.Command {
	var fl qualifyFlags
	cmd := &cobra.Command{
		Use:   "qualify",
		Short: "Qualify a device's firmware: conformance, a battery of runs, criteria; JSON, JUnit and HTML",
		Long: `qualify runs a qualification plan against one device: the conformance checks
S1–S15, then the plan's battery of benchmark runs (one run folder each under
--out/runs/), then it judges the plan's criteria and gives one verdict.

The criteria are of two kinds:

  absolute limits        unreg_last.p99 <= 2ms, reg.ops_per_sec >= 100k
                         (on every repetition: the worst one decides and is
                         named; the figure over all repetitions is shown)
  relative to --baseline reg.p50 regression <= 5%
                         (compare's Mann-Whitney U test against the baseline
                         qualification's run of the same name, Holm-corrected
                         over the run's relative criteria: pass when the
                         measured change is within the limit, fail when it
                         is beyond it and significant, inconclusive when it
                         is beyond it but not significant, or the
                         repetitions are too few for the test (it names how
                         many are needed); only regressions count, an
                         improvement passes)

The plan is YAML, strictly read (an unknown key or a bad value is an error
naming its line); --show-plan prints the default plan, which is sized for a
real adapter: write your own from it for anything smaller. --baseline is an
earlier qualification's --out folder; without one, relative criteria are not
judged (skipped). A baseline whose own verdict was fail or not judged is
refused (exit 2) unless --accept-baseline, and then the verdict line and the
page say so; the baseline's verdict, date, labels, device, plan and bill of
materials are shown beside the candidate's.

--out gets qualification.json (every criterion: value, limit, verdict,
evidence paths; the runs' warnings), junit.xml (a testcase per conformance
check, run and criterion, the numbers in each failure's message, an
inconclusive criterion skipped with type "inconclusive", the runs'
warnings as properties), qualification.html (one file, plots inline: a
"Not hardware" banner for the test double, the verdict, the criteria table,
the device; then each criterion with its plot, the runs' warnings grouped
by kind, the device and firmware, the bill of materials, the plan as run,
the baseline beside the candidate, each run's report.html), plots/, and
qualification.pdf: the page printed by headless Chromium (chromium on
PATH), its first screen on the first page. Without Chromium, or when it
fails or takes over 2 minutes (it is killed), there is no PDF: the reason
is qualification.json's pdf_error and one line on stderr, and the verdict
and exit status are the same; --no-pdf skips it.
The verdict is printed in one short line (qualification.json's headline),
"FAIL: 7 of 42 checks failed, 1 inconclusive (fw=1.0 → fw=1.1)", then a
line each for what did not pass, with its magnitude.

--soak DURATION (or the plan's soak:) then runs lifecycle and churn, half the
time each, sampling every soak interval (default 10s) the device's live QPs
(sim and the test double: the device inspected; rdma and legacy: the
kernel's list of --device's QPs, read through RDMA netlink as devices reads
it; where the kernel cannot be asked, not sampled, and the folder says
why), the workers' RSS and PSS, and each interval's p99. Verdicts: the
live QPs come back to their start (the lowest count of each tenth of the
soak; a leak names the tenth it grew in); memory flat
within the plan's memory_growth (default 10%) plus 4 MiB; the last tenth's
p99 within p99_drift (default 50%) of the first tenth's. --resume continues an interrupted
qualification in its folder with the same plan: conformance and every run
that finished (status ok) are reused, the rest (and the soak) run again.
The folder is locked while a qualification runs in it (.<name>.lock beside
it): a second one, another --resume say, is refused at once, naming the
first one's pid.

--duration, --repetitions and --warmup replace the plan's, in every run of
the battery (a run's own duration, iterations or repetitions included;
--duration measures by time): a quick qualification, such as a CI smoke
test, from an unedited plan. qualification.json records them (overrides),
and each run's recorded command line says what it measured. Each run
measures with the plan's qp_state (default rtr, as run's --qp-state; a run
of the plan may set its own).

Runs disturbed beyond the plan's quality: thresholds (min_cpu_share 50%:
the workers' CPU time over what their threads could use, in each repetition
of a loop workload; max_duration_departure 25%: a repetition's length from
the asked duration; warnings [cpu_starved]: the runs' warning kinds) are not
judged: the verdict is NOT JUDGED with the reasons, neither pass nor fail,
exit 3. --accept-disturbed judges them anyway, and the verdict line says so.

Exit status: 0 every check passed; 1 a check failed or could not be judged,
a run failed, or a check was inconclusive (0 with --allow-inconclusive when
nothing worse happened); 2 bad usage or a bad plan (the line is named);
3 not judged: the runs were disturbed (see above).`,
		Example: `  # the default plan on a real adapter, judged against an earlier qualification
  xrcbench qualify --provider rdma --device mlx5_0 --label fw=22.31.1014 \
      --baseline quals/fw-22.30 --out quals/fw-22.31

  # a plan of your own, started from the default
  xrcbench qualify --show-plan > plan.yaml
  xrcbench qualify --provider rdma --plan plan.yaml --out quals/try

  # a CI smoke qualification of the default plan on the test double:
  # 1s per repetition, 2 repetitions, no warm-up
  LD_LIBRARY_PATH=build/fakeverbs xrcbench qualify --provider rdma \
      --duration 1s --repetitions 2 --warmup 0s --out quals/smoke

  # continue after an interruption
  xrcbench qualify --provider rdma --plan plan.yaml --out quals/try --resume`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := qualify.LoadPlan(fl.planFile)
			if err != nil {
				return usageError{err}
			}
			if fl.showPlan {
				_, err := stdout.Write([]byte(plan.Source))
				return outputErr(err)
			}
			o, err := fl.options(cmd.Flags(), plan, stderr)
			if err != nil {
				return err
			}
			return runQualify(stdout, stderr, o, fl)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&fl.provider, "provider", "sim", "provider: "+bench.ProviderNames())
	fs.StringVarP(&fl.device, "device", "d", "", "device name (rdma, legacy); default the first with XRC")
	registerPath(fs, &fl.ibPort, &fl.gidIndex)
	fs.StringVar(&fl.baseline, "baseline", "", "an earlier qualification's folder: relative criteria are judged against its runs")
	fs.StringVar(&fl.planFile, "plan", "", "plan file (YAML); default the embedded plan (--show-plan prints it)")
	fs.StringVar(&fl.out, "out", "", "qualification folder: new or empty, or with --resume an interrupted one (default runs/<UTC time>-qualify-<provider>)")
	fs.BoolVar(&fl.resume, "resume", false, "continue the qualification in --out, reusing its conformance and finished runs")
	fs.BoolVar(&fl.showPlan, "show-plan", false, "print the plan (the default, or --plan's) and exit")
	fs.StringArrayVar(&fl.labels, "label", nil, "key=value stored with every run and the qualification (repeatable), e.g. fw=22.31.1014")
	fs.StringVar(&fl.simSemantics, "sim-semantics", "legacy", "sim provider: legacy, legacy-mlnx or upstream")
	fs.StringVar(&fl.simCost, "sim-cost", "", "sim provider: busy-wait per op, e.g. destroy=200us")
	fs.DurationVar(&fl.soak, "soak", 0, "after the runs, soak for this long: lifecycle then churn, half each, sampling live QPs, memory and p99 (default: the plan's soak, if any)")
	fs.DurationVar(&fl.duration, "duration", 0, "measure every run this long per repetition, in place of the plan's duration or iterations (default: the plan's)")
	fs.IntVar(&fl.repetitions, "repetitions", 0, "repetitions of every run, in place of the plan's (default: the plan's)")
	fs.DurationVar(&fl.warmup, "warmup", 0, "warm-up of every run, in place of the plan's; 0s for none (default: the plan's)")
	fs.BoolVar(&fl.noPDF, "no-pdf", false, "do not print qualification.pdf (headless Chromium takes seconds to start)")
	fs.BoolVarP(&fl.quiet, "quiet", "q", false, "print nothing but errors (the folder is written as always)")
	fs.BoolVar(&fl.json, "json", false, "print the verdict as one JSON document on stdout (status, summary, folder, each conformance check's, criterion's and soak check's verdict); the steps stay on stderr")
	fs.BoolVar(&fl.acceptBaseline, "accept-baseline", false, "judge against a --baseline whose own verdict was fail or not judged (refused otherwise); the verdict line and the page say so")
	fs.BoolVar(&fl.acceptDisturbed, "accept-disturbed", false, "judge runs disturbed beyond the plan's quality thresholds (not judged otherwise, exit 3); the verdict line says so")
	fs.BoolVar(&fl.allowInconclusive, "allow-inconclusive", false, "exit 0 when the verdict is inconclusive (a change beyond a limit the test cannot confirm) and nothing failed")
	return cmd
}

// options reads the flags into a qualification's options. Bad values are
// bad usage (exit 2); a provider not built here is a failure (exit 1).
func (fl *qualifyFlags) options(flags *pflag.FlagSet, plan *qualify.Plan, stderr io.Writer) (qualify.Options, error) {
	var none qualify.Options
	if err := checkProvider(fl.provider); err != nil {
		return none, err
	}
	ls, err := results.ParseLabels(fl.labels)
	if err != nil {
		return none, usagef("--label: %v", err)
	}
	sem, err := verbs.ParseSemantics(fl.simSemantics)
	if err != nil {
		return none, usagef("--sim-semantics: %v", err)
	}
	cost, err := verbs.ParseCost(fl.simCost)
	if err != nil {
		return none, usagef("--sim-cost: %v", err)
	}
	if fl.provider != "sim" && (flags.Changed("sim-cost") || flags.Changed("sim-semantics")) {
		return none, usagef("--sim-cost and --sim-semantics apply to --provider sim only")
	}
	out := fl.out
	if out == "" {
		if fl.resume {
			return none, usagef("--resume needs the --out folder to continue")
		}
		out = filepath.Join("runs", time.Now().UTC().Format("20060102T150405Z")+"-qualify-"+fl.provider)
	}
	engine, err := engineOptions(stderr)
	if err != nil {
		return none, failure{err: err}
	}
	engine.Quiet = true
	var log io.Writer = stderr
	if fl.quiet {
		log = nil
	}
	over, err := fl.overrides(flags)
	if err != nil {
		return none, err
	}
	gid, err := pathChoice(fl.provider, fl.device, fl.ibPort, fl.gidIndex)
	if err != nil {
		return none, err
	}
	o := qualify.Options{Provider: fl.provider, Device: fl.device, IBPort: fl.ibPort, GIDIndex: gid, Plan: plan, Baseline: fl.baseline, Out: out,
		Resume: fl.resume, Labels: ls, SimSemantics: sem, SimCost: cost, Engine: engine, Log: log, Soak: fl.soak,
		Overrides: over, AcceptBaseline: fl.acceptBaseline, AcceptDisturbed: fl.acceptDisturbed, NoPDF: fl.noPDF}
	if fl.soak < 0 || fl.soak > bench.MaxDuration {
		return none, usagef("--soak %v: want 0 (the plan's) up to %v", fl.soak, bench.MaxDuration)
	}
	if err := qualify.CheckRuns(o); err != nil {
		return none, usageError{err}
	}
	return o, nil
}

// overrides are the plan's figures the flags replace: those given.
func (fl *qualifyFlags) overrides(flags *pflag.FlagSet) (qualify.Overrides, error) {
	var v qualify.Overrides
	if flags.Changed("duration") {
		if fl.duration <= 0 || fl.duration > bench.MaxDuration {
			return v, usagef("--duration %v: want a positive duration such as 10s, up to %v", fl.duration, bench.MaxDuration)
		}
		d := results.Duration(fl.duration)
		v.Duration = &d
	}
	if flags.Changed("repetitions") {
		if fl.repetitions <= 0 || fl.repetitions > 1000 {
			return v, usagef("--repetitions %d: want 1 to 1000", fl.repetitions)
		}
		v.Repetitions = fl.repetitions
	}
	if flags.Changed("warmup") {
		if fl.warmup < 0 || fl.warmup > bench.MaxWarmup {
			return v, usagef("--warmup %v: want 0 or a positive duration, up to %v", fl.warmup, bench.MaxWarmup)
		}
		d := results.Duration(fl.warmup)
		v.Warmup = &d
	}
	return v, nil
}

// runQualify runs the qualification and says where its folder is (with
// --json, the verdicts on stdout); a verdict other than pass is a failure
// (exit 1), already summed up on stdout unless quiet or --json, but for
// inconclusive when --allow-inconclusive.
func runQualify(stdout, stderr io.Writer, o qualify.Options, fl qualifyFlags) error {
	ctx, cancel := interruptible(stderr)
	defer cancel()
	q, err := qualify.Run(ctx, o)
	if err != nil {
		if errors.Is(err, qualify.ErrUsage) {
			return usageError{err}
		}
		return jsonBeforeStart(stdout, fl.json, func() any {
			return qualifyJSON{envelope: newEnvelope("qualify", results.StatusFailed, o.Out, err)}
		}, failure{err: err})
	}
	if q.PDFError != "" && !fl.quiet && !fl.noPDF {
		// A notice, not a failure: the page is written, the PDF a copy.
		fmt.Fprintf(stderr, "qualify: no %s: %s\n", qualify.PDFFile, q.PDFError)
	}
	if fl.json {
		doc := qualifyJSON{envelope: newEnvelope("qualify", q.Verdict, o.Out, nil), Summary: q.Summary, Headline: q.Headline,
			Conformance: q.Conformance, Criteria: q.Criteria, Soak: q.Soak}
		if err := writeJSON(stdout, doc); err != nil {
			return err
		}
	} else if !fl.quiet {
		files := []string{qualify.JSONFile, qualify.JUnitFile, qualify.HTMLFile}
		if q.PDF != "" {
			files = append(files, q.PDF)
		}
		// The verdict in one short line, then what did not pass, a line each.
		fmt.Fprintln(stdout, q.Headline)
		for _, d := range qualify.Details(q) {
			fmt.Fprintln(stdout, d)
		}
		fmt.Fprintf(stdout, "qualification folder: %s (%s)\n", o.Out, strings.Join(files, ", "))
	}
	if q.Verdict != qualify.Pass && !(q.Verdict == qualify.Inconclusive && fl.allowInconclusive) {
		// Said on stderr unless stdout has it already (no --quiet, no --json).
		f := failure{err: errors.New(q.Headline), quiet: !fl.quiet && !fl.json}
		if q.Verdict == qualify.NotJudged {
			f.code = exitNotJudged
		}
		return f
	}
	return nil
}
