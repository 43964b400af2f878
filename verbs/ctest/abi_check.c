/*
 * abi_check.c: the verbs ABI xrcbench declares itself (ibv_abi.h,
 * legacy_abi.h, rtrpath.h, rdma_facts.h) against the installed rdma-core
 * <infiniband/verbs.h>. It compiles, or fails to, and nothing else: every
 * size, offset, enum value and flag the rdma provider relies on is a
 * _Static_assert here, so a header that disagrees fails the build.
 *
 * Built by make cwarn (where the header is installed; CI installs it) and
 * by verbs' TestABICheck. A declaration added to ibv_abi.h belongs here too.
 */
#include <stddef.h>

#include <infiniband/verbs.h>

#include "ibv_abi.h"
#include "legacy_abi.h"
#include "rdma_facts.h"
#include "rtrpath.h"
#include "xb.h"

#define SAME_SIZE(x, sys) _Static_assert(sizeof(struct x) == sizeof(struct sys), #sys " size")
#define SAME_AT(x, sys, f) _Static_assert(offsetof(struct x, f) == offsetof(struct sys, f), #sys "." #f " offset")
#define SAME_SIZE_AT(x, sys, f)                                                                                      \
	_Static_assert(sizeof(((struct x *)0)->f) == sizeof(((struct sys *)0)->f), #sys "." #f " size")
#define SAME_VAL(x, sys) _Static_assert((long long)(x) == (long long)(sys), #x " == " #sys)

/* Pointers to structs declared void * and op slots are pointer-sized. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function and data pointers have one size");

/* The extended-context marker and the names' lengths */
_Static_assert(XB_IBV_ABI_IS_EXTENDED == __VERBS_ABI_IS_EXTENDED, "__VERBS_ABI_IS_EXTENDED");
SAME_VAL(XB_IBV_SYSFS_NAME_MAX, IBV_SYSFS_NAME_MAX);
SAME_VAL(XB_IBV_SYSFS_PATH_MAX, IBV_SYSFS_PATH_MAX);
SAME_VAL(XB_IBV_NAME_MAX, IBV_SYSFS_NAME_MAX);
SAME_VAL(XB_IBV_PATH_MAX, IBV_SYSFS_PATH_MAX);

/* struct ibv_device */
SAME_SIZE(xb_ibv_device, ibv_device);
SAME_AT(xb_ibv_device, ibv_device, node_type);
SAME_AT(xb_ibv_device, ibv_device, transport_type);
SAME_AT(xb_ibv_device, ibv_device, name);
SAME_AT(xb_ibv_device, ibv_device, dev_name);
SAME_AT(xb_ibv_device, ibv_device, dev_path);
SAME_AT(xb_ibv_device, ibv_device, ibdev_path);
SAME_SIZE(xb_legacy_device, ibv_device);
SAME_AT(xb_legacy_device, ibv_device, ibdev_path);

/* struct ibv_context */
SAME_SIZE(xb_ibv_context, ibv_context);
_Static_assert(sizeof(((struct xb_ibv_context *)0)->ops) == sizeof(struct ibv_context_ops), "ibv_context_ops size");
SAME_AT(xb_ibv_context, ibv_context, device);
SAME_AT(xb_ibv_context, ibv_context, ops);
SAME_AT(xb_ibv_context, ibv_context, cmd_fd);
SAME_AT(xb_ibv_context, ibv_context, async_fd);
SAME_AT(xb_ibv_context, ibv_context, num_comp_vectors);
SAME_AT(xb_ibv_context, ibv_context, mutex);
SAME_AT(xb_ibv_context, ibv_context, abi_compat);

/* struct verbs_context: ibv_abi.h declares it from query_port on, so its
 * ops sit at the same distance from the end (what the sz check measures)
 * and the context at the same place. A newer header whose first op is not
 * query_port fails the first assert only if query_port moved: the later
 * ones hold whatever is prepended. */
#define FROM_END(s, f) (sizeof(struct s) - offsetof(struct s, f))
#define SAME_FROM_END(f)                                                                                             \
	_Static_assert(FROM_END(xb_ibv_verbs_context, f) == FROM_END(verbs_context, f), "verbs_context." #f " from the end")
SAME_FROM_END(query_port);
SAME_FROM_END(query_device_ex);
SAME_FROM_END(open_qp);
SAME_FROM_END(create_qp_ex);
SAME_FROM_END(open_xrcd);
SAME_FROM_END(close_xrcd);
SAME_FROM_END(sz);
SAME_FROM_END(context);
_Static_assert(sizeof(struct xb_ibv_verbs_context) <= sizeof(struct verbs_context), "verbs_context is not shorter");
_Static_assert(offsetof(struct xb_ibv_verbs_context, context) + sizeof(struct xb_ibv_context) ==
		       sizeof(struct xb_ibv_verbs_context),
	       "the context is verbs_context's last member");

/* struct ibv_qp (its head) */
SAME_AT(xb_ibv_qp, ibv_qp, context);
SAME_AT(xb_ibv_qp, ibv_qp, handle);
SAME_AT(xb_ibv_qp, ibv_qp, qp_num);
SAME_SIZE_AT(xb_ibv_qp, ibv_qp, qp_num);
SAME_AT(xb_legacy_qp, ibv_qp, qp_num);

/* struct ibv_xrcd, struct ibv_xrcd_init_attr */
SAME_SIZE(xb_ibv_xrcd, ibv_xrcd);
SAME_AT(xb_ibv_xrcd, ibv_xrcd, context);
SAME_SIZE(xb_ibv_xrcd_init_attr, ibv_xrcd_init_attr);
SAME_AT(xb_ibv_xrcd_init_attr, ibv_xrcd_init_attr, comp_mask);
SAME_AT(xb_ibv_xrcd_init_attr, ibv_xrcd_init_attr, fd);
SAME_AT(xb_ibv_xrcd_init_attr, ibv_xrcd_init_attr, oflags);

/* struct ibv_qp_init_attr_ex, and ibv_create_qp's struct ibv_qp_init_attr
 * as its head */
SAME_SIZE(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, send_cq);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, recv_cq);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, srq);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, cap);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, cap.max_send_wr);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, cap.max_send_sge);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, qp_type);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, sq_sig_all);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, comp_mask);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, pd);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, xrcd);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, create_flags);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, max_tso_header);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, rwq_ind_tbl);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, rx_hash_conf);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, source_qpn);
SAME_AT(xb_ibv_qp_init_attr_ex, ibv_qp_init_attr_ex, send_ops_flags);
SAME_SIZE(xb_ibv_rx_hash_conf, ibv_rx_hash_conf);
SAME_AT(xb_ibv_rx_hash_conf, ibv_rx_hash_conf, rx_hash_key);
SAME_AT(xb_ibv_rx_hash_conf, ibv_rx_hash_conf, rx_hash_fields_mask);
SAME_SIZE(xb_legacy_qp_cap, ibv_qp_cap);
_Static_assert(offsetof(struct xb_ibv_qp_init_attr_ex, sq_sig_all) == offsetof(struct ibv_qp_init_attr, sq_sig_all),
	       "ibv_qp_init_attr is the head of ibv_qp_init_attr_ex");

