/*
 * xb.h: the C side of package verbs.
 *
 * Every provider (sim, null, rdma, legacy) is a table of C functions with
 * this shape, so that one C loop (xb_run_batch) times a whole batch of
 * operations on any provider with exactly one cgo call.
 *
 * Return convention everywhere: 0 or a positive errno, like the legacy
 * ibv_reg_xrc_rcv_qp(). "flags" outputs carry XB_DESTROY_KNOWN and
 * XB_DESTROYED when the provider knows whether an unreg destroyed the QP.
 */
#ifndef XB_H
#define XB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define XB_QPN_MAX 0xffffffu /* QP numbers are 24 bits */

enum xb_op {
	XB_OP_CREATE = 0,
	XB_OP_REG = 1,
	XB_OP_UNREG = 2,
	XB_OP_MODIFY = 3, /* bring a QP from RESET to the device's QP state */
	/* storm only (storm.c): the local ranks elect a connection's creator
	 * by compare-and-swap on its slot of the shared table, as GASNet-EX's
	 * ibv-conduit does; the step becomes the create it won or the reg of
	 * the winner's QP, and its op says which. */
	XB_OP_ELECT = 4,
};

/* An elect step's slot while its winner creates the QP: no QP number (24
 * bits) has this value, and 0 is the slot's "nobody yet". */
#define XB_SLOT_CLAIMED 0xffffffffu

/* QP states, numbered as enum ibv_qp_state. XB_QPS_TARGET asks modify for
 * every transition from RESET up to the state the device was opened with
 * (--qp-state), in order. */
enum xb_qp_state {
	XB_QPS_RESET = 0,
	XB_QPS_INIT = 1,
	XB_QPS_RTR = 2,
	XB_QPS_TARGET = -1,
};

/* Bits of a batch status word above the errno (low 16 bits). */
#define XB_ERRNO_MASK 0xffffu
#define XB_DESTROY_KNOWN (1u << 16)
#define XB_DESTROYED (1u << 17)

struct xb_ops {
	const char *name;
	/* Opens a domain handle on the XRC domain file open at fd. The
	 * provider may not keep fd: the caller closes it afterwards. */
	int (*open_domain)(void *dev, int fd, void **dom);
	/* EBUSY while this registrant still holds registrations in dom. */
	int (*close_domain)(void *dom);
	int (*create)(void *dom, uint32_t *qpn, uint32_t *flags);
	int (*reg)(void *dom, uint32_t qpn, uint32_t *flags);
	int (*unreg)(void *dom, uint32_t qpn, uint32_t *flags);
	/* Moves QP qpn, which this registrant holds, to state (enum
	 * xb_qp_state): one ibv_modify_qp with the attributes that transition
	 * needs, or for XB_QPS_TARGET every transition up to the device's QP
	 * state. A transition the kernel refuses (RESET to RTR) is EINVAL. */
	int (*modify)(void *dom, uint32_t qpn, int state);
	int (*close_device)(void *dev);
};

/*
 * xb_run_batch runs n operations of kind op on dom and times each with
 * chained timestamps: the end of one operation is the start of the next, so
 * each operation costs one timer read. ns[i] gets the duration, status[i]
 * the errno and flags. For XB_OP_CREATE, qpns[i] receives the new QP
 * number (0 on failure). Returns the number of operations that failed.
 */
size_t xb_run_batch(const struct xb_ops *ops, void *dom, int op, uint32_t *qpns,
		    size_t n, uint64_t *ns, uint32_t *status);

/*
 * Op programs. A program is an array of steps built ahead of time (in Go)
 * and run by xb_run_program in one call: operations of any kind on any QP,
 * each with the outcome it must have, and, in an open loop, the time it is
 * meant to start. Its length does not depend on the QP count, so one QP
 * runs "reg q, unreg q, reg q, ..." as cheaply per operation as many.
 */
