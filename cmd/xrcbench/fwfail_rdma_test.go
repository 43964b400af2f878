package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
)

// fwPlan is a one-run plan whose only criterion is that no firmware
// command failed, over every run.
const fwPlan = `name: fw
repetitions: 1
iterations: 20
warmup: 0s
conformance: none
quality: {min_cpu_share: 0%, max_duration_departure: 0%, warnings: []}
runs:
  - {name: lc, workload: lifecycle, procs: 1, threads: 2, qps: 4}
criteria:
  - {check: no firmware command failed}
`

// Firmware command failures through the libibverbs test double, whose
// mlx5 device keeps mlx5's debugfs counters in its state folder and whose
// fwfail=DESTROY_QP fails every DESTROY_QP in the firmware while the verb
// succeeds: run warns on stderr, summary.md says how many failed and how
// the last did, result.json has the counts, and qualify's criterion fails.
// Without the failure the criterion passes; on a device without the
// counters it is not applicable (skipped, with why), not passed.
func TestFirmwareFailuresThroughDouble(t *testing.T) {
	judgesNoTime(t)
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	plan := writePlan(t, fwPlan)
	const warning = "firmware commands failed during the run (mlx5 debugfs): DESTROY_QP "
	for _, tc := range []struct {
		name, device string
		failed       bool   // DESTROY_QP failed over the run
		known        bool   // the counters say whether any failed
		verdict      string // qualify's criterion
		qualifyCode  int
		message      string
	}{
		{"a destroy fails in the firmware", "xbmlx0:fwfail=DESTROY_QP", true, true, qualify.Fail, 1, "lc: DESTROY_QP "},
		{"none fails", "xbmlx0:mlx5", false, true, qualify.Pass, 0, "no firmware command failed in 1 run"},
		{"no mlx5 counters", "xbmlx0", false, false, qualify.Skipped, 0, "not applicable: no run's firmware failure counters could be read: lc: not readable: driver xrcbench_fake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := testdouble.Env(lib, filepath.Join(dir, "state"), tc.device)
			out := filepath.Join(dir, "run")
			cmd := exec.Command(bin, "run", "--provider", "rdma", "--device", "xbmlx0", "--workload", "lifecycle",
				"--threads", "2", "--qps", "4", "--iterations", "20", "--warmup", "0s", "--out", out)
			cmd.Env = env
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
			}
			if got := strings.Contains(e.String(), "warning: "+warning); got != tc.failed {
				t.Errorf("stderr warns of failed commands: %v, want %v\n%s", got, tc.failed, e.String())
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			fw := r.Environment.Firmware
			if fw.FailuresKnown() != tc.known {
				t.Fatalf("failures known %v, want %v: %+v", fw.FailuresKnown(), tc.known, fw)
			}
			summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.known {
				// Every QP the run made is destroyed once: the failures
				// are as many as the DESTROY_QP commands.
				d := fw.Commands["DESTROY_QP"]
				want := uint64(0)
				if tc.failed {
					want = d.N
				}
				if d.N < 80 || d.Failures == nil || d.Failures.Failed != want || fw.Commands["CREATE_QP"].Failures.Failed != 0 {
					t.Errorf("DESTROY_QP %+v (failures %+v), want at least 80 commands, %d failed", d, d.Failures, want)
				}
				line := "none failed"
				if tc.failed {
					line = "FAILED (" // and how the last one failed
					if f := d.Failures; f.LastErrno != 121 || f.LastMboxStatus != 3 || f.LastSyndrome != "0x1ab2c3d4" {
						t.Errorf("last failure %+v, want errno 121 (EREMOTEIO), mailbox status 0x3, syndrome 0x1ab2c3d4", f)
					}
					if !strings.Contains(string(summary), "the last errno 121 (remote I/O error), mailbox status 0x3, syndrome 0x1ab2c3d4") ||
						!strings.Contains(string(summary), "engine: "+warning) {
						t.Errorf("summary.md lacks the failure and its warning:\n%s", summary)
					}
				}
				if !strings.Contains(string(summary), "firmware DESTROY_QP: ") || !strings.Contains(string(summary), line) {
					t.Errorf("summary.md lacks %q:\n%s", line, summary)
				}
			}

			qout := filepath.Join(dir, "qual")
			cmd = exec.Command(bin, "qualify", "--provider", "rdma", "--device", "xbmlx0", "--plan", plan, "--out", qout)
			cmd.Env = env
			o.Reset()
			e.Reset()
			cmd.Stdout, cmd.Stderr = &o, &e
			err = cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.qualifyCode {
				t.Errorf("qualify exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.qualifyCode, o.String(), e.String())
			}
			q, err := qualify.Load(qout)
			if err != nil {
				t.Fatal(err)
			}
			if len(q.Criteria) != 1 || q.Criteria[0].Verdict != tc.verdict || !strings.Contains(q.Criteria[0].Message, tc.message) {
				t.Errorf("criteria %+v, want one, %s, saying %q", q.Criteria, tc.verdict, tc.message)
			}
		})
	}
}
