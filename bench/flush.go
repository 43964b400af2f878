package bench

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/hdrv2"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// A measured thread never stops for its interval's report, and in a ring
// does not even come back into Go for it. Its counts live in a deck of
// flusherSets sets (verbs.Deck): at an interval's end the C loop itself
// ends the set counting and goes on in the next free one. The thread's
// flusher, a goroutine that measures nothing, wakes at that end (wait),
// encodes the ended set's counts as histograms (internal/hdrv2), sends
// them to the outbox, clears the set and frees it. Between calls into C
// (a storm, a program that is no ring, the measurement's end) the thread
// turns the deck the same way in Go (turn) and rings the flusher.
// Encoding took the thread 4-30 ms at every interval's end before (issue
// 25); handing the set over in Go still cost an open loop a stall at each
// end, the way back from C into the runtime (up to a few ms when the
// runtime preempted the thread there,
// measurements/2026-12-05-start-and-boundary.md).

// ivBuf is one set of a thread's interval arrays: every kind's service
// counts, kind after kind, and in an open loop its response counts.
type ivBuf struct{ service, response []int64 }

// kindWindow is kind i's window on all, a block of counts kind after kind
// (nil for nil).
func kindWindow(all []int64, i int) []int64 {
	if all == nil {
		return nil
	}
	return all[i*histCounts : (i+1)*histCounts : (i+1)*histCounts]
}

// flusherSets is how many sets a thread's deck holds: one counting, the
// rest ended and waiting for their encoding, or free. A thread whose
// flusher is that far behind (intervals shorter than the encoding, on a
// starved machine) goes on counting in the set it has, in C (the interval
// lasts longer: its end is recorded), or waits for a free one in Go (a
// gap of the run's coverage), not memory growing without bound.
const flusherSets = 4

// endNote is what the thread adds to an interval it ends in Go: the
// errors counted since the last and its rounds so far.
type endNote struct {
	errors map[string]int64
	rounds int64
}

// flusher is a thread's encoder of ended intervals.
type flusher struct {
	g      int
	kinds  []string // the thread's kinds by index
	report func(*intervalMsg)
	enc    *hdrv2.Encoder
	deck   *verbs.Deck
	nsvc   int  // a set's service counts; its response counts follow
	open   bool // the sets hold response counts
	// notes[k] is set k's endNote when the thread ended it in Go (written
	// before the set's end, read after it, cleared before it is freed).
	notes []*endNote
	// The thread's start and rounds, as it last knew them, for the sets
	// the C loop ends.
	started atomic.Uint64
	rounds  atomic.Int64
	// bell wakes the flusher for a turn in Go and for the close (an
	// eventfd; -1: none, it looks every millisecond); the C loop's turns
	// ring nothing (see wait). freed tells a thread waiting for a set
	// that one was.
	bell    int
	freed   chan struct{}
	closing atomic.Bool
	done    chan struct{}

	failed atomic.Bool // err is set
	mu     sync.Mutex
	err    error // the first encoding failure
}

// startFlusher starts t's flusher with its deck, allocated now, not at
// an interval's end; the thread counts in its first set from now on.
func startFlusher(t *thread) *flusher {
	f := &flusher{g: t.g, report: t.report, enc: hdrv2.NewEncoder(hdrLayout), nsvc: len(t.ivAll), open: t.ivRespAll != nil,
		notes: make([]*endNote, flusherSets), bell: newBell(), freed: make(chan struct{}, 1), done: make(chan struct{})}
	for _, r := range t.recs {
		f.kinds = append(f.kinds, r.kind)
	}
	stride := len(t.ivAll) + len(t.ivRespAll)
	f.deck = verbs.NewDeck(flusherSets, stride, t.ivStart, max(t.cfg.Interval, time.Nanosecond))
	first := f.set(0)
	copy(first.service, t.ivAll)
	copy(first.response, t.ivRespAll)
	t.setIV(first)
	f.started.Store(t.started)
	go f.serve()
	return f
}

// set is set k of the deck.
func (f *flusher) set(k int) ivBuf {
	all := f.deck.Set(k)
	b := ivBuf{service: all[:f.nsvc:f.nsvc]}
	if f.open {
		b.response = all[f.nsvc : 2*f.nsvc : 2*f.nsvc]
	}
	return b
}

