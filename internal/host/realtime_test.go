package host

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// Every harness thread runs SCHED_BATCH, so none preempts a measured
// thread when it wakes on that thread's CPU; a measured thread takes
// SCHED_OTHER for itself, and a thread the runtime starts afterwards is
// at SCHED_BATCH too.
func TestHarnessThreadsRunBatch(t *testing.T) {
	if rt := StartRealTime(); rt != nil {
		t.Skipf("this test process was started at %s", rt)
	}
	// Other tests of this process set threads up as measured ones on
	// goroutines they do not lock (thread.setup in helpers), which leaves
	// those threads at SCHED_OTHER; the process moves its threads once,
	// at its start, so this test moves them again, as it would.
	batchThreads()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if a, err := unix.SchedGetAttr(tid, 0); err == nil && a.Policy != unix.SCHED_BATCH {
			t.Errorf("thread %d runs policy %d, want SCHED_BATCH (%d)", tid, a.Policy, unix.SCHED_BATCH)
		}
	}
	type policies struct{ before, after uint32 }
	got := make(chan policies)
	measured := func() {
		// Locked for good: the thread ends with the goroutine, and its
		// policy with it.
		runtime.LockOSThread()
		var p policies
		a, _ := unix.SchedGetAttr(0, 0)
		p.before = a.Policy
		if err := TakeRealTime(nil); err != nil {
			t.Error(err)
		}
		a, _ = unix.SchedGetAttr(0, 0)
		p.after = a.Policy
		got <- p
	}
	for i := range 3 {
		go measured()
		p := <-got
		if p.before != unix.SCHED_BATCH || p.after != unix.SCHED_NORMAL {
			t.Errorf("measured thread %d: policy %d before taking its own, %d after; want SCHED_BATCH (%d), then SCHED_OTHER (%d)",
				i, p.before, p.after, unix.SCHED_BATCH, unix.SCHED_NORMAL)
		}
	}
}
