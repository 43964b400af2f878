package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/xrcbench/xrcbench/workloads"
)

// The parts of run's flag checks, each on a parsed command line: a bad
// value or a flag that does not apply is bad usage (exit 2).
func TestRunFlagParts(t *testing.T) {
	steady, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	storm, err := workloads.Get("storm")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		spec    *workloads.Spec
		wantErr string // "" for accepted
		dur     time.Duration
	}{
		{"defaults", nil, steady, "", -1},
		{"duration", []string{"--duration=3s"}, steady, "", 3 * time.Second},
		{"iterations: no duration", []string{"--iterations=5"}, steady, "", 0},
		{"both", []string{"--duration=3s", "--iterations=5"}, steady, "not both", 0},
		{"iterations 0", []string{"--iterations=0"}, steady, "--iterations 0", 0},
		{"duration 0", []string{"--duration=0s"}, steady, "--duration 0s", 0},
		{"negative warm-up", []string{"--warmup=-1s"}, steady, "--warmup", 0},
		{"nodes on a loop", []string{"--nodes=4"}, steady, "--nodes applies to storm workloads only", -1},
		{"nodes on a storm", []string{"--nodes=4"}, storm, "", -1},
		{"qps on a storm", []string{"--qps=4"}, storm, "--qps does not apply to the storm", -1},
		{"sim flag on null", []string{"--provider=null", "--sim-cost=reg=1us"}, steady, "apply to --provider sim only", -1},
		{"sim max qp 0", []string{"--sim-max-qp=0"}, steady, "--sim-max-qp 0", -1},
		{"qp state", []string{"--qp-state=ready"}, steady, "--qp-state", -1},
		{"batch ops", []string{"--batch-ops=0"}, steady, "--batch-ops 0", -1},
		{"rate", []string{"--rate=-1"}, steady, "--rate -1", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f runFlags
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			f.register(fs, false)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			dur, err := f.measureTime(fs)
			if err == nil {
				_, err = f.deviceModel(fs)
			}
			if err == nil {
				err = stormFlags(fs, tc.spec)
			}
			if err == nil {
				err = f.checkPacing(fs)
			}
			if tc.wantErr != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (%T), want a usage error containing %q", err, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.dur >= 0 && dur != tc.dur {
				t.Errorf("measured time %v, want %v", dur, tc.dur)
			}
		})
	}
}

// An unknown provider is bad usage; sim is always there.
func TestCheckProvider(t *testing.T) {
	var ue usageError
	if err := checkProvider("nope"); !errors.As(err, &ue) {
		t.Errorf("unknown provider: %v (%T), want a usage error", err, err)
	}
	if err := checkProvider("sim"); err != nil {
		t.Errorf("sim: %v", err)
	}
}
