/*
 * rdma.c: the rdma provider, rdma-core's upstream XRC API.
 *
 *   domain  ibv_open_xrcd(fd, O_CREAT)           ibv_close_xrcd
 *   create  ibv_create_qp_ex(IBV_QPT_XRC_RECV)   the creator's handle (S1)
 *   reg     ibv_open_qp(NUM|XRCD|TYPE)           one more handle (S2, S3)
 *   unreg   ibv_destroy_qp(handle)               the last one destroys (S4, S5)
 *   modify  ibv_modify_qp(handle)                RESET -> INIT -> RTR (--qp-state)
 *
 * One struct rdma_dev is one ibv_context, that is one registrant: every
 * benchmark thread opens its own, so threads never share handles.
 *
 * The registrant's handles live in a small open-addressing hash table in
 * C (QP number -> stack of struct ibv_qp *), so a timed unreg costs a probe
 * in C and never a Go map lookup or a cgo call of its own.
 *
 * Nothing is linked: libibverbs.so.1 is loaded on first use (ibvload.h)
 * and every call is resolved with dlvsym at the version rdma-core's
 * libibverbs.map.in gives it (struct rdma_lib), against the ABI declared in
 * ibv_abi.h. ibv_open_xrcd, ibv_close_xrcd, ibv_create_qp_ex, ibv_open_qp
 * and ibv_query_port are static inlines in verbs.h that dispatch through
 * struct verbs_context; the vc_ functions below are their equivalents,
 * with the same op-presence check and errno. libibverbs
 * fills every op the provider lacks with a stub that fails EOPNOTSUPP
 * (dummy_ops.c), so whether a device has them is found out by calling
 * them once per device (probe_caps), never from the pointers. Some
 * providers return NULL with a stale errno on bad arguments, so arguments
 * are validated here first and errno is cleared before each call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devselect.h"
#include "ibv_abi.h"
#include "ibvload.h"
#include "rdma.h"
#include "rtrpath.h"

/* The exported calls, each at the symbol version rdma-core exports as the
 * default (libibverbs.map.in): IBVERBS_1.0 holds the pre-1.1 ABI's
 * compatibility versions of the same names, which take other structs. */
static struct ibv_calls {
	struct xb_ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct xb_ibv_device **list);
	const char *(*get_device_name)(struct xb_ibv_device *dev);
	uint64_t (*get_device_guid)(struct xb_ibv_device *dev); /* big endian */
	struct xb_ibv_context *(*open_device)(struct xb_ibv_device *dev);
	int (*close_device)(struct xb_ibv_context *ctx);
	int (*query_device)(struct xb_ibv_context *ctx, struct xb_legacy_device_attr *attr);
	/* ibv_query_port@IBVERBS_1.1 takes rdma-core's _compat_ibv_port_attr,
	 * the prefix of struct ibv_port_attr before flags. */
	int (*query_port)(struct xb_ibv_context *ctx, uint8_t port, struct xb_ibv_port_attr *attr);
	int (*query_gid_ex)(struct xb_ibv_context *ctx, uint32_t port, uint32_t index, struct xb_ibv_gid_entry *e,
			    uint32_t flags, size_t entry_size);
	void *(*alloc_pd)(struct xb_ibv_context *ctx);
	int (*dealloc_pd)(void *pd);
	void *(*create_cq)(struct xb_ibv_context *ctx, int cqe, void *cq_context, void *channel, int vector);
	int (*destroy_cq)(void *cq);
	/* ibv_create_qp takes struct ibv_qp_init_attr, the head of _ex */
	struct xb_ibv_qp *(*create_qp)(void *pd, struct xb_ibv_qp_init_attr_ex *attr);
	int (*modify_qp)(struct xb_ibv_qp *qp, struct xb_legacy_qp_attr *attr, int mask);
	int (*destroy_qp)(struct xb_ibv_qp *qp);
} ibv;

static pthread_once_t ibv_once = PTHREAD_ONCE_INIT;
static int ibv_err;         /* 0: every call resolved; ENOENT: no library; ENOSYS: a call is missing */
static char ibv_why[512];   /* ... in words */