func (f *flusher) serve() {
	defer close(f.done)
	// The flusher wakes at every interval's end, when its thread has just
	// ended an interval: woken on that thread's CPU (the scheduler
	// favours the waker's on a busy machine) a SCHED_OTHER thread would
	// preempt it for the encoding, a stall at the boundary all the same.
	// SCHED_BATCH keeps its fair share of the CPU but never preempts on
	// waking. The OS thread is the flusher's alone, and ends with it, so
	// no other goroutine runs at that policy. Best effort: a kernel that
	// refuses leaves it at SCHED_OTHER.
	runtime.LockOSThread()
	unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_BATCH}, 0)
	for {
		closing := f.closing.Load()
		for f.flushEnded() {
		}
		if closing {
			return
		}
		f.wait()
	}
}

// flushEnded sends the earliest ended set of the deck, if there is one,
// and frees it; it says whether there was.
func (f *flusher) flushEnded() bool {
	d, k := f.deck, -1
	for i := range d.Sets() {
		if atomic.LoadUint64(d.Word(i, verbs.DeckState)) == verbs.DeckEnded &&
			(k < 0 || *d.Word(i, verbs.DeckOrder) < *d.Word(k, verbs.DeckOrder)) {
			k = i
		}
	}
	if k < 0 {
		return false
	}
	b := f.set(k)
	if !f.failed.Load() {
		m := &intervalMsg{Thread: f.g, Index: int64(*d.Word(k, verbs.DeckIndex)), End: *d.Word(k, verbs.DeckEnd),
			Rounds: f.rounds.Load(), Start: cmp.Or(atomic.LoadUint64(&d.Ctl[verbs.DeckBegun]), f.started.Load())}
		if n := f.notes[k]; n != nil {
			m.Errors, m.Rounds = n.errors, n.rounds
		}
		if sent, err := f.encode(m, b); err != nil {
			f.mu.Lock()
			f.err = err
			f.mu.Unlock()
			f.failed.Store(true)
		} else if sent || m.Errors != nil {
			f.report(m)
		}
	}
	clear(b.service)
	clear(b.response)
	f.notes[k] = nil
	atomic.StoreUint64(d.Word(k, verbs.DeckState), verbs.DeckFree)
	select {
	case f.freed <- struct{}{}:
	default:
	}
	return true
}

// The flusher blocks in poll(2) on its bell, an eventfd, a system call on
// its own OS thread, which a write wakes and which takes an idle P of its
// own. Handed an interval through a channel it was parked on, the flusher
// was readied on the thread's own P, first in line, and the thread,
// preempted by the runtime soon after its long cgo call, waited for
// another P while its flusher encoded (1.9 ms in an execution trace on a
// quiet 2-CPU VM). The C loop rings no bell: a write that wakes a sleeping
// reader took 19-42 µs on that VM, untimed on the measured thread at
// every interval's end. The flusher wakes on its own instead, when the
// interval is due to end and a segment past it (turnSlack), and then every
// millisecond until the set is ended: once an interval, on its own CPU.

// turnSlack is how long after an interval's due end the flusher first
// looks: the C loop turns at the first segment's end past it (about
// --batch-time, 1 ms by default).
const turnSlack = 2 * time.Millisecond

// newBell is an eventfd for a flusher's bell, -1 when none can be made
// (the flusher then looks every millisecond); tests replace it.
var newBell = func() int {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return -1
	}
	return fd
}

