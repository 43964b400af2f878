package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
)

// TestQualifyThroughDouble is the whole flow on the libibverbs test double
// playing two firmware builds (XRCBENCH_FAKEVERBS_FW_VER): a baseline
// "1.0" with destroy 100us; "1.0" again, which passes against it; and
// candidate "1.1" with destroy 30% slower, whose qualification fails and
// whose junit.xml names unreg_last. The firmware versions are the device's
// own, as a real adapter reports them, and compare sees them.
func TestQualifyThroughDouble(t *testing.T) {
	judgesNoTime(t)
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	plan := writePlan(t, tinyPlan)
	dir := t.TempDir()
	qual := func(out, fw, cost string, extra ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"qualify", "--provider", "rdma", "--device", "xbfake0", "--plan", plan, "--out", out, "--label", "fw=" + fw}, extra...)...)
		// A state folder per firmware: the double's cost is the device's.
		cmd.Env = append(testdouble.Env(lib, filepath.Join(dir, "state-"+filepath.Base(out)), "xbfake0"),
			"XRCBENCH_FAKEVERBS_COST=destroy="+cost, "XRCBENCH_FAKEVERBS_FW_VER="+fw)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, o.String(), e.String()
	}
	base, again, cand := filepath.Join(dir, "fw-1.0"), filepath.Join(dir, "fw-1.0b"), filepath.Join(dir, "fw-1.1")
	if code, stdout, stderr := qual(base, "1.0", "100us"); code != 0 {
		t.Fatalf("baseline: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := qual(again, "1.0", "100us", "--baseline", base); code != 0 {
		t.Errorf("the same firmware again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := qual(cand, "1.1", "130us", "--baseline", base)
	if code != 1 {
		t.Fatalf("candidate with destroy 30%% slower: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	f := readJUnit(t, cand).failed()
	if len(f) != 1 || !strings.Contains(f[0], "unreg_last") {
		t.Errorf("junit failures %q: want one, naming unreg_last", f)
	}
	q, err := qualify.Load(cand)
	if err != nil {
		t.Fatal(err)
	}
	if q.Device == nil || q.Device.FWVer != "1.1" || q.Baseline == nil || q.Baseline.Device == nil || q.Baseline.Device.FWVer != "1.0" || !q.Device.TestDouble {
		t.Errorf("identity: device %v, baseline %+v", q.Device, q.Baseline)
	}
	// Not hardware, in every output: the page's banner, a junit property,
	// the runs named in qualification.json and the summary.
	page, _ := os.ReadFile(filepath.Join(cand, qualify.HTMLFile))
	junit, _ := os.ReadFile(filepath.Join(cand, qualify.JUnitFile))
	if !strings.Contains(string(page), `id="test-double"><b>Not hardware (lc).</b>`) || !strings.Contains(string(junit), `<property name="test_double" value="true: lc`) ||
		!slices.Equal(q.TestDouble, []string{"lc"}) || !strings.Contains(stdout, "Not hardware") {
		t.Errorf("the test double is not said in every output: runs %v, summary %q", q.TestDouble, stdout)
	}
	// The environment that chose what was measured is recorded with the
	// command (the double's library, devices, cost and firmware), the
	// double's state folder not.
	r, err := results.Load(filepath.Join(cand, q.Runs[0].Dir))
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(r.Config.CommandEnv, " ")
	for _, want := range []string{"LD_LIBRARY_PATH=" + lib, "XRCBENCH_FAKEVERBS_COST=destroy=130us", "XRCBENCH_FAKEVERBS_DEVICES=xbfake0", "XRCBENCH_FAKEVERBS_FW_VER=1.1"} {
		if !strings.Contains(env, want) {
			t.Errorf("result.json command_env %q: no %s", r.Config.CommandEnv, want)
		}
	}
	if strings.Contains(env, "XRCBENCH_FAKEVERBS_DIR") || !slices.Equal(q.Runs[0].CommandEnv, r.Config.CommandEnv) {
		t.Errorf("command_env: result.json %q, qualification.json %q", r.Config.CommandEnv, q.Runs[0].CommandEnv)
	}
	// The N-way compare of the three, by their runs: firmware in the
	// headers, 1.1 regressing on unreg_last.
	code, out, errOut := runCLI("compare", filepath.Join(base, "runs", "lc"), filepath.Join(again, "runs", "lc"), filepath.Join(cand, "runs", "lc"), "--by", "fw")
	if code != 1 || !strings.Contains(out, "fw=1.1 [fw 1.1]") || !strings.Contains(out, "fw=1.0 [fw 1.0]") || !strings.Contains(out, "fw=1.1 unreg_last p50") {
		t.Errorf("compare --by fw: exit %d\n%s\n%s", code, out, errOut)
	}
	// The double's cost model is the device's: recorded with its facts,
	// shown, and no difference of configuration to compare.
	if q.BOM == nil || q.BOM.Device.TestDoubleCost != "destroy=130us" || q.BOM.Device.BoardID != "XRCBENCH_FAKE_0001" ||
		q.BOM.Device.DriverVersion != "xrcbench-fakeverbs-1" || q.BOM.Device.LinkWidth != "16" {
		t.Errorf("candidate's bill of materials: %+v", q.BOM)
	}
	if strings.Contains(out, "different configurations") {
		t.Errorf("the double's cost model is called a configuration change:\n%s", out)
	}
}
