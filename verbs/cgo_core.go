//go:build cgo

package verbs

/*
#cgo CFLAGS: -O2 -Wall -Wextra -Werror=implicit-function-declaration
#cgo LDFLAGS: -ldl
#include <stddef.h>
#include <stdlib.h>
#include "xb.h"

static int call_open_domain(void *ops, void *dev, int fd, void **dom) {
	return ((const struct xb_ops *)ops)->open_domain(dev, fd, dom);
}
static int call_close_domain(void *ops, void *dom) {
	return ((const struct xb_ops *)ops)->close_domain(dom);
}
static int call_close_device(void *ops, void *dev) {
	return ((const struct xb_ops *)ops)->close_device(dev);
}
static int call_modify(void *ops, void *dom, uint32_t qpn, int state) {
	return ((const struct xb_ops *)ops)->modify(dom, qpn, state);
}
static size_t call_run_batch(void *ops, void *dom, int op, uint32_t *qpns, size_t n, uint64_t *ns, uint32_t *status) {
	return xb_run_batch((const struct xb_ops *)ops, dom, op, qpns, n, ns, status);
}
// The recording's pointers go as arguments: a Go struct holding them
// would be Go memory holding Go pointers, which cgo does not pass.
static size_t call_run_program(void *ops, void *dom, struct xb_step *steps, size_t off, size_t n, uint64_t *start,
			       size_t ntags, size_t nbuckets, int64_t *service, int64_t *response, uint64_t *count,
			       uint64_t *sum_ns, uint64_t *ns, uint64_t *resp, struct xb_fail *fails, size_t nfails,
			       struct xb_prog_stats *st, uint64_t *rep, uint32_t *stop, uint32_t *abort,
			       struct xb_arrivals *arr, uint64_t *deck_ctl, int64_t *deck_base, uint64_t deck_stride,
			       uint64_t deck_sets) {
	struct xb_prog_rec rec = { .ntags = ntags, .nbuckets = nbuckets, .service = service, .response = response,
				   .count = count, .sum_ns = sum_ns, .ns = ns, .resp = resp, .fails = fails };
	if (!rep)
		return xb_run_program((const struct xb_ops *)ops, dom, steps, off, n, start, &rec, nfails, st, NULL);
	// rep: until, poll_ns, max_steps, pos, begin, runq_fd, once in; pos,
	// steps, laps, begun, runq_begin, late_runq out
	struct xb_deck deck = { .ctl = deck_ctl, .base = deck_base, .stride = deck_stride, .nsets = deck_sets };
	struct xb_repeat r = { .until = rep[0], .poll_ns = rep[1], .stop = stop, .abort = abort,
			       .max_steps = rep[2], .pos = rep[3], .begin = rep[6], .runq_fd = (int64_t)rep[8],
			       .runq_begin = -1, .late_runq = -1, .arr = arr, .deck = deck_ctl ? &deck : NULL,
			       .once = rep[11] };
	nfails = xb_run_program((const struct xb_ops *)ops, dom, steps, off, n, start, &rec, nfails, st, &r);
	rep[3] = r.pos, rep[4] = r.steps, rep[5] = r.laps, rep[7] = r.begun;
	rep[9] = (uint64_t)r.runq_begin, rep[10] = (uint64_t)r.late_runq;
	return nfails;
}
static size_t bucket_index(uint64_t v, size_t n) { return xb_bucket_index(v, n); }
static int deck_layout(int i) {
	static const int v[] = { XB_DECK_CUR, XB_DECK_NEXT, XB_DECK_LEN, XB_DECK_START, XB_DECK_SEQ, XB_DECK_BEGUN,
				 XB_DECK_SETS, XB_DECK_WORDS, XB_DECK_STATE, XB_DECK_INDEX, XB_DECK_END, XB_DECK_ORDER,
				 XB_DECK_FREE, XB_DECK_COUNTING, XB_DECK_ENDED };
	return i >= 0 && i < (int)(sizeof v / sizeof v[0]) ? v[i] : -1;
}
static int call_run_storm(void *ops, void *dom, struct xb_step *steps, size_t n, uint64_t *start, uint32_t *slot, uint8_t *done, uint32_t *table, uint32_t *stop, uint32_t *abort, uint64_t *ns, uint32_t *status, struct xb_storm_state *st) {
	return xb_run_storm((const struct xb_ops *)ops, dom, steps, n, start, slot, done, table, stop, abort, ns, status, st);
}
static size_t step_size(void) { return sizeof(struct xb_step); }
static size_t step_offset(int f) {
	switch (f) {
	case 0: return offsetof(struct xb_step, qpn);
	case 1: return offsetof(struct xb_step, expect);
	case 2: return offsetof(struct xb_step, op);
	case 3: return offsetof(struct xb_step, check);
	case 4: return offsetof(struct xb_step, back);
	case 5: return offsetof(struct xb_step, tag);
	}
	return (size_t)-1;
}
*/
import "C"

