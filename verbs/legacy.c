/*
 * legacy.c: the legacy provider, the OFED XRC API
 * (ibv_open_xrc_domain, ibv_create_xrc_rcv_qp, ibv_reg_xrc_rcv_qp,
 * ibv_unreg_xrc_rcv_qp, ibv_close_xrc_domain), and ibv_modify_xrc_rcv_qp to
 * move a receive QP to INIT and RTR (--qp-state).
 *
 * Why ibv_modify_xrc_rcv_qp and not ibv_modify_qp: the legacy API hands
 * out a receive QP's number only, never a struct ibv_qp, so there is
 * nothing to pass to ibv_modify_qp; OFED's own header documents
 * ibv_modify_xrc_rcv_qp(domain, qp number, attr, mask) with the masks the
 * kernel's state table requires (RESET->INIT: state, pkey index, port,
 * access flags; INIT->RTR: state, AV, path MTU, destination QP, RQ PSN,
 * responder resources, RNR timer), the same as for an upstream XRC_TGT QP.
 * RTR's destination is a local XRC send QP (legacy type IBV_QPT_XRC, made
 * with ibv_create_qp in the same domain, as Open MPI's XOOB made them).
 *
 * rdma-core does not have these calls, so nothing here is linked: every symbol is
 * resolved with dlsym on the libibverbs.so.1 handle ibvload.c loads once
 * for both providers, and the provider is available only where all of them exist.
 * The layouts it relies on are in legacy_abi.h with the ABI assumption.
 *
 * Two libraries implement these calls (legacy_abi.h), and they differ in
 * who the registrant is. OFED 1.x passes them to the kernel through the
 * driver's ibv_more_ops: a registration is the kernel's and belongs to
 * the uverbs file, so one struct legacy_dev (one ibv_context) is one
 * registrant. MLNX_OFED 2.x-4.x implements them over the upstream calls
 * (ibv_open_xrcd, ibv_create_qp_ex, ibv_open_qp, ibv_destroy_qp) and keeps
 * every QP it opened in one table per process keyed by QP number alone:
 * a reg of a number the process holds fails EEXIST whatever the domain or
 * context, an unreg through any domain destroys the process's one handle,
 * and ibv_close_device leaves the table's handles of that context behind
 * (a later unreg of one touches freed memory). There the process is the
 * registrant, and this file keeps its own copy of the table (held) so
 * that closing a device unregisters what it holds first.
 * Which library is loaded is decided once per process by xb_legacy_flavor.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devselect.h"
#include "ibvload.h"
#include "legacy.h"
#include "rtrpath.h"
#include "qpntable.h"

struct legacy_fns {
	void *lib;
	void **(*get_device_list)(int *num);
	void (*free_device_list)(void **list);
	const char *(*get_device_name)(void *dev);
	void *(*open_device)(void *dev);
	int (*close_device)(void *ctx);
	int (*query_device)(void *ctx, struct xb_legacy_device_attr *attr);
	/* the legacy XRC API */
	struct xb_legacy_xrc_domain *(*open_xrc_domain)(void *ctx, int fd, int oflag);
	int (*close_xrc_domain)(struct xb_legacy_xrc_domain *d);
	int (*create_xrc_rcv_qp)(struct xb_legacy_qp_init_attr *attr, uint32_t *qpn);
	int (*reg_xrc_rcv_qp)(struct xb_legacy_xrc_domain *d, uint32_t qpn);
	int (*unreg_xrc_rcv_qp)(struct xb_legacy_xrc_domain *d, uint32_t qpn);
	int (*modify_xrc_rcv_qp)(struct xb_legacy_xrc_domain *d, uint32_t qpn, struct xb_legacy_qp_attr *a, int mask);
	/* what INIT and RTR need; every libibverbs exports them */
	int (*query_port)(void *ctx, uint8_t port, struct xb_legacy_port_attr *a);
	int (*query_gid)(void *ctx, uint8_t port, int index, union xb_legacy_gid *gid);
	void *(*alloc_pd)(void *ctx);
	int (*dealloc_pd)(void *pd);
	void *(*create_cq)(void *ctx, int cqe, void *cq_context, void *channel, int vector);
	int (*destroy_cq)(void *cq);
	struct xb_legacy_qp *(*create_qp)(void *pd, struct xb_legacy_qp_init_attr *attr);
	int (*destroy_qp)(struct xb_legacy_qp *qp);
};

