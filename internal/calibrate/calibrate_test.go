package calibrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/verbs"
)

// TestJudgeCalibration: each figure against its target, at and either
// side of the bound; the informative figures are always OK.
func TestJudgeCalibration(t *testing.T) {
	null := func(nullOp, timer, calls float64) []Measurement { return judgeNullOp(nullOp, timer, calls) }
	tests := []struct {
		name   string
		got    []Measurement
		wantOK map[string]bool
	}{
		{"null op at 1.5 timer reads, 1 call per batch", null(30, 20, 1.0/nullBatch),
			map[string]bool{"null_op": true, "null_op_per_timer_read": true, "cgo_calls_per_op": true}},
		{"null op over 1.5 timer reads", null(30.2, 20, 1.0/nullBatch),
			map[string]bool{"null_op": true, "null_op_per_timer_read": false, "cgo_calls_per_op": true}},
		{"a cgo call per op", null(20, 20, 1),
			map[string]bool{"null_op": true, "null_op_per_timer_read": true, "cgo_calls_per_op": false}},
		{"cgo calls at the bound", null(20, 20, 0.001),
			map[string]bool{"null_op": true, "null_op_per_timer_read": true, "cgo_calls_per_op": true}},
		{"sim pair at 250 ns", []Measurement{judgeSimPair(250)}, map[string]bool{"sim_reg_unreg_pair": true}},
		{"sim pair over 250 ns", []Measurement{judgeSimPair(250.5)}, map[string]bool{"sim_reg_unreg_pair": false}},
		{"destroy exactly as given", []Measurement{judgeSimDestroy(100_000)}, map[string]bool{"sim_destroy_100us_p50_over": true}},
		{"destroy 4.9% over", []Measurement{judgeSimDestroy(104_900)}, map[string]bool{"sim_destroy_100us_p50_over": true}},
		{"destroy 5.1% over", []Measurement{judgeSimDestroy(105_100)}, map[string]bool{"sim_destroy_100us_p50_over": false}},
		{"destroy under the cost given", []Measurement{judgeSimDestroy(99_900)}, map[string]bool{"sim_destroy_100us_p50_over": false}},
	}
	for _, tt := range tests {
		if len(tt.got) != len(tt.wantOK) {
			t.Errorf("%s: %d measurements, want %d", tt.name, len(tt.got), len(tt.wantOK))
		}
		for _, m := range tt.got {
			want, ok := tt.wantOK[m.Name]
			if !ok {
				t.Errorf("%s: unexpected measurement %s", tt.name, m.Name)
				continue
			}
			if m.OK != want || (m.Target == "") != (m.Name == "null_op") {
				t.Errorf("%s: %s = %v (target %q) ok %v, want ok %v", tt.name, m.Name, m.Value, m.Target, m.OK, want)
			}
		}
	}
	// A figure whose slices mostly shared their CPU is not judged, met
	// or missed; an informative one has nothing to judge.
	for _, tt := range []struct {
		m          Measurement
		clean, all int
		ok, busy   bool
	}{
		{judgeSimPair(300), 16, 64, false, false},
		{judgeSimPair(300), 15, 64, false, true},
		{judgeSimPair(200), 15, 64, false, true},
		{judgeSimPair(200), 64, 64, true, false},
		{judgeNullOp(30, 20, 0)[0], 0, 64, true, false},
	} {
		m := JudgeUnlessBusy(tt.m, tt.clean, tt.all)
		if m.OK != tt.ok || m.Busy != tt.busy || m.Missed() == (tt.ok || tt.busy) {
			t.Errorf("%s %v with %d of %d slices clean: ok %v busy %v missed %v, want ok %v busy %v", m.Name, m.Value, tt.clean, tt.all, m.OK, m.Busy, m.Missed(), tt.ok, tt.busy)
		}
		if tt.busy && !strings.Contains(m.Detail, fmt.Sprintf("only %d of %d slices", tt.clean, tt.all)) {
			t.Errorf("busy %s: detail %q", m.Name, m.Detail)
		}
	}
	if m := judgeNullOp(30, 20, 0); m[1].Value != 1.5 {
		t.Errorf("null_op_per_timer_read = %v, want 30/20", m[1].Value)
	}
	if m := judgeSimDestroy(102_000); m.Value < 1.99 || m.Value > 2.01 || m.Detail != "last unreg p50 102.0us with destroy=100us" {
		t.Errorf("destroy 102us: %+v, want 2%% over, named in the detail", m)
	}
}

// TestCalibrationMeasures checks the measurements against what is known
// without timing them: the null op and the sim pair take some time, a
// batch is at least one cgo call, and the last unreg spins for at least
// the destroy cost it was given (5% slack for the two clocks).
func TestCalibrationMeasures(t *testing.T) {
	dir := t.TempDir()
	nullOp, calls, _, err := verbs.MeasureNullOp(dir, nullBatch, calibrationRounds)
	if err != nil {
		t.Fatal(err)
	}
	if nullOp <= 0 || calls < 1.0/nullBatch {
		t.Errorf("null op %v ns, %v cgo calls per op: want > 0 and >= 1 per batch of %d", nullOp, calls, nullBatch)
	}
	pair, _, err := verbs.MeasureSimPair(dir, simQPs, calibrationRounds)
	if err != nil {
		t.Fatal(err)
	}
	if pair <= 0 {
		t.Errorf("sim pair %v ns, want > 0", pair)
	}
	p50, err := verbs.MeasureSimDestroy(dir, destroyQPs, calibrationDestroy)
	if err != nil {
		t.Fatal(err)
	}
	if p50 < 0.95*float64(calibrationDestroy) {
		t.Errorf("last unreg p50 %v ns with destroy=%v: below the cost given", p50, calibrationDestroy)
	}
}
