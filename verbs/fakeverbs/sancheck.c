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

static void exercise(const char *name, const struct xb_ops *ops, int (*open_dev)(const char *, void **, struct xb_devfacts *, int *),
		     const char *domfile, int upstream)
{
	struct xb_devfacts f;
	void *dev, *dev2, *dom, *dom2;
	int stage, fd;
	static uint32_t qpns[NQP], status[NQP];
	static uint64_t ns[NQP];
	uint32_t flags = 0;

	CHECK(open_dev("", &dev, &f, &stage) == 0);
	CHECK(open_dev("xbfake0", &dev2, &f, &stage) == 0);
	fd = open(domfile, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(ops->open_domain(dev, fd, &dom) == 0);
	CHECK(ops->open_domain(dev2, fd, &dom2) == 0);
	close(fd);

	CHECK(xb_run_batch(ops, dom, XB_OP_CREATE, qpns, NQP, ns, status) == 0);
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
	CHECK(open_dev("xbfake0", &dev, &f, &stage) == 0);
	fd = open(domfile, O_RDWR);
	CHECK(fd >= 0);
	CHECK(ops->open_domain(dev, fd, &dom) == 0);
	close(fd);
	CHECK(xb_run_batch(ops, dom, XB_OP_REG, qpns, NQP, ns, status) == NQP);
	for (int i = 0; i < NQP; i++)
		CHECK((status[i] & XB_ERRNO_MASK) == EINVAL);
	CHECK(ops->close_domain(dom) == 0);
	CHECK(ops->close_device(dev) == 0);
	CHECK(open_dev("nosuch0", &dev, &f, &stage) == ENODEV && stage == XB_STAGE_NOTFOUND);
	printf("sancheck: %s (%s semantics): ok\n", name, upstream ? "upstream" : "legacy");
}

int main(int argc, char **argv)
{
	char why[256], path[512];
	struct xb_devfacts facts[8];

	CHECK(argc == 2);
	CHECK(xb_rdma_list(facts, 8) >= 1);
	snprintf(path, sizeof(path), "%s/dom-rdma", argv[1]);
	exercise("rdma", &xb_rdma_ops, xb_rdma_open, path, 1);
	CHECK(xb_legacy_probe(why, sizeof(why)) == 0);
	snprintf(path, sizeof(path), "%s/dom-legacy", argv[1]);
	exercise("legacy", &xb_legacy_ops, xb_legacy_open, path, 0);
	return 0;
}
