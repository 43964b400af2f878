/* rtrpath.c: see rtrpath.h. */
#include <errno.h>
#include <string.h>

#include "rdma_facts.h"
#include "rtrpath.h"
#include "xb.h"

void xb_path_init(struct xb_path *p, int nports, int want_port, int want_gid)
{
	memset(p, 0, sizeof(*p));
	p->nports = nports > 0 ? nports : 1;
	p->want_port = want_port > 0 ? want_port : 0;
	p->want_gid = want_gid >= 0 ? want_gid : -1;
	p->gid_index = -1;
	p->gid_type = XB_GID_TYPE_UNKNOWN;
}

static void take_port(struct xb_path *p, int port, const struct xb_port_answer *a)
{
	p->port = (uint8_t)port;
	p->active = a->state == XB_PORT_ACTIVE;
	p->mtu = a->active_mtu;
	p->lid = a->lid;
	p->ethernet = a->link_layer == XB_LINK_LAYER_ETHERNET;
	p->is_global = p->ethernet;
}

/* find_port: the port asked for, else the first ACTIVE one, else port 1. */
static int find_port(const struct xb_pathlib *lib, void *ctx, struct xb_path *p, int *stage)
{
	struct xb_port_answer a;
	int rc;

	*stage = XB_STAGE_BADPORT;
	if (p->want_port && p->want_port > p->nports)
		return EINVAL;
	*stage = XB_STAGE_PORT;
	for (int port = p->want_port ? p->want_port : 1; port <= p->nports; port++) {
		memset(&a, 0, sizeof(a));
		errno = 0;
		if ((rc = lib->query_port(ctx, (uint8_t)port, &a)) != 0)
			return rc;
		if (p->want_port || a.state == XB_PORT_ACTIVE || port == 1)
			take_port(p, port, &a);
		if (p->want_port || p->active)
			break;
	}
	p->port_found = 1;
	if (p->want_port && !p->active)
		return ENETDOWN;
	return 0;
}

static int gid_empty(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return !memcmp(gid, zero, sizeof(zero));
}

/* find_gid: the entry asked for, else the first RoCE v2 one, else the
 * first non-empty one (rtrpath.h says why). */
static int find_gid(const struct xb_pathlib *lib, void *ctx, struct xb_path *p, int *stage)
{
	struct xb_port_answer a;
	uint8_t gid[16];
	int rc, type;

	memset(&a, 0, sizeof(a));
	*stage = XB_STAGE_PORT;
	if ((rc = lib->query_port(ctx, p->port, &a)) != 0)
		return rc;
	if (p->want_gid >= 0) {
		*stage = XB_STAGE_BADGID;
		type = XB_GID_TYPE_UNKNOWN;
		if (p->want_gid >= a.gid_tbl_len || lib->query_gid(ctx, p->port, p->want_gid, gid, &type) != 0 ||
		    gid_empty(gid))
			return EINVAL;
		p->gid_index = p->want_gid;
		p->gid_type = type;
		memcpy(p->gid, gid, sizeof(gid));
		p->is_global = 1; /* a GID asked for is used, on InfiniBand too */
		p->gid_found = 1;
		return 0;
	}
	for (int i = 0; i < a.gid_tbl_len; i++) {
		type = XB_GID_TYPE_UNKNOWN;
		if (lib->query_gid(ctx, p->port, i, gid, &type) != 0 || gid_empty(gid))
			continue;
		if (p->gid_index < 0 || (p->gid_type != XB_GID_TYPE_ROCE_V2 && type == XB_GID_TYPE_ROCE_V2)) {
			p->gid_index = i;
			p->gid_type = type;
			memcpy(p->gid, gid, sizeof(gid));
		}
		if (p->gid_type == XB_GID_TYPE_ROCE_V2)
			break;
	}
	*stage = XB_STAGE_NOADDR;
	if (p->gid_index < 0)
		return EADDRNOTAVAIL;
	p->gid_found = 1;
	return 0;
}

