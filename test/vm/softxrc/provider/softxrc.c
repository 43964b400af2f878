// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsoftxrc: the libibverbs provider of the softxrc test device (a test
 * device, not a product). libibverbs opens a device only through a
 * provider; softxrc has no data path and no driver-private ABI, so each
 * verb here is a thin call of libibverbs' own ibv_cmd_* helpers, which
 * speak the kernel's generic uverbs commands.
 *
 * Built against the headers of the rdma-core source of the guest's own
 * version (its private ABI: verbs_register_driver_<PABI>, the layout of
 * verbs_context_ops), so the guest's libibverbs accepts it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <infiniband/verbs.h>

struct softxrc_device {
	struct verbs_device ibv_dev;
};

struct softxrc_context {
	struct verbs_context ibv_ctx;
};

static const struct verbs_match_ent hca_table[] = {
	/* No bus device and no driver id of its own: the name it is
	 * registered under is all there is to match. */
	VERBS_NAME_MATCH("softxrc", NULL),
	{},
};

static int softxrc_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
				   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int rc;

	rc = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp, &resp_size);
	if (rc)
		return rc;
	/* The kernel's encoding of fw_ver, as the device's sysfs fw_ver
	 * prints it: major << 32 | minor << 16 | subminor. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%04u",
		 (unsigned int)(fw >> 32) & 0xffff, (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int softxrc_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *softxrc_alloc_pd(struct ibv_context *context)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int softxrc_dealloc_pd(struct ibv_pd *pd)
{
	int rc = ibv_cmd_dealloc_pd(pd);

	if (rc)
		return rc;
	free(pd);
	return 0;
}

static struct ibv_cq *softxrc_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
					int comp_vector)
{
	struct ibv_create_cq cmd;
	struct ib_uverbs_create_cq_resp resp;
	struct ibv_cq *cq;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (ibv_cmd_create_cq(context, cqe, channel, comp_vector, cq, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(cq);
		return NULL;
	}
	return cq;
}

static int softxrc_destroy_cq(struct ibv_cq *cq)
{
	int rc = ibv_cmd_destroy_cq(cq);

	if (rc)
		return rc;
	free(cq);
	return 0;
}

static struct ibv_xrcd *softxrc_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct ibv_open_xrcd cmd;
	struct ib_uverbs_open_xrcd_resp resp;
	struct verbs_xrcd *xrcd;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	if (ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(xrcd);
		return NULL;
	}
	return &xrcd->xrcd;
}

static int softxrc_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int rc = ibv_cmd_close_xrcd(xrcd);

	if (rc)
		return rc;
	free(xrcd);
	return 0;
}

static struct ibv_qp *softxrc_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_create_qp cmd;
	struct ib_uverbs_create_qp_resp resp;
	struct verbs_qp *qp;

	/* The device makes XRC QPs only; the kernel would refuse the rest
	 * too, but a provider says so without a system call. */
	if (attr->qp_type != IBV_QPT_XRC_RECV && attr->qp_type != IBV_QPT_XRC_SEND) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	if (ibv_cmd_create_qp_ex(context, qp, attr, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(qp);
		return NULL;
	}
	return &qp->qp;
}

static struct ibv_qp *softxrc_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = softxrc_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

static struct ibv_qp *softxrc_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	struct ibv_open_qp cmd;
	struct ib_uverbs_create_qp_resp resp;
	struct verbs_qp *qp;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	if (ibv_cmd_open_qp(context, qp, sizeof(*qp), attr, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(qp);
		return NULL;
	}
	return &qp->qp;
}

static int softxrc_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd;

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

static int softxrc_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
}

static int softxrc_destroy_qp(struct ibv_qp *ibqp)
{
	struct verbs_qp *qp = container_of(ibqp, struct verbs_qp, qp);
	int rc = ibv_cmd_destroy_qp(ibqp);

	if (rc)
		return rc;
	free(qp);
	return 0;
}

static void softxrc_free_context(struct ibv_context *ibctx)
{
	struct softxrc_context *ctx = container_of(ibctx, struct softxrc_context, ibv_ctx.context);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/* Unset ops stay libibverbs' own refusals (EOPNOTSUPP): the data path. */
static const struct verbs_context_ops softxrc_ctx_ops = {
	.query_device_ex = softxrc_query_device_ex,
	.query_port = softxrc_query_port,
	.alloc_pd = softxrc_alloc_pd,
	.dealloc_pd = softxrc_dealloc_pd,
	.create_cq = softxrc_create_cq,
	.destroy_cq = softxrc_destroy_cq,
	.open_xrcd = softxrc_open_xrcd,
	.close_xrcd = softxrc_close_xrcd,
	.create_qp = softxrc_create_qp,
	.create_qp_ex = softxrc_create_qp_ex,
	.open_qp = softxrc_open_qp,
	.modify_qp = softxrc_modify_qp,
	.query_qp = softxrc_query_qp,
	.destroy_qp = softxrc_destroy_qp,
	.free_context = softxrc_free_context,
};

static struct verbs_context *softxrc_alloc_context(struct ibv_device *ibdev, int cmd_fd, void *private_data)
{
	struct softxrc_context *ctx;
	struct ibv_get_context cmd;
	struct ib_uverbs_get_context_resp resp;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx, RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		return NULL;
	}
	verbs_set_ops(&ctx->ibv_ctx, &softxrc_ctx_ops);
	return &ctx->ibv_ctx;
}

static struct verbs_device *softxrc_device_alloc(struct verbs_sysfs_dev *sysfs_dev)
{
	struct softxrc_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void softxrc_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct softxrc_device, ibv_dev));
}

static const struct verbs_device_ops softxrc_dev_ops = {
	.name = "softxrc",
	/* The module's uverbs_abi_ver. */
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = hca_table,
	.alloc_device = softxrc_device_alloc,
	.uninit_device = softxrc_uninit_device,
	.alloc_context = softxrc_alloc_context,
};
PROVIDER_DRIVER(softxrc, softxrc_dev_ops);