static void ibv_load(void)
{
	static const struct {
		const char *name, *version;
		size_t off;
	} syms[] = {
#define SYM(f, n, v) { n, v, offsetof(struct ibv_calls, f) }
		SYM(get_device_list, "ibv_get_device_list", "IBVERBS_1.1"),
		SYM(free_device_list, "ibv_free_device_list", "IBVERBS_1.1"),
		SYM(get_device_name, "ibv_get_device_name", "IBVERBS_1.1"),
		SYM(get_device_guid, "ibv_get_device_guid", "IBVERBS_1.1"),
		SYM(open_device, "ibv_open_device", "IBVERBS_1.1"),
		SYM(close_device, "ibv_close_device", "IBVERBS_1.1"),
		SYM(query_device, "ibv_query_device", "IBVERBS_1.1"),
		SYM(query_port, "ibv_query_port", "IBVERBS_1.1"),
		/* rdma-core v32 on; verbs.h's ibv_query_gid_ex wraps it */
		SYM(query_gid_ex, "_ibv_query_gid_ex", "IBVERBS_1.11"),
		SYM(alloc_pd, "ibv_alloc_pd", "IBVERBS_1.1"),
		SYM(dealloc_pd, "ibv_dealloc_pd", "IBVERBS_1.1"),
		SYM(create_cq, "ibv_create_cq", "IBVERBS_1.1"),
		SYM(destroy_cq, "ibv_destroy_cq", "IBVERBS_1.1"),
		SYM(create_qp, "ibv_create_qp", "IBVERBS_1.1"),
		SYM(modify_qp, "ibv_modify_qp", "IBVERBS_1.1"),
		SYM(destroy_qp, "ibv_destroy_qp", "IBVERBS_1.1"),
#undef SYM
	};
	void *lib = xb_ibv_lib(ibv_why, sizeof(ibv_why));

	if (!lib) {
		ibv_err = ENOENT;
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlvsym(lib, syms[i].name, syms[i].version);

		if (!p) {
			char file[256];

			xb_ibv_lib_file(file, sizeof(file));
			snprintf(ibv_why, sizeof(ibv_why),
				 "%s has no %s@%s: the rdma provider needs rdma-core's libibverbs (v32 or later)",
				 file[0] ? file : XB_IBV_SONAME, syms[i].name, syms[i].version);
			ibv_err = ENOSYS;
			memset(&ibv, 0, sizeof(ibv));
			return;
		}
		memcpy((char *)&ibv + syms[i].off, &p, sizeof(p));
	}
}

int xb_rdma_load(char *why, size_t len)
{
	pthread_once(&ibv_once, ibv_load);
	if (ibv_err && why && len)
		xb_copy_str(why, len, ibv_why);
	return ibv_err;
}

/* verbs.h's static inlines over struct verbs_context, op for op. */
static struct xb_ibv_xrcd *vc_open_xrcd(struct xb_ibv_context *ctx, struct xb_ibv_xrcd_init_attr *attr)
{
	struct xb_ibv_verbs_context *v = xb_ibv_ctx_op(ctx, open_xrcd);

	if (!v) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return v->open_xrcd(ctx, attr);
}

/* verbs.h calls the op unchecked (an XRCD exists only where open_xrcd
 * did); the check costs nothing and keeps a broken library from crashing
 * the harness. */
static int vc_close_xrcd(struct xb_ibv_xrcd *xrcd)
{
	struct xb_ibv_verbs_context *v = xb_ibv_ctx_op(xrcd->context, close_xrcd);

	if (!v) {
		errno = EOPNOTSUPP;
		return EOPNOTSUPP;
	}
	return v->close_xrcd(xrcd);
}

static struct xb_ibv_qp *vc_create_qp_ex(struct xb_ibv_context *ctx, struct xb_ibv_qp_init_attr_ex *attr)
{
	struct xb_ibv_verbs_context *v;

	/* A PD alone is what ibv_create_qp takes. */
	if (attr->comp_mask == XB_IBV_QP_INIT_ATTR_PD)
		return ibv.create_qp(attr->pd, attr);
	v = xb_ibv_ctx_op(ctx, create_qp_ex);
	if (!v) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return v->create_qp_ex(ctx, attr);
}

static struct xb_ibv_qp *vc_open_qp(struct xb_ibv_context *ctx, struct xb_ibv_qp_open_attr *attr)
{
	struct xb_ibv_verbs_context *v = xb_ibv_ctx_op(ctx, open_qp);

	if (!v) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return v->open_qp(ctx, attr);
}

/* ___ibv_query_port: the op, told the struct's size, where the library
 * has it (rdma-core 17 on), else the exported call on the zeroed struct. */
static int vc_query_port(struct xb_ibv_context *ctx, uint8_t port, struct xb_ibv_port_attr *attr)
{
	struct xb_ibv_verbs_context *v = xb_ibv_ctx_op(ctx, query_port);

	if (!v) {
		memset(attr, 0, sizeof(*attr));
		return ibv.query_port(ctx, port, attr);
	}
	return v->query_port(ctx, port, attr, sizeof(*attr));
}

static int vc_query_gid_ex(struct xb_ibv_context *ctx, uint32_t port, uint32_t index, struct xb_ibv_gid_entry *e,
			   uint32_t flags)
{
	return ibv.query_gid_ex(ctx, port, index, e, flags, sizeof(*e));
}

struct rdma_dom;

struct rdma_dev {
	struct xb_ibv_context *ctx;
	struct rdma_dom *doms; /* open domain handles, to release on close */
	int target;            /* the QP state XB_QPS_TARGET means */
	/* What moving a receive QP to INIT and RTR needs (rtrpath.h): the
	 * port and its address, and a local XRC send (XRC_INI) QP, made for
	 * the purpose, whose number is RTR's destination. */
	struct xb_path path;
};

/* One QP number's handles held by this registrant. Most registrants hold
 * one handle per QP, so the first lives inline and only S3-style repeated
 * opens spill into the heap. */
struct rdma_slot {
	uint32_t qpn;
	uint32_t n;   /* handles held; 0 marks an empty slot */
	uint32_t cap; /* capacity of more */
	struct xb_ibv_qp *one;
	struct xb_ibv_qp **more; /* handles 2..n */
};

