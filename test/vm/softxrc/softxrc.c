// SPDX-License-Identifier: GPL-2.0
/*
 * softxrc: a soft InfiniBand device with XRC and no data path, for
 * xrcbench's make vmtest. A test device, not a product.
 *
 * The XRC semantics xrcbench measures live in the kernel's core, not in a
 * driver: ib_uverbs implements open/close XRCD, create_qp of type XRC_TGT,
 * open_qp and destroy; ib_core keeps the XRCD's table of shared QPs, gives
 * every opener its own handle and destroys the real QP only when the last
 * handle goes, whether the creator's or an opener's, at process exit too.
 * A driver only has to allocate an XRCD and create, modify and destroy a
 * QP. This one does that much, for one device (softxrc0) with one port
 * (InfiniBand link layer, ACTIVE, LID 1), and pays an injectable cost
 * inside each QP command as an adapter's firmware command would take
 * (module parameters, writable at run time), counting every command with
 * its mean duration in debugfs, as mlx5 does:
 *
 *	/sys/kernel/debug/softxrc/softxrc0/commands/<COMMAND>/{n,average}
 *
 * (average in nanoseconds; writing to average resets the command's
 * counters), beside mlx5's failure files (failed, failed_mbox_status,
 * last_failed_errno, last_failed_mbox_status, last_failed_syndrome), which
 * stay 0: no softxrc command fails and the QPs alive in /sys/kernel/debug/softxrc/softxrc0/qps.
 *
 * The control-path objects the rdma provider needs for an RTR transition
 * (a PD, a CQ, an XRC initiator QP for a destination QP number) are made;
 * every data-path operation (post, poll, memory registration) refuses
 * with EOPNOTSUPP.
 *
 * With noxrc_device=1 it also registers softxrc1, the same device without
 * XRC: no XRCD ops and no IB_DEVICE_XRC, so the core disables the XRCD
 * methods and answers an open_xrcd with its own EOPNOTSUPP. That is the
 * device conform's S11 needs, answered by the real kernel.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

MODULE_AUTHOR("xrcbench");
MODULE_DESCRIPTION("softxrc: a soft InfiniBand device with XRC and no data path (a test device)");
MODULE_LICENSE("GPL");

static unsigned int create_us;
module_param(create_us, uint, 0644);
MODULE_PARM_DESC(create_us, "cost of CREATE_QP, microseconds (default 0)");
static unsigned int modify_us;
module_param(modify_us, uint, 0644);
MODULE_PARM_DESC(modify_us, "cost of each state transition of a QP, microseconds (default 0)");
static unsigned int destroy_us;
module_param(destroy_us, uint, 0644);
MODULE_PARM_DESC(destroy_us, "cost of DESTROY_QP, microseconds (default 0)");
static unsigned int destroy_from_rtr_us;
module_param(destroy_from_rtr_us, uint, 0644);
MODULE_PARM_DESC(destroy_from_rtr_us,
		 "extra cost of destroying a QP in RTR or later (its 2RST_QP), microseconds (default 0)");
static bool noxrc_device;
module_param(noxrc_device, bool, 0444);
MODULE_PARM_DESC(noxrc_device, "also register softxrc1, a device without XRC (default no)");

#define SOFTXRC_MAX_QP (1 << 18)
#define SOFTXRC_FIRST_QPN 0x100
#define SOFTXRC_MAX_QPN 0xffffff
/* fw_ver as mlx5 encodes it: major << 32 | minor << 16 | subminor. */
#define SOFTXRC_FW_MAJOR 1
#define SOFTXRC_FW_MINOR 0
#define SOFTXRC_FW_SUB 1
#define SOFTXRC_BOARD_ID "SXRC000000001"
/* A locally administered EUI-64 of our own, not a vendor's. */
#define SOFTXRC_NODE_GUID 0x02c0ffee00000001ULL
#define SOFTXRC_LID 1

/* The commands counted, with the names mlx5 gives its own. */
enum softxrc_cmd {
	CMD_ALLOC_PD,
	CMD_DEALLOC_PD,
	CMD_ALLOC_XRCD,
	CMD_DEALLOC_XRCD,
	CMD_CREATE_CQ,
	CMD_DESTROY_CQ,
	CMD_CREATE_QP,
	CMD_RST2INIT_QP,
	CMD_INIT2INIT_QP,
	CMD_INIT2RTR_QP,
	CMD_RTR2RTS_QP,
	CMD_RTS2RTS_QP,
	CMD_2ERR_QP,
	CMD_2RST_QP,
	CMD_QUERY_QP,
	CMD_DESTROY_QP,
	CMD_MAX
};

