/* storm.c: a storm rank's loop (bench/storm.go). A rank serves its steps
 * as an MPI rank serves connection requests: in plan order, each as soon as
 * it has arrived. A step arrives at its intended start; a step that reads
 * its QP number from the shared table (a registration: the sender carries
 * the number the creator sent back) arrives only once that number is there.
 * Steps not arrived yet are skipped, not waited for. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "xb.h"

/* arrived says whether a step whose intended start has come has arrived:
 * a registration once its QP number is in the table, an election unless
 * another rank's claim on the slot is still creating. */
static int arrived(const struct xb_step *s, uint32_t slot, const uint32_t *table)
{
	if (!slot)
		return 1;
	uint32_t v = __atomic_load_n(&table[slot - 1], __ATOMIC_ACQUIRE);

	if (s->op == XB_OP_ELECT)
		return v != XB_SLOT_CLAIMED; /* free to claim, or the winner's number is there */
	return s->op != XB_OP_REG || (v != 0 && v != XB_SLOT_CLAIMED);
}

/* elect decides an elect step on slot k as GASNet-EX's
 * gasnetc_xrc_create_qp does: the rank whose compare-and-swap takes the
 * slot from 0 creates the QP (and sends its number back, below); a rank
 * that finds a number there opens it (ibv_open_qp). The step's op becomes the one run,
 * so the caller knows which it was. It returns 0, the step left as it
 * was, when another rank claimed the slot between arrived() and the swap:
 * the step has not arrived after all. */
static int elect(struct xb_step *s, uint32_t k, uint32_t *table)
{
	uint32_t v = 0;

	if (__atomic_compare_exchange_n(&table[k - 1], &v, XB_SLOT_CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		s->op = XB_OP_CREATE;
		return 1;
	}
	if (v == XB_SLOT_CLAIMED)
		return 0;
	s->op = XB_OP_REG; /* which reads the winner's number from the slot, below */
	return 1;
}

/* prefault writes, before the start, to every page the steps will write,
 * leaving each value as it is, so that no step's time takes the fault of
 * a first write. A rank is a fresh process: the table's page is a shared
 * mapping it has not written yet, and the kernel takes that write fault
 * (page_mkwrite and dirtying, ~50 us on the development VM) inside the
 * step that first sends a QP number back; the per-step arrays may be
 * fresh pages too. The table is written with an atomic add of 0: other
 * ranks write and read it meanwhile. */
static void prefault(struct xb_step *steps, size_t n, const uint32_t *slot, uint8_t *done, uint32_t *table,
		     uint64_t *ns, uint32_t *status)
{
	for (size_t i = 0; i < n; i++) {
		if (slot[i])
			__atomic_fetch_add(&table[slot[i] - 1], 0, __ATOMIC_RELAXED);
		/* Volatile: a store of the value just read is not elided. */
		*(volatile uint8_t *)&done[i] = done[i];
		*(volatile uint64_t *)&ns[i] = ns[i];
		*(volatile uint32_t *)&status[i] = status[i];
		*(volatile uint32_t *)&steps[i].qpn = steps[i].qpn;
	}
}

int xb_run_storm(const struct xb_ops *ops, void *dom, struct xb_step *steps, size_t n,
		 const uint64_t *start, const uint32_t *slot, uint8_t *done, uint32_t *table,
		 const uint32_t *stop, const uint32_t *abort, uint64_t *ns, uint32_t *status,
		 struct xb_storm_state *st)
{
	uint64_t t0 = xb_now_ns();
	int64_t before = st->runq_before;

	if (t0 < st->begin) {
		prefault(steps, n, slot, done, table, ns, status);
		if (st->runq_fd >= 0)
			before = xb_run_delay(st->runq_fd);
		if ((t0 = xb_wait_begin(t0, st->begin, stop, abort)) == 0)
			return XB_STORM_HALTED;
	}
	if (st->runq_fd >= 0 && st->runq_begin < 0) {
		/* The first call, on time or late (woken past the start). */
		st->runq_begin = xb_runq_at_begin(before, t0, st->begin, st->runq_fd, NULL);
		t0 = xb_now_ns(); /* the read is in no step's time */
	}
	while (st->first < n) {
		size_t pick = n;

		if (xb_halted(stop, abort))
			return XB_STORM_HALTED;
		if (st->until && t0 >= st->until)
			return XB_STORM_UNTIL;
		for (size_t i = st->first; i < n; i++) {
			if (done[i])
				continue;
			if (start && start[i] > t0)
				break; /* in order of intended start: none later has come */
			/* A step on the QP of an earlier one (a modify after its
			 * create or election) waits for that one: an election
			 * skipped while another rank creates would otherwise
			 * leave its modify to run first, on no QP. */
			if (steps[i].back && steps[i].back <= i && !done[i - steps[i].back])
				continue;
			if (arrived(&steps[i], slot[i], table)) {
				pick = i;
				break;
			}
		}
		if (pick == n) {
			/* Nothing has arrived: the workload's wait, in no operation. */
			sched_yield();
			uint64_t t = xb_now_ns();

			st->idle_ns += t - t0;
			t0 = t;
			continue;
		}

		struct xb_step *s = &steps[pick];
		uint32_t flags = 0, qpn = s->qpn, k = slot[pick];
		int rc;

		if (s->op == XB_OP_ELECT && !k) {
			/* An election needs its slot: misuse, failed as an
			 * unknown QP's reg (EINVAL). */
			s->op = XB_OP_REG;
			qpn = ~0u;
		} else if (s->op == XB_OP_ELECT && !elect(s, k, table)) {
			/* Lost to a claim made since arrived(): the winner is
			 * creating; the swap's time is the wait's, as above. */
			uint64_t t = xb_now_ns();

			st->idle_ns += t - t0;
			t0 = t;
			continue;
		} else if (s->back)
			qpn = s->back <= pick ? steps[pick - s->back].qpn : ~0u; /* EINVAL below */
		else if (k && s->op != XB_OP_CREATE)
			qpn = __atomic_load_n(&table[k - 1], __ATOMIC_ACQUIRE);
		rc = xb_do_op(ops, dom, s->op, &qpn, &flags);
		/* The QP number each step acted on stays with it. */
		if (s->op == XB_OP_CREATE || s->op == XB_OP_REG || s->op == XB_OP_UNREG)
			s->qpn = qpn;
		uint64_t t1 = xb_now_ns();

		ns[pick] = t1 - t0;
		t0 = t1;
		status[pick] = ((uint32_t)rc & XB_ERRNO_MASK) | flags;
		done[pick] = 1;
		st->end = t1;
		/* The creator sends the number back. */
		if (rc == 0 && k && (s->op == XB_OP_CREATE || s->op == XB_OP_MODIFY))
			__atomic_store_n(&table[k - 1], qpn, __ATOMIC_RELEASE);
		while (st->first < n && done[st->first])
			st->first++;
		if (xb_step_unexpected(s, rc, flags)) {
			st->at = pick;
			return XB_STORM_UNEXPECTED;
		}
	}
	st->runq_end = xb_run_delay(st->runq_fd);
	return XB_STORM_DONE;
}
