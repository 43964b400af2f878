package bench

// This file holds all of the engine's unsafe code: the shared-memory
// segment that every worker process of a repetition maps, with the
// barrier that separates the phases of a round and the QP-number table
// through which creators hand their QPs to the other threads.

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Layout of the segment. Every field is a naturally aligned 32- or 64-bit
// word at a fixed offset; the header is a page so the QP table starts
// aligned.
const (
	shmMagic   = 0x78726362 // "xrcb"
	shmVersion = 1

	offMagic    = 0
	offVersion  = 4
	offParties  = 8
	offSlots    = 12
	offCount    = 64 // barrier: arrivals in the current generation
	offGen      = 128
	offWaiters  = 192 // threads asleep in futex_wait on gen
	offAbort    = 256
	offStop     = 320
	offDeadline = 384 // uint64: CLOCK_MONOTONIC ns of the next start
	offStopNow  = 448 // the coordinator asks threads to end the run early
	shmHeader   = 4096
)

// ErrAborted is returned by a barrier wait when the run was aborted:
// another thread failed, a worker died, or the coordinator stopped.
var ErrAborted = errors.New("run aborted")

// shm is a mapped segment.
type shm struct {
	mem   []byte
	slots int
	// raw: barrier waits are raw system calls, which keep the caller's P
	// (see worker.go); only for OS-locked threads with a P each.
	raw bool
}

// createShm creates the segment file at path for parties threads and
// slots QP numbers.
func createShm(path string, parties, slots int) (*shm, error) {
	size := shmHeader + 4*slots
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	s, err := mapShm(f, size)
	if err != nil {
		return nil, err
	}
	atomic.StoreUint32(s.u32(offParties), uint32(parties))
	atomic.StoreUint32(s.u32(offSlots), uint32(slots))
	atomic.StoreUint32(s.u32(offVersion), shmVersion)
	atomic.StoreUint32(s.u32(offMagic), shmMagic)
	s.slots = slots
	return s, nil
}

// openShm maps a segment createShm made.
func openShm(path string) (*shm, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < shmHeader {
		return nil, fmt.Errorf("%s: not a barrier segment (%d bytes)", path, st.Size())
	}
	s, err := mapShm(f, int(st.Size()))
	if err != nil {
		return nil, err
	}
	if atomic.LoadUint32(s.u32(offMagic)) != shmMagic || atomic.LoadUint32(s.u32(offVersion)) != shmVersion {
		s.close()
		return nil, fmt.Errorf("%s: not a version %d barrier segment", path, shmVersion)
	}
	s.slots = int(atomic.LoadUint32(s.u32(offSlots)))
	if shmHeader+4*s.slots > len(s.mem) {
		s.close()
		return nil, fmt.Errorf("%s: truncated barrier segment", path)
	}
	return s, nil
}

func mapShm(f *os.File, size int) (*shm, error) {
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	return &shm{mem: mem}, nil
}

func (s *shm) close() error {
	if s == nil || s.mem == nil {
		return nil
	}
	err := unix.Munmap(s.mem)
	s.mem = nil
	return err
}

func (s *shm) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&s.mem[off])) }
func (s *shm) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&s.mem[off])) }

func (s *shm) parties() uint32 { return atomic.LoadUint32(s.u32(offParties)) }

// abort wakes every waiter and makes every later wait fail.
func (s *shm) abort() {
	atomic.StoreUint32(s.u32(offAbort), 1)
	futexWake(s.u32(offGen))
}

func (s *shm) aborted() bool { return atomic.LoadUint32(s.u32(offAbort)) != 0 }

func (s *shm) setStop(v bool) {
	var x uint32
	if v {
		x = 1
	}
	atomic.StoreUint32(s.u32(offStop), x)
}

func (s *shm) stopped() bool { return atomic.LoadUint32(s.u32(offStop)) != 0 }

// requestStop asks every thread to end the measurement after its current
// pass or round, and report normally.
func (s *shm) requestStop() { atomic.StoreUint32(s.u32(offStopNow), 1) }

func (s *shm) stopRequested() bool { return atomic.LoadUint32(s.u32(offStopNow)) != 0 }

func (s *shm) setDeadline(ns uint64) { atomic.StoreUint64(s.u64(offDeadline), ns) }
func (s *shm) deadline() uint64      { return atomic.LoadUint64(s.u64(offDeadline)) }

// setQPN and qpn are the QP-number table: a creator stores, and after the
// phase's barrier every thread loads.
func (s *shm) setQPN(slot int, qpn uint32) {
	atomic.StoreUint32(s.u32(shmHeader+4*slot), qpn)
}

func (s *shm) qpn(slot int) uint32 { return atomic.LoadUint32(s.u32(shmHeader + 4*slot)) }

