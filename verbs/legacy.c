/*
 * legacy.c: the legacy provider, the OFED XRC API
 * (ibv_open_xrc_domain, ibv_create_xrc_rcv_qp, ibv_reg_xrc_rcv_qp,
 * ibv_unreg_xrc_rcv_qp, ibv_close_xrc_domain).
 *
 * rdma-core removed these calls, so nothing here is linked: every symbol is
 * resolved with dlsym on the libibverbs.so.1 the process has loaded (or
 * loads now), and the provider is available only where all of them exist.
 * The layouts it relies on are in legacy_abi.h with the ABI assumption.
 *
 * One struct legacy_dev is one ibv_context, that is one uverbs file, which
 * is what the legacy kernel counts as a registrant.
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

#include "devselect.h"
#include "legacy.h"

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
};

static struct legacy_fns fns;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_err;          /* 0, or why the API is not usable */
static char load_why[256];    /* ... in words */
static int base_err;          /* 0 when the device calls resolved */

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
		SYM(reg_xrc_rcv_qp, 1),   SYM(unreg_xrc_rcv_qp, 1),
#undef SYM
	};

	/* The library the process already uses first (the rdma build links
	 * it; a test points LD_LIBRARY_PATH at the double), then load it. */
	fns.lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!fns.lib)
		fns.lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!fns.lib) {
		const char *e = dlerror();

		snprintf(load_why, sizeof(load_why), "libibverbs.so.1 cannot be loaded: %s", e ? e : "unknown error");
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
};

struct legacy_dom {
	struct legacy_dev *dev;
	struct legacy_dom *next;
	struct xb_legacy_xrc_domain *xd;
};

static void dom_unlink(struct legacy_dom *d)
{
	struct legacy_dom **p = &d->dev->doms;

	while (*p && *p != d)
		p = &(*p)->next;
	if (*p)
		*p = d->next;
}

/* The legacy calls return 0 or an errno; some OFED releases documented a
 * negative errno. Either way the caller gets a positive one. */
static int norm(int rc)
{
	return rc < 0 ? -rc : rc;
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
	return norm(fns.create_xrc_rcv_qp(&attr, qpn));
}

static int legacy_reg(void *domp, uint32_t qpn, uint32_t *flags)
{
	struct legacy_dom *d = domp;

	(void)flags;
	if (!d || !d->xd || qpn > XB_QPN_MAX)
		return EINVAL;
	return norm(fns.reg_xrc_rcv_qp(d->xd, qpn));
}

static int legacy_unreg(void *domp, uint32_t qpn, uint32_t *flags)
{
	struct legacy_dom *d = domp;

	(void)flags;
	if (!d || !d->xd || qpn > XB_QPN_MAX)
		return EINVAL;
	return norm(fns.unreg_xrc_rcv_qp(d->xd, qpn));
}

static int legacy_close_device(void *devp)
{
	struct legacy_dev *dev = devp;
	int rc;

	if (!dev)
		return EINVAL;
	/* Domains still open were given up by the caller: closing the
	 * context drops their registrations, as on process exit, so a
	 * close_xrc_domain that says EBUSY is not an error here. */
	while (dev->doms) {
		struct legacy_dom *d = dev->doms;

		dev->doms = d->next;
		fns.close_xrc_domain(d->xd);
		free(d);
	}
	rc = dev->ctx ? norm(fns.close_device(dev->ctx)) : 0;
	if (rc)
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

int xb_legacy_open(const char *name, void **devp, struct xb_devfacts *facts, int *stage)
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
	/* The version nodes OFED's libibverbs.map had; the XRC calls were in
	 * IBVERBS_1.1. A symbol bound at neither is named as found. */
	static const char *const syms[] = {
		"ibv_open_xrc_domain", "ibv_close_xrc_domain", "ibv_create_xrc_rcv_qp",
		"ibv_reg_xrc_rcv_qp", "ibv_unreg_xrc_rcv_qp",
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