enum xb_check {
	XB_CHECK_NONE = 0,
	XB_CHECK_DESTROYED = 1, /* an unreg that must destroy the QP (when known) */
	XB_CHECK_KEPT = 2,      /* an unreg that must not destroy it (when known) */
};

struct xb_step {
	/* the QP, unless back != 0; a create writes the new QP number here */
	uint32_t qpn;
	/* the errno the operation must return, 0 for success */
	uint16_t expect;
	uint8_t op;    /* enum xb_op */
	uint8_t check; /* enum xb_check */
	/* != 0: the QP is the one step i - back created (in this program) */
	uint32_t back;
	/* the caller's own tag (the engine's op kind); the loop ignores it */
	uint32_t tag;
};

struct xb_prog_stats {
	uint64_t unexpected; /* steps whose outcome differs from their expectation */
	uint64_t waits;      /* steps that waited for their intended start */
	uint64_t wait_ns;    /* time spent waiting (not inside any operation) */
	uint64_t late_ns;    /* sum of wake-up lateness after a wait */
	uint64_t late_max_ns;
	uint64_t behind_ns;  /* start - intended start of the last step (backlog) */
	/* A ring's untimed stretches inside the call, in no step's time and
	 * no wait: its deck's turns (the stretch before the call is the
	 * caller's to see). */
	uint64_t untimed_ns;
	uint64_t untimed_max_ns; /* the longest of them */
	uint64_t untimed_max_at; /* when it began (xb_now_ns) */
	/* the clock at the call's last step's end (at its start when no
	 * step ran): the way back to the caller is the next call's
	 * untimed stretch, or after the measurement */
	uint64_t end_ns;
};

/* Waits shorter than this are spun; longer ones sleep until this much
 * before the intended start and spin the rest, unless the thread spins
 * all its waits (xb_set_spin_waits). */
#define XB_SPIN_NS 50000u

/* xb_set_spin_waits sets how the calling thread waits for an intended
 * start from now on: spin (non-zero) never gives its CPU away; otherwise
 * a far start is slept to, as above. Per thread: each measured thread is
 * one OS thread for its life. */
void xb_set_spin_waits(int spin);

/*
 * Latency histograms, in the layout of an HDR histogram with the project's
 * bounds (1 ns to 100 s, 3 significant digits: unit magnitude 0, 2048
 * sub-buckets): xb_run_program counts each operation there itself, so no
 * per-operation result leaves the loop. xb_bucket_index is hdrhistogram-go's
 * index computation without its per-value checks, the same as
 * bench/record.go's bucketIndex (TestBucketIndexAgrees holds C, Go and
 * hdrhistogram-go together); values past the top count in the last bucket.
 */
#define XB_HIST_SUB_HALF_MAG 10 /* log2(2048) - 1 */
#define XB_HIST_SUB_HALF (1u << XB_HIST_SUB_HALF_MAG)
#define XB_HIST_SUB_MASK (2u * XB_HIST_SUB_HALF - 1)

static inline size_t xb_bucket_index(uint64_t v, size_t n)
{
	/* Below 2048 ns a value is its own index (the first bucket counts
	 * every ns): the common case of a fast operation skips the rest,
	 * which costs the hot loop ~1 ns per operation. */
	if (v < 2 * XB_HIST_SUB_HALF && v < n)
		return (size_t)v;
	int bucket = 63 - __builtin_clzll(v | XB_HIST_SUB_MASK) - XB_HIST_SUB_HALF_MAG;
	size_t idx = ((size_t)(bucket + 1) << XB_HIST_SUB_HALF_MAG) + (size_t)(v >> bucket) - XB_HIST_SUB_HALF;

	return idx < n ? idx : n - 1;
}

/* A step whose outcome differs from its expectation: its index and its
 * errno and flags (as a batch status word). */
struct xb_fail {
	uint32_t step;
	uint32_t status;
};

