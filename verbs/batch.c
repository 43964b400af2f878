/* batch.c: the timed loop shared by every provider, and the clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

uint64_t xb_wait_begin(uint64_t now, uint64_t begin, const uint32_t *stop, const uint32_t *abort)
{
	while (now + XB_BEGIN_SPIN_NS < begin) {
		if (xb_halted(stop, abort))
			return 0;
		uint64_t wake = begin - XB_BEGIN_SPIN_NS;

		if (wake - now > XB_BEGIN_NAP_NS)
			wake = now + XB_BEGIN_NAP_NS;
		struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000u),
				       .tv_nsec = (long)(wake % 1000000000u) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		now = xb_now_ns();
	}
	if (xb_halted(stop, abort))
		return 0;
	while (now < begin)
		now = xb_now_ns();
	return now;
}

int64_t xb_run_delay(int64_t fd)
{
	char buf[96], *p = buf, *q;
	ssize_t n;

	if (fd < 0 || (n = pread((int)fd, buf, sizeof buf - 1, 0)) <= 0)
		return -1;
	buf[n] = 0;
	strtoull(p, &p, 10); /* time on the CPU */
	unsigned long long v = strtoull(p, &q, 10);

	return q == p ? -1 : (int64_t)v;
}

int64_t xb_runq_at_begin(int64_t before, uint64_t now, uint64_t begin, int64_t fd, int64_t *late_runq)
{
	int64_t at = xb_run_delay(fd), late = now > begin ? (int64_t)(now - begin) : 0;

	if (before < 0 || at < before)
		late = 0;
	else if (late > at - before)
		late = at - before;
	if (late_runq)
		*late_runq = at < 0 ? -1 : late;
	return at < 0 ? -1 : at - late;
}

uint64_t xb_await_begin(uint64_t begin, int64_t fd, const uint32_t *stop, const uint32_t *abort, int64_t *runq_begin,
			int64_t *late_runq)
{
	uint64_t now = xb_now_ns();
	int64_t before = begin > now ? xb_run_delay(fd) : -1;

	if (begin > now)
		now = xb_wait_begin(now, begin, stop, abort);
	if (now)
		*runq_begin = xb_runq_at_begin(before, now, begin, fd, late_runq);
	return now;
}

static __thread int spin_waits;

void xb_set_spin_waits(int spin)
{
	spin_waits = spin != 0;
}

/* wait_until waits for deadline, sleeping when it is far (unless the
 * thread spins its waits) and spinning the rest, and returns the clock at
 * the end of the wait. A deadline that is not ahead of now (a late step)
 * is no wait: now at once. Said here, not left to unsigned wrap-around,
 * which would turn deadline - now into a huge distance and only by luck
 * into a sleep that returns at once. */