static struct legacy_fns fns;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_err;          /* 0, or why the API is not usable */
static char load_why[256];    /* ... in words */
static int base_err;          /* 0 when the device calls resolved */
static int compat_exports;    /* the upstream command calls MLNX_OFED's layer is built on */

static void load(void)
{
	static const struct {
		const char *name;
		size_t off;
		int xrc; /* part of the legacy XRC API, not of every libibverbs */
	} syms[] = {
#define SYM(f, x) { "ibv_" #f, offsetof(struct legacy_fns, f), x }
		SYM(get_device_list, 0),  SYM(free_device_list, 0), SYM(get_device_name, 0),
		SYM(open_device, 0),      SYM(close_device, 0),     SYM(query_device, 0),
		SYM(open_xrc_domain, 1),  SYM(close_xrc_domain, 1), SYM(create_xrc_rcv_qp, 1),
		SYM(reg_xrc_rcv_qp, 1),   SYM(unreg_xrc_rcv_qp, 1), SYM(modify_xrc_rcv_qp, 1),
		SYM(query_port, 0),       SYM(query_gid, 0),        SYM(alloc_pd, 0),
		SYM(dealloc_pd, 0),       SYM(create_cq, 0),        SYM(destroy_cq, 0),
		SYM(create_qp, 0),        SYM(destroy_qp, 0),
#undef SYM
	};

	/* The one handle the rdma provider uses too (ibvload.h). */
	fns.lib = xb_ibv_lib(load_why, sizeof(load_why));
	if (!fns.lib) {
		load_err = base_err = ENOENT;
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(fns.lib, syms[i].name);

		memcpy((char *)&fns + syms[i].off, &p, sizeof(p));
		if (p || load_err)
			continue;
		load_err = ENOSYS;
		if (!syms[i].xrc)
			base_err = ENOSYS;
		Dl_info info;
		const char *file = "libibverbs.so.1";

		if (dladdr(fns.get_device_list ? (void *)fns.get_device_list : NULL, &info) && info.dli_fname)
			file = info.dli_fname;
		snprintf(load_why, sizeof(load_why),
			 "%s does not export %s: it is rdma-core, which removed the legacy XRC API; use --provider rdma",
			 file, syms[i].name);
	}
	/* MLNX_OFED's libibverbs.map exports the command calls its providers
	 * implement open_xrcd and open_qp with at IBVERBS_1.1; OFED 1.x
	 * predates them, and rdma-core has them only at IBVERBS_PRIVATE_n. */
	compat_exports = dlvsym(fns.lib, "ibv_cmd_open_xrcd", "IBVERBS_1.1") &&
			 dlvsym(fns.lib, "ibv_cmd_open_qp", "IBVERBS_1.1");
}

int xb_legacy_probe(char *why, size_t len)
{
	pthread_once(&load_once, load);
	if (why && len)
		snprintf(why, len, "%s", load_why);
	return load_err;
}

struct legacy_dom;

struct legacy_dev {
	void *ctx; /* struct ibv_context * */
	struct legacy_dom *doms; /* open domains, to release on close */
	int target;              /* the QP state XB_QPS_TARGET means */
	/* what INIT and RTR need (rtrpath.h); the PD and CQ for the
	 * domains' send QPs are made with the first one */
	struct xb_path path;
};

struct legacy_dom {
	struct legacy_dev *dev;
	struct legacy_dom *next;
	struct xb_legacy_xrc_domain *xd;
	struct xb_legacy_qp *ini; /* the send QP RTR points at, one per domain */
};

static void dom_unlink(struct legacy_dom *d)
{
	struct legacy_dom **p = &d->dev->doms;

	while (*p && *p != d)
		p = &(*p)->next;
	if (*p)
		*p = d->next;
}

