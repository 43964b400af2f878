package resultstest

import "github.com/xrcbench/xrcbench/results"

// Minimal is the least valid result: run id, status ok, one reg, and the
// files it lists (result.json added), for the tests of what writes and
// replaces run folders, which look at the files, not the figures.
func Minimal(id string, files ...string) *results.Result {
	return &results.Result{Schema: results.Schema, RunID: id, Status: results.StatusOK,
		Config: results.Config{Workload: "steady", Provider: "null", Procs: 1, Threads: 1},
		Ops:    map[string]results.OpStats{"reg": {Count: 1}}, Files: append(files, results.FileName)}
}