/*
 * Where xb_run_program records. Step tags 0..ntags-1 each own nbuckets
 * counts of service (and, in an open loop, response) times, one operation
 * count and one sum of service times; a step whose tag is outside has
 * EINVAL without reaching the provider (with ntags 0 nothing is recorded
 * and every tag is allowed). ns and resp, when not NULL, also get each
 * step's service and response time (tests; any caller that wants them).
 * Only the steps with unexpected outcomes leave a status behind, appended
 * to fails (room for one per step).
 */
struct xb_prog_rec {
	size_t ntags, nbuckets;
	int64_t *service;  /* ntags x nbuckets */
	int64_t *response; /* ntags x nbuckets, open loop; may be NULL */
	uint64_t *count;   /* ntags */
	uint64_t *sum_ns;  /* ntags */
	uint64_t *ns, *resp;
	struct xb_fail *fails;
};

/* An open loop's schedule and its backlog samples: verbs.Arrivals, whose
 * Go methods draw from it as arrivals_advance in batch.c does. */
struct xb_arrivals {
	double period;     /* mean ns between intended starts */
	uint64_t poisson;  /* exponential gaps */
	uint64_t next;     /* the next intended start */
	double frac;       /* the fraction of a ns carried over */
	uint64_t end;      /* 0, or: no arrival at or after it is run */
	uint64_t rng_hi, rng_lo; /* PCG-DXSM, math/rand/v2's */
	uint64_t limit, mark, over_ns, behind_max; /* the sustained backlog */
	uint64_t scheduled;
};

/* xb_arrivals_draw writes the next n intended starts of a to start[], as
 * a ring draws them (for tests: Go's Arrivals.Advance must agree). */
void xb_arrivals_draw(struct xb_arrivals *a, uint64_t *start, size_t n);

/*
 * An interval deck: the sets of counts a ring hands its intervals over in
 * itself, so that its thread does not come back into Go at an interval's
 * end. Set k's service counts (ntags x nbuckets) are at base + k * stride,
 * its response counts (an open loop) right after them. ctl's words are
 * shared with the thread's flusher, which encodes an ended set, clears it
 * and frees it; a set's state is written with release and read with
 * acquire, its other words before (written) or after (read) it.
 */
enum { XB_DECK_FREE = 0, XB_DECK_COUNTING = 1, XB_DECK_ENDED = 2 };
enum {
	XB_DECK_CUR = 0,   /* the set counting */
	XB_DECK_NEXT = 1,  /* the end of its interval (as xb_now_ns) */
	XB_DECK_LEN = 2,   /* an interval's length, ns */
	XB_DECK_START = 3, /* the first interval's start */
	XB_DECK_SEQ = 4,   /* how many sets have ended so far */
	XB_DECK_BEGUN = 5, /* when the ring's first step could start (rep->begun) */
	XB_DECK_SETS = 8,  /* then per set k, from XB_DECK_SETS + 4k: */
};
enum {
	XB_DECK_STATE = 0, /* XB_DECK_FREE, _COUNTING or _ENDED */
	XB_DECK_INDEX = 1, /* its interval's index from the start */
	XB_DECK_END = 2,   /* when it ended (as xb_now_ns) */
	XB_DECK_ORDER = 3, /* the XB_DECK_SEQ it ended as */
	XB_DECK_WORDS = 4,
};
struct xb_deck {
	uint64_t *ctl;
	int64_t *base;
	uint64_t stride, nsets;
};

/*
 * A program that leaves the registrations as it found them (steady or
 * sharded, in a closed loop or, with rep->arr, an open one) can be run
 * again and again in one call: with rep,
 * xb_run_program runs steps[off, off+n) as a ring, from rep->pos, in
 * segments of about rep->poll_ns, the step loop unchanged. Between two
 * segments it returns if the clock is at or past rep->until (the caller's
 * next interval, or its end), after rep->max_steps steps (if not 0), if a
 * step of the segment had an unexpected outcome, or if *stop or *abort is
 * set (either may be NULL). So a thread returns into Go once per interval
 * (with a deck, below, once per measurement), not once per program: a cgo
 * call that lasts over ~150 us costs ~10 us to get back into Go, time in
 * no operation, which a return every millisecond would add up. Failures are kept for the current lap
 * only (from step off). rep->pos is where the ring stopped, in
 * [off, off+n] (the next call goes on from there; off+n is off again);
 * rep->steps and rep->laps are what this call ran.
 */