static int make_ini(struct legacy_dom *d);
static int ini_release(struct legacy_dom *d);

/* The legacy calls return 0 or an errno; some OFED releases documented a
 * negative errno. Either way the caller gets a positive one. */
static int norm(int rc)
{
	return rc < 0 ? -rc : rc;
}

static int flavor_now(void);

/*
 * held: on MLNX_OFED, which QP numbers this process holds and through which
 * domain (struct legacy_dom *), mirroring the library's own table. It
 * exists for one reason: the library forgets nothing when a context
 * closes, so legacy_close_device must unregister what its device still
 * holds before it closes the context, or the table keeps handles into
 * freed memory.
 */
static struct xb_qpn_table held = XB_QPN_TABLE_INIT;

/* mlnx_hold records that d now holds qpn. An ENOMEM leaves the library's
 * handle unrecorded, so the caller undoes it. */
static int mlnx_hold(struct legacy_dom *d, uint32_t qpn)
{
	int rc = xb_qpn_put(&held, qpn, d);

	return rc == EEXIST ? 0 : rc; /* the library answered EEXIST for that */
}

static int held_by_dev(void *val, void *dev)
{
	return ((struct legacy_dom *)val)->dev == dev;
}

/* mlnx_release_dev unregisters every QP dev's domains hold, before its
 * context closes: the order MLNX_OFED needs. 0 or the first errno. */
static int mlnx_release_dev(struct legacy_dev *dev)
{
	struct legacy_dom *d;
	uint32_t qpn = 0;
	int first = 0;

	while ((d = xb_qpn_first(&held, held_by_dev, dev, &qpn)) != NULL) {
		int rc = norm(fns.unreg_xrc_rcv_qp(d->xd, qpn));

		if (rc && !first)
			first = rc;
		xb_qpn_take(&held, qpn); /* gone from the library's table either way */
	}
	return first;
}

static int legacy_open_domain(void *devp, int fd, void **domp)
{
	struct legacy_dev *dev = devp;
	struct legacy_dom *d;

	if (!dev || !dev->ctx || fd < 0 || !domp)
		return EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return ENOMEM;
	errno = 0;
	d->xd = fns.open_xrc_domain(dev->ctx, fd, O_CREAT);
	if (!d->xd) {
		/* OFED returns NULL without touching errno when the driver
		 * has no XRC (no more_ops): that is S11, ENOSYS. */
		int rc = errno > 0 ? errno : ENOSYS;

		free(d);
		return rc;
	}
	d->dev = dev;
	/* RTR's destination is made now, not in the first timed modify. */
	if (dev->target == XB_QPS_RTR) {
		int rc = make_ini(d);

		if (rc) {
			fns.close_xrc_domain(d->xd);
			free(d);
			return rc;
		}
	}
	d->next = dev->doms;
	dev->doms = d;
	*domp = d;
	return 0;
}

static int legacy_close_domain(void *domp)
{
	struct legacy_dom *d = domp;
	int rc;

	if (!d || !d->xd)
		return EINVAL;
	if ((rc = ini_release(d)) != 0)
		return rc;
	rc = norm(fns.close_xrc_domain(d->xd)); /* EBUSY while registered (S9) */
	if (rc)
		return rc;
	dom_unlink(d);
	free(d);
	return 0;
}

static int legacy_create(void *domp, uint32_t *qpn, uint32_t *flags)
{
	struct legacy_dom *d = domp;
	struct xb_legacy_qp_init_attr attr;

	(void)flags;
	if (!d || !d->xd || !qpn)
		return EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.qp_type = XB_LEGACY_QPT_XRC;
	attr.xrc_domain = d->xd;
	int rc = norm(fns.create_xrc_rcv_qp(&attr, qpn));

	if (rc == 0 && flavor_now() == XB_LEGACY_MLNX_COMPAT && (rc = mlnx_hold(d, *qpn)) != 0)
		fns.unreg_xrc_rcv_qp(d->xd, *qpn);
	return rc;
}

