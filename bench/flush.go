package bench

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/results"
)

// A measured thread never stops for its interval's report. At an
// interval's end it swaps its interval arrays for a clear set (double
// buffering) and hands the full set to its flusher, a goroutine that
// measures nothing: it encodes the counts as histograms (v2enc.go), sends
// them to the outbox and clears the set for the next swap. Encoding
// took the thread 4-30 ms at every interval boundary before, the longest
// untimed gap of a run, and in an open loop every operation due meanwhile
// waited for it (issue 25).

// ivBuf is one set of a thread's interval arrays: every kind's service
// counts, kind after kind, and in an open loop its response counts.
type ivBuf struct{ service, response []int64 }

func newIVBuf(n int, open bool) ivBuf {
	b := ivBuf{service: make([]int64, n)}
	if open {
		b.response = make([]int64, n)
	}
	return b
}

// kindWindow is kind i's window on all, a block of counts kind after kind
// (nil for nil).
func kindWindow(all []int64, i int) []int64 {
	if all == nil {
		return nil
	}
	return all[i*histCounts : (i+1)*histCounts : (i+1)*histCounts]
}

// flushJob is one ended interval on its way to the coordinator: the
// message without its histograms, the kinds it counted and how many each,
// and the set of arrays that holds their counts.
type flushJob struct {
	msg   *intervalMsg
	kinds []flushKind
	buf   ivBuf
}

type flushKind struct {
	idx int
	n   int64
}

// flusherQueue is how many ended intervals may wait for their encoding: a
// thread whose flusher is that far behind (intervals shorter than the
// encoding, on a starved machine) waits for it, and the wait is an untimed
// gap of the run's coverage, not a growth of memory without bound.
const flusherQueue = 4

// flusher is a thread's encoder of ended intervals.
type flusher struct {
	g      int
	kinds  []string // the thread's kinds by index
	report func(*intervalMsg)
	jobs   chan *flushJob
	spare  chan ivBuf // cleared sets for the next swap
	done   chan struct{}
	enc    *v2Encoder
	// bell wakes the flusher for a job (an eventfd; -1: none, and the
	// flusher parks on jobs). Set at the start, read by both sides.
	bell int

	failed atomic.Bool // err is set
	mu     sync.Mutex
	err    error // the first encoding failure
}

// startFlusher starts t's flusher, with one clear set of arrays ready
// for the first swap (allocated now, not at an interval's end).
func startFlusher(t *thread) *flusher {
	f := &flusher{g: t.g, report: t.report, jobs: make(chan *flushJob, flusherQueue),
		spare: make(chan ivBuf, 2), done: make(chan struct{}), enc: newV2Encoder(), bell: newBell()}
	for _, r := range t.recs {
		f.kinds = append(f.kinds, r.kind)
	}
	f.spare <- newIVBuf(len(t.ivAll), t.ivRespAll != nil)
	go f.serve()
	return f
}

func (f *flusher) serve() {
	defer close(f.done)
	// The flusher wakes at every interval's end, when its thread has just
	// handed it an interval: woken on that thread's CPU (the scheduler
	// favours the waker's on a busy machine) a SCHED_OTHER thread would
	// preempt it for the encoding, a stall at the boundary all the same.
	// SCHED_BATCH keeps its fair share of the CPU but never preempts on
	// waking. The OS thread is the flusher's alone, and ends with it, so
	// no other goroutine runs at that policy. Best effort: a kernel that
	// refuses leaves it at SCHED_OTHER.
	runtime.LockOSThread()
	unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_BATCH}, 0)
	for {
		j, ok := f.next()
		if !ok {
			return
		}
		if !f.failed.Load() {
			if err := f.encode(j); err != nil {
				f.mu.Lock()
				f.err = err
				f.mu.Unlock()
				f.failed.Store(true)
			} else {
				f.report(j.msg)
			}
		}
		for _, k := range j.kinds {
			clear(kindWindow(j.buf.service, k.idx))
			clear(kindWindow(j.buf.response, k.idx))
		}
		select {
		case f.spare <- j.buf:
		default: // enough sets in reserve: this one goes
		}
	}
}

// The thread rings the flusher's bell, an eventfd, rather than handing it
// an interval through a channel it is parked on: that send readies the
// flusher on the thread's own P, first in line (runnext), and the runtime
// soon preempts a goroutine back from a long cgo call (its P's schedule
// tick is stale). Preempted so, the measured thread waited for another P
// while its flusher encoded on its own, 1.9 ms in an execution trace on a
// quiet 2-CPU VM, and every arrival of an open loop due meanwhile queued.
// Blocked in read(2) on the eventfd, the flusher is a system call on its
// own OS thread: the write wakes that thread, which takes an idle P of its
// own. The longest untimed gap of a 1 s open loop at 100 ms intervals
// (TestNoGapAtIntervals, race detector on, quiet VM) was over 1 ms in 7 of
// 19 runs woken through the channel, in 6 of 39 with the bell (medians
// 0.44 and 0.33 ms); what is left is the preemption's own hand-over
// between OS threads.

