/*
 * sancheck.c: the rdma and legacy providers' C code driven through the
 * double, built with AddressSanitizer and UndefinedBehaviorSanitizer
 * (make -C verbs/fakeverbs sancheck). Go tests cover the semantics; this
 * covers memory: the handle table's growth, spill stacks and deletion,
 * teardown of a device given up with registrations held, and the error
 * paths, with every allocation checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "legacy.h"
#include "rdma.h"

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

enum { NQP = 600 };

static void exercise(const char *name, const struct xb_ops *ops, int (*open_dev)(const char *, int, void **, struct xb_devfacts *, int *),
		     const char *domfile, int upstream)
{
	struct xb_devfacts f;
	void *dev, *dev2, *dom, *dom2;
	int stage, fd;
	static uint32_t qpns[NQP], status[NQP];
	static uint64_t ns[NQP];
	uint32_t flags = 0;

	CHECK(open_dev("", XB_QPS_RTR, &dev, &f, &stage) == 0);
	CHECK(open_dev("xbfake0", XB_QPS_RTR, &dev2, &f, &stage) == 0);
	fd = open(domfile, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(ops->open_domain(dev, fd, &dom) == 0);
	CHECK(ops->open_domain(dev2, fd, &dom2) == 0);
	close(fd);

	CHECK(xb_run_batch(ops, dom, XB_OP_CREATE, qpns, NQP, ns, status) == 0);
	CHECK(xb_run_batch(ops, dom, XB_OP_MODIFY, qpns, NQP, ns, status) == 0);
	/* back to RESET, then RTR without INIT: refused, as by the kernel */
	CHECK(ops->modify(dom, qpns[1], XB_QPS_RESET) == 0);
	CHECK(ops->modify(dom, qpns[1], XB_QPS_RTR) == EINVAL);
	CHECK(ops->modify(dom, qpns[1], XB_QPS_INIT) == 0);
	CHECK(ops->modify(dom, qpns[1], XB_QPS_RTR) == 0);
	CHECK(xb_run_batch(ops, dom2, XB_OP_REG, qpns, NQP, ns, status) == 0);
	for (int k = 0; k < 9; k++) /* spill stacks (upstream) or idempotent regs (legacy) */
		CHECK(ops->reg(dom2, qpns[k * 7], &flags) == 0);
	CHECK(ops->close_domain(dom) == EBUSY);
	CHECK(xb_run_batch(ops, dom, XB_OP_UNREG, qpns, NQP, ns, status) == 0);
	CHECK(ops->unreg(dom, qpns[0], &flags) == EINVAL);
	CHECK(ops->reg(dom, XB_QPN_MAX + 1, &flags) == EINVAL);
	CHECK(ops->close_domain(dom) == 0);
	CHECK(ops->close_device(dev) == 0);
	/* Give up dev2 with every registration held: the provider must
	 * release its handles and domain without leaking or touching freed
	 * memory, as process exit would. */
	CHECK(ops->close_device(dev2) == 0);

	/* Both registrants are gone: every QP must be gone too. */
	CHECK(open_dev("xbfake0", XB_QPS_RESET, &dev, &f, &stage) == 0);
	fd = open(domfile, O_RDWR);
	CHECK(fd >= 0);
	CHECK(ops->open_domain(dev, fd, &dom) == 0);
	close(fd);
	CHECK(xb_run_batch(ops, dom, XB_OP_REG, qpns, NQP, ns, status) == NQP);
	for (int i = 0; i < NQP; i++)
		CHECK((status[i] & XB_ERRNO_MASK) == EINVAL);
	CHECK(ops->close_domain(dom) == 0);
	CHECK(ops->close_device(dev) == 0);
	CHECK(open_dev("nosuch0", XB_QPS_RTR, &dev, &f, &stage) == ENODEV && stage == XB_STAGE_NOTFOUND);
	printf("sancheck: %s (%s semantics): ok\n", name, upstream ? "upstream" : "legacy");
}

