package bench

import (
	"testing"

	"github.com/xrcbench/xrcbench/workloads"
)

// TestThreadsShareQPs: which built-in workloads have two threads of one
// process register the same QP, and so need one thread per process where
// the process is the registrant (MLNX_OFED's legacy layer). Every built-in
// is in the table, so a new one must be placed.
func TestThreadsShareQPs(t *testing.T) {
	want := map[string]bool{"lifecycle": true, "steady": true, "storm": true, "gasnet": true, "ofi-rxm": true, "churn": false, "sharded": false, "errors": false}
	for _, s := range workloads.Builtins() {
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("built-in workload %s is not in the table", s.Name)
			continue
		}
		if got := threadsShareQPs(s); got != w {
			t.Errorf("%s: threadsShareQPs %v, want %v", s.Name, got, w)
		}
	}
}