struct xb_repeat {
	/* in: the first step does not start before it (0: at once); the call
	 * waits for it with xb_wait_begin and returns having run nothing if
	 * halted first. out: when the first step could start (the clock at
	 * the end of that wait, or at the call's entry without one), 0 if
	 * halted before. */
	uint64_t begin;
	uint64_t begun;
	/* With begin: in, the thread's open /proc/thread-self/schedstat or
	 * -1; out, its run-queue time as of the start and the part of its
	 * lateness past the start that was run-queue time
	 * (xb_runq_at_begin), -1 when unread. */
	int64_t runq_fd;
	int64_t runq_begin;
	int64_t late_runq;
	uint64_t until;
	uint64_t poll_ns; /* a segment's length in time */
	const uint32_t *stop, *abort;
	uint64_t max_steps;
	uint64_t pos;   /* in: where to begin; out: where it stopped */
	uint64_t steps; /* out */
	uint64_t laps;  /* out: wraps from step n - 1 to step 0 */
	/* An open loop's schedule (NULL: none). Each segment's steps get
	 * their intended starts from it in start[] before they run, so the
	 * ring runs the open loop across laps; it ends before the first
	 * arrival due at or after arr->end (if set). */
	struct xb_arrivals *arr;
	/* With a deck (NULL: none), the ring counts into the deck's current
	 * set, not rec's arrays, and at the first segment's end at or past
	 * the deck's XB_DECK_NEXT ends it and goes on in the next set, if
	 * free (else it tries again after the next segment: the interval
	 * lasts longer). It wakes no one: the reader looks at the interval's
	 * end. */
	struct xb_deck *deck;
	/* != 0: no ring. The call runs steps[off, off+n) once, as it would
	 * without rep, after waiting for begin as a ring does (pos, until,
	 * poll_ns, max_steps, arr and deck unused): a program that is no
	 * ring reaches its measurement's start in C too. */
	uint64_t once;
};

/*
 * xb_run_program runs steps[off, off+n) with chained timestamps: the
 * service time of a step runs from its actual start to its end. With
 * start != NULL (an open loop) step i does not begin before start[i]
 * (CLOCK_MONOTONIC ns; the loop spins or sleeps) and its response time is
 * end - start[i], which includes any backlog (corrected for coordinated
 * omission). Each step is counted in rec right after the timer read that
 * ends it, so the counting is inside the next step's timed interval, as
 * every instruction of the loop but the first read and the return is.
 * nfails is how many entries rec->fails holds already; it returns the new
 * number. st accumulates; the caller zeroes it. rep is NULL for one run
 * of the steps (above); a ring with rep->arr writes start[] itself.
 */
size_t xb_run_program(const struct xb_ops *ops, void *dom, struct xb_step *steps,
		      size_t off, size_t n, uint64_t *start, const struct xb_prog_rec *rec,
		      size_t nfails, struct xb_prog_stats *st, struct xb_repeat *rep);

/*
 * Storms (storm.c). A rank's steps are served in plan order, each as soon
 * as it has arrived: at its intended start (start[i], CLOCK_MONOTONIC ns,
 * in plan order, so the first not come ends the search; start may be
 * NULL), and, for a registration whose QP number comes from
 * another rank, once that number is in the shared table. slot[i] != 0 ties
 * step i to the table's entry slot[i] - 1 (a connection): a create, or the
 * modify that moves it out of RESET (its QP through back), puts its QP
 * number there on success (the creator sends it back); a reg or unreg
 * takes its QP number from there, and a reg has not arrived while it is 0.
 * A step's QP number is left in steps[i].qpn.
 *
 * The loop waits for st->begin (sleeps, seeing *stop and *abort, then
 * spins its last 2 ms), then serves steps with chained
 * timestamps (ns[i], status[i] as xb_run_program's) and marks each done[i].
 * With nothing arrived it yields the CPU; that time, in no operation, adds
 * to st->idle_ns. It returns XB_STORM_DONE when every step is done,
 * XB_STORM_UNEXPECTED right after a step whose outcome differs from its
 * expectation (st->at; the caller handles it and calls again to resume),
 * XB_STORM_HALTED when *stop or *abort is set, or XB_STORM_UNTIL once the
 * clock is past st->until (if not 0: the caller's next interval, so a long
 * storm's latencies go out as it runs). st->end is the end of the last step
 * served.
 */
