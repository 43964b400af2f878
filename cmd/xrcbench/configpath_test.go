package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// runConfig parses an `xrcbench run` command line with run's own flags
// and returns the engine configuration run would measure, Out aside (a
// rerun writes a new folder).
func runConfig(t *testing.T, args []string) bench.Config {
	t.Helper()
	if len(args) < 2 || args[0] != "xrcbench" || args[1] != "run" {
		t.Fatalf("%q is not an xrcbench run command", args)
	}
	var f runFlags
	cmd := &cobra.Command{Use: "run"}
	f.register(cmd.Flags(), false)
	if err := cmd.ParseFlags(args[2:]); err != nil {
		t.Fatalf("run's flags refuse %q: %v", args, err)
	}
	fs := cmd.Flags()
	procs, _ := fs.GetInt("procs")
	threads, _ := fs.GetInt("threads")
	qps, _ := fs.GetInt("qps")
	nodes, _ := fs.GetInt("nodes")
	cfg, err := f.config(cmd.Flags(), procs, threads, qps, nodes)
	if err != nil {
		t.Fatalf("run refuses %q: %v", args, err)
	}
	cfg.Out = ""
	return cfg
}

// sameConfig fails unless the configuration re-parsed from the recorded
// command line is the one measured, field by field.
func sameConfig(t *testing.T, measured, rerun bench.Config) {
	t.Helper()
	measured.Out = ""
	if !reflect.DeepEqual(measured, rerun) {
		mv, rv := reflect.ValueOf(measured), reflect.ValueOf(rerun)
		for i := 0; i < mv.NumField(); i++ {
			if !reflect.DeepEqual(mv.Field(i).Interface(), rv.Field(i).Interface()) {
				t.Errorf("%s: measured %v, the recorded command %q measures %v", mv.Type().Field(i).Name,
					mv.Field(i).Interface(), measured.CommandLine, rv.Field(i).Interface())
			}
		}
	}
}