static const char *const softxrc_cmd_names[CMD_MAX] = {
	[CMD_ALLOC_PD] = "ALLOC_PD",
	[CMD_DEALLOC_PD] = "DEALLOC_PD",
	[CMD_ALLOC_XRCD] = "ALLOC_XRCD",
	[CMD_DEALLOC_XRCD] = "DEALLOC_XRCD",
	[CMD_CREATE_CQ] = "CREATE_CQ",
	[CMD_DESTROY_CQ] = "DESTROY_CQ",
	[CMD_CREATE_QP] = "CREATE_QP",
	[CMD_RST2INIT_QP] = "RST2INIT_QP",
	[CMD_INIT2INIT_QP] = "INIT2INIT_QP",
	[CMD_INIT2RTR_QP] = "INIT2RTR_QP",
	[CMD_RTR2RTS_QP] = "RTR2RTS_QP",
	[CMD_RTS2RTS_QP] = "RTS2RTS_QP",
	[CMD_2ERR_QP] = "2ERR_QP",
	[CMD_2RST_QP] = "2RST_QP",
	[CMD_QUERY_QP] = "QUERY_QP",
	[CMD_DESTROY_QP] = "DESTROY_QP",
};

struct softxrc_cmd_stats {
	spinlock_t lock;
	u64 n;
	u64 sum_ns;
	/* mlx5's failure counters, in its layout; a softxrc command never
	 * fails, so they stay 0 (xrcbench's test double injects failures). */
	u64 failed;
	u64 failed_mbox_status;
	u32 last_failed_errno;
	u8 last_failed_mbox_status;
	u32 last_failed_syndrome;
};

struct softxrc_dev {
	struct ib_device ibdev;
	bool xrc;
	struct xarray qps; /* qp number -> struct softxrc_qp */
	u32 next_qpn;
	atomic_t live_qps;
	struct softxrc_cmd_stats stats[CMD_MAX];
	struct dentry *debugfs;
};

struct softxrc_ucontext {
	struct ib_ucontext ibuc;
};

struct softxrc_pd {
	struct ib_pd ibpd;
};

struct softxrc_xrcd {
	struct ib_xrcd ibxrcd;
};

struct softxrc_cq {
	struct ib_cq ibcq;
};

struct softxrc_qp {
	struct ib_qp ibqp;
	struct mutex lock; /* serialises modify, query and destroy */
	enum ib_qp_state state;
	/* What the transitions set, for query_qp. */
	struct ib_qp_attr attr;
};

/* softxrc0, and softxrc1 (without XRC) when noxrc_device is set. */
static struct softxrc_dev *softxrc[2];
static struct dentry *softxrc_debugfs_root;

static struct softxrc_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softxrc_dev, ibdev);
}

static struct softxrc_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softxrc_qp, ibqp);
}

/*
 * softxrc_command runs one command: pays its cost, as a firmware command
 * would take, and counts it with the time it took.
 */
static void softxrc_command(struct softxrc_dev *dev, enum softxrc_cmd cmd, unsigned int cost_us)
{
	struct softxrc_cmd_stats *s = &dev->stats[cmd];
	ktime_t start = ktime_get();
	u64 ns;

	/*
	 * The cost is waited out by polling the clock, as mlx5 polls its
	 * command queue in polling mode, not by sleeping: a timer's wake-up
	 * under QEMU's TCG comes milliseconds late, which would blur the
	 * known answers. Nor does the wait yield to other tasks (which
	 * would add their time slices to the cost) unless the cost is long
	 * enough to stall the CPU: then each 10 ms it offers to.
	 */
	if (cost_us) {
		ktime_t end = ktime_add_us(start, cost_us);
		ktime_t yield = ktime_add_ms(start, 10);

		while (ktime_before(ktime_get(), end)) {
			if (!ktime_before(ktime_get(), yield)) {
				cond_resched();
				yield = ktime_add_ms(ktime_get(), 10);
			}
			cpu_relax();
		}
	}
	ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	spin_lock(&s->lock);
	s->n++;
	s->sum_ns += ns;
	spin_unlock(&s->lock);
}