// wait waits for the bell, or until the deck's next turn is due (plus
// turnSlack), at least a millisecond and at most a second; before the
// thread has laid its interval grid (beginIntervals, which rings), a
// second. Without a bell nothing would wake it for a turn in Go or the
// close: it looks every millisecond.
func (f *flusher) wait() {
	if f.bell < 0 {
		time.Sleep(time.Millisecond)
		return
	}
	timeout := time.Second
	if atomic.LoadUint64(&f.deck.Ctl[verbs.DeckStart]) != 0 {
		timeout = time.Millisecond
		if next, now := atomic.LoadUint64(&f.deck.Ctl[verbs.DeckNext]), verbs.Now(); next > now {
			timeout = min(time.Duration(next-now)+turnSlack, time.Second)
		}
	}
	fds := []unix.PollFd{{Fd: int32(f.bell), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(timeout.Milliseconds()))
	switch {
	case n > 0:
		var b [8]byte
		unix.Read(f.bell, b[:]) // the count: the bell is rung
	case err != nil && err != unix.EINTR:
		time.Sleep(time.Millisecond) // an unusable bell: look now and then
	}
}

// ring wakes the flusher.
func (f *flusher) ring() {
	if f.bell >= 0 {
		var one [8]byte // an eventfd adds the 8-byte value written
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(f.bell, one[:])
	}
}

// encodeInterval is hdrv2.Encoder.Encode; tests replace it to make it fail.
var encodeInterval = (*hdrv2.Encoder).Encode

// encode fills m with the histograms of the kinds set b counted, and says
// whether there was one. A histogram that cannot be encoded is an error
// of the run: the interval's latencies would be lost, and the figures
// would not be what was measured.
func (f *flusher) encode(m *intervalMsg, b ivBuf) (bool, error) {
	for i, kind := range f.kinds {
		w := kindWindow(b.service, i)
		var n int64
		for _, c := range w {
			n += c
		}
		if n == 0 {
			continue
		}
		if m.Hists == nil {
			m.Hists = make(map[string]string, 2*len(f.kinds))
		}
		s, err := encodeInterval(f.enc, w)
		if err != nil {
			return false, fmt.Errorf("thread %d: encoding the %s latencies of interval %d (%d operations): %w", f.g, kind, m.Index, n, err)
		}
		m.Hists[kind] = s
		if b.response != nil {
			s, err := encodeInterval(f.enc, kindWindow(b.response, i))
			if err != nil {
				return false, fmt.Errorf("thread %d: encoding the %s response times of interval %d (%d operations): %w", f.g, kind, m.Index, n, err)
			}
			m.Hists[kind+results.ResponseSuffix] = s
		}
	}
	return m.Hists != nil, nil
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

// close waits until every interval ended is encoded and sent, stops the
// flusher and returns the first encoding failure.
func (f *flusher) close() error {
	f.closing.Store(true)
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

// turn ends the deck's set counting at now with note, in Go, and goes on
// in the next set, waiting for the flusher to free it if it has not: the
// way the C loop turns it (verbs.Deck), for the thread between calls into
// C. next is the end of the interval the next set counts in, index its
// index.
func (t *thread) turn(now uint64, note *endNote, index int64, next uint64) error {
	f := t.flush
	d := f.deck
	cur := int(d.Ctl[verbs.DeckCur])
	nxt := (cur + 1) % d.Sets()
	// The C loop may have taken cur from the flusher: this load orders
	// the flusher's last touch of it (its note) before the thread's, as
	// the loop's own does in C, where the race detector cannot see it.
	atomic.LoadUint64(d.Word(cur, verbs.DeckState))
	for atomic.LoadUint64(d.Word(nxt, verbs.DeckState)) != verbs.DeckFree {
		if err := f.failure(); err != nil {
			return err
		}
		select {
		case <-f.freed:
		case <-time.After(10 * time.Millisecond):
		}
	}
	f.notes[cur] = note
	*d.Word(cur, verbs.DeckEnd), *d.Word(cur, verbs.DeckOrder) = now, d.Ctl[verbs.DeckSeq]
	d.Ctl[verbs.DeckSeq]++
	atomic.StoreUint64(d.Word(cur, verbs.DeckState), verbs.DeckEnded)
	*d.Word(nxt, verbs.DeckIndex) = uint64(index)
	atomic.StoreUint64(d.Word(nxt, verbs.DeckState), verbs.DeckCounting)
	d.Ctl[verbs.DeckCur] = uint64(nxt)
	atomic.StoreUint64(&d.Ctl[verbs.DeckNext], next) // the flusher's clock (wait)
	t.setIV(f.set(nxt))
	f.ring()
	return nil
}

// deckTurned takes what the C loop did to the deck in a call: the set it
// counts in now, and the interval's index and end.
func (t *thread) deckTurned() {
	d := t.flush.deck
	cur := int(d.Ctl[verbs.DeckCur])
	t.setIV(t.flush.set(cur))
	t.ivIndex, t.ivNext = int64(*d.Word(cur, verbs.DeckIndex)), d.Ctl[verbs.DeckNext]
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
