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