static int softxrc_query_device(struct ib_device *ibdev, struct ib_device_attr *props,
				struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(props, 0, sizeof(*props));
	props->fw_ver = (u64)SOFTXRC_FW_MAJOR << 32 | SOFTXRC_FW_MINOR << 16 | SOFTXRC_FW_SUB;
	props->sys_image_guid = cpu_to_be64(SOFTXRC_NODE_GUID);
	props->max_mr_size = ~0ULL;
	props->page_size_cap = PAGE_SIZE;
	props->vendor_id = 0;
	props->vendor_part_id = 1;
	props->hw_ver = 1;
	props->max_qp = SOFTXRC_MAX_QP;
	props->max_qp_wr = 1;
	props->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT;
	if (to_sdev(ibdev)->xrc)
		props->device_cap_flags |= IB_DEVICE_XRC;
	props->max_send_sge = 1;
	props->max_recv_sge = 1;
	props->max_sge_rd = 1;
	props->max_cq = SOFTXRC_MAX_QP;
	props->max_cqe = 1;
	props->max_pd = SOFTXRC_MAX_QP;
	props->max_qp_rd_atom = 16;
	props->max_qp_init_rd_atom = 16;
	props->max_res_rd_atom = 16 * SOFTXRC_MAX_QP;
	props->atomic_cap = IB_ATOMIC_NONE;
	props->max_pkeys = 1;
	return 0;
}

static void softxrc_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%04d", SOFTXRC_FW_MAJOR, SOFTXRC_FW_MINOR,
		 SOFTXRC_FW_SUB);
}

static int softxrc_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *props)
{
	/* The core zeroes props before calling. */
	props->state = IB_PORT_ACTIVE;
	props->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	props->max_mtu = IB_MTU_4096;
	props->active_mtu = IB_MTU_4096;
	props->gid_tbl_len = 1;
	props->pkey_tbl_len = 1;
	props->max_msg_sz = 1U << 31;
	props->lid = SOFTXRC_LID;
	props->sm_lid = SOFTXRC_LID;
	props->lmc = 0;
	props->sm_sl = 0;
	props->max_vl_num = 1;
	props->active_width = IB_WIDTH_4X;
	props->active_speed = IB_SPEED_EDR;
	return 0;
}

static int softxrc_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *immutable)
{
	/* InfiniBand, with no MAD, CM or SA: no data path carries them. */
	immutable->core_cap_flags = RDMA_CORE_CAP_PROT_IB;
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = 1;
	immutable->max_mad_size = 0;
	return 0;
}

static int softxrc_query_gid(struct ib_device *ibdev, u32 port, int index, union ib_gid *gid)
{
	if (index != 0)
		return -EINVAL;
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = cpu_to_be64(SOFTXRC_NODE_GUID);
	return 0;
}

static int softxrc_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static int softxrc_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	return 0;
}

static void softxrc_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

static int softxrc_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	softxrc_command(to_sdev(pd->device), CMD_ALLOC_PD, 0);
	return 0;
}

static int softxrc_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	softxrc_command(to_sdev(pd->device), CMD_DEALLOC_PD, 0);
	return 0;
}

static int softxrc_alloc_xrcd(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	softxrc_command(to_sdev(xrcd->device), CMD_ALLOC_XRCD, 0);
	return 0;
}

static int softxrc_dealloc_xrcd(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	softxrc_command(to_sdev(xrcd->device), CMD_DEALLOC_XRCD, 0);
	return 0;
}

/* A CQ is a control-path object here (an XRC initiator QP needs one):
 * it is made, and never completes anything. */
static int softxrc_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > 1)
		return -EINVAL;
	cq->cqe = attr->cqe;
	softxrc_command(to_sdev(cq->device), CMD_CREATE_CQ, 0);
	return 0;
}

static int softxrc_destroy_cq(struct ib_cq *cq, struct ib_udata *udata)
{
	softxrc_command(to_sdev(cq->device), CMD_DESTROY_CQ, 0);
	return 0;
}

