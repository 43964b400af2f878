package analysis

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./analysis -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./analysis -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

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