import "unsafe"

// CgoBuilt says whether this binary has the C hot path and its providers
// compiled in (nocgo.go: false, built with CGO_ENABLED=0).
const CgoBuilt = true

// cHandle is an opaque pointer into C (a provider's ops table, device
// context or domain handle). Only the cgo_*.go files look through it.
type cHandle = unsafe.Pointer

const (
	statusErrnoMask    = C.XB_ERRNO_MASK
	statusDestroyKnown = C.XB_DESTROY_KNOWN
	statusDestroyed    = C.XB_DESTROYED
)

func cOpenDomain(ops, dev unsafe.Pointer, fd int) (unsafe.Pointer, int) {
	var dom unsafe.Pointer
	rc := C.call_open_domain(ops, dev, C.int(fd), &dom)
	return dom, int(rc)
}

func cCloseDomain(ops, dom unsafe.Pointer) int { return int(C.call_close_domain(ops, dom)) }

func cModify(ops, dom unsafe.Pointer, qpn uint32, state int) int {
	return int(C.call_modify(ops, dom, C.uint32_t(qpn), C.int(state)))
}

func cCloseDevice(ops, dev unsafe.Pointer) int { return int(C.call_close_device(ops, dev)) }

// cRunBatch is the hot path: one cgo call for n operations. The slices are
// Go memory passed for the duration of the call only, as cgo allows.
func cRunBatch(ops, dom unsafe.Pointer, op Op, b *Batch, n int) int {
	return int(C.call_run_batch(ops, dom, C.int(op),
		(*C.uint32_t)(unsafe.Pointer(&b.QPNs[0])), C.size_t(n),
		(*C.uint64_t)(unsafe.Pointer(&b.NS[0])),
		(*C.uint32_t)(unsafe.Pointer(&b.Status[0]))))
}