static int softxrc_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	struct softxrc_dev *dev = to_sdev(ibqp->device);
	struct softxrc_qp *qp = to_sqp(ibqp);
	u32 qpn;
	int rc;

	/* XRC only: the target QP that openers share, and the initiator
	 * QP whose number an RTR transition names as its destination. */
	if (init->qp_type != IB_QPT_XRC_TGT && init->qp_type != IB_QPT_XRC_INI)
		return -EOPNOTSUPP;
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->qp_type == IB_QPT_XRC_INI &&
	    (init->cap.max_send_wr > 1 || init->cap.max_send_sge > 1 || init->cap.max_inline_data))
		return -EINVAL;
	if (atomic_inc_return(&dev->live_qps) > SOFTXRC_MAX_QP) {
		atomic_dec(&dev->live_qps);
		return -ENOMEM;
	}
	/* QP numbers cycle, as an adapter's do, so a number just freed is
	 * not handed out again at once. */
	rc = xa_alloc_cyclic(&dev->qps, &qpn, qp, XA_LIMIT(SOFTXRC_FIRST_QPN, SOFTXRC_MAX_QPN),
			     &dev->next_qpn, GFP_KERNEL);
	if (rc < 0) {
		atomic_dec(&dev->live_qps);
		return rc;
	}
	mutex_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	memset(&qp->attr, 0, sizeof(qp->attr));
	ibqp->qp_num = qpn;
	softxrc_command(dev, CMD_CREATE_QP, READ_ONCE(create_us));
	return 0;
}

static enum softxrc_cmd softxrc_transition(enum ib_qp_state cur, enum ib_qp_state next)
{
	if (next == IB_QPS_RESET)
		return CMD_2RST_QP;
	if (next == IB_QPS_ERR)
		return CMD_2ERR_QP;
	switch (cur) {
	case IB_QPS_RESET:
		return CMD_RST2INIT_QP;
	case IB_QPS_INIT:
		return next == IB_QPS_INIT ? CMD_INIT2INIT_QP : CMD_INIT2RTR_QP;
	case IB_QPS_RTR:
		return CMD_RTR2RTS_QP;
	default:
		return CMD_RTS2RTS_QP;
	}
}

static int softxrc_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			     struct ib_udata *udata)
{
	struct softxrc_dev *dev = to_sdev(ibqp->device);
	struct softxrc_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	int rc = 0;

	if (udata && udata->inlen)
		return -EOPNOTSUPP;
	mutex_lock(&qp->lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/* The core's own table of transitions and the attributes each
	 * requires and allows, as every hardware driver checks. */
	if (cur != qp->state || !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		rc = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_PORT) && attr->port_num != 1) {
		rc = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0) {
		rc = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_AV) && rdma_ah_get_port_num(&attr->ah_attr) != 1) {
		rc = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_PATH_MTU) && (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)) {
		rc = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_DEST_QPN) && !xa_load(&dev->qps, attr->dest_qp_num)) {
		/* A destination on this device must exist: the only peer a
		 * device with no wire has. */
		rc = -EINVAL;
		goto out;
	}
	if (mask & IB_QP_STATE)
		softxrc_command(dev, softxrc_transition(cur, next), READ_ONCE(modify_us));
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn;
	if (mask & IB_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_AV) {
		qp->attr.ah_attr = attr->ah_attr;
		/* The core holds the reference to the source GID entry
		 * only for the call: keep the address, not the pointer. */
		qp->attr.ah_attr.grh.sgid_attr = NULL;
	}
	qp->state = next;
out:
	mutex_unlock(&qp->lock);
	return rc;
}

static int softxrc_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			    struct ib_qp_init_attr *init)
{
	struct softxrc_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	if (!(attr->ah_attr.type))
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	mutex_unlock(&qp->lock);
	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = IB_SIGNAL_ALL_WR;
	init->xrcd = ibqp->xrcd;
	softxrc_command(to_sdev(ibqp->device), CMD_QUERY_QP, 0);
	return 0;
}

static int softxrc_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softxrc_dev *dev = to_sdev(ibqp->device);
	struct softxrc_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->lock);
	/* As mlx5: a QP not in RESET is first moved there (2RST_QP), which
	 * costs more once it is connected (RTR or later). */
	if (qp->state != IB_QPS_RESET)
		softxrc_command(dev, CMD_2RST_QP,
				qp->state >= IB_QPS_RTR ? READ_ONCE(destroy_from_rtr_us) : 0);
	softxrc_command(dev, CMD_DESTROY_QP, READ_ONCE(destroy_us));
	qp->state = IB_QPS_RESET;
	mutex_unlock(&qp->lock);
	xa_erase(&dev->qps, ibqp->qp_num);
	atomic_dec(&dev->live_qps);
	mutex_destroy(&qp->lock);
	return 0;
}

/* The data path: none. */
static int softxrc_post_send(struct ib_qp *qp, const struct ib_send_wr *wr, const struct ib_send_wr **bad)
{
	*bad = wr;
	return -EOPNOTSUPP;
}

