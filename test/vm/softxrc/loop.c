// SPDX-License-Identifier: GPL-2.0
/*
 * softxrc-loop: the plain C loop make vmtest checks xrcbench's `steady`
 * figures against. One process, one thread: open the device, open an
 * XRC domain on a file (as xrcbench does, so other processes could share
 * it), create one XRC receive QP and keep it, then time N reg/unreg pairs
 * on it: ibv_open_qp (reg) and ibv_destroy_qp of the opened handle
 * (unreg), each call timed alone with CLOCK_MONOTONIC. Prints the medians:
 *
 *   reg_p50_ns N
 *   unreg_p50_ns N
 *   pairs N
 *
 *   softxrc-loop DEVICE PAIRS
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "softxrc-loop: %s: %s\n", what, strerror(err ? err : EIO));
	return 1;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	char path[] = "/tmp/softxrc-loop.XXXXXX";
	long pairs;
	int n, fd;

	if (argc != 3 || (pairs = strtol(argv[2], NULL, 10)) < 1) {
		fprintf(stderr, "usage: softxrc-loop DEVICE PAIRS\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	if (!list)
		return fail("ibv_get_device_list", errno);
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		return fail(argv[1], ENODEV);

	fd = mkstemp(path);
	if (fd < 0)
		return fail("mkstemp", errno);
	unlink(path);
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &xa);
	if (!xrcd)
		return fail("ibv_open_xrcd", errno);
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};
	struct ibv_qp *holder = ibv_create_qp_ex(ctx, &qa);
	if (!holder)
		return fail("ibv_create_qp_ex", errno);

	uint64_t *reg = calloc((size_t)pairs, sizeof(*reg));
	uint64_t *unreg = calloc((size_t)pairs, sizeof(*unreg));
	if (!reg || !unreg)
		return fail("calloc", ENOMEM);
	for (long i = 0; i < pairs; i++) {
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
			.qp_num = holder->qp_num,
			.xrcd = xrcd,
			.qp_type = IBV_QPT_XRC_RECV,
		};
		uint64_t t0 = now_ns();
		struct ibv_qp *qp = ibv_open_qp(ctx, &oa);
		uint64_t t1 = now_ns();

		if (!qp)
			return fail("ibv_open_qp", errno);
		int rc = ibv_destroy_qp(qp);
		uint64_t t2 = now_ns();

		if (rc)
			return fail("ibv_destroy_qp", rc);
		reg[i] = t1 - t0;
		unreg[i] = t2 - t1;
	}
	printf("reg_p50_ns %llu\n", (unsigned long long)median(reg, pairs));
	printf("unreg_p50_ns %llu\n", (unsigned long long)median(unreg, pairs));
	printf("pairs %ld\n", pairs);
	free(reg);
	free(unreg);
	if (ibv_destroy_qp(holder))
		return fail("ibv_destroy_qp holder", errno);
	if (ibv_close_xrcd(xrcd))
		return fail("ibv_close_xrcd", errno);
	close(fd);
	ibv_close_device(ctx);
	return 0;
}