/* The double fills every op slot as libibverbs does, stubs failing
 * EOPNOTSUPP for what a device lacks, so only calling tells them apart:
 * the rdma provider's probes must see the qedr-like and rxe-like devices
 * the Makefile configures for what they are. */
static void check_probes(void)
{
	struct xb_devfacts f[8];
	struct ibv_device **list;
	int n = 0;

	CHECK(xb_rdma_list(f, 8) == 3);
	CHECK(!strcmp(f[0].name, "xbfake0") && f[0].open_xrcd && f[0].create_qp_ex && f[0].open_qp);
	CHECK(f[0].open_xrcd_probe == 0 && f[0].create_qp_ex_probe == 0 && f[0].open_qp_probe == EINVAL);
	CHECK(!strcmp(f[1].name, "xbqedr0") && f[1].xrc && f[1].create_qp_ex && !f[1].open_qp);
	CHECK(f[1].open_qp_probe == EOPNOTSUPP);
	CHECK(!strcmp(f[2].name, "xbnoxrc0") && !f[2].xrc && !f[2].open_xrcd && !f[2].open_qp);
	CHECK(f[2].open_xrcd_probe == EOPNOTSUPP && f[2].open_qp_probe == XB_PROBE_NOT_TRIED);
	list = ibv_get_device_list(&n);
	CHECK(list && n == 3);
	for (int i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);

		CHECK(ctx);
		CHECK(verbs_get_ctx_op(ctx, open_qp) && verbs_get_ctx_op(ctx, open_xrcd) &&
		      verbs_get_ctx_op(ctx, close_xrcd) && verbs_get_ctx_op(ctx, create_qp_ex) &&
		      verbs_get_ctx_op(ctx, query_device_ex) && verbs_get_ctx_op(ctx, create_cq_ex) &&
		      verbs_get_ctx_op(ctx, alloc_td) && verbs_get_ctx_op(ctx, advise_mr));
		CHECK(ctx->ops.poll_cq && ctx->ops.post_send && ctx->ops.post_recv);
		CHECK(ibv_close_device(ctx) == 0);
	}
	ibv_free_device_list(list);
	printf("sancheck: capability probes: ok\n");
}

/* The legacy calls the double exports (no header declares them now). */
struct xb_legacy_xrc_domain *ibv_open_xrc_domain(struct ibv_context *c, int fd, int oflag);
int ibv_create_xrc_rcv_qp(struct xb_legacy_qp_init_attr *attr, uint32_t *qpn);

/* A context closed with more XRCDs still busy (legacy registrations of the
 * same registrant in their domains) than any fixed table holds: none of
 * their memory may leak (LeakSanitizer checks at exit). */
static void check_busy_close(const char *dir)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = 0;

	list = ibv_get_device_list(&n);
	CHECK(list && n >= 1);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	for (int i = 0; i < 80; i++) {
		char path[600];
		struct ibv_xrcd_init_attr xa = {.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
						.oflags = O_CREAT};
		struct xb_legacy_qp_init_attr qa = {.qp_type = XB_LEGACY_QPT_XRC};
		uint32_t qpn;
		int fd;

		snprintf(path, sizeof(path), "%s/busy-%d", dir, i);
		fd = open(path, O_RDWR | O_CREAT, 0600);
		CHECK(fd >= 0);
		xa.fd = fd;
		CHECK(ibv_open_xrcd(ctx, &xa));
		qa.xrc_domain = ibv_open_xrc_domain(ctx, fd, O_CREAT);
		CHECK(qa.xrc_domain);
		CHECK(ibv_create_xrc_rcv_qp(&qa, &qpn) == 0);
		close(fd);
	}
	CHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
	printf("sancheck: close with 80 busy domains: ok\n");
}

/* The providers' opens with the automatic port and GID. */
static int rdma_open(const char *name, int qp_state, void **dev, struct xb_devfacts *f, int *stage)
{
	return xb_rdma_open(name, qp_state, 0, -1, 0, dev, f, stage);
}

static int legacy_open(const char *name, int qp_state, void **dev, struct xb_devfacts *f, int *stage)
{
	return xb_legacy_open(name, qp_state, 0, -1, dev, f, stage);
}

