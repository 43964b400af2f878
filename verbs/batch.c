/* batch.c: the timed loop shared by every provider, and the clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "xb.h"

uint64_t xb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void xb_spin_until(uint64_t deadline)
{
	while (xb_now_ns() < deadline)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double xb_timer_overhead_ns(void)
{
	enum { ROUNDS = 31, READS = 1000 };
	double per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = xb_now_ns(), t = t0;

		for (int i = 0; i < READS; i++)
			t = xb_now_ns();
		per[r] = (double)(t - t0) / READS;
	}
	qsort(per, ROUNDS, sizeof(per[0]), cmp_double);
	return per[ROUNDS / 2];
}

size_t xb_run_batch(const struct xb_ops *ops, void *dom, int op, uint32_t *qpns,
		    size_t n, uint64_t *ns, uint32_t *status)
{
	size_t failed = 0;
	uint64_t t0 = xb_now_ns();

	for (size_t i = 0; i < n; i++) {
		uint32_t flags = 0;
		int rc;

		switch (op) {
		case XB_OP_CREATE:
			qpns[i] = 0;
			rc = ops->create(dom, &qpns[i], &flags);
			break;
		case XB_OP_REG:
			rc = qpns[i] > XB_QPN_MAX ? EINVAL : ops->reg(dom, qpns[i], &flags);
			break;
		case XB_OP_UNREG:
			rc = qpns[i] > XB_QPN_MAX ? EINVAL : ops->unreg(dom, qpns[i], &flags);
			break;
		case XB_OP_MODIFY:
			rc = qpns[i] > XB_QPN_MAX ? EINVAL : ops->modify(dom, qpns[i], XB_QPS_TARGET);
			break;
		default:
			rc = EINVAL;
		}
		uint64_t t1 = xb_now_ns();

		ns[i] = t1 - t0;
		t0 = t1;
		status[i] = ((uint32_t)rc & XB_ERRNO_MASK) | flags;
		failed += rc != 0;
	}
	return failed;
}

/* wait_until waits for deadline, sleeping when it is far and spinning the
 * rest, and returns the clock at the end of the wait. */
static uint64_t wait_until(uint64_t now, uint64_t deadline)
{
	if (deadline - now > XB_SPIN_NS) {
		uint64_t wake = deadline - XB_SPIN_NS;
		struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000u),
				       .tv_nsec = (long)(wake % 1000000000u) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	do
		now = xb_now_ns();
	while (now < deadline);
	return now;
}

static int unexpected(const struct xb_step *s, int rc, uint32_t flags)
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

void xb_run_program(const struct xb_ops *ops, void *dom, struct xb_step *steps,
		    size_t off, size_t n, const uint64_t *start, uint64_t *ns,
		    uint64_t *resp, uint32_t *status, struct xb_prog_stats *st)
{
	uint64_t t0 = xb_now_ns();

	for (size_t i = off; i < off + n; i++) {
		struct xb_step *s = &steps[i];
		uint32_t flags = 0, qpn = s->qpn;
		int rc;

		if (s->back)
			qpn = s->back <= i ? steps[i - s->back].qpn : ~0u; /* EINVAL below */

		if (start && start[i] > t0) {
			uint64_t t = wait_until(t0, start[i]), late = t - start[i];

			st->waits++;
			st->wait_ns += t - t0;
			st->late_ns += late;
			if (late > st->late_max_ns)
				st->late_max_ns = late;
			t0 = t;
		}
		switch (s->op) {
		case XB_OP_CREATE:
			qpn = 0;
			rc = ops->create(dom, &qpn, &flags);
			s->qpn = qpn;
			break;
		case XB_OP_REG:
			rc = qpn > XB_QPN_MAX ? EINVAL : ops->reg(dom, qpn, &flags);
			break;
		case XB_OP_UNREG:
			rc = qpn > XB_QPN_MAX ? EINVAL : ops->unreg(dom, qpn, &flags);
			break;
		case XB_OP_MODIFY:
			rc = qpn > XB_QPN_MAX ? EINVAL : ops->modify(dom, qpn, XB_QPS_TARGET);
			break;
		default:
			rc = EINVAL;
		}
		uint64_t t1 = xb_now_ns();

		ns[i] = t1 - t0;
		if (start) {
			resp[i] = t1 - start[i];
			st->behind_ns = t0 - start[i];
		}
		t0 = t1;
		status[i] = ((uint32_t)rc & XB_ERRNO_MASK) | flags;
	}
	/* Checked after the timed loop: nothing but the operations and the
	 * bookkeeping they need sits between two timer reads. */
	for (size_t i = off; i < off + n; i++)
		st->unexpected += unexpected(&steps[i], (int)(status[i] & XB_ERRNO_MASK), status[i]);
}

void xb_bare_timer_loop(uint64_t *ns, size_t n)
{
	uint64_t t0 = xb_now_ns();

	for (size_t i = 0; i < n; i++) {
		uint64_t t1 = xb_now_ns();

		ns[i] = t1 - t0;
		t0 = t1;
	}
}
