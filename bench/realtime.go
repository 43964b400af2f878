package bench

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A run started under a real-time scheduling policy (chrt -f 1 xrcbench
// run ...) gives that policy to its measured threads only; every other
// thread of the coordinator and the workers runs SCHED_OTHER.
//
// The Go runtime is not safe at a real-time priority: its background
// sweeper waits for another thread to finish sweeping by rescheduling
// goroutines on its own thread, never giving the CPU up to the kernel
// (golang/go#76353). A SCHED_FIFO thread doing that keeps its CPU from
// every other thread of its priority; with one such thread on each CPU,
// the thread it waits for never runs. Measured: 2 runs in 6 of a
// lifecycle at 4 threads on 2 CPUs livelocked, the coordinator's sweeper
// on one CPU and a worker's on the other, for good (SIGTERM handled by
// nobody). At SCHED_OTHER the kernel shares the CPU, so nothing waits for
// ever. A measured thread at SCHED_FIFO is safe: it is locked to its
// goroutine, so the runtime runs nothing else there, and it waits for the
// other threads only by sleeping (the barrier's futex, the runtime's
// locks), which gives them its CPU.

// rtSched is a real-time scheduling policy and priority.
type rtSched struct {
	Policy   uint32 `json:"policy"` // SCHED_FIFO or SCHED_RR
	Priority uint32 `json:"priority"`
}

func (r *rtSched) String() string {
	if r == nil {
		return ""
	}
	name := "SCHED_FIFO"
	if r.Policy == unix.SCHED_RR {
		name = "SCHED_RR"
	}
	return fmt.Sprintf("%s priority %d", name, r.Priority)
}

// startRealTime is the real-time policy this process started with (nil:
// none), found once, and from then on every thread of the process runs
// SCHED_OTHER.
var startRealTime = sync.OnceValue(func() *rtSched { return dropRealTime() })

// dropRealTime moves every thread of the process that runs at a real-time
// policy to SCHED_OTHER, and returns the first such policy it met. The
// runtime may start a thread while this runs, from one still real-time:
// it goes on until a pass over the threads finds none.
func dropRealTime() *rtSched {
	var first *rtSched
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
			if err != nil || (a.Policy != unix.SCHED_FIFO && a.Policy != unix.SCHED_RR) {
				continue
			}
			if first == nil {
				first = &rtSched{Policy: a.Policy, Priority: a.Priority}
			}
			// Lowering one's own policy needs no privilege.
			if unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0) == nil {
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return first
}

// takeRealTime gives the calling (locked, measured) thread the policy r.
// Threads it would start do not inherit it (reset on fork); the Go
// runtime starts threads from a locked one through its template thread
// anyway.
func takeRealTime(r *rtSched) error {
	if r == nil {
		return nil
	}
	a := unix.SchedAttr{Policy: r.Policy, Priority: r.Priority, Flags: unix.SCHED_FLAG_RESET_ON_FORK}
	if err := unix.SchedSetAttr(0, &a, 0); err != nil {
		return fmt.Errorf("taking %s, which the run was started with: %w", r, err)
	}
	return nil
}