/* struct ibv_qp_open_attr */
SAME_SIZE(xb_ibv_qp_open_attr, ibv_qp_open_attr);
SAME_AT(xb_ibv_qp_open_attr, ibv_qp_open_attr, comp_mask);
SAME_AT(xb_ibv_qp_open_attr, ibv_qp_open_attr, qp_num);
SAME_AT(xb_ibv_qp_open_attr, ibv_qp_open_attr, xrcd);
SAME_AT(xb_ibv_qp_open_attr, ibv_qp_open_attr, qp_context);
SAME_AT(xb_ibv_qp_open_attr, ibv_qp_open_attr, qp_type);

/* struct ibv_port_attr */
SAME_SIZE(xb_ibv_port_attr, ibv_port_attr);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, state);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, active_mtu);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, gid_tbl_len);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, lid);
SAME_SIZE_AT(xb_ibv_port_attr, ibv_port_attr, lid);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, link_layer);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, flags);
SAME_AT(xb_ibv_port_attr, ibv_port_attr, port_cap_flags2);
SAME_AT(xb_legacy_port_attr, ibv_port_attr, link_layer);

/* struct ibv_gid_entry, union ibv_gid */
SAME_SIZE(xb_ibv_gid_entry, ibv_gid_entry);
SAME_AT(xb_ibv_gid_entry, ibv_gid_entry, gid);
SAME_AT(xb_ibv_gid_entry, ibv_gid_entry, gid_index);
SAME_AT(xb_ibv_gid_entry, ibv_gid_entry, port_num);
SAME_AT(xb_ibv_gid_entry, ibv_gid_entry, gid_type);
SAME_AT(xb_ibv_gid_entry, ibv_gid_entry, ndev_ifindex);
_Static_assert(sizeof(union xb_legacy_gid) == sizeof(union ibv_gid), "ibv_gid size");

