package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/xrcbench/xrcbench/results"
)

// The sections cobra/doc does not write, which man-pages(7) asks of a
// command's page: its exit status, the environment it reads and the files
// it writes, and a page of their own (section 5) for result.json's format.
// They are troff written here and put before each page's SEE ALSO.

// manSection is one section: paragraphs, then tagged items (.TP).
type manSection struct {
	title string
	paras []string
	items []manItem
}

type manItem struct{ tag, text string }

// resultPage is the name of result.json's page (section 5).
const resultPage = "xrcbench-result"

// exitStatusSection is every page's EXIT STATUS, as the README states it.
var exitStatusSection = manSection{
	title: "EXIT STATUS",
	items: []manItem{
		{fmt.Sprint(exitOK), "Success."},
		{fmt.Sprint(exitFailed), "The run failed (a worker died, operations had unexpected outcomes, the provider is not available here), " +
			"a conformance check failed or none could run, a calibrate target was missed or the machine was too busy to judge one, " +
			"devices found no device, compare found a significant regression, history found the latest run after a regression, " +
			"or anything else went wrong after the input was accepted. " +
			"A failed run still writes what it measured, marked partial or failed in result.json; with --json a document is printed."},
		{fmt.Sprint(exitUsage), "Bad usage or bad input: one line on stderr naming the bad value, and no --json document " +
			"(for compare also runs of different workloads or configurations, or too few repetitions for its test: it says how many are needed)."},
	},
}

// environmentSection is what the binary reads from its environment, on the
// pages of the commands that run a benchmark and the top one.
var environmentSection = manSection{
	title: "ENVIRONMENT",
	items: []manItem{
		{"TMPDIR", "Where a run makes its private directory (xrcbench-run-<pid>-*, mode 0700), which holds the sim device's " +
			"shared state that every worker maps; the legacy provider's probe makes its scratch file there too. " +
			"Unset: /tmp when it is a memory file system, else /dev/shm when it has room, else /tmp. " +
			"Where it lives is part of what is measured (a disk file system faults on the first write to a shared page)."},
		{"LD_LIBRARY_PATH", "Where the dynamic loader finds libibverbs.so.1, which the rdma and legacy providers load when used " +
			"(build/fakeverbs loads the libibverbs test double instead). A run records it in result.json (config.command_env) " +
			"with the XRCBENCH_FAKEVERBS_ variables, as they change what it measures."},
		{"XRCBENCH_FAKEVERBS_DIR", "The libibverbs test double's state folder (default /tmp/xrcbench-fakeverbs-<uid>, mode 0700); " +
			"xrcbench counts a double's device's live QPs there."},
		{"XRCBENCH_FAKEVERBS_DEVICES", "The test double's devices: comma-separated, each NAME[:FLAG...] " +
			"(noxrc, noopenqp, eacces, portdown, noaddr, roce, ports=N, down=P, silentdestroy, driver=NAME, " +
			"mlx5: an mlx5_core device with mlx5's debugfs command counters in the state folder, " +
			"fwfail=CMD: the same, every CMD (CREATE_QP, RST2INIT_QP, INIT2RTR_QP, DESTROY_QP) failing in its firmware unreported); default xbfake0."},
		{"XRCBENCH_FAKEVERBS_COST", "The test double's cost model, as --sim-cost takes it (reg=2us,destroy=5.6us); " +
			"recorded as environment.bom's test_double_cost."},
		{"XRCBENCH_FAKEVERBS_FW_VER", "The firmware version the test double's devices report (default 99.1.0)."},
		{"XRCBENCH_FAKEVERBS_NOXRC", "Set to 1: every test double device lacks XRC."},
		{"XRCBENCH_FAKEVERBS_LEGACY", "Which library's legacy XRC calls the test double plays: ofed1 or mlnx-compat (default the build's own)."},
		{"SLURM_JOB_ID, SLURM_STEP_ID, SLURM_PROCID, SLURMD_NODENAME, SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_LOCALID, SLURM_JOB_NODELIST",
			"With --fleet under srun: the job and its step (one --fleet-sync barrier each), this node's rank and name, and the fleet's nodes."},
		{"OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE, OMPI_MCA_ess_base_jobid",
			"With --fleet under Open MPI's mpirun: the same."},
		{"PMIX_RANK, PMIX_NAMESPACE", "With --fleet under another PMIx launcher: the rank and the job."},
		{"SOURCE_DATE_EPOCH", "The date the man pages carry (the hidden manpages command, which make man runs), for reproducible packages; unset, today's."},
		{"XRCBENCH_VERBS_CHILD", "Set by xrcbench on the processes it starts for its multi-process checks (conform): " +
			"a process that has it runs as such a child and exits. Not for users to set."},
	},
}