struct rdma_dom {
	struct rdma_dev *dev;
	struct rdma_dom *next;
	struct xb_ibv_xrcd *xrcd;
	struct rdma_slot *slots;
	size_t mask;    /* table size - 1; the size is a power of two */
	size_t used;    /* non-empty slots */
	size_t handles; /* live handles, for S9 */
};

#define RDMA_TABLE_MIN 64

static size_t slot_hash(uint32_t qpn, size_t mask)
{
	/* QP numbers are allocated near-sequentially: spread them. */
	return (size_t)((qpn * 2654435761u) >> 8) & mask;
}

static struct rdma_slot *slot_find(struct rdma_dom *d, uint32_t qpn)
{
	for (size_t i = slot_hash(qpn, d->mask);; i = (i + 1) & d->mask) {
		struct rdma_slot *s = &d->slots[i];

		if (s->n == 0)
			return NULL;
		if (s->qpn == qpn)
			return s;
	}
}

static int table_grow(struct rdma_dom *d)
{
	size_t size = (d->mask + 1) * 2;
	struct rdma_slot *slots = calloc(size, sizeof(*slots));

	if (!slots)
		return ENOMEM;
	for (size_t i = 0; i <= d->mask; i++) {
		struct rdma_slot *s = &d->slots[i];

		if (s->n == 0)
			continue;
		size_t j = slot_hash(s->qpn, size - 1);

		while (slots[j].n)
			j = (j + 1) & (size - 1);
		slots[j] = *s;
	}
	free(d->slots);
	d->slots = slots;
	d->mask = size - 1;
	return 0;
}

/* slot_push records a new handle for qp->qp_num. */
static int slot_push(struct rdma_dom *d, struct xb_ibv_qp *qp)
{
	struct rdma_slot *s = slot_find(d, qp->qp_num);

	if (!s) {
		/* Keep the load under 1/2 so probes stay short. */
		if ((d->used + 1) * 2 > d->mask + 1 && table_grow(d))
			return ENOMEM;
		size_t i = slot_hash(qp->qp_num, d->mask);

		while (d->slots[i].n)
			i = (i + 1) & d->mask;
		s = &d->slots[i];
		s->qpn = qp->qp_num;
		s->one = qp;
		s->n = 1;
		d->used++;
		d->handles++;
		return 0;
	}
	if (s->n - 1 == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 4;
		struct xb_ibv_qp **more = realloc(s->more, cap * sizeof(*more));

		if (!more)
			return ENOMEM;
		s->more = more;
		s->cap = cap;
	}
	s->more[s->n - 1] = qp;
	s->n++;
	d->handles++;
	return 0;
}

/* slot_remove empties slot s and closes the gap it leaves in its probe
 * run (backward-shift deletion), so lookups never need tombstones and a
 * churning workload never fills the table. */
