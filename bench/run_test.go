package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// Exact operation counts for --iterations runs: every thread does every
// phase on every one of its QPs in every pass or round.
func TestIterationsCounts(t *testing.T) {
	tests := []struct {
		workload            string
		provider            string
		procs, threads, qps int
		iterations          int64
		want                map[string]int64
	}{
		{"steady", "null", 2, 2, 8, 50, map[string]int64{"reg": 2 * 2 * 8 * 50, "unreg": 2 * 2 * 8 * 50}},
		{"sharded", "null", 1, 3, 4, 20, map[string]int64{"reg": 3 * 4 * 20, "unreg": 3 * 4 * 20}},
		{"churn", "null", 2, 1, 5, 30, map[string]int64{"create": 2 * 5 * 30, "unreg_last": 2 * 5 * 30}},
		{"errors", "null", 1, 2, 3, 10, map[string]int64{"reg_invalid": 2 * 3 * 10, "reg_foreign": 2 * 3 * 10}},
		// lifecycle: per round each QP is created once, registered by the
		// n-1 others, unregistered by n-1, and closed once.
		{"lifecycle", "null", 2, 2, 3, 7, map[string]int64{"create": 3 * 7, "reg": 3 * 3 * 7, "unreg": 3 * 3 * 7, "unreg_last": 3 * 7}},
		{"lifecycle", "null", 1, 1, 4, 5, map[string]int64{"create": 4 * 5, "reg": 0, "unreg": 0, "unreg_last": 4 * 5}},
	}
	for _, tt := range tests {
		t.Run(tt.workload+"/"+tt.provider, func(t *testing.T) {
			cfg := testConfig(t, tt.workload, tt.provider, tt.procs, tt.threads, tt.qps)
			cfg.Iterations = tt.iterations
			res := runOK(t, cfg)
			for kind, n := range tt.want {
				if got := res.Ops[kind].Count; got != n {
					t.Errorf("%s: count %d, want %d", kind, got, n)
				}
			}
			if len(res.Ops) != len(tt.want) {
				t.Errorf("ops %v, want kinds %v", res.Ops, tt.want)
			}
			for kind := range tt.want {
				if _, err := os.Stat(filepath.Join(cfg.Out, kind+".hlog")); err != nil {
					t.Errorf("no %s.hlog: %v", kind, err)
				}
			}
			if len(res.Workers) != tt.procs {
				t.Errorf("%d workers, want %d", len(res.Workers), tt.procs)
			}
		})
	}
}
