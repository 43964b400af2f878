/*
 * sim_mlnx.c: the sim provider's legacy-mlnx semantics, the legacy calls
 * as MLNX_OFED 2.x-4.x implements them (legacy.c says how): a layer over
 * the upstream semantics of the sim device (every reg a counted handle,
 * as ibv_open_qp) with one table per process of the handles it opened,
 * keyed by QP number only. So a second reg of a number the process holds
 * is EEXIST (the new handle is dropped again), an unreg or modify through
 * any domain of the process acts on the one handle, and the process is the
 * registrant. Closing a device first unregisters what it holds, the order
 * legacy.c keeps on that library, where the library itself would leave the
 * handles behind.
 */
#include <errno.h>

#include "qpntable.h"
#include "sim.h"

/* QP number -> the struct sim_dom holding the process's handle. */
static struct xb_qpn_table handles = XB_QPN_TABLE_INIT;

static int mlnx_open_domain(void *dev, int fd, void **dom)
{
	int rc = sim_open_domain(dev, fd, SIM_UPSTREAM, (struct sim_dom **)dom);

	/* MLNX_OFED's ibv_open_xrcd answers ENOSYS for a driver without the
	 * op, where rdma-core's stub says EOPNOTSUPP (S11). */
	return rc == EOPNOTSUPP ? ENOSYS : rc;
}

static int mlnx_close_domain(void *dom) { return sim_close_domain(dom); }

/* keep stores the handle dom just opened, or drops it again: EEXIST. */
static int keep(struct sim_dom *dom, uint32_t qpn, uint32_t *flags)
{
	int rc = xb_qpn_put(&handles, qpn, dom);
	uint32_t f = 0;

	if (rc)
		sim_unreg(dom, qpn, &f);
	if (flags)
		*flags = 0; /* nothing was destroyed by this call */
	return rc;
}

static int mlnx_create(void *dom, uint32_t *qpn, uint32_t *flags)
{
	int rc = sim_create(dom, qpn, flags);

	return rc ? rc : keep(dom, *qpn, flags);
}

static int mlnx_reg(void *dom, uint32_t qpn, uint32_t *flags)
{
	int rc = sim_reg(dom, qpn, flags);

	return rc ? rc : keep(dom, qpn, flags);
}

static int mlnx_unreg(void *dom, uint32_t qpn, uint32_t *flags)
{
	struct sim_dom *holder = xb_qpn_take(&handles, qpn);

	(void)dom; /* the domain is not looked at */
	return holder ? sim_unreg(holder, qpn, flags) : EINVAL;
}

static int mlnx_modify(void *dom, uint32_t qpn, int state)
{
	struct sim_dom *holder = xb_qpn_get(&handles, qpn);

	(void)dom;
	return holder ? xb_sim_ops.modify(holder, qpn, state) : EINVAL;
}

static int held_by(void *val, void *dev)
{
	return sim_dom_dev(val) == dev;
}

static int mlnx_close_device(void *dev)
{
	struct sim_dom *holder;
	uint32_t qpn = 0, f = 0;

	while ((holder = xb_qpn_first(&handles, held_by, dev, &qpn)) != NULL) {
		xb_qpn_take(&handles, qpn);
		sim_unreg(holder, qpn, &f);
	}
	return sim_close(dev);
}

const struct xb_ops xb_sim_mlnx_ops = {
	.name = "sim",
	.open_domain = mlnx_open_domain,
	.close_domain = mlnx_close_domain,
	.create = mlnx_create,
	.reg = mlnx_reg,
	.unreg = mlnx_unreg,
	.modify = mlnx_modify,
	.close_device = mlnx_close_device,
};