enum {
	XB_STORM_DONE = 0,
	XB_STORM_UNEXPECTED = 1,
	XB_STORM_HALTED = 2,
	XB_STORM_UNTIL = 3,
};

struct xb_storm_state {
	uint64_t begin;   /* in: the storm's start */
	uint64_t until;   /* in: return when the clock is past it (0: never) */
	uint64_t first;   /* in/out: every step before it is done */
	uint64_t at;      /* out: the step of XB_STORM_UNEXPECTED */
	uint64_t end;     /* out: when the last step served ended */
	uint64_t idle_ns; /* accumulates: time with no step arrived */
	/* in: an open /proc/thread-self/schedstat, or -1, and the thread's
	 * run-queue time (run_delay, ns) read before its sleep to the start
	 * (-1: none); out: its run-queue time as of the start and as of the
	 * last step, -1 when unread (see storm.c's runq_at_begin) */
	int64_t runq_fd;
	int64_t runq_before;
	int64_t runq_begin;
	int64_t runq_end;
};

int xb_run_storm(const struct xb_ops *ops, void *dom, struct xb_step *steps, size_t n,
		 const uint64_t *start, const uint32_t *slot, uint8_t *done, uint32_t *table,
		 const uint32_t *stop, const uint32_t *abort, uint64_t *ns, uint32_t *status,
		 struct xb_storm_state *st);

/* xb_do_op_on runs an operation of kind op on QP qpn, which exists (not
 * a create), refusing a number past 24 bits with EINVAL. The number goes
 * by value, so the hot loop keeps it in a register rather than in memory
 * the provider might write. */
static inline int xb_do_op_on(const struct xb_ops *ops, void *dom, int op, uint32_t qpn, uint32_t *flags)
{
	if (qpn > XB_QPN_MAX)
		return EINVAL;
	switch (op) {
	case XB_OP_REG:
		return ops->reg(dom, qpn, flags);
	case XB_OP_UNREG:
		return ops->unreg(dom, qpn, flags);
	case XB_OP_MODIFY:
		return ops->modify(dom, qpn, XB_QPS_TARGET);
	default:
		return EINVAL;
	}
}

/* xb_do_op runs one operation of kind op on dom: a create writes its new
 * QP number to *qpn (0 on failure); the others act on *qpn (xb_do_op_on).
 * Shared by every timed loop (batch.c, storm.c), so all dispatch alike. */
static inline int xb_do_op(const struct xb_ops *ops, void *dom, int op, uint32_t *qpn, uint32_t *flags)
{
	if (op == XB_OP_CREATE) {
		*qpn = 0;
		return ops->create(dom, qpn, flags);
	}
	return xb_do_op_on(ops, dom, op, *qpn, flags);
}

/* xb_step_unexpected says whether an outcome (errno rc, flags) differs from
 * step s's expectation: its errno, and for a successful unreg whose
 * provider knows, whether it destroyed the QP. */
static inline int xb_step_unexpected(const struct xb_step *s, int rc, uint32_t flags)
{
	if ((uint32_t)rc != s->expect)
		return 1;
	if (rc != 0 || !(flags & XB_DESTROY_KNOWN))
		return 0;
	if (s->check == XB_CHECK_DESTROYED)
		return !(flags & XB_DESTROYED);
	if (s->check == XB_CHECK_KEPT)
		return (flags & XB_DESTROYED) != 0;
	return 0;
}

