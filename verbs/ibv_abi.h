/*
 * ibv_abi.h: the part of rdma-core's libibverbs ABI the rdma provider
 * (rdma.c) relies on, declared here so that the provider builds where no
 * <infiniband/verbs.h> is installed and the binary links no libibverbs:
 * ibvload.c loads it at run time, as NCCL does.
 *
 * Everything is declared from the documented ABI (rdma-core's verbs.h and
 * libibverbs.map.in), under the prefix xb_ibv_ so that both can be
 * included in one file: verbs/ctest/abi_check.c does exactly that and
 * static-asserts every size, offset, enum value and flag used here against
 * the installed header (make cwarn; TestABICheck), so the two cannot drift
 * apart silently.
 *
 * The structs the upstream and the legacy API share and rdma.c fills in
 * full (struct ibv_device_attr, struct ibv_qp_attr with struct
 * ibv_ah_attr, union ibv_gid, struct ibv_qp_cap) are legacy_abi.h's, which
 * the same check covers.
 *
 * ABI facts the declarations stand on:
 * - struct verbs_context sits in front of struct ibv_context, its last
 *   member; rdma-core adds new ops at its front ("grows up"), and its sz
 *   says how far back from the context the library's own struct reaches.
 *   Only the ops from query_port (the newest one used here, rdma-core 17)
 *   to the end are declared: the presence check (xb_ibv_ctx_op) measures an
 *   op's distance from the end, which does not depend on what lies before.
 * - ibv_open_xrcd, ibv_close_xrcd, ibv_create_qp_ex, ibv_open_qp and
 *   ibv_query_port (verbs.h's ___ibv_query_port) are static inlines in
 *   verbs.h over those ops; rdma.c has their equivalents (vc_open_xrcd
 *   & co), with the errno verbs.h sets when an op is missing.
 * - Pointers to structs this code never looks into (PD, CQ, SRQ) are void *.
 */
#ifndef XB_IBV_ABI_H
#define XB_IBV_ABI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "legacy_abi.h"

/* __VERBS_ABI_IS_EXTENDED: struct ibv_context's abi_compat when a struct
 * verbs_context is in front of it. */
#define XB_IBV_ABI_IS_EXTENDED ((void *)UINTPTR_MAX)

/* enum ibv_qp_type (the values used) */
#define XB_IBV_QPT_XRC_SEND 9
#define XB_IBV_QPT_XRC_RECV 10

/* enum ibv_qp_init_attr_mask */
#define XB_IBV_QP_INIT_ATTR_PD (1u << 0)
#define XB_IBV_QP_INIT_ATTR_XRCD (1u << 1)

/* enum ibv_qp_open_attr_mask */
#define XB_IBV_QP_OPEN_ATTR_NUM (1u << 0)
#define XB_IBV_QP_OPEN_ATTR_XRCD (1u << 1)
#define XB_IBV_QP_OPEN_ATTR_TYPE (1u << 3)

/* enum ibv_xrcd_init_attr_mask */
#define XB_IBV_XRCD_INIT_ATTR_FD (1u << 0)
#define XB_IBV_XRCD_INIT_ATTR_OFLAGS (1u << 1)

/* enum ibv_gid_type */
#define XB_IBV_GID_TYPE_IB 0
#define XB_IBV_GID_TYPE_ROCE_V1 1
#define XB_IBV_GID_TYPE_ROCE_V2 2

/* struct ibv_context_ops: 32 function pointers (most of them _compat_
 * placeholders in rdma-core), never called from here. */
#define XB_IBV_CONTEXT_OPS 32

/* IBV_SYSFS_NAME_MAX, IBV_SYSFS_PATH_MAX */
#define XB_IBV_SYSFS_NAME_MAX 64
#define XB_IBV_SYSFS_PATH_MAX 256

struct xb_ibv_device {
	void (*_ops[2])(void); /* struct _ibv_device_ops */
	int node_type;      /* enum ibv_node_type */
	int transport_type; /* enum ibv_transport_type */
	char name[XB_IBV_SYSFS_NAME_MAX];
	char dev_name[XB_IBV_SYSFS_NAME_MAX];
	char dev_path[XB_IBV_SYSFS_PATH_MAX];
	char ibdev_path[XB_IBV_SYSFS_PATH_MAX];
};

struct xb_ibv_context {
	struct xb_ibv_device *device;
	void (*ops[XB_IBV_CONTEXT_OPS])(void);
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat; /* XB_IBV_ABI_IS_EXTENDED: a verbs_context is in front */
};

struct xb_ibv_xrcd {
	struct xb_ibv_context *context;
};

/* The head of struct ibv_qp, up to the QP number: the library allocates
 * the struct, this code reads qp_num. */
struct xb_ibv_qp {
	struct xb_ibv_context *context;
	void *qp_context, *pd, *send_cq, *recv_cq, *srq;
	uint32_t handle;
	uint32_t qp_num;
};

struct xb_ibv_xrcd_init_attr {
	uint32_t comp_mask;
	int fd;
	int oflags;
};