// cRunProgram runs steps [off, off+n) of p; the caller checked the range
// and the recording's sizes. The Go memory is passed for the duration of
// the call only. ProgramStats has struct xb_prog_stats' layout (ten
// uint64), Failure struct xb_fail's. rep, when not nil, makes it a ring
// (struct xb_repeat, its words as call_run_program reads them).
func cRunProgram(ops, dom unsafe.Pointer, p *Program, off, n int, st *ProgramStats, rep *Repeat) {
	var start, ns, resp *C.uint64_t
	var service, response *C.int64_t
	var count, sum *C.uint64_t
	if p.Start != nil {
		start = (*C.uint64_t)(unsafe.Pointer(&p.Start[0]))
	}
	if p.NS != nil {
		ns = (*C.uint64_t)(unsafe.Pointer(&p.NS[0]))
	}
	if p.Resp != nil && p.Start != nil {
		resp = (*C.uint64_t)(unsafe.Pointer(&p.Resp[0]))
	}
	var words *C.uint64_t
	var stop, abort *C.uint32_t
	var arr *C.struct_xb_arrivals
	if rep != nil {
		words = (*C.uint64_t)(unsafe.Pointer(&rep.words[0]))
		stop, abort = (*C.uint32_t)(unsafe.Pointer(rep.Stop)), (*C.uint32_t)(unsafe.Pointer(rep.Abort))
		arr = (*C.struct_xb_arrivals)(unsafe.Pointer(rep.Open))
	}
	var deckCtl *C.uint64_t
	var deckBase *C.int64_t
	var deckStride, deckSets C.uint64_t
	if rep != nil && rep.Deck != nil {
		d := rep.Deck
		deckCtl, deckBase = (*C.uint64_t)(unsafe.Pointer(&d.Ctl[0])), (*C.int64_t)(unsafe.Pointer(&d.Counts[0]))
		deckStride, deckSets = C.uint64_t(d.Stride), C.uint64_t(d.Sets())
	}
	r := &p.Rec
	tags := len(r.Count)
	if tags > 0 {
		service = (*C.int64_t)(unsafe.Pointer(&r.Service[0]))
		count = (*C.uint64_t)(unsafe.Pointer(&r.Count[0]))
		sum = (*C.uint64_t)(unsafe.Pointer(&r.SumNS[0]))
		if r.Response != nil {
			response = (*C.int64_t)(unsafe.Pointer(&r.Response[0]))
		}
	}
	p.nfail = int(C.call_run_program(ops, dom, (*C.struct_xb_step)(unsafe.Pointer(&p.Steps[0])), C.size_t(off), C.size_t(n),
		start, C.size_t(tags), C.size_t(r.Buckets), service, response, count, sum, ns, resp,
		(*C.struct_xb_fail)(unsafe.Pointer(&p.fails[0])), C.size_t(p.nfail), (*C.struct_xb_prog_stats)(unsafe.Pointer(st)),
		words, stop, abort, arr, deckCtl, deckBase, deckStride, deckSets))
}

// cDeckLayout is xb.h's numbering of a deck's words and states, in the
// order of verbs' Deck constants (deck_test.go).
func cDeckLayout() []int {
	var v []int
	for i := 0; C.deck_layout(C.int(i)) >= 0; i++ {
		v = append(v, int(C.deck_layout(C.int(i))))
	}
	return v
}

// cBucketIndex is the C loop's histogram index of v in n counts.
func cBucketIndex(v uint64, n int) int { return int(C.bucket_index(C.uint64_t(v), C.size_t(n))) }

func failureSize() uintptr { return unsafe.Sizeof(C.struct_xb_fail{}) }

// cRunStorm runs a storm (RunStorm checked the sizes). The Go memory is
// passed for the duration of the call only; Table, Stop and Abort are
// usually memory other processes map, which C reads and writes
// atomically. stormState has struct xb_storm_state's layout.
func cRunStorm(ops, dom unsafe.Pointer, p *Program, s *Storm) int {
	var start *C.uint64_t
	if p.Start != nil {
		start = (*C.uint64_t)(unsafe.Pointer(&p.Start[0]))
	}
	var table *C.uint32_t
	if len(s.Table) > 0 {
		table = (*C.uint32_t)(unsafe.Pointer(&s.Table[0]))
	}
	return int(C.call_run_storm(ops, dom, (*C.struct_xb_step)(unsafe.Pointer(&p.Steps[0])), C.size_t(len(p.Steps)), start,
		(*C.uint32_t)(unsafe.Pointer(&s.Slot[0])), (*C.uint8_t)(unsafe.Pointer(&s.Done[0])), table,
		(*C.uint32_t)(unsafe.Pointer(s.Stop)), (*C.uint32_t)(unsafe.Pointer(s.Abort)),
		(*C.uint64_t)(unsafe.Pointer(&s.NS[0])), (*C.uint32_t)(unsafe.Pointer(&s.Status[0])),
		(*C.struct_xb_storm_state)(unsafe.Pointer(&s.state))))
}

