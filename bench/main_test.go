package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Multi-process tests run real worker processes: the test binary itself,
// re-executed with this variable set, acts as the worker.
const workerEnv = "XRCBENCH_TEST_WORKER"

func TestMain(m *testing.M) {
	if shared := os.Getenv(victimEnv); shared != "" {
		victimChild(shared)
		os.Exit(0)
	}
	if shared := os.Getenv(racerEnv); shared != "" {
		racerChild(shared)
		os.Exit(0)
	}
	if os.Getenv(workerEnv) == "1" {
		if say := os.Getenv("XRCBENCH_TEST_WORKER_SAY"); say != "" {
			fmt.Fprintln(os.Stderr, say)
		}
		if os.Getenv("XRCBENCH_TEST_WORKER_GARBAGE") == "1" {
			os.Stdout.WriteString("this is not a frame\n")
			os.Exit(0)
		}
		if c := os.Getenv("XRCBENCH_TEST_WORKER_SIM_COST"); c != "" {
			cost, err := verbs.ParseCost(c)
			if err != nil {
				panic(err)
			}
			testHookConfig = func(cfg *workerConfig) { cfg.Verbs.Sim.Cost = cost }
		}
		if os.Getenv("XRCBENCH_TEST_WORKER_SAY_MEASURING") == "1" {
			testHookMeasuring = func(thread int) { fmt.Fprintf(os.Stderr, "thread %d measuring\n", thread) }
		}
		if os.Getenv("XRCBENCH_TEST_WORKER_SAY_MEMORY") == "1" {
			testHookMeasuring = sayMemory
		}
		if err := WorkerMain(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// syncBuffer collects the workers' forwarded stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testOptions(t *testing.T, env ...string) (Options, *syncBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	return Options{WorkerExe: exe, WorkerEnv: append([]string{workerEnv + "=1"}, env...), Stderr: buf, TempDir: t.TempDir()}, buf
}

func testConfig(t *testing.T, workload, provider string, procs, threads, qps int) Config {
	t.Helper()
	spec, err := workloads.Get(workload)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Provider: provider, Workload: spec, WorkloadArg: workload, Procs: procs, Threads: threads, QPs: qps,
		Repetitions: 1, Interval: time.Second, Seed: 1, Out: filepath.Join(t.TempDir(), "run")}
}

func runOK(t *testing.T, cfg Config) *results.Result {
	t.Helper()
	opts, stderr := testOptions(t)
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("Run: %v\nstderr:\n%s", err, stderr)
	}
	loaded, err := results.Load(cfg.Out)
	if err != nil {
		t.Fatalf("result.json does not load: %v", err)
	}
	if loaded.Status != results.StatusOK {
		t.Fatalf("status %q: %s", loaded.Status, loaded.Error)
	}
	// The private directory (device, domains, barrier) is gone.
	if left, _ := os.ReadDir(opts.TempDir); len(left) != 0 {
		t.Errorf("private directory left behind: %v", left)
	}
	return res
}