// workloadFile is a user's workload: a built-in's spec in a file.
func workloadFile(t *testing.T) string {
	t.Helper()
	spec, err := workloads.Get("lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(p, []byte(spec.Source), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every setting of run: the command line run records reproduces the
// configuration it measured. Before bench.Settings, a storm recorded
// --qps, which a rerun refuses.
func TestRunCommandRoundTrip(t *testing.T) {
	mine := workloadFile(t)
	for _, args := range [][]string{
		nil,
		{"--provider=null"},
		{"--device=sim0"},
		{"--workload=lifecycle"},
		{"--workload=" + mine},
		{"--procs=2", "--threads=3", "--qps=5"},
		{"--duration=3s"},
		{"--iterations=7"},
		{"--warmup=0s"},
		{"--warmup=250ms"},
		{"--repetitions=4"},
		{"--pin"},
		{"--no-cpu-check"},
		{"--pin=true"}, // the boolean spellings of --pin before it was a choice
		{"--pin=false"},
		{"--pin=none"},
		{"--pin=cpu"},
		{"--pin=auto"},
		{"--workload=storm", "--pin=none"},
		{"--pin", "--workload=storm"},
		{"--seed=42"},
		{"--interval=250ms"},
		{"--qp-state=reset"},
		{"--qp-state=init"},
		{"--qp-state=rtr"},
		{"--workload=lifecycle", "--sim-semantics=upstream"},
		{"--sim-cost=reg=2us,destroy=200us"},
		{"--sim-max-qp=4096"},
		{"--batch-ops=8"},
		{"--batch-time=250us"},
		{"--rate=1500.5"},
		{"--rate-total=2e6", "--arrival=poisson"},
		{"--rate=100", "--arrival=fixed"},
		{"--stall-timeout=30s"},
		{"--label=fw=22.31.1014", "--label=board=b 7"},
		{"--workload=storm"},
		{"--workload=storm", "--nodes=5", "--procs=2"},
		{"--quiet", "--progress=never", "--out=somewhere"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cfg := runConfig(t, append([]string{"xrcbench", "run"}, args...))
			sameConfig(t, cfg, runConfig(t, cfg.CommandLine))
		})
	}
}

// Every setting a qualification's run can have, from the plan, its step,
// the qualification's options and the command line's overrides: the
// command recorded for the step, parsed by run, measures the same
// configuration. Before bench.Settings, qualify measured at qp_state
// reset while its recorded command (no --qp-state) measures at rtr.
func TestPlanStepCommandRoundTrip(t *testing.T) {
	mine := workloadFile(t)
	dur := func(d time.Duration) *results.Duration { v := results.Duration(d); return &v }
	const head = "name: t\nconformance: none\n"
	for _, tc := range []struct {
		name    string
		plan    string // after head
		o       qualify.Options
		wantQPS string // the QP state measured
	}{
		{"plan defaults", "repetitions: 2\nduration: 1s\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 2, qps: 4}\n", qualify.Options{}, "rtr"},
		{"plan iterations and warm-up", "repetitions: 3\niterations: 20\nwarmup: 0s\nruns:\n  - {name: r, workload: churn, procs: 2, threads: 1, qps: 4}\n", qualify.Options{}, "rtr"},
		{"plan warm-up", "repetitions: 1\nduration: 2s\nwarmup: 300ms\nruns:\n  - {name: r, workload: steady, procs: 1, threads: 1, qps: 16}\n", qualify.Options{}, "rtr"},
		{"plan qp_state", "repetitions: 1\nduration: 1s\nqp_state: reset\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2}\n", qualify.Options{}, "reset"},
		{"step qp_state", "repetitions: 1\nduration: 1s\nqp_state: reset\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2, qp_state: init}\n", qualify.Options{}, "init"},
		{"step repetitions", "repetitions: 5\nduration: 1s\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2, repetitions: 2}\n", qualify.Options{}, "rtr"},
		{"step duration", "repetitions: 1\niterations: 10\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2, duration: 3s}\n", qualify.Options{}, "rtr"},
		{"step iterations", "repetitions: 1\nduration: 10s\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2, iterations: 30}\n", qualify.Options{}, "rtr"},
		{"counts per CPU", "repetitions: 1\nduration: 1s\nruns:\n  - {name: r, workload: sharded, procs: cpus, threads: 2xcpus, qps: 8}\n", qualify.Options{}, "rtr"},
		{"errors workload", "repetitions: 1\nduration: 1s\nruns:\n  - {name: r, workload: errors, procs: 1, threads: 1, qps: 16}\n", qualify.Options{}, "rtr"},
		{"a workload file", "repetitions: 1\nduration: 1s\nruns:\n  - {name: r, workload: " + mine + ", procs: 1, threads: 1, qps: 2}\n", qualify.Options{}, "rtr"},
		{"another provider", "repetitions: 1\nduration: 1s\nruns:\n  - {name: r, workload: steady, procs: 1, threads: 1, qps: 2}\n",
			qualify.Options{Provider: "null", SimSemantics: verbs.Legacy}, "rtr"},
		{"device, sim model, labels", "repetitions: 1\nduration: 1s\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2}\n",
			qualify.Options{Device: verbs.SimDeviceName, SimSemantics: verbs.Upstream, SimCost: verbs.Cost{Reg: 2 * time.Microsecond, Destroy: 200 * time.Microsecond},
				Labels: map[string]string{"fw": "22.31.1014", "board": "b 7"}}, "rtr"},
		{"overrides", "repetitions: 5\niterations: 20\nwarmup: 1s\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2, iterations: 50, repetitions: 7}\n",
			qualify.Options{Overrides: qualify.Overrides{Duration: dur(200 * time.Millisecond), Repetitions: 2, Warmup: dur(0)}}, "rtr"},
		{"warm-up override alone", "repetitions: 1\nduration: 1s\nruns:\n  - {name: r, workload: lifecycle, procs: 1, threads: 1, qps: 2}\n",
			qualify.Options{Overrides: qualify.Overrides{Warmup: dur(2 * time.Second)}}, "rtr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := qualify.ParsePlan([]byte(head+tc.plan), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			o := tc.o
			if o.Provider == "" {
				o.Provider, o.SimSemantics = "sim", verbs.Legacy
			}
			o.Plan, o.Out = plan, t.TempDir()
			cfg, err := qualify.StepConfig(o, plan.Runs[0])
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.QPState.String(); got != tc.wantQPS {
				t.Errorf("measured at qp_state %s, want %s", got, tc.wantQPS)
			}
			if want := filepath.Join(o.Out, qualify.RunsDir, "r"); cfg.Out != want {
				t.Errorf("run folder %s, want %s", cfg.Out, want)
			}
			sameConfig(t, cfg, runConfig(t, cfg.CommandLine))
		})
	}
}

// The port and GID flags, short (perftest's -i, -x) and long, come back
// from the recorded command line as the same settings and configuration.
func TestPathFlagsRoundTrip(t *testing.T) {
	parse := func(args []string) bench.Settings {
		var f runFlags
		cmd := &cobra.Command{Use: "run"}
		f.register(cmd.Flags(), false)
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return f.s
	}
	for _, args := range [][]string{
		{"--provider=rdma", "-i", "2"},
		{"--provider=legacy", "-x", "0"},
		{"--provider=rdma", "--ib-port=1", "--gid-index=3"},
		{"--provider=legacy", "-i2", "-x5", "--device=mlx5_1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			s := parse(args)
			cfg, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			again := parse(cfg.CommandLine[2:])
			if !reflect.DeepEqual(s, again) {
				t.Errorf("settings %+v, from %q: %+v", s, cfg.CommandLine, again)
			}
			cfg2, err := again.Config()
			if err != nil {
				t.Fatal(err)
			}
			sameConfig(t, cfg, cfg2)
			if cfg.IBPort != s.IBPort || (s.GIDIndex >= 0) != (cfg.GIDIndex != nil) || cfg.GIDIndex != nil && *cfg.GIDIndex != s.GIDIndex {
				t.Errorf("config port %d gid %v, want %d and %d", cfg.IBPort, cfg.GIDIndex, s.IBPort, s.GIDIndex)
			}
		})
	}
}
