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
 *
 * With "foreign" for PAIRS it asks the kernel instead what a second
 * process's unreg of a QP it never opened gets: a child process opens
 * its own context (its own uverbs file) and sends DESTROY_QP for the QP
 * handle this process holds, as a raw uverbs write, since libibverbs
 * gives a process no handle it did not open. Prints the errno the
 * kernel answered and whether the QP is alive afterwards:
 *
 *   foreign_unreg_errno EINVAL 22
 *   alive_after 1
 *
 * With "hold" it prints the QP's number ("qpn N") and keeps it until
 * killed, so the kernel's list of live QPs has one of a process in it.
 */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

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

static struct ibv_context *open_named(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* foreign_unreg: in a child process of its own context, DESTROY_QP of
 * a handle only this process holds; the child exits with the errno. */
static int foreign_unreg(const char *name, uint32_t handle)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct ibv_context *ctx = open_named(name);
		struct {
			struct ib_uverbs_cmd_hdr hdr;
			struct ib_uverbs_destroy_qp cmd;
		} req;
		struct ib_uverbs_destroy_qp_resp resp;

		if (!ctx)
			_exit(255);
		memset(&req, 0, sizeof(req));
		req.hdr.command = IB_USER_VERBS_CMD_DESTROY_QP;
		req.hdr.in_words = sizeof(req) / 4;
		req.hdr.out_words = sizeof(resp) / 4;
		req.cmd.response = (uintptr_t)&resp;
		req.cmd.qp_handle = handle;
		if (write(ctx->cmd_fd, &req, sizeof(req)) == (ssize_t)sizeof(req))
			_exit(0);
		_exit(errno);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	char path[] = "/tmp/softxrc-loop.XXXXXX";
	int foreign = argc == 3 && !strcmp(argv[2], "foreign");
	int hold = argc == 3 && !strcmp(argv[2], "hold");
	long pairs = 0;
	int fd;

	if (argc != 3 || (!foreign && !hold && (pairs = strtol(argv[2], NULL, 10)) < 1)) {
		fprintf(stderr, "usage: softxrc-loop DEVICE PAIRS|foreign|hold\n");
		return 2;
	}
	ctx = open_named(argv[1]);
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

	if (hold) {
		printf("qpn %u\n", holder->qp_num);
		fflush(stdout);
		for (;;)
			pause();
	}
	if (foreign) {
		struct ibv_qp_attr qa2;
		struct ibv_qp_init_attr qi;
		int e = foreign_unreg(argv[1], holder->handle);

		if (e < 0 || e == 255)
			return fail("the foreign process", e < 0 ? -e : ENODEV);
		printf("foreign_unreg_errno %s %d\n", e ? strerrorname_np(e) : "0", e);
		printf("alive_after %d\n", ibv_query_qp(holder, &qa2, IBV_QP_STATE, &qi) == 0);
		if (ibv_destroy_qp(holder))
			return fail("ibv_destroy_qp holder", errno);
		ibv_close_xrcd(xrcd);
		ibv_close_device(ctx);
		return 0;
	}
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
