/*
 * sim_stress.c: the sim core under ThreadSanitizer, AddressSanitizer and
 * UndefinedBehaviorSanitizer (make csan). Threads, each its own registrant
 * with its own mapping of one device, create, register with and unregister
 * from shared QPs at once, in both semantics; then the device must be
 * empty. Then they run a storm (storm.c): each creates its share of the
 * connections and registers with the others', the numbers passing through
 * a shared table as the loop serves whatever has arrived. All of it twice:
 * with the kernel's locks since 5.9 (regs shared, a deep command queue),
 * then with the pre-5.9 lookup and a command queue of one, so the
 * exclusive and queue-waiting paths race too. Go tests cover the
 * semantics; this covers races and memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

enum { THREADS = 4, ROUNDS = 200, QPS = 16 };

static const char *dir, *domfile;
static pthread_barrier_t barrier;
static uint32_t shared_qpns[QPS];
static uint32_t table[QPS]; /* the storm's QP-number table */
static const uint32_t halt; /* never set: the storm runs to its end */
static struct sim_config model; /* this pass's device options */

/* storm runs rank id's plan: create the connections c with c % THREADS ==
 * id, register with every other, then drop every handle. */
static void storm(int id, struct sim_dom *dom)
{
	enum { N = QPS };
	struct xb_step steps[N] = {{0}};
	uint32_t slot[N], status[N];
	uint64_t ns[N];
	uint8_t done[N] = {0};
	struct xb_storm_state st = {.begin = xb_now_ns()};
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < QPS; c++)
			if ((c % THREADS == id) == (pass == 0)) {
				steps[n].op = pass == 0 ? XB_OP_CREATE : XB_OP_REG;
				slot[n++] = (uint32_t)c + 1;
			}
	CHECK(xb_run_storm(&xb_sim_ops, dom, steps, n, NULL, slot, done, table, &halt, &halt, ns,
			   status, &st) == XB_STORM_DONE);
	pthread_barrier_wait(&barrier);
	for (size_t i = 0; i < n; i++) {
		uint32_t flags = 0;

		CHECK(done[i] && status[i] == 0 && steps[i].qpn == table[slot[i] - 1]);
		CHECK(sim_unreg(dom, steps[i].qpn, &flags) == 0);
	}
}

/* ring: thread 0 creates the shared QPs, the others run a ring of reg q,
 * unreg q over all of them (xb_run_program repeated, plain and general:
 * a step of a QP number past 24 bits sends it down the general loop),
 * all at once on the same QPs; the creator's handles keep every unreg
 * from being the last. */
static uint64_t ring_begin;