static uint64_t wait_until(uint64_t now, uint64_t deadline)
{
	if (deadline <= now)
		return now;
	if (!spin_waits && deadline - now > XB_SPIN_NS) {
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

/* Where a program's steps are counted, in locals: after each opaque call
 * (the provider's operation, the clock) the compiler would otherwise load
 * every pointer anew through rec. */
struct counts {
	int64_t *service, *response;
	uint64_t *count, *sum_ns;
	size_t nb;
};

/* count adds one step of tag (< ntags) to c: its service time d and, in
 * an open loop, its response time r. */
static inline void count(const struct counts *c, uint32_t tag, uint64_t d, uint64_t r)
{
	c->service[tag * c->nb + xb_bucket_index(d, c->nb)]++;
	c->count[tag]++;
	c->sum_ns[tag] += d;
	if (c->response)
		c->response[tag * c->nb + xb_bucket_index(r, c->nb)]++;
}

/* A program's loop carries these from one step to the next, and from one
 * segment of a repeated program to the next. */
struct loop {
	uint64_t t0;       /* the end of the last step: the next one's start */
	uint64_t pend_d;   /* the last step, counted one step late */
	uint64_t pend_r;
	uint32_t pend_tag; /* UINT32_MAX: none */
	size_t nfails;
};

/* run_steps runs steps[a, b). It is compiled for the common case (a
 * closed loop, nothing per step: no branch on either, and fewer live
 * values for the registers), for that case with the per-step checks made
 * before (checked: a plain ring, see plain_ring) and for everything. */
static inline __attribute__((always_inline)) void
run_steps(const struct xb_ops *ops, void *dom, struct xb_step *steps, size_t a, size_t b, const uint64_t *start,
	  const struct xb_prog_rec *rec, struct xb_prog_stats *st, struct loop *l, const int general, const int checked)
{
	const size_t ntags = rec->ntags;
	const struct counts c = { .service = rec->service, .response = general && start ? rec->response : NULL,
				  .count = rec->count, .sum_ns = rec->sum_ns, .nb = rec->nbuckets };
	uint64_t *const ns = general ? rec->ns : NULL, *const resp = general && start ? rec->resp : NULL;
	struct xb_fail *const fails = rec->fails;

	if (!general)
		start = NULL;
	uint64_t t0 = l->t0, pend_d = l->pend_d, pend_r = l->pend_r;
	uint32_t pend_tag = l->pend_tag;
	size_t nfails = l->nfails;

	for (size_t i = a; i < b; i++) {
		struct xb_step *s = &steps[i];
		uint32_t flags = 0, qpn = s->qpn, tag = s->tag;
		int rc;

		if (!checked && s->back)
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
		if (checked)
			rc = s->op == XB_OP_REG ? ops->reg(dom, qpn, &flags) : ops->unreg(dom, qpn, &flags);
		else if (ntags && tag >= ntags)
			rc = EINVAL;
		else if (s->op == XB_OP_CREATE)
			rc = xb_do_op(ops, dom, s->op, &s->qpn, &flags);
		else
			rc = xb_do_op_on(ops, dom, s->op, qpn, &flags);
		uint64_t t1 = xb_now_ns(), d = t1 - t0;

		/* The previous step is counted now, and this one right after
		 * the next step's closing timer read: the counting depends only
		 * on values known well before that read, so it overlaps the
		 * read instead of lengthening the chain from one read to the
		 * next, and it is inside the next step's timed interval. */
		if (checked || pend_tag < ntags)
			count(&c, pend_tag, pend_d, pend_r);
		pend_tag = checked || tag < ntags ? tag : UINT32_MAX;
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
			fails[nfails].step = (uint32_t)i;
			fails[nfails].status = ((uint32_t)rc & XB_ERRNO_MASK) | flags;
			nfails++;
			st->unexpected++;
		}
	}
	l->t0 = t0, l->pend_d = pend_d, l->pend_r = pend_r, l->pend_tag = pend_tag, l->nfails = nfails;
}

/* plain_ring says whether every step of the ring is a reg or unreg of a
 * valid QP number, its tag recorded, with no Back: the checks the loop
 * would make per step are then made once, here, before the ring runs
 * (run_steps' checked), which spares the loop ~2% of a null operation. */
static int plain_ring(const struct xb_step *steps, size_t off, size_t n, size_t ntags)
{
	if (!ntags)
		return 0;
	for (size_t i = off; i < off + n; i++) {
		const struct xb_step *s = &steps[i];

		if ((s->op != XB_OP_REG && s->op != XB_OP_UNREG) || s->back || s->tag >= ntags || s->qpn > XB_QPN_MAX)
			return 0;
	}
	return 1;
}

/* pcg_next is the schedule's generator's next number: math/rand/v2's
 * PCG.Uint64 (a 128-bit LCG with the DXSM output), as Arrivals.uint64
 * computes it in Go. */
static inline uint64_t pcg_next(struct xb_arrivals *a)
{
	const unsigned __int128 mul = (unsigned __int128)2549297995355413924u << 64 | 4865540595714422341u;
	const unsigned __int128 inc = (unsigned __int128)6364136223846793005u << 64 | 1442695040888963407u;
	unsigned __int128 s = ((unsigned __int128)a->rng_hi << 64 | a->rng_lo) * mul + inc;
	uint64_t hi = (uint64_t)(s >> 64), lo = (uint64_t)s;

	a->rng_hi = hi, a->rng_lo = lo;
	hi ^= hi >> 32;
	hi *= 0xda942042e4dd58b5u;
	hi ^= hi >> 48;
	return hi * (lo | 1);
}

/* log_unit is ln x for x in [2^-53, 1] with the operations of Go's
 * portable log (FreeBSD's e_log.c), in its order, as Go's logUnit does:
 * Go and C draw the same gaps, and C needs no libm. */
static double log_unit(double x)
{
	const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10,
		     l1 = 6.666666666666735130e-01, l2 = 3.999999999940941908e-01,
		     l3 = 2.857142874366239149e-01, l4 = 2.222219843214978396e-01,
		     l5 = 1.818357216161805012e-01, l6 = 1.531383769920937332e-01,
		     l7 = 1.479819860511658591e-01, sqrt1_2 = 0.70710678118654752440;
	uint64_t b;
	double f1;

	/* x = f1 * 2^ki, f1 in [0.5, 1): x is normal, so its bits say it. */
	memcpy(&b, &x, sizeof(b));
	int64_t ki = (int64_t)(b >> 52 & 0x7ff) - 1022;

	b = (b & ~((uint64_t)0x7ff << 52)) | (uint64_t)1022 << 52;
	memcpy(&f1, &b, sizeof(f1));
	if (f1 < sqrt1_2) {
		f1 *= 2;
		ki--;
	}
	double f = f1 - 1, k = (double)ki;
	double s = f / (2 + f), s2 = s * s, s4 = s2 * s2;
	double t1 = s2 * (l1 + s4 * (l3 + s4 * (l5 + s4 * l7)));
	double t2 = s4 * (l2 + s4 * (l4 + s4 * l6));
	double r = t1 + t2, hfsq = 0.5 * f * f;

	return k * ln2_hi - ((hfsq - (s * (hfsq + r) + k * ln2_lo)) - f);
}

/* arrivals_advance moves a->next to the following intended start, as
 * Arrivals.Advance does in Go: a fixed gap, or an exponential one by
 * inversion of a 53-bit uniform, the fraction of a ns carried over. */
static inline void arrivals_advance(struct xb_arrivals *a)
{
	double gap = a->period;

	if (a->poisson)
		gap = -log_unit(1 - (double)(pcg_next(a) >> 11) * 0x1p-53) * a->period;
	gap += a->frac;
	uint64_t whole = (uint64_t)gap;

	a->frac = gap - (double)whole;
	a->next += whole;
	a->scheduled++;
}

/* arrivals_fill writes the intended starts of steps [i, b) and returns
 * where it stopped: before the first arrival due at or after a->end. */
static inline size_t arrivals_fill(struct xb_arrivals *a, uint64_t *start, size_t i, size_t b)
{
	for (; i < b; i++) {
		if (a->end && a->next >= a->end)
			break;
		start[i] = a->next;
		arrivals_advance(a);
	}
	return i;
}

void xb_arrivals_draw(struct xb_arrivals *a, uint64_t *start, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		start[i] = a->next;
		arrivals_advance(a);
	}
}

