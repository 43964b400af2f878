package report

import (
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// TestTitleNamesQPState: every report names the state the run's QPs were
// in, since it changes what destruction costs; results from before the
// field left their QPs in RESET.
func TestTitleNamesQPState(t *testing.T) {
	for _, tc := range []struct {
		state, want string
	}{
		{"", "lifecycle on sim, 2×2, 4 QPs in RESET"},
		{"reset", "lifecycle on sim, 2×2, 4 QPs in RESET"},
		{"init", "lifecycle on sim, 2×2, 4 QPs in INIT"},
		{"rtr", "lifecycle on sim, 2×2, 4 QPs in RTR"},
	} {
		r := &results.Result{Config: results.Config{Workload: "lifecycle", Provider: "sim", Procs: 2, Threads: 2, QPs: 4, QPState: tc.state}}
		if got := title(r); got != tc.want {
			t.Errorf("QPState %q: Title = %q, want %q", tc.state, got, tc.want)
		}
	}
}
