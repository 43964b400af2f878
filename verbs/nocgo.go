//go:build !cgo

package verbs

// Without cgo (CGO_ENABLED=0, no C toolchain) this file stands in for the
// cgo_*.go files, as the standard library's net and os/user do: the
// package builds, so the analysis half of xrcbench (report, compare,
// export, history) builds and runs on a machine without a C compiler,
// while every provider is known but unavailable and says why. Nothing
// here measures: the hot path is C.

import (
	"math"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CgoBuilt says whether this binary has the C hot path and its providers
// compiled in (false: built with CGO_ENABLED=0).
const CgoBuilt = false

// ErrNoCgo is returned by what needs the C half in a binary built without
// cgo.
var ErrNoCgo = &deviceError{msg: "xrcbench was built without cgo (CGO_ENABLED=0): " +
	"measuring needs a cgo build (make build)", errno: syscall.ENOSYS, notSupported: true}

type cHandle = unsafe.Pointer

// The status words' bits, as xb.h defines them (XB_ERRNO_MASK,
// XB_DESTROY_KNOWN, XB_DESTROYED).
const (
	statusErrnoMask    = 0xffff
	statusDestroyKnown = 1 << 16
	statusDestroyed    = 1 << 17
)

// No provider opens a device here (every open is nil), so no Domain
// exists and nothing below is reached with a handle; were it reached, each
// fails rather than pretends to have measured.
func cOpenDomain(_, _ unsafe.Pointer, _ int) (unsafe.Pointer, int) { return nil, int(syscall.ENOSYS) }
func cCloseDomain(_, _ unsafe.Pointer) int                         { return int(syscall.ENOSYS) }
func cModify(_, _ unsafe.Pointer, _ uint32, _ int) int             { return int(syscall.ENOSYS) }
func cCloseDevice(_, _ unsafe.Pointer) int                         { return int(syscall.ENOSYS) }

// cRunBatch fails every operation with ENOSYS.
func cRunBatch(_, _ unsafe.Pointer, _ Op, b *Batch, n int) int {
	for i := range n {
		b.NS[i], b.Status[i] = 0, uint32(syscall.ENOSYS)
	}
	return n
}

// cRunProgram runs no step: the stats stay zero.
func cRunProgram(_, _ unsafe.Pointer, _ *Program, _, _ int, _ *ProgramStats, _ *Repeat) {}

// cRunStorm runs no step and ends as halted.
func cRunStorm(_, _ unsafe.Pointer, _ *Program, _ *Storm) int { return int(StormHalted) }

// cBucketIndex has no C loop to mirror: -1, which no caller indexes with
// (HistogramIndex serves the cgo build's tests only).
func cBucketIndex(uint64, int) int { return -1 }

// cAwaitBegin has no C wait: it sleeps to begin in Go, with no run-queue
// reading. Nothing measures in a build without cgo; this keeps the
// contract (halted before the start: 0).
func cAwaitBegin(begin uint64, _ int64, stop, abort *uint32) (uint64, int64, int64) {
	for now := Now(); now < begin; now = Now() {
		if (stop != nil && atomic.LoadUint32(stop) != 0) || (abort != nil && atomic.LoadUint32(abort) != 0) {
			return 0, -1, -1
		}
		time.Sleep(min(time.Duration(begin-now), time.Millisecond))
	}
	return Now(), -1, -1
}

// cBareTimerLoop has no C loop to run: ns stays as it is. calibrate, its
// one caller, is refused by the CLI in a build without cgo.
func cBareTimerLoop([]uint64) {}

// cBareOpLoop has no C loop to run either: nothing is counted.
func cBareOpLoop([]int64, *uint64, *uint64, int) {}

// nowNS reads CLOCK_MONOTONIC, the clock xb_now_ns reads.
func nowNS() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return uint64(time.Now().UnixNano())
	}
	return uint64(ts.Nano())
}

// timerOverheadNS has no C timer to measure: NaN, not a figure.
func timerOverheadNS() float64 { return math.NaN() }

func setSpinWaits(bool) {}

// No provider opens a device or probes one here (providers.go lists
// them, each unavailable for NoCgo).
var (
	nullOpen, simOpen, legacyOpen, rdmaOpen func(Options) (*Device, error)
	legacyProbe, rdmaProbe                  func() (bool, string)
)

// The kernel calls without the harness's guards exist with the rdma
// provider only (cgo_rdma.go).
func rdmaKernelCloseXRCD(*Domain) syscall.Errno { return syscall.ENOSYS }

func rdmaKernelUnreg(*Domain, uint32) (syscall.Errno, bool) { return syscall.ENOSYS, false }

func rdmaDomainHandles(*Domain) int { return 0 }

func rdmaUnavailable() string { return NoCgo }

func listDevices() ([]devFacts, string, error) { return nil, "", ErrNoCgo }

func listProvider() string { return "rdma" }

func legacyList() ([]devFacts, string, error)    { return nil, "", ErrNoCgo }
func legacySymbols() string                      { return "" }
func legacyFlavor() (string, string)             { return "", "" }
func simHoldLock(string, uint32) error           { return ErrNoCgo }
func simHoldDomain(string, string, string) error { return ErrNoCgo }

// SimThreadWaits: no sim device without cgo, so nothing was waited on.
func SimThreadWaits() (lock, cmdq time.Duration) { return 0, 0 }

// Intact is nil: without cgo no device is open.
func (d *Device) Intact() error { return nil }

// InspectSim needs sim.c: ErrNoCgo.
func InspectSim(string) (SimSnapshot, error) { return SimSnapshot{}, ErrNoCgo }

// SimRegistrants needs sim.c: ErrNoCgo.
func SimRegistrants(string, uint32) ([]int, []int, error) { return nil, nil, ErrNoCgo }

// ReapSim needs sim.c: ErrNoCgo.
func ReapSim(string, int) (int, error) { return 0, ErrNoCgo }
