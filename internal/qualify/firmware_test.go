package qualify

import (
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// "no firmware command failed" is a criterion of its own: without a run it
// is judged over every run, it fails when a run's counters moved, and
// where no run's counters could say it is skipped with why, never passed.
func TestFirmwareCriterion(t *testing.T) {
	p, err := LoadPlan("")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range p.Criteria {
		if c.Firmware && c.Run == "" && c.Name() == "every run: "+FirmwareCheck {
			found = true
		}
	}
	if !found {
		t.Fatalf("the default plan has no %q over every run: %+v", FirmwareCheck, p.Criteria)
	}

	none := &results.FirmwareFailures{}
	fw := func(failed uint64) *results.FirmwareCounters {
		f := none
		if failed > 0 {
			f = &results.FirmwareFailures{Failed: failed, FailedMboxStatus: failed, LastErrno: 121, LastMboxStatus: 3, LastSyndrome: "0x1ab2c3d4"}
		}
		return &results.FirmwareCounters{Commands: map[string]results.FirmwareCommand{
			"CREATE_QP": {N: 10, Failures: none}, "DESTROY_QP": {N: 10, Failures: f}}}
	}
	run := func(provider string, f *results.FirmwareCounters) *report.Run {
		return &report.Run{Result: &results.Result{Config: results.Config{Provider: provider}, Environment: results.Environment{Firmware: f}}}
	}
	plan := &Plan{Runs: []RunStep{{Name: "a"}, {Name: "b"}}}
	for _, tc := range []struct {
		name    string
		run     string // the criterion's; "" every run
		runs    map[string]*report.Run
		verdict string
		msg     []string
	}{
		{"none failed", "", map[string]*report.Run{"a": run("rdma", fw(0)), "b": run("rdma", fw(0))}, Pass, []string{"no firmware command failed in 2 runs"}},
		{"one run's destroy failed", "", map[string]*report.Run{"a": run("rdma", fw(0)), "b": run("rdma", fw(2))}, Fail, []string{"b: DESTROY_QP 2"}},
		{"only the named run is judged", "a", map[string]*report.Run{"a": run("rdma", fw(0)), "b": run("rdma", fw(2))}, Pass, []string{"in 1 run"}},
		{"the sim has no firmware", "", map[string]*report.Run{"a": run("sim", nil), "b": run("sim", nil)}, Skipped,
			[]string{"not applicable", "a: provider sim has no firmware"}},
		{"not readable", "", map[string]*report.Run{"a": run("rdma", &results.FirmwareCounters{NotReadable: "not readable: permission denied"})}, Skipped,
			[]string{"not applicable", "a: not readable: permission denied", "b: did not measure"}},
		{"a kernel without failure counters", "", map[string]*report.Run{
			"a": run("rdma", &results.FirmwareCounters{Commands: map[string]results.FirmwareCommand{"CREATE_QP": {N: 3}}})}, Skipped,
			[]string{"not applicable", "no failure counters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Criterion{Run: tc.run, Check: FirmwareCheck, Firmware: true}
			row := judgeOne(Options{Plan: plan}, nil, tc.runs, c, nil, nil)
			if row.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %s", row.Verdict, tc.verdict, row.Message)
			}
			for _, m := range tc.msg {
				if !strings.Contains(row.Message, m) {
					t.Errorf("message %q lacks %q", row.Message, m)
				}
			}
		})
	}
}
