package main

import (
	"errors"
	"strings"
	"testing"
)

// compare's flags: each bad value is bad usage (exit 2) naming the flag;
// good ones become the comparison's options.
func TestCompareFlagsOptions(t *testing.T) {
	good := compareFlags{threshold: "10%", alpha: 0.01, metrics: "p50,p99", gates: "reg.p99", format: "md"}
	with := func(change func(*compareFlags)) compareFlags {
		f := good
		change(&f)
		return f
	}
	for _, tc := range []struct {
		name    string
		flags   compareFlags
		wantErr string // "" for accepted
	}{
		{"good", good, ""},
		{"no gate: the workload's", with(func(f *compareFlags) { f.gates = "" }), ""},
		{"threshold", with(func(f *compareFlags) { f.threshold = "lots" }), "--threshold"},
		{"alpha 0", with(func(f *compareFlags) { f.alpha = 0 }), "--alpha"},
		{"alpha 1", with(func(f *compareFlags) { f.alpha = 1 }), "--alpha"},
		{"metric", with(func(f *compareFlags) { f.metrics = "p42" }), "--metric"},
		{"gate", with(func(f *compareFlags) { f.gates = "reg" }), "--gate"},
		{"format", with(func(f *compareFlags) { f.format = "xml" }), "--format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, write, err := tc.flags.options()
			if tc.wantErr != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (%T), want a usage error naming %s", err, err, tc.wantErr)
				}
				return
			}
			if err != nil || write == nil {
				t.Fatalf("options: %v", err)
			}
			if opts.Threshold != 10 || opts.Alpha != 0.01 || len(opts.Metrics) != 2 {
				t.Errorf("options %+v, want threshold 10, alpha 0.01, two metrics", opts)
			}
			if wantGates := tc.flags.gates != ""; (len(opts.Gates) == 1) != wantGates {
				t.Errorf("gates %v from --gate %q", opts.Gates, tc.flags.gates)
			}
		})
	}
}
