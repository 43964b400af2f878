package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"golang.org/x/sys/unix"
)

// startRun starts xrcbench run with args and waits until its n workers run
// and its progress shows phase ("warm-up", "measuring"), and then a little
// more; it returns the command, its output buffers and the worker pids.
func startRun(t *testing.T, n int, phase string, args ...string) (*exec.Cmd, *syncWriter, *syncWriter, []int) {
	t.Helper()
	cmd := exec.Command(engineBinary(t), append([]string{"run", "--progress", "always"}, args...)...)
	stdout, stderr := &syncWriter{}, &syncWriter{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var workers []int
	for deadline := time.Now().Add(30 * time.Second); len(workers) < n; time.Sleep(20 * time.Millisecond) {
		workers = childPIDs(cmd.Process.Pid)
		if time.Now().After(deadline) {
			t.Fatalf("found workers %v, want %d\n%s", workers, n, stderr)
		}
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "repetition 1/1  "+phase); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run never showed %q\n%s", phase, stderr)
		}
	}
	time.Sleep(500 * time.Millisecond) // into the warm-up or the operations
	return cmd, stdout, stderr, workers
}

// waitExit waits for cmd and returns its exit status and how long it took.
func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, time.Since(start)
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("still running %v after the signal", within)
	}
	return 0, 0
}

// gone says whether pid no longer runs (exited, or a zombie).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || strings.Contains(string(data), ") Z ")
}

// The first ^C stops the run at once, in the warm-up too, and even when
// the workers are inside operations that take 10s each; the result keeps
// what was measured (partial). Before, ^C in the warm-up waited for its
// end, and an operation in progress could not be stopped at all.
func TestFirstInterrupt(t *testing.T) {
	tests := []struct {
		name, phase string
		args        []string
	}{
		{"warm-up", "warm-up", []string{"--workload", "steady", "--procs", "2", "--duration", "10s", "--warmup", "1h"}},
		{"long operations", "measuring", []string{"--workload", "lifecycle", "--procs", "2", "--threads", "1", "--qps", "4", "--iterations", "100",
			"--warmup", "0s", "--sim-cost", "create=10s"}},
		{"measuring", "measuring", []string{"--workload", "sharded", "--procs", "2", "--duration", "1h", "--warmup", "0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd, stdout, stderr, workers := startRun(t, 2, tt.phase, append(tt.args, "--out", out)...)
			cmd.Process.Signal(os.Interrupt)
			code, took := waitExit(t, cmd, 30*time.Second)
			// At once: a second for the threads, then the leak check and
			// the writing, on a busy machine.
			if took > 8*time.Second {
				t.Errorf("took %v to stop after ^C", took)
			}
			if code != exitFailed {
				t.Errorf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
			}
			if r.Status != results.StatusPartial || !strings.Contains(r.Error, "interrupted") {
				t.Errorf("status %s (%s), want partial, interrupted", r.Status, r.Error)
			}
			if tt.name == "measuring" && r.Ops["reg"].Count == 0 {
				t.Errorf("what was measured before ^C is lost: %+v", r.Ops)
			}
			for _, p := range workers {
				if !gone(p) {
					t.Errorf("worker %d still runs", p)
				}
			}
		})
	}
}

// A second ^C exits at once, and no worker outlives the coordinator.
func TestSecondInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	// Operations of 10s each: the first ^C waits a second for them.
	cmd, stdout, stderr, workers := startRun(t, 2, "measuring", "--workload", "lifecycle", "--procs", "2", "--qps", "4",
		"--iterations", "100", "--warmup", "0s", "--sim-cost", "create=10s", "--out", out)
	cmd.Process.Signal(os.Interrupt)
	// Two signals sent while the process waits for a CPU would be one:
	// the second goes once the first was taken.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "again to quit at once"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first ^C was never acknowledged\n%s", stderr)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	code, took := waitExit(t, cmd, 30*time.Second)
	if took > 3*time.Second {
		t.Errorf("took %v to exit after the second ^C", took)
	}
	if code != exitFailed || !strings.Contains(stderr.String(), "interrupt again: stopped at once") {
		t.Errorf("exit %d, want %d saying so\n%s\n%s", code, exitFailed, stdout, stderr)
	}
	for _, p := range workers {
		for deadline := time.Now().Add(10 * time.Second); !gone(p); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				syscall.Kill(p, syscall.SIGKILL)
				t.Errorf("worker %d outlived its coordinator", p)
				break
			}
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written after a second ^C", out)
	}
}