func stormStateSize() uintptr { return unsafe.Sizeof(C.struct_xb_storm_state{}) }

// stepLayout reports C's size of struct xb_step and the offsets of its
// fields in Step's order, against Go's (TestStepLayout).
func stepLayout() (size uintptr, offsets []uintptr) {
	for f := range 6 {
		offsets = append(offsets, uintptr(C.step_offset(C.int(f))))
	}
	return uintptr(C.step_size()), offsets
}

func statsSize() uintptr { return unsafe.Sizeof(C.struct_xb_prog_stats{}) }

// arrivalsLayout is C's size of struct xb_arrivals and the offsets of
// next, end, rng_lo, scheduled (Arrivals' Next, End, rngLo, Scheduled).
func arrivalsLayout() (uintptr, []uintptr) {
	var a C.struct_xb_arrivals
	return unsafe.Sizeof(a), []uintptr{unsafe.Offsetof(a.next), unsafe.Offsetof(a.end), unsafe.Offsetof(a.rng_lo), unsafe.Offsetof(a.scheduled)}
}

// arrivalsDrawC draws len(start) intended starts from a in C, as the
// ring does (xb_arrivals_draw): tests hold it to Advance.
func arrivalsDrawC(a *Arrivals, start []uint64) {
	C.xb_arrivals_draw((*C.struct_xb_arrivals)(unsafe.Pointer(a)), (*C.uint64_t)(unsafe.Pointer(&start[0])), C.size_t(len(start)))
}

func cAwaitBegin(begin uint64, fd int64, stop, abort *uint32) (begun uint64, runq, late int64) {
	r, l := C.int64_t(-1), C.int64_t(-1)
	b := C.xb_await_begin(C.uint64_t(begin), C.int64_t(fd), (*C.uint32_t)(unsafe.Pointer(stop)),
		(*C.uint32_t)(unsafe.Pointer(abort)), &r, &l)
	return uint64(b), int64(r), int64(l)
}

func cBareTimerLoop(ns []uint64) {
	C.xb_bare_timer_loop((*C.uint64_t)(unsafe.Pointer(&ns[0])), C.size_t(len(ns)))
}

func cBareOpLoop(counts []int64, count, sum *uint64, n int) {
	C.xb_bare_op_loop(&C.xb_null_ops, (*C.int64_t)(unsafe.Pointer(&counts[0])), C.size_t(len(counts)),
		(*C.uint64_t)(unsafe.Pointer(count)), (*C.uint64_t)(unsafe.Pointer(sum)), C.size_t(n))
}

// nowNS reads the clock xb_run_batch uses (CLOCK_MONOTONIC).
func nowNS() uint64 { return uint64(C.xb_now_ns()) }

func timerOverheadNS() float64 { return float64(C.xb_timer_overhead_ns()) }

func setSpinWaits(spin bool) {
	v := 0
	if spin {
		v = 1
	}
	C.xb_set_spin_waits(C.int(v))
}

func nullOpen(Options) (*Device, error) {
	var h unsafe.Pointer
	if rc := C.xb_null_open(&h); rc != 0 {
		return nil, errnoErr(int(rc))
	}
	return &Device{ops: unsafe.Pointer(&C.xb_null_ops), handle: h,
		info: DeviceInfo{Name: "null0", XRC: true, OpenQP: true, LegacyAPI: true, Semantics: string(NoSemantics), NUMANode: -1}}, nil
}

// goStepLayout is Go's size of Step and the offsets of its fields.
func goStepLayout() (size uintptr, offsets []uintptr) {
	var s Step
	return unsafe.Sizeof(s), []uintptr{unsafe.Offsetof(s.QPN), unsafe.Offsetof(s.Expect),
		unsafe.Offsetof(s.Op), unsafe.Offsetof(s.Check), unsafe.Offsetof(s.Back), unsafe.Offsetof(s.Tag)}
}
