/*
 * legacy_abi.h: the binary layouts of the OFED legacy XRC API, declared
 * here because no installed header has them any more (rdma-core dropped
 * the API in 2011) and because the legacy provider must build where no
 * <infiniband/verbs.h> exists at all.
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
 * The legacy IBV_QPT_XRC is 5 (upstream has no 5; its XRC_RECV is 10).
 * struct ibv_device and struct ibv_device_attr are the same in both APIs
 * and are declared here only to read the fields the facts need.
 */
#ifndef XB_LEGACY_ABI_H
#define XB_LEGACY_ABI_H

#include <stdint.h>

#define XB_LEGACY_QPT_XRC 5

struct xb_legacy_xrc_domain {
	void *context; /* struct ibv_context * */
	uint32_t handle;
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

#endif