/* arrivals_sample adds a sample of the backlog at now (Arrivals.Sample):
 * the time since the last sample counts as sustained backlog if the last
 * step began more than a->limit after its intended start. */
static inline void arrivals_sample(struct xb_arrivals *a, uint64_t behind, uint64_t now)
{
	if (behind > a->behind_max)
		a->behind_max = behind;
	if (behind > a->limit && now > a->mark)
		a->over_ns += now - a->mark;
	if (now > a->mark)
		a->mark = now;
}

/* deck_word is set k's word w of the deck's ctl. */
static inline uint64_t *deck_word(const struct xb_deck *d, uint64_t k, int w)
{
	return &d->ctl[XB_DECK_SETS + k * XB_DECK_WORDS + (uint64_t)w];
}

/* deck_counts points rec at set k's counts. */
static void deck_counts(const struct xb_deck *d, uint64_t k, struct xb_prog_rec *rec)
{
	int64_t *set = d->base + k * d->stride;

	rec->service = set;
	if (rec->response)
		rec->response = set + rec->ntags * rec->nbuckets;
}

/* deck_turn ends the deck's current set at now, the step still to be
 * counted (l's pending one) counted in it, and goes on in the next set
 * if it is free; it returns whether it did. It wakes no one: the reader
 * looks at the deck when its interval ends. A write to an eventfd whose
 * reader sleeps took 19-42 us on a 2-CPU VM (the wake-up's interrupt to
 * the other CPU), all of it an untimed stretch of the measured thread. */
