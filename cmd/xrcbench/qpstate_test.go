package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// TestQPStateKnownAnswer: on the sim with destroy=200us, reset=50us and
// modify=10us, the last unreg of a QP in RTR pays destroy and reset
// (p50 about 250us), of one left in RESET destroy alone (about 200us), and
// the creator's move to RTR (two transitions) about 20us, timed as op kind
// modify. A busy-wait never ends early, so each p50 is at least its cost;
// the two runs share the machine's noise, so their difference is bounded
// loosely around the 50us the reset adds.
func TestQPStateKnownAnswer(t *testing.T) {
	const rounds, qps = 60, 4
	p50 := map[string]time.Duration{}
	for _, state := range []string{"rtr", "reset"} {
		out := filepath.Join(t.TempDir(), state)
		code, stdout, stderr := runEngine(t, "run", "--workload", "lifecycle", "--procs", "1", "--threads", "2",
			"--qps", "4", "--iterations", "60", "--warmup", "0s", "--qp-state", state,
			"--sim-cost", "destroy=200us,reset=50us,modify=10us", "--out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", state, code, stdout, stderr)
		}
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if r.Config.QPState != state {
			t.Errorf("%s: result config qp_state %q", state, r.Config.QPState)
		}
		last := r.Ops[results.OpUnregLast]
		if last.Count != rounds*qps || last.Errors != 0 {
			t.Fatalf("%s: unreg_last count %d errors %d, want %d and 0", state, last.Count, last.Errors, rounds*qps)
		}
		p50[state] = time.Duration(last.NS.P50)
		mod, ok := r.Ops[results.OpModify]
		switch {
		case state == "reset" && ok:
			t.Errorf("reset: a modify op kind was measured (%d ops): nothing is moved at reset", mod.Count)
		case state == "rtr" && (mod.Count != rounds*qps || mod.Errors != 0):
			t.Errorf("rtr: modify count %d errors %d, want %d and 0 (one per create)", mod.Count, mod.Errors, rounds*qps)
		case state == "rtr" && time.Duration(mod.NS.P50) < 20*time.Microsecond:
			t.Errorf("rtr: modify p50 %v, want at least 20µs (two transitions of 10µs)", time.Duration(mod.NS.P50))
		}
		if !strings.Contains(stdout, "modify") != (state == "reset") {
			t.Errorf("%s: the summary table shows modify: %v\n%s", state, strings.Contains(stdout, "modify"), stdout)
		}
	}
	if p50["rtr"] < 250*time.Microsecond || p50["reset"] < 200*time.Microsecond {
		t.Errorf("unreg_last p50 at rtr %v (want ≥ 250µs), at reset %v (want ≥ 200µs)", p50["rtr"], p50["reset"])
	}
	if d := p50["rtr"] - p50["reset"]; d < 25*time.Microsecond || d > 125*time.Microsecond {
		t.Errorf("unreg_last p50 at rtr %v − at reset %v = %v, want about 50µs (the reset cost)", p50["rtr"], p50["reset"], d)
	}
}