/* struct ibv_device_attr */
SAME_SIZE(xb_legacy_device_attr, ibv_device_attr);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, fw_ver);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, node_guid);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, vendor_id);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, vendor_part_id);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, hw_ver);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, max_qp);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, device_cap_flags);
SAME_AT(xb_legacy_device_attr, ibv_device_attr, phys_port_cnt);

/* struct ibv_qp_attr, struct ibv_ah_attr: what rtrpath.c fills */
SAME_SIZE(xb_legacy_qp_attr, ibv_qp_attr);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, qp_state);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, path_mtu);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, rq_psn);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, dest_qp_num);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, qp_access_flags);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, pkey_index);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, max_dest_rd_atomic);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, min_rnr_timer);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, port_num);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr.grh.dgid);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr.grh.sgid_index);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr.grh.hop_limit);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr.dlid);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr.is_global);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, ah_attr.port_num);
SAME_AT(xb_legacy_qp_attr, ibv_qp_attr, rate_limit);
SAME_SIZE(xb_legacy_ah_attr, ibv_ah_attr);

/* Enum values and flags */
SAME_VAL(XB_IBV_QPT_XRC_SEND, IBV_QPT_XRC_SEND);
SAME_VAL(XB_IBV_QPT_XRC_RECV, IBV_QPT_XRC_RECV);
SAME_VAL(XB_IBV_QP_INIT_ATTR_PD, IBV_QP_INIT_ATTR_PD);
SAME_VAL(XB_IBV_QP_INIT_ATTR_XRCD, IBV_QP_INIT_ATTR_XRCD);
SAME_VAL(XB_IBV_QP_OPEN_ATTR_NUM, IBV_QP_OPEN_ATTR_NUM);
SAME_VAL(XB_IBV_QP_OPEN_ATTR_XRCD, IBV_QP_OPEN_ATTR_XRCD);
SAME_VAL(XB_IBV_QP_OPEN_ATTR_TYPE, IBV_QP_OPEN_ATTR_TYPE);
SAME_VAL(XB_IBV_XRCD_INIT_ATTR_FD, IBV_XRCD_INIT_ATTR_FD);
SAME_VAL(XB_IBV_XRCD_INIT_ATTR_OFLAGS, IBV_XRCD_INIT_ATTR_OFLAGS);
SAME_VAL(XB_IBV_GID_TYPE_IB, IBV_GID_TYPE_IB);
SAME_VAL(XB_IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V1);
SAME_VAL(XB_IBV_GID_TYPE_ROCE_V2, IBV_GID_TYPE_ROCE_V2);
SAME_VAL(XB_IBV_DEVICE_XRC, IBV_DEVICE_XRC);
SAME_VAL(XB_QP_STATE, IBV_QP_STATE);
SAME_VAL(XB_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
SAME_VAL(XB_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
SAME_VAL(XB_QP_PORT, IBV_QP_PORT);
SAME_VAL(XB_QP_AV, IBV_QP_AV);
SAME_VAL(XB_QP_PATH_MTU, IBV_QP_PATH_MTU);
SAME_VAL(XB_QP_RQ_PSN, IBV_QP_RQ_PSN);
SAME_VAL(XB_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
SAME_VAL(XB_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
SAME_VAL(XB_QP_DEST_QPN, IBV_QP_DEST_QPN);
SAME_VAL(XB_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
SAME_VAL(XB_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
SAME_VAL(XB_PORT_ACTIVE, IBV_PORT_ACTIVE);
SAME_VAL(XB_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);
SAME_VAL(XB_QPS_RESET, IBV_QPS_RESET);
SAME_VAL(XB_QPS_INIT, IBV_QPS_INIT);
SAME_VAL(XB_QPS_RTR, IBV_QPS_RTR);