static int softxrc_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr, const struct ib_recv_wr **bad)
{
	*bad = wr;
	return -EOPNOTSUPP;
}

static int softxrc_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	return 0; /* never anything to complete */
}

static int softxrc_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

static struct ib_mr *softxrc_get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *softxrc_reg_user_mr(struct ib_pd *pd, u64 start, u64 length, u64 virt,
					 int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int softxrc_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return -EOPNOTSUPP; /* none is ever registered */
}

static ssize_t board_id_show(struct device *device, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SOFTXRC_BOARD_ID);
}
static DEVICE_ATTR_RO(board_id);

static ssize_t hca_type_show(struct device *device, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "softxrc\n");
}
static DEVICE_ATTR_RO(hca_type);

static struct attribute *softxrc_attrs[] = {
	&dev_attr_board_id.attr,
	&dev_attr_hca_type.attr,
	NULL,
};

static const struct attribute_group softxrc_attr_group = {
	.attrs = softxrc_attrs,
};

static const struct ib_device_ops softxrc_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,
	.device_group = &softxrc_attr_group,

	.query_device = softxrc_query_device,
	.get_dev_fw_str = softxrc_get_dev_fw_str,
	.query_port = softxrc_query_port,
	.get_port_immutable = softxrc_get_port_immutable,
	.query_gid = softxrc_query_gid,
	.query_pkey = softxrc_query_pkey,
	.alloc_ucontext = softxrc_alloc_ucontext,
	.dealloc_ucontext = softxrc_dealloc_ucontext,
	.alloc_pd = softxrc_alloc_pd,
	.dealloc_pd = softxrc_dealloc_pd,
	.create_cq = softxrc_create_cq,
	.destroy_cq = softxrc_destroy_cq,
	.create_qp = softxrc_create_qp,
	.modify_qp = softxrc_modify_qp,
	.query_qp = softxrc_query_qp,
	.destroy_qp = softxrc_destroy_qp,
	.post_send = softxrc_post_send,
	.post_recv = softxrc_post_recv,
	.poll_cq = softxrc_poll_cq,
	.req_notify_cq = softxrc_req_notify_cq,
	.get_dma_mr = softxrc_get_dma_mr,
	.reg_user_mr = softxrc_reg_user_mr,
	.dereg_mr = softxrc_dereg_mr,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, softxrc_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, softxrc_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, softxrc_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, softxrc_qp, ibqp),
};

/* What a device with XRC has on top of softxrc_ops. */
static const struct ib_device_ops softxrc_xrc_ops = {
	.alloc_xrcd = softxrc_alloc_xrcd,
	.dealloc_xrcd = softxrc_dealloc_xrcd,
	INIT_RDMA_OBJ_SIZE(ib_xrcd, softxrc_xrcd, ibxrcd),
};

/* debugfs: average reads the mean in nanoseconds; a write resets. */
static ssize_t average_read(struct file *f, char __user *ubuf, size_t len, loff_t *pos)
{
	struct softxrc_cmd_stats *s = file_inode(f)->i_private;
	char buf[32];
	u64 avg;
	int n;

	spin_lock(&s->lock);
	avg = s->n ? div64_u64(s->sum_ns, s->n) : 0;
	spin_unlock(&s->lock);
	n = scnprintf(buf, sizeof(buf), "%llu\n", avg);
	return simple_read_from_buffer(ubuf, len, pos, buf, n);
}

static ssize_t average_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct softxrc_cmd_stats *s = file_inode(f)->i_private;

	spin_lock(&s->lock);
	s->n = 0;
	s->sum_ns = 0;
	s->failed = 0;
	s->failed_mbox_status = 0;
	s->last_failed_errno = 0;
	s->last_failed_mbox_status = 0;
	s->last_failed_syndrome = 0;
	spin_unlock(&s->lock);
	*pos += len;
	return len;
}

static const struct file_operations average_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = average_read,
	.write = average_write,
	.llseek = default_llseek,
};

static ssize_t n_read(struct file *f, char __user *ubuf, size_t len, loff_t *pos)
{
	struct softxrc_cmd_stats *s = file_inode(f)->i_private;
	char buf[32];
	u64 v;
	int n;

	spin_lock(&s->lock);
	v = s->n;
	spin_unlock(&s->lock);
	n = scnprintf(buf, sizeof(buf), "%llu\n", v);
	return simple_read_from_buffer(ubuf, len, pos, buf, n);
}

