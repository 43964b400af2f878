// Package resultstest makes synthetic results for the tests of the
// packages that read them (report, analysis), as net/http/httptest does
// for servers: one lifecycle result from chosen p50s, one storm result
// from a chosen makespan. Only tests import it.
package resultstest

import (
	"math/rand/v2"

	"github.com/xrcbench/xrcbench/results"
)

// Lifecycle is a lifecycle result of one op kind per key of vals, whose
// repetition i has p50 vals[kind][i] ns (p99 3x, ops/s inversely
// proportional); a kind with fewer values than another ends there.
func Lifecycle(vals map[string][]float64) *results.Result {
	r := &results.Result{
		Schema: results.Schema, Status: results.StatusOK,
		Config: results.Config{Workload: "lifecycle", Provider: "sim", WorkloadSpec: "name: lifecycle\n"},
		Ops:    map[string]results.OpStats{},
	}
	n := 0
	for _, v := range vals {
		n = max(n, len(v))
	}
	for i := range n {
		rep := results.Repetition{Index: i, Ops: map[string]results.OpStats{}}
		for kind, v := range vals {
			if i >= len(v) {
				continue
			}
			p50 := v[i]
			rep.Ops[kind] = results.OpStats{Count: 1000, OpsPerSec: 4e9 / p50, NS: results.Latency{P50: int64(p50), P99: int64(3 * p50)}}
			r.Ops[kind] = rep.Ops[kind]
		}
		r.Repetitions = append(r.Repetitions, rep)
	}
	return r
}

// Storm is a storm's result with reps repetitions of a makespan about
// makespanNS (noise: the repetitions' relative spread, drawn from seed)
// and a teardown of a tenth of it; gates nil is a result that predates
// declared gates. The operations are the same in every repetition: only
// the wiring's length moves.
func Storm(reps int, makespanNS, noise float64, seed uint64, gates []string) *results.Result {
	rng := rand.New(rand.NewPCG(seed, 7))
	r := &results.Result{
		Schema: results.Schema, Status: results.StatusOK,
		Config: results.Config{Workload: "storm", Provider: "sim", Procs: 1, Threads: 4, QPs: 32, WorkloadSpec: "name: storm\nmode: storm\n",
			Gates: gates},
		Ops:   map[string]results.OpStats{},
		Storm: &results.Storm{Nodes: 9, Ranks: 4, Rails: 1, QPs: 32, Registrations: 96, Arrival: "burst", Teardown: "unreg", TeardownMethod: "ranks_unreg"},
	}
	for i := range reps {
		mk := makespanNS * (1 + noise*rng.NormFloat64())
		r.Storm.MakespanNS = append(r.Storm.MakespanNS, int64(mk))
		r.Storm.RankDoneNS = append(r.Storm.RankDoneNS, []int64{int64(mk), int64(mk * 0.9), int64(mk * 0.8), int64(mk * 0.95)})
		r.Storm.TeardownNS = append(r.Storm.TeardownNS, int64(mk/10))
		rep := results.Repetition{Index: i, Ops: map[string]results.OpStats{
			results.OpReg: {Count: 96, OpsPerSec: 1e5, NS: results.Latency{Min: 1000, P50: 2000, P90: 4000, P99: 6000, P999: 7000, Max: 8000, Mean: 2500}}}}
		r.Repetitions = append(r.Repetitions, rep)
		r.Ops[results.OpReg] = rep.Ops[results.OpReg]
	}
	return r
}
