package analysis

import (
	"github.com/xrcbench/xrcbench/results"
)

// resultOf is a result of one op kind per key of vals, with vals[kind][i]
// as repetition i's p50 (as report's tests make runs).
func resultOf(vals map[string][]float64) *results.Result {
	r := &results.Result{
		Schema: results.Schema, Status: results.StatusOK,
		Config: results.Config{Workload: "lifecycle", Provider: "sim", WorkloadSpec: "name: lifecycle\n"},
		Ops:    map[string]results.OpStats{},
	}
	n := 0
	for _, v := range vals {
		n = max(n, len(v))
	}
	for i := 0; i < n; i++ {
		rep := results.Repetition{Index: i, Ops: map[string]results.OpStats{}}
		for kind, v := range vals {
			p50 := v[i]
			rep.Ops[kind] = results.OpStats{Count: 1000, OpsPerSec: 4e9 / p50, NS: results.Latency{P50: int64(p50), P99: int64(3 * p50)}}
			r.Ops[kind] = rep.Ops[kind]
		}
		r.Repetitions = append(r.Repetitions, rep)
	}
	return r
}
