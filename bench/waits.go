package bench

import (
	"os"
	"time"

	"github.com/xrcbench/xrcbench/verbs"
)

// threadWaits is what a measured thread waited on between begin and end,
// both called on it: the run queue (the second field of its
// /proc/thread-self/schedstat: runnable, not running, the machine's doing)
// and the sim device's locks and command queue (the model's doing). The
// two are told apart so that a thread blocked on the device is not called
// CPU-starved.
type threadWaits struct {
	f            *os.File // /proc/thread-self/schedstat, opened on the thread
	runq0, runq  int64    // -1: unreadable
	lock0, cmdq0 time.Duration
	lock, cmdq   time.Duration
	begun        bool
}

func (w *threadWaits) begin() {
	if w.f == nil {
		f, err := os.Open("/proc/thread-self/schedstat")
		if err == nil {
			w.f = f
		}
	}
	w.runq0, w.runq = -1, -1
	if w.f != nil {
		w.runq0 = runDelay(w.f)
	}
	w.lock0, w.cmdq0 = verbs.SimThreadWaits()
	w.begun = true
}

// fd is the thread's open schedstat for a call into C to read (0: none).
func (w *threadWaits) fd() int {
	if w.f == nil {
		return 0
	}
	return int(w.f.Fd())
}

// startAt moves the run queue's count to start at runq, the thread's
// run-queue time as of its start, read in C (-1: unread, the count stays).
func (w *threadWaits) startAt(runq int64) {
	if runq >= 0 && w.runq0 >= 0 {
		w.runq0 = runq
	}
}

func (w *threadWaits) end() {
	if !w.begun { // a storm's rank, which counts its own run queue
		w.runq = -1
		return
	}
	l, c := verbs.SimThreadWaits()
	w.lock, w.cmdq = l-w.lock0, c-w.cmdq0
	w.runq = -1
	if w.f != nil && w.runq0 >= 0 {
		if r := runDelay(w.f); r >= w.runq0 {
			w.runq = r - w.runq0
		}
		w.f.Close()
		w.f = nil
	}
}

// runQueue is the run-queue time for threadResult; nil when unknown.
func (w *threadWaits) runQueue() *int64 {
	if w.runq < 0 {
		return nil
	}
	v := w.runq
	return &v
}
