package host

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A run's measured threads run at the policy it was started with:
// SCHED_OTHER, or a real-time one (chrt -f 1 xrcbench run ...), which
// they alone take back. Every other thread of the coordinator and the
// workers (the Go runtime's, the flushers', the coordinator's readers and
// writers) runs SCHED_BATCH: its fair share of the CPU, but it never
// preempts a running thread on waking. At SCHED_OTHER a harness thread
// woken by its timer on a measured thread's CPU took that CPU from it
// (the kernel favours a waking thread that has run less): in one traced
// open-loop second the coordinator's woke on the measured thread's CPU,
// which waited 1.4 ms for another CPU, and every arrival due in that
// time waited with it.
//
// The Go runtime is not safe at a real-time priority: its background
// sweeper waits for another thread to finish sweeping by rescheduling
// goroutines on its own thread, never giving the CPU up to the kernel
// (golang/go#76353). A SCHED_FIFO thread doing that keeps its CPU from
// every other thread of its priority; with one such thread on each CPU,
// the thread it waits for never runs. Measured: 2 runs in 6 of a
// lifecycle at 4 threads on 2 CPUs livelocked, the coordinator's sweeper
// on one CPU and a worker's on the other, for good (SIGTERM handled by
// nobody). At SCHED_BATCH, as at SCHED_OTHER, the kernel shares the CPU,
// so nothing waits for ever. A measured thread at SCHED_FIFO is safe: it
// is locked to its goroutine, so the runtime runs nothing else there, and
// it waits for the other threads only by sleeping (the barrier's futex,
// the runtime's locks), which gives them its CPU.

// RTSched is a real-time scheduling policy and priority.
type RTSched struct {
	Policy   uint32 `json:"policy"` // SCHED_FIFO or SCHED_RR
	Priority uint32 `json:"priority"`
}

func (r *RTSched) String() string {
	if r == nil {
		return ""
	}
	name := "SCHED_FIFO"
	if r.Policy == unix.SCHED_RR {
		name = "SCHED_RR"
	}
	return fmt.Sprintf("%s priority %d", name, r.Priority)
}

// StartRealTime is the real-time policy this process started with (nil:
// none), found once, and from then on every thread of the process runs
// SCHED_BATCH until a measured thread takes its own policy
// (TakeRealTime).
var StartRealTime = sync.OnceValue(func() *RTSched { return batchThreads() })

// batchThreads moves every thread of the process to SCHED_BATCH, and
// returns the first real-time policy it met. The runtime may start a
// thread while this runs, from one not yet moved: it goes on until a pass
// over the threads moves none. A thread started later inherits its
// starter's policy; the Go runtime starts threads from a locked (measured)
// one through its template thread, which is itself started from a thread
// moved here.
func batchThreads() *RTSched {
	var first *RTSched
	for pass := 0; pass < 100; pass++ {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return first
		}
		moved := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			a, err := unix.SchedGetAttr(tid, 0)
			if err != nil || a.Policy == unix.SCHED_BATCH || a.Policy == unix.SCHED_IDLE {
				continue
			}
			if first == nil && (a.Policy == unix.SCHED_FIFO || a.Policy == unix.SCHED_RR) {
				first = &RTSched{Policy: a.Policy, Priority: a.Priority}
			}
			// Leaving a real-time policy, and moving between
			// SCHED_OTHER and SCHED_BATCH, need no privilege. The nice
			// value stays what it was.
			if unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_BATCH, Nice: a.Nice}, 0) == nil {
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return first
}

// niceOf is a thread's nice value (0 where it cannot be read).
func niceOf(tid int) int32 {
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0
	}
	return a.Nice
}

// KeepPolicy notes the calling thread's policy and returns what puts it
// back: a thread locked for a while that took a measured thread's policy
// (the calibration's) must not return to the runtime's pool with it.
func KeepPolicy() (restore func()) {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return func() {}
	}
	return func() { unix.SchedSetAttr(0, a, 0) }
}

// TakeRealTime gives the calling (locked, measured) thread the policy r,
// or SCHED_OTHER when r is nil. Threads it would start do not inherit a
// real-time one (reset on fork); the Go runtime starts threads from a
// locked one through its template thread anyway.
func TakeRealTime(r *RTSched) error {
	if r == nil {
		a := unix.SchedAttr{Policy: unix.SCHED_NORMAL, Nice: niceOf(0)}
		if err := unix.SchedSetAttr(0, &a, 0); err != nil {
			return fmt.Errorf("taking SCHED_OTHER for a measured thread: %w", err)
		}
		return nil
	}
	a := unix.SchedAttr{Policy: r.Policy, Priority: r.Priority, Flags: unix.SCHED_FLAG_RESET_ON_FORK}
	if err := unix.SchedSetAttr(0, &a, 0); err != nil {
		return fmt.Errorf("taking %s, which the run was started with: %w", r, err)
	}
	return nil
}
