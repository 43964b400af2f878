package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// run's flags, parsed, through the one path to a configuration: a bad
// value or a flag that does not apply is bad usage (exit 2), with the
// message of the one rule it breaks. What only the flag set can tell
// (--iterations given, flags given to a storm) is the CLI's; the rest is
// bench's rules. A value that is the flag's own default (--sim-max-qp 0,
// --rate 0, --nodes 0) is accepted as the default, given or not; --batch-ops
// and --batch-time, whose defaults are not 0, refuse it.
func TestRunFlagParts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string        // "" for accepted
		dur     time.Duration // accepted: the configuration's duration
	}{
		{"defaults", nil, "", 10 * time.Second},
		{"duration", []string{"--duration=3s"}, "", 3 * time.Second},
		{"iterations: no duration", []string{"--iterations=5"}, "", 0},
		{"both", []string{"--duration=3s", "--iterations=5"}, "give --duration or --iterations, not both", 0},
		{"iterations 0", []string{"--iterations=0"}, "--iterations 0: want a positive number", 0},
		{"iterations negative", []string{"--iterations=-2"}, "--iterations -2: want a positive number", 0},
		{"duration 0", []string{"--duration=0s"}, "--duration 0s, --iterations 0: want exactly one of them positive", 0},
		{"negative warm-up", []string{"--warmup=-1s"}, "--warmup -1s: want 0 (none) up to 1h0m0s", 0},
		{"nodes on a loop", []string{"--nodes=4"}, "--nodes applies to storm workloads only", 0},
		{"nodes 0 on a loop", []string{"--nodes=0"}, "", 10 * time.Second},
		{"nodes on a storm", []string{"--workload=storm", "--nodes=4"}, "", 0},
		{"qps on a storm", []string{"--workload=storm", "--qps=4"}, "--qps does not apply to the storm", 0},
		{"sim flag on null", []string{"--provider=null", "--sim-cost=reg=1us"}, "apply to --provider sim only", 0},
		{"sim default on null", []string{"--provider=null", "--sim-semantics=legacy"}, "", 10 * time.Second},
		{"sim max qp 0", []string{"--sim-max-qp=0"}, "", 10 * time.Second},
		{"sim max qp negative", []string{"--sim-max-qp=-1"}, "--sim-max-qp -1: want 1 to", 0},
		{"qp state", []string{"--qp-state=ready"}, "--qp-state", 0},
		{"batch ops 0", []string{"--batch-ops=0"}, "--batch-ops 0: want 1 to", 0},
		{"batch ops negative", []string{"--batch-ops=-3"}, "--batch-ops -3: want 1 to", 0},
		{"batch time 0", []string{"--batch-time=0s"}, "--batch-time 0s: want a positive duration", 0},
		{"rate", []string{"--rate=-1"}, "--rate -1: want a positive rate", 0},
		{"rate 0: a closed loop", []string{"--rate=0"}, "", 10 * time.Second},
		{"rate-total", []string{"--rate-total=-1"}, "--rate-total -1: want a positive rate", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f runFlags
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			f.register(fs, false)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config(fs, f.s.Procs, f.s.Threads, f.s.QPs, f.s.Nodes)
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
			if cfg.Duration != tc.dur {
				t.Errorf("measured time %v, want %v", cfg.Duration, tc.dur)
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