static int legacy_reg(void *domp, uint32_t qpn, uint32_t *flags)
{
	struct legacy_dom *d = domp;

	(void)flags;
	if (!d || !d->xd || qpn > XB_QPN_MAX)
		return EINVAL;
	int rc = norm(fns.reg_xrc_rcv_qp(d->xd, qpn));

	/* EEXIST on MLNX_OFED: the process holds qpn already, and the
	 * library destroyed the handle it had just opened. */
	if (rc == 0 && flavor_now() == XB_LEGACY_MLNX_COMPAT && (rc = mlnx_hold(d, qpn)) != 0)
		fns.unreg_xrc_rcv_qp(d->xd, qpn);
	return rc;
}

static int legacy_unreg(void *domp, uint32_t qpn, uint32_t *flags)
{
	struct legacy_dom *d = domp;

	(void)flags;
	if (!d || !d->xd || qpn > XB_QPN_MAX)
		return EINVAL;
	int rc = norm(fns.unreg_xrc_rcv_qp(d->xd, qpn));

	/* On MLNX_OFED through any domain: the process's one handle went. */
	if (rc == 0 && flavor_now() == XB_LEGACY_MLNX_COMPAT)
		xb_qpn_take(&held, qpn);
	return rc;
}

_Static_assert(XB_QP_STATE == XB_LEGACY_QP_STATE && XB_QP_ACCESS_FLAGS == XB_LEGACY_QP_ACCESS_FLAGS &&
		       XB_QP_PKEY_INDEX == XB_LEGACY_QP_PKEY_INDEX && XB_QP_PORT == XB_LEGACY_QP_PORT &&
		       XB_QP_AV == XB_LEGACY_QP_AV && XB_QP_PATH_MTU == XB_LEGACY_QP_PATH_MTU &&
		       XB_QP_RQ_PSN == XB_LEGACY_QP_RQ_PSN && XB_QP_MIN_RNR_TIMER == XB_LEGACY_QP_MIN_RNR_TIMER &&
		       XB_QP_MAX_DEST_RD_ATOMIC == XB_LEGACY_QP_MAX_DEST_RD_ATOMIC &&
		       XB_QP_DEST_QPN == XB_LEGACY_QP_DEST_QPN && XB_ACCESS_REMOTE_WRITE == XB_LEGACY_ACCESS_REMOTE_WRITE &&
		       XB_ACCESS_REMOTE_READ == XB_LEGACY_ACCESS_REMOTE_READ && XB_PORT_ACTIVE == XB_LEGACY_PORT_ACTIVE &&
		       XB_LINK_LAYER_ETHERNET == XB_LEGACY_LINK_LAYER_ETHERNET,
	       "rtrpath.h's values are legacy_abi.h's");

/* The path's calls (rtrpath.h) through the resolved symbols. */
static int path_query_port(void *ctx, uint8_t port, struct xb_port_answer *a)
{
	struct xb_legacy_port_attr pa;
	int rc;

	memset(&pa, 0, sizeof(pa));
	if ((rc = norm(fns.query_port(ctx, port, &pa))) != 0)
		return rc;
	*a = (struct xb_port_answer){.state = pa.state, .active_mtu = pa.active_mtu, .link_layer = pa.link_layer,
				     .gid_tbl_len = pa.gid_tbl_len, .lid = pa.lid};
	return 0;
}

/* OFED 1.x and MLNX_OFED's libibverbs have no call that says a GID's type
 * (rdma-core's ibv_query_gid_ex came later), so it is read where the
 * kernel publishes it, as rdma-core's ibv_query_gid_type does: sysfs
 * <ibdev_path>/ports/<port>/gid_attrs/types/<index>. A kernel without
 * that file (before 4.5, RoCE v1 only) leaves the type unknown. */