static int deck_turn(const struct xb_deck *d, struct xb_prog_rec *rec, struct loop *l, int open, uint64_t now)
{
	uint64_t cur = d->ctl[XB_DECK_CUR], next = (cur + 1) % d->nsets;

	if (__atomic_load_n(deck_word(d, next, XB_DECK_STATE), __ATOMIC_ACQUIRE) != XB_DECK_FREE)
		return 0;
	if (l->pend_tag < rec->ntags) {
		const struct counts c = { .service = rec->service, .response = open ? rec->response : NULL,
					  .count = rec->count, .sum_ns = rec->sum_ns, .nb = rec->nbuckets };

		count(&c, l->pend_tag, l->pend_d, l->pend_r);
		l->pend_tag = UINT32_MAX;
	}
	uint64_t len = d->ctl[XB_DECK_LEN], start = d->ctl[XB_DECK_START];
	uint64_t index = now > start && len ? (now - start) / len : 0;

	*deck_word(d, cur, XB_DECK_END) = now;
	*deck_word(d, cur, XB_DECK_ORDER) = d->ctl[XB_DECK_SEQ]++;
	__atomic_store_n(deck_word(d, cur, XB_DECK_STATE), XB_DECK_ENDED, __ATOMIC_RELEASE);
	*deck_word(d, next, XB_DECK_INDEX) = index;
	*deck_word(d, next, XB_DECK_STATE) = XB_DECK_COUNTING;
	d->ctl[XB_DECK_CUR] = next;
	d->ctl[XB_DECK_NEXT] = start + (index + 1) * len;
	deck_counts(d, next, rec);
	return 1;
}

/* repeat runs the ring in segments of about rep->poll_ns each, the step
 * loop itself unchanged: the clock's limits, the stop words and the
 * outcomes are looked at between segments, in the next step's timed
 * interval like the counting. A segment's length in steps is adapted to
 * the time the last one took, at most doubling. In an open loop
 * (rep->arr) a segment's intended starts are drawn just before it runs
 * (a few ns a step) and the backlog is sampled after it, both in the
 * next step's wait or, when the loop is behind, its timed interval, as
 * the counting is. */
static inline __attribute__((always_inline)) void
repeat(const struct xb_ops *ops, void *dom, struct xb_step *steps, size_t off, size_t n, uint64_t *start,
       struct xb_prog_rec *rec, struct xb_prog_stats *st, struct loop *l, struct xb_repeat *rep, const int general)
{
	const size_t ring_end = off + n;
	size_t i = rep->pos >= off && rep->pos < ring_end ? (size_t)rep->pos : off;
	uint64_t left = rep->max_steps ? rep->max_steps : UINT64_MAX, seg = 1;
	const int plain = !general && plain_ring(steps, off, n, rec->ntags);
	struct xb_arrivals *const arr = general && start ? rep->arr : NULL;
	int over = 0;

	rep->steps = rep->laps = 0;
	for (;;) {
		size_t b = ring_end - i < seg ? ring_end : i + (size_t)seg;
		size_t nf = l->nfails;
		uint64_t s0 = l->t0;

		if (b - i > left)
			b = i + (size_t)left;
		if (arr) {
			size_t e = arrivals_fill(arr, start, i, b);

			over = e < b;
			b = e;
			if (b == i)
				break;
		}
		/* The first step counts nothing yet: it runs checked. */
		if (plain && l->pend_tag != UINT32_MAX)
			run_steps(ops, dom, steps, i, b, NULL, rec, st, l, 0, 1);
		else
			run_steps(ops, dom, steps, i, b, start, rec, st, l, general, 0);
		rep->steps += b - i;
		left -= b - i;
		i = b;
		if (arr)
			arrivals_sample(arr, st->behind_ns, l->t0);
		/* The turn is in no step's time: an untimed stretch, told
		 * apart from the call's others. At or past until the caller
		 * ends the set (the measurement's last interval ends with it,
		 * not in an empty one after it). */
		if (rep->deck && l->t0 >= rep->deck->ctl[XB_DECK_NEXT] && l->t0 < rep->until &&
		    deck_turn(rep->deck, rec, l, general && start, l->t0)) {
			uint64_t from = l->t0;

			l->t0 = xb_now_ns();
			st->untimed_ns += l->t0 - from;
			if (l->t0 - from > st->untimed_max_ns)
				st->untimed_max_ns = l->t0 - from, st->untimed_max_at = from;
		}
		if (l->nfails != nf || left == 0 || over || l->t0 >= rep->until || xb_halted(rep->stop, rep->abort))
			break;
		if (i == ring_end) {
			i = off;
			rep->laps++;
			l->nfails = 0; /* the lap before ran clean */
		}
		uint64_t took = l->t0 - s0, fit = took ? seg * rep->poll_ns / took : seg * 2;

		seg = fit < 1 ? 1 : fit > seg * 2 ? seg * 2 : fit;
	}
	rep->pos = i;
}