// filesSection is what a run writes, and where the test double keeps its state.
var filesSection = manSection{
	title: "FILES",
	items: []manItem{
		{"RUN_DIR/result.json", "The run's result: configuration, environment, per operation kind counts, rates and latency percentiles, " +
			"per repetition summaries, warnings. Its format: " + resultPage + "(5)."},
		{"RUN_DIR/<kind>.hlog", "One HdrHistogram interval log per operation kind, with every latency result.json summarizes."},
		{"RUN_DIR/summary.md, RUN_DIR/bench.txt", "The summary table and warnings (Markdown), and the per-repetition figures in Go benchmark format (benchstat reads it)."},
		{"RUN_DIR/report.html, RUN_DIR/plots/", "Written by xrcbench report."},
		{"DIR/sweep.json", "A sweep's points, each a run folder under DIR."},
		{"/tmp/xrcbench-fakeverbs-<uid>", "The libibverbs test double's default state folder (XRCBENCH_FAKEVERBS_DIR)."},
	},
}

// manExtras are the sections each page gets besides cobra/doc's, by the
// command's path.
func manExtras(cmd *cobra.Command) []manSection {
	s := []manSection{exitStatusSection}
	switch cmd.CommandPath() {
	case "xrcbench", "xrcbench run", "xrcbench sweep", "xrcbench qualify":
		s = append(s, environmentSection, filesSection)
	}
	return s
}

// seeResult is whether cmd's page points to result.json's page: the
// commands that write or read run folders.
func seeResult(cmd *cobra.Command) bool {
	switch cmd.CommandPath() {
	case "xrcbench", "xrcbench run", "xrcbench sweep", "xrcbench qualify", "xrcbench report",
		"xrcbench compare", "xrcbench export", "xrcbench history":
		return true
	}
	return false
}

// genManTree is cobra/doc's GenManTree with the extra sections: a page
// per available command, named by its path (xrcbench-run.1).
func genManTree(cmd *cobra.Command, header *doc.GenManHeader, dir string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genManTree(c, header, dir); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	h := *header // GenMan fills in the title and date: a copy per page
	if err := doc.GenMan(cmd, &h, &buf); err != nil {
		return err
	}
	var extra strings.Builder
	for _, s := range manExtras(cmd) {
		extra.WriteString(s.troff())
	}
	page := buf.String()
	if i := strings.Index(page, ".SH SEE ALSO"); i >= 0 {
		page = page[:i] + extra.String() + page[i:]
		if seeResult(cmd) {
			page = strings.TrimRight(page, "\n") + ", \\fB" + roffEscape(resultPage) + "(5)\\fP\n"
		}
	} else {
		page += extra.String()
	}
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + "." + header.Section
	return os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644)
}

// troff is the section as man's macros (man(7)). Hyphenation is off
// inside it (.nh, back on with .hy at its end): its words are variable,
// file and key names, which a reader searches for and pastes whole
// (SLURM_LOCALID once broke as SLURM_LO-CALID).
func (s manSection) troff() string {
	var b strings.Builder
	fmt.Fprintf(&b, ".SH %s\n.nh\n", s.title)
	for _, p := range s.paras {
		fmt.Fprintf(&b, ".PP\n%s\n", roffEscape(p))
	}
	for _, it := range s.items {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", roffEscape(it.tag), roffEscape(it.text))
	}
	b.WriteString(".hy\n")
	return b.String()
}

// roffEscape is text troff prints as it reads: a backslash is \e, a
// hyphen-minus \- (groff prints a plain - as a hyphen, ‐, in UTF-8, so
// "--json" could not be searched for or pasted), and a line cannot start
// with a control character (. or ').
func roffEscape(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// writeResultPage writes xrcbench-result.5, result.json's format, dated
// as the other pages are.
func writeResultPage(dir, source string, date time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH \"%s\" \"5\" \"%s\" \"%s\" \"xrcbench manual\"\n", roffEscape(strings.ToUpper(resultPage)), date.Format("Jan 2006"), roffEscape(source))
	b.WriteString(".SH NAME\n" + roffEscape(resultPage+" - the format of a run folder's result.json") + "\n")
	for _, s := range resultSections {
		b.WriteString(s.troff())
	}
	b.WriteString(".SH SEE ALSO\n\\fBxrcbench(1)\\fP, \\fBxrcbench\\-run(1)\\fP, \\fBxrcbench\\-report(1)\\fP, \\fBxrcbench\\-compare(1)\\fP\n")
	return os.WriteFile(filepath.Join(dir, resultPage+".5"), []byte(b.String()), 0o644)
}