static void ring(int id, struct sim_dom *dom, int general)
{
	enum { N = 2 * QPS + 1, BUCKETS = 4096 };
	static int64_t service[THREADS][2 * BUCKETS];
	uint64_t count[2] = {0}, sum[2] = {0};
	struct xb_step steps[N] = {{0}};
	struct xb_fail fails[N];
	struct xb_prog_rec rec = {.ntags = 2, .nbuckets = BUCKETS, .service = service[id], .count = count,
				  .sum_ns = sum, .fails = fails};
	struct xb_prog_stats st = {0};
	struct xb_repeat rep = {.until = UINT64_MAX, .poll_ns = 100000, .stop = &halt, .abort = &halt};
	uint32_t flags;
	size_t n = 0;

	if (id == 0) {
		for (int q = 0; q < QPS; q++)
			CHECK(sim_create(dom, &shared_qpns[q], &flags) == 0);
		ring_begin = xb_now_ns() + 5000000; /* every ring starts at once, 5 ms on */
	}
	pthread_barrier_wait(&barrier);
	if (id != 0) {
		int fd = open("/proc/thread-self/schedstat", O_RDONLY);

		rep.begin = ring_begin;
		rep.runq_fd = fd;
		for (int q = 0; q < QPS; q++) {
			steps[n++] = (struct xb_step){.qpn = shared_qpns[q], .op = XB_OP_REG, .tag = 0};
			steps[n++] = (struct xb_step){.qpn = shared_qpns[q], .op = XB_OP_UNREG, .tag = 1,
						      .check = XB_CHECK_KEPT};
		}
		if (general)
			steps[n++] = (struct xb_step){.qpn = XB_QPN_MAX + 1, .op = XB_OP_REG, .expect = EINVAL};
		rep.max_steps = 50 * n;
		CHECK(xb_run_program(&xb_sim_ops, dom, steps, 0, n, NULL, &rec, 0, &st, &rep) == 0);
		CHECK(st.unexpected == 0 && rep.steps == 50 * n && rep.pos == n);
		CHECK(rep.begun >= ring_begin && (fd < 0 || (rep.runq_begin >= 0 && rep.late_runq >= 0)));
		if (fd >= 0)
			close(fd);
		CHECK(count[0] + count[1] == 50 * n);
	}
	pthread_barrier_wait(&barrier);
	if (id == 0)
		for (int q = 0; q < QPS; q++)
			CHECK(sim_unreg(dom, shared_qpns[q], &flags) == 0);
	pthread_barrier_wait(&barrier);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg, semantics = id % 2 ? SIM_UPSTREAM : SIM_LEGACY;
	struct sim_config cfg = model;
	struct sim_dev *dev;
	struct sim_dom *dom;
	uint32_t flags, qpn;
	int fd;

	CHECK(sim_open(dir, &cfg, semantics, &dev) == 0);
	fd = open(domfile, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(sim_open_domain(dev, fd, semantics, &dom) == 0);
	close(fd);
	for (int r = 0; r < ROUNDS; r++) {
		/* lifecycle: thread 0 creates, everyone regs, all unreg */
		if (id == 0)
			for (int q = 0; q < QPS; q++)
				CHECK(sim_create(dom, &shared_qpns[q], &flags) == 0);
		pthread_barrier_wait(&barrier);
		for (int q = 0; q < QPS; q++)
			if (id != 0)
				CHECK(sim_reg(dom, shared_qpns[q], &flags) == 0);
		pthread_barrier_wait(&barrier);
		for (int q = 0; q < QPS; q++) {
			flags = 0;
			CHECK(sim_unreg(dom, shared_qpns[q], &flags) == 0);
			CHECK(flags & XB_DESTROY_KNOWN);
		}
		pthread_barrier_wait(&barrier);
		/* churn of its own, interleaved with the others' */
		CHECK(sim_create(dom, &qpn, &flags) == 0);
		CHECK(sim_reg(dom, qpn, &flags) == 0);
		flags = 0;
		CHECK(sim_unreg(dom, qpn, &flags) == 0);
		if (semantics == SIM_UPSTREAM) { /* two handles: the first unreg keeps it */
			CHECK(!(flags & XB_DESTROYED));
			flags = 0;
			CHECK(sim_unreg(dom, qpn, &flags) == 0);
		}
		CHECK(flags & XB_DESTROYED);
		CHECK(sim_reg(dom, qpn, &flags) == EINVAL);
		pthread_barrier_wait(&barrier);
	}
	ring(id, dom, 0);
	ring(id, dom, 1);
	storm(id, dom);
	CHECK(sim_close_domain(dom) == 0);
	CHECK(sim_close(dev) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	struct sim_qp_info info[4];
	struct sim_dev *dev;
	int nreg = -1, ndom = -1;

	CHECK(argc == 3);
	dir = argv[1];
	domfile = argv[2];
	CHECK(pthread_barrier_init(&barrier, NULL, THREADS) == 0);
	const struct sim_config models[] = {
		{.max_qps = 256},
		{.max_qps = 256, .cmdq_depth = 1, .lookup = SIM_LOOKUP_LIST, .cost_scan_ns = 1},
	};
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		model = models[m];
		memset(table, 0, sizeof(table)); /* the last pass's storm filled it */
		for (long i = 0; i < THREADS; i++)
			CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
		for (int i = 0; i < THREADS; i++)
			CHECK(pthread_join(th[i], NULL) == 0);
		CHECK(sim_open(dir, NULL, SIM_LEGACY, &dev) == 0);
		CHECK(sim_inspect(dev, info, 4, &nreg, &ndom) == 0);
		CHECK(nreg == 1 && ndom == 0); /* only this observer is left */
		/* the command queue at rest: no waiter left counted as spinning
		 * (it would keep others from spinning for good), no slot due */
		uint32_t spinners, busy;
		sim_debug_cmdq(dev, &spinners, &busy);
		CHECK(spinners == 0 && busy == 0);
		CHECK(sim_close(dev) == 0);
	}
	printf("sim_stress: %d threads x %d rounds x %d QPs, then rings and a storm, with both lookups: no race, no leak, device empty\n", THREADS, ROUNDS, QPS);
	return 0;
}