// newBell is an eventfd for a flusher's bell, -1 when none can be made
// (the flusher then parks on its channel); tests replace it.
var newBell = func() int {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return -1
	}
	return fd
}

// next is the next interval handed over, false once jobs is closed and
// drained. The flusher never parks on jobs while it has a bell, so a send
// readies no goroutine.
func (f *flusher) next() (*flushJob, bool) {
	if f.bell >= 0 {
		for {
			select {
			case j, ok := <-f.jobs:
				return j, ok
			default:
			}
			var b [8]byte
			if _, err := unix.Read(f.bell, b[:]); err != nil && err != unix.EINTR {
				break // an unusable bell: the channel, below
			}
		}
	}
	j, ok := <-f.jobs
	return j, ok
}

// ring wakes the flusher after a job was sent.
func (f *flusher) ring() {
	if f.bell >= 0 {
		var one [8]byte // an eventfd adds the 8-byte value written
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(f.bell, one[:])
	}
}

// encodeInterval is v2Encoder.encode; tests replace it to make it fail.
var encodeInterval = (*v2Encoder).encode

// encode fills j's message with its histograms. A histogram that cannot
// be encoded is an error of the run: the interval's latencies would be
// lost, and the figures would not be what was measured.
func (f *flusher) encode(j *flushJob) error {
	m := j.msg
	m.Hists = make(map[string]string, 2*len(j.kinds))
	for _, k := range j.kinds {
		kind := f.kinds[k.idx]
		s, err := encodeInterval(f.enc, kindWindow(j.buf.service, k.idx))
		if err != nil {
			return fmt.Errorf("thread %d: encoding the %s latencies of interval %d (%d operations): %w", f.g, kind, m.Index, k.n, err)
		}
		m.Hists[kind] = s
		if j.buf.response != nil {
			s, err := encodeInterval(f.enc, kindWindow(j.buf.response, k.idx))
			if err != nil {
				return fmt.Errorf("thread %d: encoding the %s response times of interval %d (%d operations): %w", f.g, kind, m.Index, k.n, err)
			}
			m.Hists[kind+results.ResponseSuffix] = s
		}
	}
	return nil
}

// failure is the first encoding failure so far, or nil.
func (f *flusher) failure() error {
	if !f.failed.Load() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// take is a clear set of arrays: one the flusher is done with, or, when
// it is behind, a new one.
func (f *flusher) take(n int, open bool) ivBuf {
	select {
	case b := <-f.spare:
		return b
	default:
		return newIVBuf(n, open)
	}
}

// close waits until every interval handed over is encoded and sent, and
// returns the first encoding failure.
func (f *flusher) close() error {
	close(f.jobs)
	f.ring()
	<-f.done
	if f.bell >= 0 {
		unix.Close(f.bell)
	}
	return f.failure()
}

// setIV makes b the thread's interval arrays: the C loop (through the
// program's Recording) and the Go recorders (storms) count there from now.
func (t *thread) setIV(b ivBuf) {
	t.ivAll, t.ivRespAll = b.service, b.response
	for i, r := range t.recs {
		r.iv, r.ivResp = kindWindow(b.service, i), kindWindow(b.response, i)
	}
	if t.prog != nil {
		t.prog.p.Rec.Service, t.prog.p.Rec.Response = b.service, b.response
	}
}

// handOver swaps the thread's interval arrays for a clear set and gives
// the ended interval (msg, kinds) to the flusher, started now if it was
// not (tests that drive a thread by hand).
func (t *thread) handOver(msg *intervalMsg, kinds []flushKind) {
	if t.flush == nil {
		t.flush = startFlusher(t)
	}
	old := ivBuf{t.ivAll, t.ivRespAll}
	t.setIV(t.flush.take(len(old.service), old.response != nil))
	t.flush.jobs <- &flushJob{msg: msg, kinds: kinds, buf: old}
	t.flush.ring()
}

// closeFlush waits for the thread's flusher to send what it was handed
// and stops it; it returns the first encoding failure. The next interval
// handed over starts a new one.
func (t *thread) closeFlush() error {
	if t.flush == nil {
		return nil
	}
	err := t.flush.close()
	t.flush = nil
	return err
}