// qpnTable, stopWord and abortWord are the QP-number table and the words
// that end a run early, for C to read and write atomically (a storm rank's
// loop, verbs.RunStorm, and a thread's ring, verbs.RepeatProgram).
func (s *shm) qpnTable() []uint32 {
	if s.slots == 0 {
		return nil
	}
	return unsafe.Slice(s.u32(shmHeader), s.slots)
}

func (s *shm) stopWord() *uint32  { return s.u32(offStopNow) }
func (s *shm) abortWord() *uint32 { return s.u32(offAbort) }

// Barrier wait tuning. A waiter spins briefly, then yields, then sleeps
// in the kernel, but spins and yields only while every thread of the run
// that is not asleep has a CPU of its own (see mayspin).
const (
	barrierSpins  = 200
	barrierYields = 50
	futexTimeout  = time.Millisecond // bounds a lost wake-up and notices an abort
)

// barrierCPUs is how many CPUs the run's threads can use (the affinity
// mask of the process at start).
var barrierCPUs = uint32(runtime.NumCPU())

// mayspin says whether a waiter may spin or yield: only while the threads
// not asleep in the barrier (working, or waiting like this one) are no
// more than the CPUs. Otherwise a spinning or yielding waiter takes the
// CPU from a thread that is timing an operation, and its latency grows by
// the waiter's turn: lifecycle creates measured +20 µs at 4 threads on 2
// CPUs. Blocking at once costs only the waiter's own wake-up, which is
// not measured.
func (s *shm) mayspin() bool {
	return s.parties()-atomic.LoadUint32(s.u32(offWaiters)) <= barrierCPUs
}

// wait blocks until all parties have called wait in this generation. The
// last to arrive runs serial (if not nil) before releasing the others, so
// serial's effects are visible to every thread when wait returns.
func (s *shm) wait(serial func()) error {
	count, gen, waiters := s.u32(offCount), s.u32(offGen), s.u32(offWaiters)
	g := atomic.LoadUint32(gen)
	if s.aborted() {
		return ErrAborted
	}
	if atomic.AddUint32(count, 1) == s.parties() {
		if serial != nil {
			serial()
		}
		// Reset before release: a released thread may arrive at the next
		// barrier at once.
		atomic.StoreUint32(count, 0)
		atomic.AddUint32(gen, 1)
		if atomic.LoadUint32(waiters) > 0 {
			futexWake(gen)
		}
		return nil
	}
	for i := 0; ; i++ {
		if atomic.LoadUint32(gen) != g {
			return nil
		}
		if s.aborted() {
			return ErrAborted
		}
		switch {
		case i < barrierSpins && s.mayspin():
		case i < barrierSpins+barrierYields && s.mayspin():
			s.yield()
		default:
			atomic.AddUint32(waiters, 1)
			s.futexWait(gen, g, futexTimeout)
			atomic.AddUint32(waiters, ^uint32(0))
		}
	}
}

// The barrier's system calls (futex wait, sched_yield) are raw when
// s.raw. A plain one tells the Go runtime, which then counts the thread's
// P as idle: its monitor thread, asleep while every P is idle, is woken
// by each return, and hands Ps from thread to thread. On a machine with
// fewer CPUs than threads those wake-ups land on CPUs where other threads
// are timing an operation (thousands per second with 4 threads on 2
// CPUs). A raw call keeps the P, which is what the worker's threads want:
// each has its own (worker.go raises GOMAXPROCS), so none waits for one.

// futexWait sleeps while *addr == val, at most d. The futex is not
// private: the word is shared by processes. (The pointer conversions stay
// inside the system call expressions, where Go keeps &ts valid.)
func (s *shm) futexWait(addr *uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	if s.raw {
		unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val),
			uintptr(unsafe.Pointer(&ts)), 0, 0)
	} else {
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val),
			uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
}

func (s *shm) yield() {
	if s.raw {
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	} else {
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

// futexWake wakes every thread asleep on addr. The futex is not private:
// the word is shared by processes.
func futexWake(addr *uint32) {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp, uintptr(1<<30), 0, 0, 0)
}

// waitUntil returns at the CLOCK_MONOTONIC time deadline (ns). It sleeps
// in the kernel on the calling thread to that absolute time, so every
// thread of every process is woken by the same timer expiry (with the
// thread's timer slack, which setup lowers to 1ns). A Go timer would need
// the runtime to wake the locked thread, which costs milliseconds under
// load; spinning on sched_yield is worse, since the scheduler (EEVDF)
// pushes a yielder's deadline back on every yield.
func waitUntil(now func() uint64, deadline uint64, abort func() bool) error {
	for {
		if abort() {
			return ErrAborted
		}
		t := now()
		if t >= deadline {
			return nil
		}
		// Wake at least every 100ms to notice an abort.
		until := min(deadline, t+uint64(100*time.Millisecond))
		ts := unix.NsecToTimespec(int64(until))
		unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
	}
}

// futex(2) operations (linux/futex.h); x/sys/unix does not name them.
const (
	futexWaitOp = 0
	futexWakeOp = 1
)