static int gid_type_of(void *ctx, uint8_t port, int index)
{
	/* struct ibv_context starts with its struct ibv_device * in both APIs */
	const struct xb_legacy_device *dev = *(const struct xb_legacy_device *const *)ctx;
	char path[XB_IBV_PATH_MAX + 64], buf[32] = "";
	FILE *f;

	if (!dev)
		return XB_GID_TYPE_UNKNOWN;
	snprintf(path, sizeof(path), "%s/ports/%u/gid_attrs/types/%d", dev->ibdev_path, (unsigned)port, index);
	if (!(f = fopen(path, "re")))
		return XB_GID_TYPE_UNKNOWN;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (!strncmp(buf, "RoCE v2", 7))
		return XB_GID_TYPE_ROCE_V2;
	if (!strncmp(buf, "IB/RoCE v1", 10))
		return XB_GID_TYPE_ROCE_V1;
	return XB_GID_TYPE_UNKNOWN;
}

static int path_query_gid(void *ctx, uint8_t port, int index, uint8_t gid[16], int *type)
{
	union xb_legacy_gid g;
	struct xb_legacy_port_attr pa;
	int rc;

	if ((rc = norm(fns.query_gid(ctx, port, index, &g))) != 0)
		return rc;
	memcpy(gid, g.raw, 16);
	memset(&pa, 0, sizeof(pa));
	*type = XB_GID_TYPE_UNKNOWN;
	if (norm(fns.query_port(ctx, port, &pa)) == 0)
		*type = pa.link_layer == XB_LEGACY_LINK_LAYER_ETHERNET ? gid_type_of(ctx, port, index) : XB_GID_TYPE_IB;
	return 0;
}

static void *path_alloc_pd(void *ctx) { return fns.alloc_pd(ctx); }
static int path_dealloc_pd(void *pd) { return norm(fns.dealloc_pd(pd)); }
static void *path_create_cq(void *ctx) { return fns.create_cq(ctx, 1, NULL, NULL, 0); }
static int path_destroy_cq(void *cq) { return norm(fns.destroy_cq(cq)); }
static int path_destroy_qp(void *qp) { return norm(fns.destroy_qp(qp)); }
static int path_close_device(void *ctx) { return norm(fns.close_device(ctx)); }

static const struct xb_pathlib legacy_pathlib = {
	.query_port = path_query_port,
	.query_gid = path_query_gid,
	.alloc_pd = path_alloc_pd,
	.dealloc_pd = path_dealloc_pd,
	.create_cq = path_create_cq,
	.destroy_cq = path_destroy_cq,
	.destroy_qp = path_destroy_qp,
	.close_device = path_close_device,
};

/* make_ini makes the domain's send QP, and the device's PD and CQ with the
 * first one. */
static int make_ini(struct legacy_dom *d)
{
	struct legacy_dev *dev = d->dev;
	struct xb_legacy_qp_init_attr qa;

	int rc;

	if (d->ini)
		return 0;
	if ((rc = xb_path_objects(&legacy_pathlib, dev->ctx, &dev->path)) != 0)
		return rc;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = dev->path.cq;
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.qp_type = XB_LEGACY_QPT_XRC;
	qa.xrc_domain = d->xd;
	errno = 0;
	if (!(d->ini = fns.create_qp(dev->path.pd, &qa)))
		return errno > 0 ? errno : EINVAL;
	return 0;
}

/* modify_one makes one transition with the attributes rtrpath.c chooses
 * (xb_path_move), through ibv_modify_xrc_rcv_qp. */
static int modify_one(struct legacy_dom *d, uint32_t qpn, int state)
{
	struct legacy_dev *dev = d->dev;
	struct xb_legacy_qp_attr a;
	int rc, stage, mask;

	if (state == XB_QPS_RTR && ((rc = xb_path_choose(&legacy_pathlib, dev->ctx, &dev->path, 1, &stage)) != 0 ||
				    (rc = make_ini(d)) != 0))
		return rc;
	if ((rc = xb_path_move(&legacy_pathlib, dev->ctx, &dev->path, state, d->ini ? d->ini->qp_num : 0, &a, &mask)) != 0)
		return rc;
	return norm(fns.modify_xrc_rcv_qp(d->xd, qpn, &a, mask));
}