// syncWriter collects a child's output while the test reads it.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// SIGHUP (an ssh connection dropped) and SIGQUIT stop run, sweep and
// qualify as ^C does (issue 43, item 8): before, HUP killed the
// coordinator (exit 129) and QUIT dumped its goroutines (exit 2), with
// nothing written and the folder's .lock and temporary folder left
// behind. Now what was measured is kept (partial, naming the signal),
// the exit status is 1, and nothing but the folder is left.
func TestStopSignals(t *testing.T) {
	bin := engineBinary(t)
	plan := writePlan(t, "name: hup\nrepetitions: 1\nduration: 1h\nwarmup: 0s\nconformance: none\nruns:\n  - {name: st, workload: steady, procs: 1, threads: 1, qps: 1}\n")
	for _, tt := range []struct {
		cmd  string
		sig  syscall.Signal
		args []string
	}{
		{"run", syscall.SIGHUP, []string{"run", "--progress", "always", "--workload", "steady", "--duration", "1h", "--warmup", "0s"}},
		{"run", syscall.SIGQUIT, []string{"run", "--progress", "always", "--workload", "steady", "--duration", "1h", "--warmup", "0s"}},
		{"sweep", syscall.SIGHUP, []string{"sweep", "--progress", "always", "--workload", "steady", "--threads", "1,2", "--duration", "1h", "--warmup", "0s"}},
		{"sweep", syscall.SIGQUIT, []string{"sweep", "--progress", "always", "--workload", "steady", "--threads", "1,2", "--duration", "1h", "--warmup", "0s"}},
		{"qualify", syscall.SIGHUP, []string{"qualify", "--plan", plan}},
		{"qualify", syscall.SIGQUIT, []string{"qualify", "--plan", plan}},
	} {
		t.Run(tt.cmd+"/"+unix.SignalName(tt.sig), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			cmd := exec.Command(bin, append(tt.args, "--out", out)...)
			stdout, stderr := &syncWriter{}, &syncWriter{}
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			// Measuring: a worker runs, and the progress says so where
			// there is one (qualify has none: a worker, then 2s).
			for deadline := time.Now().Add(60 * time.Second); len(childPIDs(cmd.Process.Pid)) == 0 ||
				tt.cmd != "qualify" && !strings.Contains(stderr.String(), "measuring"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("never measured\n%s", stderr)
				}
			}
			if tt.cmd == "qualify" {
				time.Sleep(2 * time.Second)
			} else {
				time.Sleep(500 * time.Millisecond)
			}
			cmd.Process.Signal(tt.sig)
			code, _ := waitExit(t, cmd, 30*time.Second)
			if code != exitFailed {
				t.Errorf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
			}
			if strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("a goroutine dump:\n%s", stderr)
			}
			// What was measured is kept, naming the signal.
			var kept []string
			filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "result.json" {
					r, err := results.Load(filepath.Dir(path))
					if err != nil || r.Status != results.StatusPartial || !strings.Contains(r.Error, "interrupted ("+tt.sig.String()+")") || r.Ops["reg"].Count == 0 {
						t.Errorf("%s: %v, status %v (%v), want partial, interrupted (%v), with what was measured", path, err, r.Status, r.Error, tt.sig)
					}
					kept = append(kept, path)
				}
				return nil
			})
			if len(kept) == 0 {
				t.Errorf("no result.json under %s\n%s", out, stderr)
			}
			// No lock, no temporary folder or file, anywhere.
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && (strings.HasSuffix(d.Name(), ".lock") || strings.Contains(d.Name(), ".tmp")) {
					t.Errorf("left behind: %s", path)
				}
				return nil
			})
		})
	}
}

// A coordinator itself stopped (SIGSTOP) past --stall-timeout, and then
// continued, blames no worker that went on and finished meanwhile (issue
// 43, item 9): it read nothing while stopped, so a worker's silence is
// counted in the coordinator's own running time, and a worker that has
// exited (a zombie) is not silent but done. It once failed the run with
// "worker 0 sent nothing for 10s (state Z, a zombie)" (the default stall
// timeout, 10s; stopped 12s as in the audit: 2 of 2 runs failed so).
func TestCoordinatorStoppedBlamesNoWorker(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	cmd, stdout, stderr, _ := startRun(t, 2, "measuring", "--workload", "steady", "--procs", "2", "--duration", "3s",
		"--warmup", "0s", "--out", out)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(12 * time.Second) // past the run's end and the stall timeout
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code, _ := waitExit(t, cmd, 60*time.Second)
	if code != exitOK || strings.Contains(stderr.String(), "sent nothing") {
		t.Errorf("exit %d, want 0, no worker blamed\n%s\n%s", code, stdout, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusOK {
		t.Errorf("status %s (%s), want ok", r.Status, r.Error)
	}
}
