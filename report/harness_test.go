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

// The report shows the timer overhead with its spread and a fraction, the
// coverage and the longest untimed gap with when, and PSS beside RSS.
func TestHarnessRowsMeasurementTruth(t *testing.T) {
	r := &results.Result{Ops: map[string]results.OpStats{}, Harness: results.Harness{
		TimerOverheadNS: 24.6,
		TimerOverhead:   &results.TimerOverhead{MedianNS: 24.6, MinNS: 24.1, MaxNS: 31.8, BeforeNS: 24.5, AfterNS: 24.9, Samples: 8},
		Coverage:        &results.Coverage{Share: 0.712, MinThreadShare: 0.57, ByKind: map[string]float64{"reg": 0.4, "unreg": 0.312}},
		MaxGapNS:        map[string]int64{"reg": 3_500_000_000, "unreg": 2_000},
		MaxGap:          &results.Gap{NS: 3_500_000_000, Kind: "reg", Thread: 3, Repetition: 1, AtNS: 53_845_000_000},
		Memory:          &results.Memory{RSSKB: 49152, PSSKB: 23347},
	}}
	rows := map[string]string{}
	for _, row := range harnessRows(r) {
		rows[row.K] = row.V
	}
	for k, want := range map[string]string{
		"timer overhead": "24.6ns (median of 8 measurements in the worker threads, 24.1-31.8ns; before the runs 24.5ns, after 24.9ns)",
		"coverage (timed share of the threads' working time)": "71.2% (least covered thread 57.0%): reg 40.0%, unreg 31.2%",
		"longest untimed gap":                            "3.50s before a reg batch (thread 3, repetition 2, 53.8s after its start); before reg 3.50s, before unreg 2.00µs",
		"worker memory (a repetition's workers, summed)": "PSS 22.8 MiB, RSS 48.0 MiB (RSS counts shared pages in every process)",
	} {
		if rows[k] != want {
			t.Errorf("%s: %q, want %q", k, rows[k], want)
		}
	}
}
