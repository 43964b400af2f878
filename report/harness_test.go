package report

import (
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

func TestHarnessRowsBatches(t *testing.T) {
	r := &results.Result{Ops: map[string]results.OpStats{
		results.OpReg:       {Count: 1600, Batches: 100},
		results.OpUnregLast: {Count: 50, Batches: 50},
		results.OpCreate:    {Count: 10}, // an older result: no batches counted
	}}
	var got string
	for _, row := range harnessRows(r) {
		if row.K == "ops per batch (one cgo call each)" {
			got = row.V
		}
	}
	if want := "reg 16.0, unreg_last 1.0"; got != want {
		t.Errorf("ops per batch %q, want %q", got, want)
	}
}