/* xb_bare_timer_loop is the floor the hot path is held to: n chained timer
 * reads, each duration stored, and nothing else. */
void xb_bare_timer_loop(uint64_t *ns, size_t n);
/* xb_bare_op_loop is the floor of a loop that times operations and
 * records them: n chained timer reads, each around a call of ops' reg
 * (the null provider's), each duration counted into one kind's histogram
 * (service, nb buckets), count and sum as the hot loop counts; nothing
 * else. */
void xb_bare_op_loop(const struct xb_ops *ops, int64_t *service, size_t nb, uint64_t *count, uint64_t *sum, size_t n);

/* xb_now_ns reads the clock every timing in xrcbench uses. */
uint64_t xb_now_ns(void);
/* xb_spin_until busy-waits until xb_now_ns() >= deadline. */
void xb_spin_until(uint64_t deadline);
/* xb_halted says whether *stop or *abort (either may be NULL) is set:
 * words other threads and processes set to end a loop. */
static inline int xb_halted(const uint32_t *stop, const uint32_t *abort)
{
	return (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) || (abort && __atomic_load_n(abort, __ATOMIC_RELAXED));
}

/* xb_wait_begin waits from now (the clock) for a measurement's start,
 * begin, and returns the clock then, or 0 if *stop or *abort (either may
 * be NULL) was set first. The wait is in C, so nothing of Go's (a
 * collection stopping the world, a preemption handing the thread's P
 * around as it comes back from a sleep) can hold a thread past the start:
 * it sleeps, in naps of at most XB_BEGIN_NAP_NS to see a halt, until
 * XB_BEGIN_SPIN_NS before begin (a sleeper wakes up late, by hundreds of
 * us on a loaded machine), then spins. */
uint64_t xb_wait_begin(uint64_t now, uint64_t begin, const uint32_t *stop, const uint32_t *abort);
/* xb_await_begin is the way to a measurement's start of a thread's first
 * call: from now, xb_wait_begin, then its run queue as of the start
 * (xb_runq_at_begin: runq_begin, late_runq) from fd. It returns the clock
 * at the start, 0 if halted before it (runq_begin and late_runq then as
 * they were). xb_run_program calls it for rep->begin; the cgo side for a
 * thread whose first act is no program (rounds begin with a barrier). */
uint64_t xb_await_begin(uint64_t begin, int64_t fd, const uint32_t *stop, const uint32_t *abort, int64_t *runq_begin,
			int64_t *late_runq);
/* xb_run_delay is the thread's time on a run queue, runnable but not
 * running, so far (the second field of its /proc/thread-self/schedstat,
 * open as fd; ns), or -1 when unreadable. */
int64_t xb_run_delay(int64_t fd);
/* xb_runq_at_begin is the thread's run-queue time as of a start, begin,
 * read at now, after a wait for it that began with run_delay at before
 * (-1: unread); -1 when unreadable. The kernel adds a wait to run_delay
 * only once the thread runs again, so a read at the start cannot see a
 * wait still going on: a thread runnable at the start but given a CPU
 * only later (spinning, it is runnable throughout) read it late. That
 * lateness is run-queue time after the start, as far as the wait read
 * since before covers it; it is taken back from the reading, and written
 * to *late_runq (if not NULL; -1 when unreadable): how late the thread
 * reached the start for want of a CPU, the machine's part of its
 * lateness. */
int64_t xb_runq_at_begin(int64_t before, uint64_t now, uint64_t begin, int64_t fd, int64_t *late_runq);
#define XB_BEGIN_SPIN_NS 2000000u
#define XB_BEGIN_NAP_NS 1000000u
/* xb_timer_overhead_ns measures one chained timer read (median of rounds),
 * with its fraction: a read costs tens of ns, so whole ns would be off by
 * up to a few percent. */
double xb_timer_overhead_ns(void);

extern const struct xb_ops xb_null_ops;
int xb_null_open(void **dev);

#endif