int xb_path_choose(const struct xb_pathlib *lib, void *ctx, struct xb_path *p, int rtr, int *stage)
{
	int rc;

	*stage = XB_STAGE_OK;
	if (!p->port_found && (rc = find_port(lib, ctx, p, stage)) != 0)
		return rc;
	if (p->want_port && !p->active) {
		*stage = XB_STAGE_PORT;
		return ENETDOWN;
	}
	if (!p->gid_found && (p->want_gid >= 0 || (rtr && p->active && p->ethernet)) &&
	    (rc = find_gid(lib, ctx, p, stage)) != 0)
		return rc;
	if (!rtr) {
		*stage = XB_STAGE_OK;
		return 0;
	}
	*stage = XB_STAGE_PORT;
	if (!p->active)
		return ENETDOWN;
	*stage = XB_STAGE_NOADDR;
	if (!p->ethernet && p->lid == 0)
		return EADDRNOTAVAIL;
	*stage = XB_STAGE_OK;
	return 0;
}

void xb_path_facts(const struct xb_path *p, struct xb_devfacts *f)
{
	f->path_port = p->port_found ? p->port : 0;
	f->path_port_chosen = p->want_port != 0;
	f->path_gid_index = p->gid_found && p->is_global ? p->gid_index : -1;
	f->path_gid_chosen = p->want_gid >= 0;
	f->path_gid_type = p->gid_found ? p->gid_type : XB_GID_TYPE_UNKNOWN;
	memcpy(f->path_gid, p->gid, sizeof(f->path_gid));
}

int xb_path_objects(const struct xb_pathlib *lib, void *ctx, struct xb_path *p)
{
	errno = 0;
	if (!p->pd && !(p->pd = lib->alloc_pd(ctx)))
		return errno > 0 ? errno : ENOMEM;
	errno = 0;
	if (!p->cq && !(p->cq = lib->create_cq(ctx)))
		return errno > 0 ? errno : ENOMEM;
	return 0;
}

int xb_path_move(const struct xb_pathlib *lib, void *ctx, struct xb_path *p, int state, uint32_t dest_qpn,
		 struct xb_legacy_qp_attr *a, int *mask)
{
	int rc, stage;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	*mask = XB_QP_STATE;
	switch (state) {
	case XB_QPS_RESET:
		return 0;
	case XB_QPS_INIT:
		if ((rc = xb_path_choose(lib, ctx, p, 0, &stage)) != 0)
			return rc;
		a->pkey_index = 0;
		a->port_num = p->port;
		a->qp_access_flags = XB_ACCESS_REMOTE_WRITE | XB_ACCESS_REMOTE_READ;
		*mask |= XB_QP_PKEY_INDEX | XB_QP_PORT | XB_QP_ACCESS_FLAGS;
		return 0;
	case XB_QPS_RTR:
		if ((rc = xb_path_choose(lib, ctx, p, 1, &stage)) != 0)
			return rc;
		a->path_mtu = p->mtu;
		a->dest_qp_num = dest_qpn;
		a->rq_psn = 0;
		a->max_dest_rd_atomic = 4;
		a->min_rnr_timer = 25;
		a->ah_attr.port_num = p->port;
		a->ah_attr.dlid = p->ethernet ? 0 : p->lid; /* RoCE has no LID */
		if (p->is_global) {
			a->ah_attr.is_global = 1;
			memcpy(a->ah_attr.grh.dgid.raw, p->gid, sizeof(a->ah_attr.grh.dgid.raw));
			a->ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
			a->ah_attr.grh.hop_limit = 1;
		}
		*mask |= XB_QP_AV | XB_QP_PATH_MTU | XB_QP_DEST_QPN | XB_QP_RQ_PSN | XB_QP_MAX_DEST_RD_ATOMIC |
			 XB_QP_MIN_RNR_TIMER;
		return 0;
	}
	return EINVAL;
}

int xb_path_close(const struct xb_pathlib *lib, void *ctx, struct xb_path *p)
{
	int rc;

	errno = 0;
	if (p->ini && (rc = lib->destroy_qp(p->ini)) != 0)
		return rc > 0 ? rc : (errno > 0 ? errno : EIO);
	p->ini = NULL;
	errno = 0;
	if (p->cq && (rc = lib->destroy_cq(p->cq)) != 0)
		return rc > 0 ? rc : (errno > 0 ? errno : EIO);
	p->cq = NULL;
	errno = 0;
	if (p->pd && (rc = lib->dealloc_pd(p->pd)) != 0)
		return rc > 0 ? rc : (errno > 0 ? errno : EIO);
	p->pd = NULL;
	errno = 0;
	if (ctx && (rc = lib->close_device(ctx)) != 0)
		return rc > 0 ? rc : (errno > 0 ? errno : EIO);
	return 0;
}