// resultSections describe result.json, schema results.Schema: every key of
// its top level (TestManPages holds them to results.Result's), and the
// figures per operation kind a reader most often wants.
var resultSections = []manSection{
	{title: "DESCRIPTION", paras: []string{
		"xrcbench run (and sweep, for each point, and qualify) writes result.json into its run folder, atomically: " +
			"one JSON object, schema \"" + results.Schema + "\", which xrcbench report, compare, export and history read. " +
			"Times are RFC 3339; durations are strings as Go writes them (1.5s); latencies are integer nanoseconds. " +
			"A key marked optional is absent when it does not apply; a reader ignores keys it does not know.",
	}},
	{title: "TOP-LEVEL KEYS", items: []manItem{
		{"schema", "\"" + results.Schema + "\"; a reader refuses another."},
		{"run_id", "The run's id, which heads each of its .hlog files (optional in results that predate it)."},
		{"status", "\"" + results.StatusOK + "\"; \"" + results.StatusPartial + "\" (failed or stopped after measuring: what was measured is kept); or \"" + results.StatusFailed + "\" (nothing trustworthy was measured)."},
		{"error", "Why the run failed (optional)."},
		{"warnings", "What a reader must know about the figures (optional): objects with kind, severity (warning, or notice for one that does not change what the figures mean), repetition and op (optional: what it concerns), text and means."},
		{"labels", "The --label key=value pairs (optional)."},
		{"started, finished", "When the run started and finished."},
		{"config", "What was asked: workload, provider, device, processes, threads, QPs, duration, repetitions and the rest needed to rerun it; the workload's gates and headline; command_env, the environment variables that change what a run through the test double measures."},
		{"environment", "Where it ran: host, kernel, CPU, Go and xrcbench versions, the device (environment.device: name, firmware, driver, NUMA node, is_test_double), the firmware's command counters, and the bill of materials (environment.bom)."},
		{"harness", "How it was measured: the timer and its overhead, start skew, warm-up, repetitions, coverage, the longest untimed gap, memory."},
		{"ops", "Per operation kind (reg, unreg, unreg_last, open, create, modify, ...): count, errors (unexpected outcomes), ops_per_sec, ns (latency: min, p50, p90, p99, p999, max, mean, stddev), response_ns (an open loop's response time, optional), errno_counts, expect (an outcome the workload wants, such as EINVAL) and batches (optional)."},
		{"open_loop", "What became of an open loop's schedule (--rate): arrival, requested_ops_per_sec and achieved_ops_per_sec, the backlog, saturated (optional)."},
		{"workers", "Per worker process: index, pid, threads, the CPUs it ran on, counts and errors per operation kind, and how it exited."},
		{"repetitions", "Per repetition, from index 1: duration (measured), rounds, start_skew_ns, and ops as above; what compare tests."},
		{"leaks", "The check that no QP outlived the run: checked, method, the QPs leaked (optional)."},
		{"fleet", "The run's place in a fleet (run --fleet): launcher, job, rank, node (optional)."},
		{"storm", "What a storm workload measured: makespan and teardown (optional)."},
		{"histograms", "Per operation kind, the merged latency histogram of the measured repetitions, HdrHistogram V2 compressed and base64 (optional)."},
		{"files", "What the run wrote into its folder, result.json included: a later run into it removes these and nothing else (optional)."},
		{"logs", "Per operation kind, its .hlog as written, so a reader knows the file it finds is that one (optional)."},
	}},
	{title: "PERCENTILES", paras: []string{
		"Percentiles are nearest-rank: the value at p of n latencies is the ceil(p*n/100)-th smallest, " +
			"reported as the highest value equivalent to it at 3 significant digits, as HdrHistogram's readers give.",
	}},
	{title: "FILES", items: []manItem{
		{"RUN_DIR/result.json", "This file."},
		{"RUN_DIR/<kind>.hlog", "The HdrHistogram interval log of each operation kind, beside it: a kind's count over the summed lengths of a repetition's lines is its ops_per_sec there."},
	}},
}