static int legacy_modify(void *domp, uint32_t qpn, int state)
{
	struct legacy_dom *d = domp;
	int rc = 0;

	if (!d || !d->xd || qpn > XB_QPN_MAX)
		return EINVAL;
	if (state != XB_QPS_TARGET)
		return modify_one(d, qpn, state);
	for (int st = XB_QPS_INIT; st <= d->dev->target && rc == 0; st++)
		rc = modify_one(d, qpn, st);
	return rc;
}

/* ini_release destroys a domain's send QP; 0 or an errno. */
static int ini_release(struct legacy_dom *d)
{
	int rc;

	if (d->ini && (rc = norm(fns.destroy_qp(d->ini))) != 0)
		return rc;
	d->ini = NULL;
	return 0;
}

static int legacy_close_device(void *devp)
{
	struct legacy_dev *dev = devp;
	int rc;

	if (!dev)
		return EINVAL;
	/* MLNX_OFED drops nothing from its table when the context closes:
	 * what this device holds is unregistered first, while the context
	 * its handles live in is still open. A failure leaves the device
	 * open, to be tried again. */
	if (flavor_now() == XB_LEGACY_MLNX_COMPAT && (rc = mlnx_release_dev(dev)) != 0)
		return rc;
	/* Domains still open were given up by the caller: closing the
	 * context drops their registrations, as on process exit, so a
	 * close_xrc_domain that says EBUSY is not an error here. */
	while (dev->doms) {
		struct legacy_dom *d = dev->doms;

		dev->doms = d->next;
		ini_release(d);
		fns.close_xrc_domain(d->xd);
		free(d);
	}
	if ((rc = xb_path_close(&legacy_pathlib, dev->ctx, &dev->path)) != 0)
		return rc;
	free(dev);
	return 0;
}

const struct xb_ops xb_legacy_ops = {
	.name = "legacy",
	.open_domain = legacy_open_domain,
	.close_domain = legacy_close_domain,
	.create = legacy_create,
	.reg = legacy_reg,
	.unreg = legacy_unreg,
	.modify = legacy_modify,
	.close_device = legacy_close_device,
};

static int open_one(void *devp, struct xb_devfacts *f, void **ctx, int *stage)
{
	const struct xb_legacy_device *dev = devp;
	struct xb_legacy_device_attr attr;
	int rc;

	memset(f, 0, sizeof(*f));
	xb_copy_str(f->name, sizeof(f->name), fns.get_device_name(devp));
	xb_copy_str(f->dev_name, sizeof(f->dev_name), dev->dev_name);
	xb_copy_str(f->ibdev_path, sizeof(f->ibdev_path), dev->ibdev_path);
	f->node_type = dev->node_type;
	f->transport_type = dev->transport_type;
	f->legacy_api = load_err == 0;
	errno = 0;
	*ctx = fns.open_device(devp);
	if (!*ctx) {
		f->open_errno = errno > 0 ? errno : EIO;
		*stage = XB_STAGE_OPEN;
		return f->open_errno;
	}
	memset(&attr, 0, sizeof(attr));
	rc = norm(fns.query_device(*ctx, &attr));
	if (rc) {
		f->open_errno = rc;
		fns.close_device(*ctx);
		*ctx = NULL;
		*stage = XB_STAGE_QUERY;
		return rc;
	}
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
		struct xb_legacy_port_attr pa;

		memset(&pa, 0, sizeof(pa));
		if (norm(fns.query_port(*ctx, (uint8_t)p, &pa)))
			continue;
		f->ports[p - 1] = (struct xb_portfacts){.queried = 1, .state = pa.state, .active_mtu = pa.active_mtu, .link_layer = pa.link_layer};
	}
	f->queried = 1;
	return 0;
}

/* The device-selection walk (devselect.c) over the resolved calls. */
static void **lib_get_device_list(int *num) { return fns.get_device_list(num); }
static void lib_free_device_list(void **list) { fns.free_device_list(list); }
static const char *lib_get_device_name(void *dev) { return fns.get_device_name(dev); }
static int lib_close_device(void *ctx) { return norm(fns.close_device(ctx)); }

static const struct xb_devlib legacy_lib = {
	.get_device_list = lib_get_device_list,
	.free_device_list = lib_free_device_list,
	.get_device_name = lib_get_device_name,
	.close_device = lib_close_device,
	.open_one = open_one,
	.no_xrc_errno = ENOSYS,
};

