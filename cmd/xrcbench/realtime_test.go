package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"golang.org/x/sys/unix"
)

// startFIFO starts cmd at SCHED_FIFO priority 1, as `chrt -f 1` would: it
// forks from a thread of ours set to that policy, which the child
// inherits. It skips the test when the policy is not permitted here.
func startFIFO(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
		testenv.Skip(t, testenv.Root, "SCHED_FIFO is not permitted here (root or RLIMIT_RTPRIO): %v", err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0); rerr != nil {
		t.Fatalf("back to SCHED_OTHER: %v", rerr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestRunUnderFIFO (issue 10): a run started under SCHED_FIFO ends, with
// its measured threads at that policy. Before, about a run in three of
// this lifecycle (4 threads on 2 CPUs) livelocked for good, the Go
// runtime's background sweeper spinning at real-time priority in the
// coordinator on one CPU and in a worker on the other while the threads
// they waited for could not run; SIGTERM did not stop it. Each run gets a
// deadline far beyond its usual second; one that outlives it is killed
// (its whole process group) and fails the test.
func TestRunUnderFIFO(t *testing.T) {
	bin := buildXrcbench(t)
	threads := 2 * runtime.NumCPU()
	const runs, deadline = 6, 60 * time.Second
	for i := 1; i <= runs; i++ {
		out := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(bin, "run", "--provider", "sim", "--workload", "lifecycle", "--procs", "1",
			"--threads", strconv.Itoa(threads), "--qps", strconv.Itoa(threads-1), "--iterations", "200", "--warmup", "0",
			"--sim-cost", "create=20us,reg=7us,unreg=3us,destroy=310us", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		startFIFO(t, cmd)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d under SCHED_FIFO: %v\n%s", i, err, stderr.Bytes())
			}
		case <-time.After(deadline):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("run %d under SCHED_FIFO hung: killed after %v\n%s", i, deadline, stderr.Bytes())
		}
		res, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Harness.Scheduling, "SCHED_FIFO priority 1"; got != want {
			t.Fatalf("run %d: harness.scheduling %q, want %q", i, got, want)
		}
		if c := res.Ops[results.OpCreate].Count; c != int64(200*(threads-1)) {
			t.Fatalf("run %d: create count %d, want %d", i, c, 200*(threads-1))
		}
	}
}