static void slot_remove(struct rdma_dom *d, struct rdma_slot *s)
{
	size_t i = (size_t)(s - d->slots);

	free(s->more);
	memset(s, 0, sizeof(*s));
	d->used--;
	for (size_t j = (i + 1) & d->mask; d->slots[j].n; j = (j + 1) & d->mask) {
		size_t home = slot_hash(d->slots[j].qpn, d->mask);

		/* Move j back into the hole at i unless its home lies
		 * cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			d->slots[i] = d->slots[j];
			memset(&d->slots[j], 0, sizeof(d->slots[j]));
			i = j;
		}
	}
}

/* errno after a libibverbs call that failed; never 0, so a stale or
 * missing errno cannot turn a failure into a success. */
static int failed_errno(void)
{
	return errno > 0 ? errno : EIO;
}

static int rdma_open_domain(void *devp, int fd, void **domp)
{
	struct rdma_dev *dev = devp;
	struct rdma_dom *d;
	struct xb_ibv_xrcd_init_attr attr;

	if (!dev || !dev->ctx || fd < 0 || !domp)
		return EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return ENOMEM;
	d->slots = calloc(RDMA_TABLE_MIN, sizeof(*d->slots));
	if (!d->slots) {
		free(d);
		return ENOMEM;
	}
	d->mask = RDMA_TABLE_MIN - 1;
	d->dev = dev;

	/* Both FD and OFLAGS are required: libibverbs' ibv_cmd_open_xrcd
	 * fails EINVAL without either. O_CREAT: the first opener creates
	 * the domain, later ones share it by the file's inode. */
	memset(&attr, 0, sizeof(attr));
	attr.comp_mask = XB_IBV_XRCD_INIT_ATTR_FD | XB_IBV_XRCD_INIT_ATTR_OFLAGS;
	attr.fd = fd;
	attr.oflags = O_CREAT;
	errno = 0;
	d->xrcd = vc_open_xrcd(dev->ctx, &attr);
	if (!d->xrcd) {
		int rc = failed_errno();

		free(d->slots);
		free(d);
		return rc;
	}
	d->next = dev->doms;
	dev->doms = d;
	*domp = d;
	return 0;
}

static void dom_unlink(struct rdma_dom *d)
{
	struct rdma_dom **p = &d->dev->doms;

	while (*p && *p != d)
		p = &(*p)->next;
	if (*p)
		*p = d->next;
}

static int rdma_close_domain(void *domp)
{
	struct rdma_dom *d = domp;
	int rc;

	if (!d || !d->xrcd)
		return EINVAL;
	/* S9, the harness's own guard: the kernel refuses too (EBUSY, while
	 * QP handles opened through this XRCD handle exist), but saying so
	 * here keeps the handles intact instead of trusting every provider
	 * to leave a domain whole after a refused close.
	 * xb_rdma_kernel_close_xrcd asks the kernel itself (conform). */
	if (d->handles)
		return EBUSY;
	errno = 0;
	rc = vc_close_xrcd(d->xrcd);
	if (rc)
		return rc > 0 ? rc : failed_errno();
	dom_unlink(d);
	free(d->slots);
	free(d);
	return 0;
}

static int rdma_create(void *domp, uint32_t *qpn, uint32_t *flags)
{
	struct rdma_dom *d = domp;
	struct xb_ibv_qp_init_attr_ex attr;
	struct xb_ibv_qp *qp;
	int rc;

	(void)flags; /* the upstream API cannot tell who destroyed a QP */
	if (!d || !d->xrcd || !qpn)
		return EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.qp_type = XB_IBV_QPT_XRC_RECV;
	attr.comp_mask = XB_IBV_QP_INIT_ATTR_XRCD;
	attr.xrcd = d->xrcd;
	errno = 0;
	qp = vc_create_qp_ex(d->dev->ctx, &attr);
	if (!qp)
		return failed_errno();
	/* A QP number beyond 24 bits would be a provider bug; refuse it
	 * rather than hand the harness a number it cannot pass back. */
	rc = qp->qp_num > XB_QPN_MAX ? ERANGE : slot_push(d, qp);
	if (rc) {
		ibv.destroy_qp(qp);
		return rc;
	}
	*qpn = qp->qp_num;
	return 0;
}

static int rdma_reg(void *domp, uint32_t qpn, uint32_t *flags)
{
	struct rdma_dom *d = domp;
	struct xb_ibv_qp_open_attr attr;
	struct xb_ibv_qp *qp;
	int rc;

	(void)flags;
	if (!d || !d->xrcd || qpn > XB_QPN_MAX)
		return EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.comp_mask = XB_IBV_QP_OPEN_ATTR_NUM | XB_IBV_QP_OPEN_ATTR_XRCD | XB_IBV_QP_OPEN_ATTR_TYPE;
	attr.qp_num = qpn;
	attr.xrcd = d->xrcd;
	attr.qp_type = XB_IBV_QPT_XRC_RECV;
	errno = 0;
	qp = vc_open_qp(d->dev->ctx, &attr);
	if (!qp)
		return failed_errno();
	rc = slot_push(d, qp);
	if (rc) {
		ibv.destroy_qp(qp);
		return rc;
	}
	return 0;
}

static int rdma_unreg(void *domp, uint32_t qpn, uint32_t *flags)
{
	struct rdma_dom *d = domp;
	struct rdma_slot *s;
	struct xb_ibv_qp *qp;
	int rc;

	(void)flags;
	if (!d || !d->xrcd || qpn > XB_QPN_MAX)
		return EINVAL;
	s = slot_find(d, qpn);
	if (!s)
		return EINVAL; /* the harness's guard, S8: no handle in this domain (xb_rdma_kernel_unreg asks the kernel) */
	/* Destroy the newest handle first; on failure it stays ours. */
	qp = s->n > 1 ? s->more[s->n - 2] : s->one;
	errno = 0;
	rc = ibv.destroy_qp(qp);
	if (rc)
		return rc > 0 ? rc : failed_errno();
	d->handles--;
	if (--s->n == 0)
		slot_remove(d, s);
	return 0;
}

/* The path's calls (rtrpath.h) through rdma-core. */
static int path_query_port(void *ctx, uint8_t port, struct xb_port_answer *a)
{
	struct xb_ibv_port_attr pa;
	int rc;

	memset(&pa, 0, sizeof(pa));
	errno = 0;
	if ((rc = vc_query_port(ctx, port, &pa)) != 0)
		return rc > 0 ? rc : failed_errno();
	*a = (struct xb_port_answer){.state = pa.state, .active_mtu = pa.active_mtu, .link_layer = pa.link_layer,
				     .gid_tbl_len = pa.gid_tbl_len, .lid = pa.lid};
	return 0;
}

/* ibv_query_gid_ex reads the entry's type from the kernel's GID table
 * (sysfs gid_attrs/types where the kernel has no ioctl for it). */
static int path_query_gid(void *ctx, uint8_t port, int index, uint8_t gid[16], int *type)
{
	struct xb_ibv_gid_entry e;
	int rc;

	memset(&e, 0, sizeof(e));
	errno = 0;
	if ((rc = vc_query_gid_ex(ctx, port, (uint32_t)index, &e, 0)) != 0)
		return rc > 0 ? rc : failed_errno();
	memcpy(gid, e.gid.raw, 16);
	switch (e.gid_type) {
	case XB_IBV_GID_TYPE_IB:
		*type = XB_GID_TYPE_IB;
		break;
	case XB_IBV_GID_TYPE_ROCE_V1:
		*type = XB_GID_TYPE_ROCE_V1;
		break;
	case XB_IBV_GID_TYPE_ROCE_V2:
		*type = XB_GID_TYPE_ROCE_V2;
		break;
	default:
		*type = XB_GID_TYPE_UNKNOWN;
	}
	return 0;
}

static void *path_alloc_pd(void *ctx) { return ibv.alloc_pd(ctx); }
static int path_dealloc_pd(void *pd) { return ibv.dealloc_pd(pd); }
static void *path_create_cq(void *ctx) { return ibv.create_cq(ctx, 1, NULL, NULL, 0); }
static int path_destroy_cq(void *cq) { return ibv.destroy_cq(cq); }
static int path_destroy_qp(void *qp) { return ibv.destroy_qp(qp); }
static int path_close_device(void *ctx) { return ibv.close_device(ctx); }

static const struct xb_pathlib rdma_pathlib = {
	.query_port = path_query_port,
	.query_gid = path_query_gid,
	.alloc_pd = path_alloc_pd,
	.dealloc_pd = path_dealloc_pd,
	.create_cq = path_create_cq,
	.destroy_cq = path_destroy_cq,
	.destroy_qp = path_destroy_qp,
	.close_device = path_close_device,
};

/* prepare_path finds what RTR needs (xb_path_choose's errnos and stages),
 * then makes the XRC send QP RTR points at, with its PD and CQ
 * (XB_STAGE_INI). */
static int prepare_path(struct rdma_dev *dev, int *stage)
{
	struct xb_ibv_qp_init_attr_ex qa;
	int rc;

	if (dev->path.ini)
		return 0;
	if ((rc = xb_path_choose(&rdma_pathlib, dev->ctx, &dev->path, 1, stage)) != 0)
		return rc;
	*stage = XB_STAGE_INI;
	if ((rc = xb_path_objects(&rdma_pathlib, dev->ctx, &dev->path)) != 0)
		return rc;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = XB_IBV_QPT_XRC_SEND;
	qa.comp_mask = XB_IBV_QP_INIT_ATTR_PD;
	qa.pd = dev->path.pd;
	qa.send_cq = dev->path.cq;
	qa.recv_cq = dev->path.cq;
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = 1;
	errno = 0;
	if (!(dev->path.ini = vc_create_qp_ex(dev->ctx, &qa)))
		return failed_errno();
	*stage = XB_STAGE_OK;
	return 0;
}

/* modify_one makes one transition of qp with the attributes rtrpath.c
 * chooses (xb_path_move). */
static int modify_one(struct rdma_dev *dev, struct xb_ibv_qp *qp, int state)
{
	struct xb_legacy_qp_attr a;
	int rc, stage, mask;

	if (state == XB_QPS_RTR && (rc = prepare_path(dev, &stage)) != 0)
		return rc;
	if ((rc = xb_path_move(&rdma_pathlib, dev->ctx, &dev->path, state,
			       dev->path.ini ? ((struct xb_ibv_qp *)dev->path.ini)->qp_num : 0, &a, &mask)) != 0)
		return rc;
	errno = 0;
	rc = ibv.modify_qp(qp, &a, mask);
	return rc ? (rc > 0 ? rc : failed_errno()) : 0;
}

static int rdma_modify(void *domp, uint32_t qpn, int state)
{
	struct rdma_dom *d = domp;
	struct rdma_slot *s;
	int rc = 0;

	if (!d || !d->xrcd || qpn > XB_QPN_MAX)
		return EINVAL;
	s = slot_find(d, qpn);
	if (!s)
		return EINVAL; /* no handle to modify through */
	if (state != XB_QPS_TARGET)
		return modify_one(d->dev, s->one, state);
	for (int st = XB_QPS_INIT; st <= d->dev->target && rc == 0; st++)
		rc = modify_one(d->dev, s->one, st);
	return rc;
}

/* dom_release drops everything a domain handle still holds, as the kernel
 * does when a process closes its uverbs file: every QP handle (the last
 * one destroys its QP), then the XRCD. A call that fails stops it with the
 * handle kept, so a retry goes on from there; 0 when d is freed. */
static int dom_release(struct rdma_dom *d)
{
	int rc;

	for (size_t i = 0; i <= d->mask; i++) {
		struct rdma_slot *s = &d->slots[i];

		while (s->n > 0) {
			errno = 0;
			rc = ibv.destroy_qp(s->n > 1 ? s->more[s->n - 2] : s->one);
			if (rc)
				return rc > 0 ? rc : failed_errno();
			s->n--;
			d->handles--;
		}
		free(s->more);
		s->more = NULL;
	}
	errno = 0;
	rc = vc_close_xrcd(d->xrcd);
	if (rc)
		return rc > 0 ? rc : failed_errno();
	free(d->slots);
	free(d);
	return 0;
}

static int rdma_close_device(void *devp)
{
	struct rdma_dev *dev = devp;
	int rc;

	if (!dev)
		return EINVAL;
	/* Domains still open here were given up by the caller (their
	 * registrations are dropped, as on process exit). One that cannot
	 * be released keeps the device open: the caller hears why and may
	 * try again. */
	while (dev->doms) {
		struct rdma_dom *d = dev->doms, *next = d->next;

		if ((rc = dom_release(d)) != 0)
			return rc;
		dev->doms = next;
	}
	if ((rc = xb_path_close(&rdma_pathlib, dev->ctx, &dev->path)) != 0)
		return rc;
	free(dev);
	return 0;
}

const struct xb_ops xb_rdma_ops = {
	.name = "rdma",
	.open_domain = rdma_open_domain,
	.close_domain = rdma_close_domain,
	.create = rdma_create,
	.reg = rdma_reg,
	.unreg = rdma_unreg,
	.modify = rdma_modify,
	.close_device = rdma_close_device,
};

int xb_rdma_kernel_close_xrcd(void *domp)
{
	struct rdma_dom *d = domp;
	int rc;

	if (!d || !d->xrcd)
		return EINVAL;
	errno = 0;
	rc = vc_close_xrcd(d->xrcd);
	if (rc)
		return rc > 0 ? rc : failed_errno();
	/* Closed with handles held (a kernel that does not refuse): they
	 * refer to a gone XRCD, so they are dropped unreleased; the caller
	 * is a child that exits next. */
	dom_unlink(d);
	for (size_t i = 0; i <= d->mask; i++)
		free(d->slots[i].more);
	free(d->slots);
	free(d);
	return 0;
}

int xb_rdma_kernel_unreg(void *domp, uint32_t qpn)
{
	struct rdma_dom *d = domp;

	if (!d || !d->xrcd || qpn > XB_QPN_MAX)
		return EINVAL;
	/* A handle to qpn held by this context through any domain: the
	 * kernel destroys handles, and a handle does not say which domain a
	 * caller meant. */
	for (struct rdma_dom *o = d->dev->doms; o; o = o->next) {
		struct rdma_slot *s = slot_find(o, qpn);
		struct xb_ibv_qp *qp;
		int rc;

		if (!s)
			continue;
		qp = s->n > 1 ? s->more[s->n - 2] : s->one;
		errno = 0;
		rc = ibv.destroy_qp(qp);
		if (rc)
			return rc > 0 ? rc : failed_errno();
		o->handles--;
		if (--s->n == 0)
			slot_remove(o, s);
		return 0;
	}
	return -1;
}

size_t xb_rdma_dom_handles(void *domp)
{
	struct rdma_dom *d = domp;

	return d ? d->handles : 0;
}

/* legacy_api_present: whether the loaded libibverbs is an old OFED one
 * that still exports the legacy XRC calls. */
static int legacy_api_present(void)
{
	void *lib = xb_ibv_lib(NULL, 0);

	static const char *const syms[] = {
		"ibv_open_xrc_domain", "ibv_close_xrc_domain", "ibv_create_xrc_rcv_qp",
		"ibv_reg_xrc_rcv_qp", "ibv_unreg_xrc_rcv_qp", "ibv_modify_xrc_rcv_qp",
	};

	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!lib || !dlsym(lib, syms[i]))
			return 0;
	return 1;
}

/* facts_from_device records what needs no open context. */
static void facts_from_device(struct xb_ibv_device *dev, struct xb_devfacts *f)
{
	memset(f, 0, sizeof(*f));
	xb_copy_str(f->name, sizeof(f->name), ibv.get_device_name(dev));
	xb_copy_str(f->dev_name, sizeof(f->dev_name), dev->dev_name);
	xb_copy_str(f->ibdev_path, sizeof(f->ibdev_path), dev->ibdev_path);
	f->node_type = dev->node_type;
	f->transport_type = dev->transport_type;
	f->node_guid = be64toh(ibv.get_device_guid(dev));
	f->legacy_api = legacy_api_present();
}

/* unsupported: what a probe call's errno says about the op it called.
 * libibverbs' stub for a missing op (dummy_ops.c) fails EOPNOTSUPP, and
 * so does a provider that has the op but not for XRC; ENOSYS is older
 * providers' word for the same. Anything else came from an implemented op. */
static int unsupported(int e)
{
	return e == EOPNOTSUPP || e == ENOSYS;
}

/* run_probes establishes the upstream XRC capabilities by calling them, as
 * cilium/ebpf's feature tests do: open a scratch XRC domain on an anonymous
 * file, create an XRC receive QP in it, and open a QP number no QP has
 * (XB_PROBE_QPN) in it, where an implemented ibv_open_qp says EINVAL. The
 * op pointers cannot say this: verbs_init_context fills every op a provider
 * lacks with a stub, so none is ever NULL. */
static void run_probes(struct xb_ibv_context *ctx, struct xb_devfacts *f)
{
	struct xb_ibv_xrcd_init_attr xattr;
	struct xb_ibv_qp_init_attr_ex qattr;
	struct xb_ibv_qp_open_attr oattr;
	struct xb_ibv_xrcd *xrcd;
	struct xb_ibv_qp *qp;
	int fd;

	f->open_xrcd_probe = f->create_qp_ex_probe = f->open_qp_probe = XB_PROBE_NOT_TRIED;
	fd = memfd_create("xrcbench-probe", MFD_CLOEXEC);
	if (fd < 0)
		return;
	memset(&xattr, 0, sizeof(xattr));
	xattr.comp_mask = XB_IBV_XRCD_INIT_ATTR_FD | XB_IBV_XRCD_INIT_ATTR_OFLAGS;
	xattr.fd = fd;
	xattr.oflags = O_CREAT;
	errno = 0;
	xrcd = vc_open_xrcd(ctx, &xattr);
	close(fd); /* the XRCD keeps its inode */
	f->open_xrcd_probe = xrcd ? 0 : failed_errno();
	if (!xrcd)
		return;

	memset(&oattr, 0, sizeof(oattr));
	oattr.comp_mask = XB_IBV_QP_OPEN_ATTR_NUM | XB_IBV_QP_OPEN_ATTR_XRCD | XB_IBV_QP_OPEN_ATTR_TYPE;
	oattr.qp_num = XB_PROBE_QPN;
	oattr.xrcd = xrcd;
	oattr.qp_type = XB_IBV_QPT_XRC_RECV;
	errno = 0;
	qp = vc_open_qp(ctx, &oattr);
	f->open_qp_probe = qp ? 0 : failed_errno();
	if (qp)
		ibv.destroy_qp(qp);

	memset(&qattr, 0, sizeof(qattr));
	qattr.qp_type = XB_IBV_QPT_XRC_RECV;
	qattr.comp_mask = XB_IBV_QP_INIT_ATTR_XRCD;
	qattr.xrcd = xrcd;
	errno = 0;
	qp = vc_create_qp_ex(ctx, &qattr);
	f->create_qp_ex_probe = qp ? 0 : failed_errno();
	if (qp)
		ibv.destroy_qp(qp);
	vc_close_xrcd(xrcd);
}

/* The probes create firmware objects, so each device is probed once per
 * process: every benchmark thread opens its own context on the same one. */
static struct {
	pthread_mutex_t lock;
	int n;
	struct probe_entry {
		char name[XB_IBV_NAME_MAX];
		uint64_t guid;
		int32_t open_xrcd, create_qp_ex, open_qp;
	} e[32];
} probe_cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void probe_caps(struct xb_ibv_context *ctx, struct xb_devfacts *f)
{
	struct probe_entry *hit = NULL;

	pthread_mutex_lock(&probe_cache.lock);
	for (int i = 0; i < probe_cache.n && !hit; i++)
		if (probe_cache.e[i].guid == f->node_guid && !strcmp(probe_cache.e[i].name, f->name))
			hit = &probe_cache.e[i];
	if (hit) {
		f->open_xrcd_probe = hit->open_xrcd;
		f->create_qp_ex_probe = hit->create_qp_ex;
		f->open_qp_probe = hit->open_qp;
	} else {
		run_probes(ctx, f);
		/* A probe that could not run (no memory, no memfd) is not
		 * an answer worth keeping. */
		if (f->open_xrcd_probe != XB_PROBE_NOT_TRIED && (size_t)probe_cache.n < sizeof(probe_cache.e) / sizeof(probe_cache.e[0])) {
			struct probe_entry *e = &probe_cache.e[probe_cache.n++];

			xb_copy_str(e->name, sizeof(e->name), f->name);
			e->guid = f->node_guid;
			e->open_xrcd = f->open_xrcd_probe;
			e->create_qp_ex = f->create_qp_ex_probe;
			e->open_qp = f->open_qp_probe;
		}
	}
	pthread_mutex_unlock(&probe_cache.lock);
	f->open_xrcd = f->open_xrcd_probe != XB_PROBE_NOT_TRIED && !unsupported(f->open_xrcd_probe);
	f->create_qp_ex = f->create_qp_ex_probe != XB_PROBE_NOT_TRIED && !unsupported(f->create_qp_ex_probe);
	f->open_qp = f->open_qp_probe != XB_PROBE_NOT_TRIED && !unsupported(f->open_qp_probe);
}

/* facts_query fills f from an open context. Returns 0 or an errno. */
static int facts_query(struct xb_ibv_context *ctx, struct xb_devfacts *f)
{
	struct xb_legacy_device_attr attr;
	int rc;

	memset(&attr, 0, sizeof(attr));
	errno = 0;
	rc = ibv.query_device(ctx, &attr);
	if (rc)
		return rc > 0 ? rc : failed_errno();
	xb_copy_str(f->fw_ver, sizeof(f->fw_ver), attr.fw_ver);
	f->node_guid = be64toh(attr.node_guid);
	f->vendor_id = attr.vendor_id;
	f->vendor_part_id = attr.vendor_part_id;
	f->hw_ver = attr.hw_ver;
	f->max_qp = attr.max_qp;
	f->device_cap_flags = (uint32_t)attr.device_cap_flags;
	f->phys_port_cnt = attr.phys_port_cnt;
	f->xrc = (f->device_cap_flags & XB_IBV_DEVICE_XRC) != 0;
	for (int p = 1; p <= f->phys_port_cnt && p <= XB_MAX_PORTS; p++) {
		struct xb_ibv_port_attr pa;

		memset(&pa, 0, sizeof(pa));
		if (vc_query_port(ctx, (uint8_t)p, &pa))
			continue;
		f->ports[p - 1] = (struct xb_portfacts){.queried = 1, .state = pa.state, .active_mtu = pa.active_mtu, .link_layer = pa.link_layer};
	}
	probe_caps(ctx, f);
	f->queried = 1;
	return 0;
}

/* open_one opens and queries dev; on success *ctx is open. */
static int open_one(struct xb_ibv_device *dev, struct xb_devfacts *f, struct xb_ibv_context **ctx, int *stage)
{
	int rc;

	facts_from_device(dev, f);
	errno = 0;
	*ctx = ibv.open_device(dev);
	if (!*ctx) {
		f->open_errno = failed_errno();
		*stage = XB_STAGE_OPEN;
		return f->open_errno;
	}
	rc = facts_query(*ctx, f);
	if (rc) {
		f->open_errno = rc;
		ibv.close_device(*ctx);
		*ctx = NULL;
		*stage = XB_STAGE_QUERY;
		return rc;
	}
	return 0;
}

/* The device-selection walk (devselect.c) over rdma-core's calls. */
static void **lib_get_device_list(int *num) { return (void **)ibv.get_device_list(num); }
static void lib_free_device_list(void **list) { ibv.free_device_list((struct xb_ibv_device **)list); }
static const char *lib_get_device_name(void *dev) { return ibv.get_device_name(dev); }
static int lib_close_device(void *ctx) { return ibv.close_device(ctx); }

static int lib_open_one(void *dev, struct xb_devfacts *f, void **ctx, int *stage)
{
	struct xb_ibv_context *c = NULL;
	int rc = open_one(dev, f, &c, stage);

	*ctx = c;
	return rc;
}

static const struct xb_devlib rdma_lib = {
	.get_device_list = lib_get_device_list,
	.free_device_list = lib_free_device_list,
	.get_device_name = lib_get_device_name,
	.close_device = lib_close_device,
	.open_one = lib_open_one,
	.no_xrc_errno = EOPNOTSUPP,
};

int xb_rdma_open(const char *name, int qp_state, int want_port, int want_gid, int allow_no_open_qp, void **devp,
		 struct xb_devfacts *facts, int *stage)
{
	struct rdma_dev *dev;
	void *ctx;
	int rc;

	memset(facts, 0, sizeof(*facts));
	if ((rc = xb_rdma_load(NULL, 0)) != 0) {
		*stage = XB_STAGE_NOSYM;
		return rc;
	}
	if ((rc = xb_select_device(&rdma_lib, name, &ctx, facts, stage)) != 0)
		return rc;
	/* A device named on purpose that lacks XRC still opens: the domain
	 * open is where the API says so (S11, ibv_open_xrcd -> EOPNOTSUPP),
	 * and DeviceInfo.XRC tells callers before they try. */
	/* A scratch domain that failed to open for another reason than a
	 * missing op (EIO: the double's device damaged) left the other probes
	 * untried: that failure is the answer, not a missing ibv_open_qp. */
	if (facts->xrc && facts->open_xrcd_probe != 0 && facts->open_xrcd_probe != XB_PROBE_NOT_TRIED &&
	    !unsupported(facts->open_xrcd_probe)) {
		ibv.close_device(ctx);
		facts->open_errno = facts->open_xrcd_probe;
		*stage = XB_STAGE_QUERY;
		return facts->open_xrcd_probe;
	}
	if (facts->xrc && (!facts->create_qp_ex || (!facts->open_qp && !allow_no_open_qp))) {
		/* qedr: XRC, but the probes found no ibv_open_qp, so nobody
		 * can register (unless asked for anyway: conform's S1). */
		ibv.close_device(ctx);
		*stage = XB_STAGE_NOOPENQP;
		return EOPNOTSUPP;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		ibv.close_device(ctx);
		return ENOMEM;
	}
	dev->ctx = ctx;
	dev->target = qp_state;
	xb_path_init(&dev->path, facts->phys_port_cnt, want_port, want_gid);
	/* RTR's needs are found now, not in the first timed modify: a port
	 * that is down or has no address fails the open, in one line; so
	 * does a port or GID asked for that the device does not have. */
	if (facts->xrc && ((qp_state == XB_QPS_RTR && (rc = prepare_path(dev, stage)) != 0) ||
			   (qp_state != XB_QPS_RTR && (rc = xb_path_choose(&rdma_pathlib, ctx, &dev->path, 0, stage)) != 0))) {
		xb_path_close(&rdma_pathlib, ctx, &dev->path);
		free(dev);
		return rc;
	}
	xb_path_facts(&dev->path, facts);
	*devp = dev;
	return 0;
}

int xb_rdma_list(struct xb_devfacts *facts, int max)
{
	int rc = xb_rdma_load(NULL, 0);

	if (rc)
		return -rc;
	return xb_list_devices(&rdma_lib, facts, max);
}

int xb_rdma_count(void)
{
	struct xb_ibv_device **list;
	int n = 0, rc = xb_rdma_load(NULL, 0);

	if (rc)
		return -rc;

	errno = 0;
	list = ibv.get_device_list(&n);
	if (!list)
		return -failed_errno();
	ibv.free_device_list(list);
	return n;
}

void xb_rdma_library(char *buf, size_t len)
{
	xb_ibv_lib_file(buf, len);
}