size_t xb_run_program(const struct xb_ops *ops, void *dom, struct xb_step *steps,
		      size_t off, size_t n, uint64_t *start, const struct xb_prog_rec *rec,
		      size_t nfails, struct xb_prog_stats *st, struct xb_repeat *rep)
{
	struct loop l = { .pend_tag = UINT32_MAX, .nfails = nfails };
	const int closed = !start && !rec->ns;
	struct xb_prog_rec r = *rec; /* a deck turns its counts */

	if (rep && rep->deck)
		deck_counts(rep->deck, rep->deck->ctl[XB_DECK_CUR], &r);

	l.t0 = xb_now_ns();
	if (rep && rep->begin) {
		rep->begun = xb_await_begin(rep->begin, rep->runq_fd, rep->stop, rep->abort, &rep->runq_begin,
					    &rep->late_runq);
		if (!rep->begun) {
			rep->steps = rep->laps = 0;
			return nfails;
		}
		l.t0 = xb_now_ns(); /* the read is in no step's time */
	} else if (rep) {
		rep->begun = l.t0;
	}
	if (rep && rep->deck && rep->begin)
		rep->deck->ctl[XB_DECK_BEGUN] = rep->begun;
	if (rep && rep->once)
		rep = NULL; /* begun: the steps run once, as without it */
	if (rep && closed)
		repeat(ops, dom, steps, off, n, NULL, &r, st, &l, rep, 0);
	else if (rep)
		repeat(ops, dom, steps, off, n, start, &r, st, &l, rep, 1);
	else if (closed)
		run_steps(ops, dom, steps, off, off + n, NULL, rec, st, &l, 0, 0);
	else
		run_steps(ops, dom, steps, off, off + n, start, rec, st, &l, 1, 0);
	if (l.pend_tag < r.ntags) {
		const struct counts c = { .service = r.service, .response = start ? r.response : NULL,
					  .count = r.count, .sum_ns = r.sum_ns, .nb = r.nbuckets };

		count(&c, l.pend_tag, l.pend_d, l.pend_r);
	}
	st->end_ns = l.t0;
	return l.nfails;
}

/* xb_bare_op_loop is the floor of any loop that times an operation
 * behind a provider's table and records it: n chained timer reads, each
 * around one call of ops' reg (the null provider's: through its table, as
 * run_steps calls), each duration counted as run_steps counts (one step
 * late, so that the counting overlaps the next read), and nothing else: no
 * program, no outcome. What it costs beyond xb_bare_timer_loop is what
 * this machine charges for a call and a count; what the engine costs
 * beyond it is the engine's. */
void xb_bare_op_loop(const struct xb_ops *ops, int64_t *service, size_t nb, uint64_t *cnt, uint64_t *sum, size_t n)
{
	const struct counts c = { .service = service, .count = cnt, .sum_ns = sum, .nb = nb };
	uint64_t t0 = xb_now_ns(), pend = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t flags = 0;

		ops->reg(NULL, (uint32_t)i, &flags);
		uint64_t t1 = xb_now_ns();

		if (i > 0)
			count(&c, 0, pend, 0);
		pend = t1 - t0;
		t0 = t1;
	}
	if (n > 0)
		count(&c, 0, pend, 0);
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