struct xb_ibv_rx_hash_conf {
	uint8_t rx_hash_function;
	uint8_t rx_hash_key_len;
	uint8_t *rx_hash_key;
	uint64_t rx_hash_fields_mask;
};

/* The whole struct: the provider reads the members comp_mask names, and
 * some copy it. */
struct xb_ibv_qp_init_attr_ex {
	void *qp_context;
	void *send_cq; /* struct ibv_cq * */
	void *recv_cq;
	void *srq;     /* struct ibv_srq * */
	struct xb_legacy_qp_cap cap;
	int qp_type; /* enum ibv_qp_type */
	int sq_sig_all;
	uint32_t comp_mask;
	void *pd; /* struct ibv_pd * */
	struct xb_ibv_xrcd *xrcd;
	uint32_t create_flags;
	uint16_t max_tso_header;
	void *rwq_ind_tbl; /* struct ibv_rwq_ind_table * */
	struct xb_ibv_rx_hash_conf rx_hash_conf;
	uint32_t source_qpn;
	uint64_t send_ops_flags;
};

struct xb_ibv_qp_open_attr {
	uint32_t comp_mask;
	uint32_t qp_num;
	struct xb_ibv_xrcd *xrcd;
	void *qp_context;
	int qp_type; /* enum ibv_qp_type */
};

/* rdma-core's struct ibv_port_attr (flags and port_cap_flags2 are its
 * additions to the legacy prefix): the query_port op is told its size,
 * and ibv_query_port@IBVERBS_1.1 writes the legacy prefix only. */
struct xb_ibv_port_attr {
	int state, max_mtu, active_mtu; /* enums */
	int gid_tbl_len;
	uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
	uint16_t pkey_tbl_len, lid, sm_lid;
	uint8_t lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply, active_width, active_speed, phys_state,
		link_layer, flags;
	uint16_t port_cap_flags2;
};

struct xb_ibv_gid_entry {
	union xb_legacy_gid gid;
	uint32_t gid_index;
	uint32_t port_num;
	uint32_t gid_type; /* enum ibv_gid_type */
	uint32_t ndev_ifindex;
};

typedef void (*xb_ibv_op_slot)(void); /* an op this code never calls */

/* struct verbs_context from query_port to its end (see above). */
struct xb_ibv_verbs_context {
	int (*query_port)(struct xb_ibv_context *context, uint8_t port_num, struct xb_ibv_port_attr *attr, size_t attr_len);
	xb_ibv_op_slot advise_mr, alloc_null_mr, read_counters, attach_counters_point_flow, create_counters,
		destroy_counters, reg_dm_mr, alloc_dm, free_dm, modify_flow_action_esp, destroy_flow_action,
		create_flow_action_esp, modify_qp_rate_limit, alloc_parent_domain, dealloc_td, alloc_td, modify_cq,
		post_srq_ops, destroy_rwq_ind_table, create_rwq_ind_table, destroy_wq, modify_wq, create_wq,
		query_rt_values, create_cq_ex;
	void *priv;
	xb_ibv_op_slot query_device_ex, ibv_destroy_flow, ABI_placeholder2, ibv_create_flow, ABI_placeholder1;
	struct xb_ibv_qp *(*open_qp)(struct xb_ibv_context *context, struct xb_ibv_qp_open_attr *attr);
	struct xb_ibv_qp *(*create_qp_ex)(struct xb_ibv_context *context, struct xb_ibv_qp_init_attr_ex *attr);
	xb_ibv_op_slot get_srq_num, create_srq_ex;
	struct xb_ibv_xrcd *(*open_xrcd)(struct xb_ibv_context *context, struct xb_ibv_xrcd_init_attr *attr);
	int (*close_xrcd)(struct xb_ibv_xrcd *xrcd);
	uint64_t _ABI_placeholder3;
	size_t sz; /* the library's sizeof(struct verbs_context) */
	struct xb_ibv_context context;
};

/* verbs_get_ctx: the verbs_context in front of ctx, or NULL when the
 * library made none. */
static inline struct xb_ibv_verbs_context *xb_ibv_ctx(struct xb_ibv_context *ctx)
{
	if (ctx->abi_compat != XB_IBV_ABI_IS_EXTENDED)
		return NULL;
	return (struct xb_ibv_verbs_context *)(void *)((uint8_t *)ctx - offsetof(struct xb_ibv_verbs_context, context));
}

/* verbs_get_ctx_op: the verbs_context when op is within the library's
 * struct (sz reaches back to it) and set, else NULL. */
#define xb_ibv_ctx_op(ctx, op)                                                                                       \
	__extension__({                                                                                              \
		struct xb_ibv_verbs_context *vctx_ = xb_ibv_ctx(ctx);                                                \
		(!vctx_ ||                                                                                           \
		 vctx_->sz < sizeof(struct xb_ibv_verbs_context) - offsetof(struct xb_ibv_verbs_context, op) ||    \
		 !vctx_->op)                                                                                         \
			? NULL                                                                                       \
			: vctx_;                                                                                     \
	})

#endif