int xb_legacy_decide(int exports, int probe_rc, char *why, size_t len)
{
	static const char upstream[] = "ibv_cmd_open_xrcd and ibv_cmd_open_qp at IBVERBS_1.1";

	if (probe_rc < 0) {
		/* No device with XRC to probe: the exports alone. */
		snprintf(why, len, "no device with XRC to probe; the library %s %s", exports ? "exports" : "does not export",
			 upstream);
		return exports ? XB_LEGACY_MLNX_COMPAT : XB_LEGACY_OFED1;
	}
	if (probe_rc == EEXIST && exports) {
		snprintf(why, len,
			 "a reg of a QP the same context created failed EEXIST (the process already holds it) and the "
			 "library exports %s: MLNX_OFED's compatibility layer",
			 upstream);
		return XB_LEGACY_MLNX_COMPAT;
	}
	if (probe_rc == 0 && !exports) {
		snprintf(why, len,
			 "a reg of a QP the same context created succeeded (the kernel's registration is per context and "
			 "idempotent) and the library does not export %s: OFED 1.x",
			 upstream);
		return XB_LEGACY_OFED1;
	}
	if (probe_rc == EEXIST)
		snprintf(why, len,
			 "a reg of a QP the same context created failed EEXIST, as MLNX_OFED's compatibility layer "
			 "answers, but the library does not export %s, which that layer is built on",
			 upstream);
	else if (probe_rc == 0)
		snprintf(why, len,
			 "a reg of a QP the same context created succeeded, as OFED 1.x answers, but the library exports "
			 "%s, as MLNX_OFED's does",
			 upstream);
	else
		snprintf(why, len,
			 "a reg of a QP the same context created failed with errno %d (%s), which neither OFED 1.x nor "
			 "MLNX_OFED answers",
			 probe_rc, strerror(probe_rc));
	return XB_LEGACY_UNKNOWN;
}

/* probe_second_reg creates a scratch QP in a scratch domain of ctx, regs
 * it from the same context (the creator is registered already: S1) and
 * releases both; it returns what the reg answered, or -1 with why in
 * note when no scratch QP could be made. */
