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

		rc = xb_do_op(ops, dom, op, &qpns[i], &flags);
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

/* count adds one step of tag (< ntags) to rec: its service time d and, in
 * an open loop, its response time r. */
static inline void count(const struct xb_prog_rec *rec, int64_t *response, uint32_t tag, uint64_t d, uint64_t r)
{
	const size_t nb = rec->nbuckets;

	rec->service[tag * nb + xb_bucket_index(d, nb)]++;
	rec->count[tag]++;
	rec->sum_ns[tag] += d;
	if (response)
		response[tag * nb + xb_bucket_index(r, nb)]++;
}

/* run_program is xb_run_program's loop, compiled once for the common
 * case (a closed loop, nothing per step: no branch on either, and fewer
 * live values for the registers) and once for everything. */
static inline __attribute__((always_inline)) size_t
run_program(const struct xb_ops *ops, void *dom, struct xb_step *steps, size_t off, size_t n, const uint64_t *start,
	    const struct xb_prog_rec *rec, size_t nfails, struct xb_prog_stats *st, const int general)
{
	const size_t ntags = rec->ntags;
	int64_t *const response = general && start ? rec->response : NULL;
	uint64_t *const ns = general ? rec->ns : NULL, *const resp = general && start ? rec->resp : NULL;

	if (!general)
		start = NULL;
	uint64_t pend_d = 0, pend_r = 0;
	uint32_t pend_tag = UINT32_MAX; /* none */
	uint64_t t0 = xb_now_ns();

	for (size_t i = off; i < off + n; i++) {
		struct xb_step *s = &steps[i];
		uint32_t flags = 0, qpn = s->qpn, tag = s->tag;
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
		if (ntags && tag >= ntags) {
			rc = EINVAL;
		} else {
			rc = xb_do_op(ops, dom, s->op, &qpn, &flags);
			if (s->op == XB_OP_CREATE)
				s->qpn = qpn;
		}
		uint64_t t1 = xb_now_ns(), d = t1 - t0;

		/* The previous step is counted now, and this one right after
		 * the next step's closing timer read: the counting depends only
		 * on values known well before that read, so it overlaps the
		 * read instead of lengthening the chain from one read to the
		 * next, and it is inside the next step's timed interval. */
		if (pend_tag < ntags)
			count(rec, response, pend_tag, pend_d, pend_r);
		pend_tag = tag < ntags ? tag : UINT32_MAX;
		pend_d = d;
		if (ns)
			ns[i] = d;
		if (start) {
			pend_r = t1 - start[i];
			if (resp)
				resp[i] = pend_r;
			st->behind_ns = t0 - start[i];
		}
		t0 = t1;
		if (xb_step_unexpected(s, rc, flags)) {
			rec->fails[nfails].step = (uint32_t)i;
			rec->fails[nfails].status = ((uint32_t)rc & XB_ERRNO_MASK) | flags;
			nfails++;
			st->unexpected++;
		}
	}
	if (pend_tag < ntags)
		count(rec, response, pend_tag, pend_d, pend_r);
	return nfails;
}

size_t xb_run_program(const struct xb_ops *ops, void *dom, struct xb_step *steps,
		      size_t off, size_t n, const uint64_t *start, const struct xb_prog_rec *rec,
		      size_t nfails, struct xb_prog_stats *st)
{
	if (!start && !rec->ns)
		return run_program(ops, dom, steps, off, n, NULL, rec, nfails, st, 0);
	return run_program(ops, dom, steps, off, n, start, rec, nfails, st, 1);
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
