package main

import (
	"encoding/json"
	"testing"
)

// TestCalibrate checks that calibrate measures what it says and that its
// exit status agrees with its verdicts. The verdicts themselves are speed
// targets, not asserted here: this machine is shared and noisy.
func TestCalibrate(t *testing.T) {
	code, out, errOut := runCLI("calibrate", "--json")
	var got struct {
		Measurements []struct {
			Name   string
			Value  float64
			Target string
			OK     bool
		}
		Missed int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s\n%s", code, err, out, errOut)
	}
	want := map[string]bool{"timer_read": true, "null_op": true, "null_op_per_timer_read": true,
		"cgo_calls_per_op": true, "sim_reg_unreg_pair": true, "sim_destroy_100us_p50_over": true}
	missed := 0
	for _, m := range got.Measurements {
		delete(want, m.Name)
		if m.Name != "sim_destroy_100us_p50_over" && m.Value <= 0 {
			t.Errorf("%s = %v: not measured", m.Name, m.Value)
		}
		if !m.OK {
			missed++
		}
	}
	if len(want) != 0 {
		t.Errorf("missing measurements %v", want)
	}
	if missed != got.Missed || (missed > 0) != (code == 1) || (missed == 0 && code != 0) {
		t.Errorf("exit %d with %d missed targets (reported %d)", code, missed, got.Missed)
	}
	if code, _, _ := runCLI("calibrate", "extra"); code != 2 {
		t.Errorf("calibrate with an argument: exit %d, want 2", code)
	}
}
