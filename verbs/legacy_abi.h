/*
 * legacy_abi.h: the binary layouts of the legacy XRC API, declared here
 * because no installed header has them (upstream libibverbs never had the
 * API, nor rdma-core after it: it was OFED's, community OFED dropped it at
 * 3.12, and MLNX_OFED kept it as a compatibility layer through 4.x) and
 * because the legacy provider must build where no <infiniband/verbs.h>
 * exists at all.
 *
 * Two libraries implement it (legacy.c tells which is loaded). OFED 1.x
 * libibverbs (1.1.x with the XRC patches) dispatches the calls through the
 * driver's struct ibv_more_ops, the last member of struct ibv_context
 * after abi_compat, and its ibv_open_xrc_domain returns the struct
 * xb_legacy_xrc_domain below, whose handle is the kernel's. MLNX_OFED
 * 2.x-4.x (libibverbs 1.2.x "mlnx") has no more_ops: its legacy calls wrap
 * the upstream ones, and ibv_open_xrc_domain returns an upstream struct
 * ibv_xrcd cast to that type, of which only the context pointer is in
 * the same place: what follows it is no handle. So nothing here reads a
 * domain's handle; the pointer is only handed back to the library.
 *
 * ABI assumption, checked by static asserts in verbs/fakeverbs against the
 * installed rdma-core header where one exists: the legacy struct
 * ibv_qp_init_attr is the upstream one up to sq_sig_all, followed by
 * struct ibv_xrc_domain *xrc_domain (OFED 1.3 .. MLNX_OFED 4.x put it
 * there, after the upstream fields, so old binaries kept working). Upstream
 * later grew struct ibv_qp_init_attr_ex instead, whose field after
 * sq_sig_all is comp_mask: passing an upstream struct to the legacy call
 * would hand it garbage as the domain, hence the explicit declaration.
 *
 * The legacy IBV_QPT_XRC is 5 (upstream has no 5; its XRC_RECV is 10):
 * the send side's type, created with ibv_create_qp and an xrc_domain.
 *
 * What moving a receive QP out of RESET needs (ibv_modify_xrc_rcv_qp,
 * ibv_query_port, ibv_query_gid, a PD, a CQ and a send QP) uses structs
 * and constants that OFED and rdma-core share: struct ibv_qp_attr (to
 * which rdma-core appended rate_limit: the field is declared, so the
 * struct is never shorter than either reads), struct ibv_ah_attr, the
 * port attributes before rdma-core's additions (its _compat_ibv_port_attr,
 * padded here against a longer write), the head of struct ibv_qp, and the
 * IBV_QP_* mask bits, which the double's static asserts check.
 * struct ibv_device and struct ibv_device_attr are the same in both APIs
 * and are declared here only to read the fields the facts need.
 */
#ifndef XB_LEGACY_ABI_H
#define XB_LEGACY_ABI_H

#include <stdint.h>

#define XB_LEGACY_QPT_XRC 5

struct xb_legacy_xrc_domain {
	void *context;   /* struct ibv_context *, in both libraries */
	uint32_t handle; /* OFED 1.x only; never read (see above) */
};

struct xb_legacy_qp_cap {
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
};

struct xb_legacy_qp_init_attr {
	void *qp_context;
	void *send_cq; /* struct ibv_cq * */
	void *recv_cq;
	void *srq;     /* struct ibv_srq * */
	struct xb_legacy_qp_cap cap;
	int qp_type;   /* enum ibv_qp_type */
	int sq_sig_all;
	struct xb_legacy_xrc_domain *xrc_domain; /* legacy only: after the upstream fields */
};

struct xb_legacy_device {
	void *ops[2]; /* struct ibv_device_ops: two function pointers in both APIs */
	int node_type;
	int transport_type;
	char name[64];
	char dev_name[64];
	char dev_path[256];
	char ibdev_path[256];
};

struct xb_legacy_device_attr {
	char fw_ver[64];
	uint64_t node_guid; /* big endian */
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_ee_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;
	int max_ee_init_rd_atom;
	int atomic_cap;
	int max_ee;
	int max_rdd;
	int max_mw;
	int max_raw_ipv6_qp;
	int max_raw_ethy_qp;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	int max_total_mcast_qp_attach;
	int max_ah;
	int max_fmr;
	int max_map_per_fmr;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
};

/* enum ibv_qp_attr_mask, enum ibv_access_flags, enum ibv_port_state,
 * enum ibv_link_layer: the values both APIs use. */
#define XB_LEGACY_QP_STATE (1 << 0)
#define XB_LEGACY_QP_ACCESS_FLAGS (1 << 3)
#define XB_LEGACY_QP_PKEY_INDEX (1 << 4)
#define XB_LEGACY_QP_PORT (1 << 5)
#define XB_LEGACY_QP_AV (1 << 7)
#define XB_LEGACY_QP_PATH_MTU (1 << 8)
#define XB_LEGACY_QP_RQ_PSN (1 << 12)
#define XB_LEGACY_QP_MIN_RNR_TIMER (1 << 15)
#define XB_LEGACY_QP_MAX_DEST_RD_ATOMIC (1 << 17)
#define XB_LEGACY_QP_DEST_QPN (1 << 20)
#define XB_LEGACY_ACCESS_REMOTE_WRITE (1 << 1)
#define XB_LEGACY_ACCESS_REMOTE_READ (1 << 2)
#define XB_LEGACY_PORT_ACTIVE 4
#define XB_LEGACY_LINK_LAYER_ETHERNET 2

union xb_legacy_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix, interface_id; /* big endian */
	} global;
};

struct xb_legacy_global_route {
	union xb_legacy_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct xb_legacy_ah_attr {
	struct xb_legacy_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct xb_legacy_qp_attr {
	int qp_state, cur_qp_state, path_mtu, path_mig_state; /* enums */
	uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
	int qp_access_flags;
	struct xb_legacy_qp_cap cap;
	struct xb_legacy_ah_attr ah_attr, alt_ah_attr;
	uint16_t pkey_index, alt_pkey_index;
	uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num, timeout,
		retry_cnt, rnr_retry, alt_port_num, alt_timeout;
	uint32_t rate_limit; /* rdma-core's; OFED's struct ends before it */
};

struct xb_legacy_port_attr {
	int state, max_mtu, active_mtu; /* enums */
	int gid_tbl_len;
	uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
	uint16_t pkey_tbl_len, lid, sm_lid;
	uint8_t lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply, active_width, active_speed, phys_state,
		link_layer; /* OFED 1.5.2 on; 0 (unset, InfiniBand) before */
	uint8_t room[64]; /* a library that writes more than this prefix writes here */
};

/* The head of struct ibv_qp, the same in both APIs. */
struct xb_legacy_qp {
	void *context, *qp_context, *pd, *send_cq, *recv_cq, *srq;
	uint32_t handle, qp_num;
};

#endif