static const struct file_operations n_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = n_read,
	.llseek = default_llseek,
};

static int qps_get(void *data, u64 *val)
{
	*val = atomic_read(&((struct softxrc_dev *)data)->live_qps);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(qps_fops, qps_get, NULL, "%llu\n");

static void softxrc_debugfs_init(struct softxrc_dev *dev)
{
	struct dentry *cmds;
	int i;

	dev->debugfs = debugfs_create_dir(dev_name(&dev->ibdev.dev), softxrc_debugfs_root);
	debugfs_create_file_unsafe("qps", 0444, dev->debugfs, dev, &qps_fops);
	cmds = debugfs_create_dir("commands", dev->debugfs);
	for (i = 0; i < CMD_MAX; i++) {
		struct dentry *d = debugfs_create_dir(softxrc_cmd_names[i], cmds);

		debugfs_create_file("n", 0400, d, &dev->stats[i], &n_fops);
		debugfs_create_file("average", 0600, d, &dev->stats[i], &average_fops);
		debugfs_create_u64("failed", 0400, d, &dev->stats[i].failed);
		debugfs_create_u64("failed_mbox_status", 0400, d, &dev->stats[i].failed_mbox_status);
		debugfs_create_u32("last_failed_errno", 0400, d, &dev->stats[i].last_failed_errno);
		debugfs_create_u8("last_failed_mbox_status", 0400, d, &dev->stats[i].last_failed_mbox_status);
		debugfs_create_x32("last_failed_syndrome", 0400, d, &dev->stats[i].last_failed_syndrome);
	}
}

static struct softxrc_dev *softxrc_add(bool xrc)
{
	struct softxrc_dev *dev;
	int i, rc;

	dev = ib_alloc_device(softxrc_dev, ibdev);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->xrc = xrc;
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC);
	atomic_set(&dev->live_qps, 0);
	for (i = 0; i < CMD_MAX; i++)
		spin_lock_init(&dev->stats[i].lock);
	dev->ibdev.node_type = RDMA_NODE_IB_CA;
	dev->ibdev.phys_port_cnt = 1;
	dev->ibdev.num_comp_vectors = 1;
	/* A GUID of its own for each device: softxrc1's ends in 2. */
	dev->ibdev.node_guid = cpu_to_be64(SOFTXRC_NODE_GUID + !xrc);
	strscpy(dev->ibdev.node_desc, "softxrc test device", sizeof(dev->ibdev.node_desc));
	ib_set_device_ops(&dev->ibdev, &softxrc_ops);
	if (xrc)
		ib_set_device_ops(&dev->ibdev, &softxrc_xrc_ops);
	/* No DMA device: there is no data path (CONFIG_INFINIBAND_VIRT_DMA). */
	rc = ib_register_device(&dev->ibdev, "softxrc%d", NULL);
	if (rc) {
		xa_destroy(&dev->qps);
		ib_dealloc_device(&dev->ibdev);
		return ERR_PTR(rc);
	}
	softxrc_debugfs_init(dev);
	return dev;
}

static void softxrc_remove(struct softxrc_dev *dev)
{
	/* Unregistering disassociates every user context first: the core
	 * destroys what processes still hold through our ops. */
	ib_unregister_device(&dev->ibdev);
	debugfs_remove_recursive(dev->debugfs);
	WARN_ON(atomic_read(&dev->live_qps));
	xa_destroy(&dev->qps);
	ib_dealloc_device(&dev->ibdev);
}

static int __init softxrc_init(void)
{
	struct softxrc_dev *dev;

	softxrc_debugfs_root = debugfs_create_dir("softxrc", NULL);
	dev = softxrc_add(true);
	if (IS_ERR(dev))
		goto fail;
	softxrc[0] = dev;
	if (noxrc_device) {
		dev = softxrc_add(false);
		if (IS_ERR(dev)) {
			softxrc_remove(softxrc[0]);
			goto fail;
		}
		softxrc[1] = dev;
	}
	return 0;
fail:
	debugfs_remove_recursive(softxrc_debugfs_root);
	return PTR_ERR(dev);
}

static void __exit softxrc_exit(void)
{
	if (softxrc[1])
		softxrc_remove(softxrc[1]);
	softxrc_remove(softxrc[0]);
	debugfs_remove_recursive(softxrc_debugfs_root);
}

module_init(softxrc_init);
module_exit(softxrc_exit);