/* MLNX_OFED's legacy layer (the mlnx-compat build of the double): the
 * process is the registrant, and the provider must unregister what a
 * device holds before closing it; the double aborts where the library
 * would touch a closed context's handle. */
static void exercise_mlnx(const char *domfile)
{
	struct xb_devfacts f;
	void *dev, *dev2, *dom, *dom2;
	int stage, fd;
	static uint32_t qpns[NQP], status[NQP];
	static uint64_t ns[NQP];
	char why[512];

	CHECK(xb_legacy_flavor(why, sizeof(why)) == XB_LEGACY_MLNX_COMPAT);
	CHECK(xb_legacy_open("", XB_QPS_RTR, 0, -1, &dev, &f, &stage) == 0);
	CHECK(xb_legacy_open("xbfake0", XB_QPS_RTR, 0, -1, &dev2, &f, &stage) == 0);
	fd = open(domfile, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(xb_legacy_ops.open_domain(dev, fd, &dom) == 0);
	CHECK(xb_legacy_ops.open_domain(dev2, fd, &dom2) == 0);
	close(fd);
	CHECK(xb_run_batch(&xb_legacy_ops, dom, XB_OP_CREATE, qpns, NQP, ns, status) == 0);
	CHECK(xb_run_batch(&xb_legacy_ops, dom, XB_OP_MODIFY, qpns, NQP, ns, status) == 0);
	/* the process holds them all: a second context's reg is EEXIST */
	CHECK(xb_run_batch(&xb_legacy_ops, dom2, XB_OP_REG, qpns, NQP, ns, status) == NQP);
	for (int i = 0; i < NQP; i++)
		CHECK((status[i] & XB_ERRNO_MASK) == EEXIST);
	/* half are unregistered through the other context, which destroys */
	CHECK(xb_run_batch(&xb_legacy_ops, dom2, XB_OP_UNREG, qpns, NQP / 2, ns, status) == 0);
	CHECK(xb_run_batch(&xb_legacy_ops, dom, XB_OP_UNREG, qpns, NQP / 2, ns, status) == NQP / 2);
	CHECK(xb_legacy_ops.close_domain(dom2) == 0);
	CHECK(xb_legacy_ops.close_device(dev2) == 0);
	/* dev is given up holding the other half: its close unregisters
	 * them first, so nothing dangles and every QP is gone */
	CHECK(xb_legacy_ops.close_device(dev) == 0);
	CHECK(xb_legacy_open("xbfake0", XB_QPS_RESET, 0, -1, &dev, &f, &stage) == 0);
	fd = open(domfile, O_RDWR);
	CHECK(fd >= 0);
	CHECK(xb_legacy_ops.open_domain(dev, fd, &dom) == 0);
	close(fd);
	CHECK(xb_run_batch(&xb_legacy_ops, dom, XB_OP_REG, qpns, NQP, ns, status) == NQP);
	for (int i = 0; i < NQP; i++)
		CHECK((status[i] & XB_ERRNO_MASK) == EINVAL);
	CHECK(xb_legacy_ops.close_domain(dom) == 0);
	CHECK(xb_legacy_ops.close_device(dev) == 0);
	printf("sancheck: legacy (mlnx-compat semantics): ok\n");
}

int main(int argc, char **argv)
{
	char why[256], path[512];

	if (argc == 3 && !strcmp(argv[2], "mlnx-compat")) {
		snprintf(path, sizeof(path), "%s/dom-mlnx", argv[1]);
		exercise_mlnx(path);
		return 0;
	}
	CHECK(argc == 2);
	check_probes();
	check_busy_close(argv[1]);
	snprintf(path, sizeof(path), "%s/dom-rdma", argv[1]);
	exercise("rdma", &xb_rdma_ops, rdma_open, path, 1);
	CHECK(xb_legacy_probe(why, sizeof(why)) == 0);
	snprintf(path, sizeof(path), "%s/dom-legacy", argv[1]);
	exercise("legacy", &xb_legacy_ops, legacy_open, path, 0);
	return 0;
}