static int probe_second_reg(void *ctx, char *note, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char path[512];
	struct xb_legacy_qp_init_attr attr;
	struct xb_legacy_xrc_domain *d;
	uint32_t qpn = 0;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/xrcbench-flavor-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(path)) < 0) {
		snprintf(note, len, "no scratch domain file in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return -1;
	}
	unlink(path); /* an inode no other domain names */
	errno = 0;
	d = fns.open_xrc_domain(ctx, fd, O_CREAT);
	rc = errno;
	close(fd);
	if (!d) {
		snprintf(note, len, "the scratch domain did not open (errno %d)", rc);
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_type = XB_LEGACY_QPT_XRC;
	attr.xrc_domain = d;
	if ((rc = norm(fns.create_xrc_rcv_qp(&attr, &qpn))) != 0) {
		fns.close_xrc_domain(d);
		snprintf(note, len, "the scratch QP was not created (errno %d)", rc);
		return -1;
	}
	rc = norm(fns.reg_xrc_rcv_qp(d, qpn));
	/* One unreg releases the QP in both libraries: OFED 1.x's second reg
	 * added nothing (S3), MLNX_OFED's opened nothing. */
	fns.unreg_xrc_rcv_qp(d, qpn);
	fns.close_xrc_domain(d);
	return rc;
}

static pthread_once_t flavor_once = PTHREAD_ONCE_INIT;
static int flavor;
static char flavor_why[512];

static void decide_flavor(void)
{
	struct xb_devfacts f;
	char note[256] = "";
	void *ctx = NULL;
	int stage = 0, probe = -1;

	pthread_once(&load_once, load);
	if (load_err) {
		snprintf(flavor_why, sizeof(flavor_why), "%s", load_why);
		return;
	}
	if (xb_select_device(&legacy_lib, NULL, &ctx, &f, &stage) == 0) {
		probe = probe_second_reg(ctx, note, sizeof(note));
		fns.close_device(ctx);
	}
	flavor = xb_legacy_decide(compat_exports, probe, flavor_why, sizeof(flavor_why));
	if (probe < 0 && note[0]) {
		size_t n = strlen(flavor_why);

		snprintf(flavor_why + n, sizeof(flavor_why) - n, " (%s)", note);
	}
}

static int flavor_now(void)
{
	pthread_once(&flavor_once, decide_flavor);
	return flavor;
}

int xb_legacy_flavor(char *why, size_t len)
{
	int fl = flavor_now();

	if (why && len)
		snprintf(why, len, "%s", flavor_why);
	return fl;
}

int xb_legacy_open(const char *name, int qp_state, int want_port, int want_gid, void **devp,
		   struct xb_devfacts *facts, int *stage)
{
	struct legacy_dev *dev;
	void *ctx;
	int rc;

	*stage = XB_STAGE_OK;
	memset(facts, 0, sizeof(*facts));
	pthread_once(&load_once, load);
	if (load_err) {
		*stage = XB_STAGE_NOSYM;
		return load_err;
	}
	flavor_now(); /* the probe runs before this device is used */
	/* A named device without XRC opens; its domain open fails with
	 * ENOSYS, which is S11 in the legacy API. */
	if ((rc = xb_select_device(&legacy_lib, name, &ctx, facts, stage)) != 0)
		return rc;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		fns.close_device(ctx);
		return ENOMEM;
	}
	dev->ctx = ctx;
	dev->target = qp_state;
	xb_path_init(&dev->path, facts->phys_port_cnt, want_port, want_gid);
	/* As xb_rdma_open: what RTR needs, and the port and GID asked for,
	 * are checked now, not in the first timed modify. */
	if (facts->xrc && (rc = xb_path_choose(&legacy_pathlib, ctx, &dev->path, qp_state == XB_QPS_RTR, stage)) != 0) {
		fns.close_device(ctx);
		free(dev);
		return rc;
	}
	xb_path_facts(&dev->path, facts);
	*devp = dev;
	return 0;
}

int xb_legacy_list(struct xb_devfacts *facts, int max)
{
	pthread_once(&load_once, load);
	if (base_err)
		return -base_err;
	return xb_list_devices(&legacy_lib, facts, max);
}

void xb_legacy_library(char *buf, size_t len)
{
	Dl_info info;

	buf[0] = '\0';
	pthread_once(&load_once, load);
	if (fns.get_device_list && dladdr((void *)fns.get_device_list, &info) && info.dli_fname)
		xb_copy_str(buf, len, info.dli_fname);
}

void xb_legacy_symvers(char *buf, size_t len)
{
	/* The version nodes OFED's and MLNX_OFED's libibverbs.map have; the
	 * XRC calls are in IBVERBS_1.1 in both. A symbol bound at neither is
	 * named as found. */
	static const char *const syms[] = {
		"ibv_open_xrc_domain", "ibv_close_xrc_domain", "ibv_create_xrc_rcv_qp", "ibv_reg_xrc_rcv_qp",
		"ibv_unreg_xrc_rcv_qp", "ibv_modify_xrc_rcv_qp",
		/* what MLNX_OFED's compatibility layer is built on */
		"ibv_cmd_open_xrcd", "ibv_cmd_open_qp",
	};
	static const char *const vers[] = {"IBVERBS_1.1", "IBVERBS_1.0"};
	size_t used = 0;

	buf[0] = '\0';
	pthread_once(&load_once, load);
	if (!fns.lib)
		return;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(fns.lib, syms[i]);
		const char *ver = "(another version, or none)";
		int n;

		if (!p)
			continue;
		for (size_t v = 0; v < sizeof(vers) / sizeof(vers[0]); v++)
			if (dlvsym(fns.lib, syms[i], vers[v]) == p) {
				ver = vers[v];
				break;
			}
		n = snprintf(buf + used, len - used, "%s%s@%s", used ? " " : "", syms[i], ver);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}
