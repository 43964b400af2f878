/*
 * rtrpath.h: the port, GID and attributes with which the rdma provider
 * (rdma-core's calls through dlvsym) and the legacy one (OFED's through
 * dlsym) move a receive QP to INIT and RTR, and the objects RTR needs
 * (a PD and a CQ for the local XRC send QP whose number is the
 * destination). One implementation through a small table of the
 * library's calls, as devselect.h does for choosing a device, so the two
 * providers cannot choose differently.
 *
 * The choice (docs/design.md, "Port and GID"):
 *   port  --ib-port N: port N, which must exist and be ACTIVE; else the
 *         first ACTIVE port, else port 1 (INIT needs only a valid number;
 *         RTR then fails ENETDOWN).
 *   GID   --gid-index I: entry I, which must be in the port's table and
 *         not empty (all zero); on InfiniBand it adds a GRH to the LID
 *         address, as perftest's -x does. Else, on RoCE only: the first
 *         RoCE v2 entry, else the first non-empty one. RoCE v2 first
 *         because it is what a routed RoCE fabric and NCCL, UCX and
 *         perftest's RoCE v2 mode use; the table's order (mlx5: per
 *         address a v1 then a v2 entry) otherwise decides.
 */
#ifndef XB_RTRPATH_H
#define XB_RTRPATH_H

#include <stdint.h>

#include "legacy_abi.h" /* struct ibv_qp_attr as OFED and rdma-core lay it out */

/* enum ibv_qp_attr_mask and enum ibv_access_flags: the values OFED and
 * rdma-core share (rdma.c and legacy.c assert it). */
#define XB_QP_STATE (1 << 0)
#define XB_QP_ACCESS_FLAGS (1 << 3)
#define XB_QP_PKEY_INDEX (1 << 4)
#define XB_QP_PORT (1 << 5)
#define XB_QP_AV (1 << 7)
#define XB_QP_PATH_MTU (1 << 8)
#define XB_QP_RQ_PSN (1 << 12)
#define XB_QP_MIN_RNR_TIMER (1 << 15)
#define XB_QP_MAX_DEST_RD_ATOMIC (1 << 17)
#define XB_QP_DEST_QPN (1 << 20)
#define XB_ACCESS_REMOTE_WRITE (1 << 1)
#define XB_ACCESS_REMOTE_READ (1 << 2)
#define XB_PORT_ACTIVE 4          /* IBV_PORT_ACTIVE */
#define XB_LINK_LAYER_ETHERNET 2 /* IBV_LINK_LAYER_ETHERNET */

/* A GID entry's type, as sysfs gid_attrs/types names it. */
enum xb_gid_type {
	XB_GID_TYPE_UNKNOWN = -1, /* the library could not say */
	XB_GID_TYPE_IB = 0,       /* an InfiniBand port's GID */
	XB_GID_TYPE_ROCE_V1 = 1,  /* "IB/RoCE v1" on an Ethernet port */
	XB_GID_TYPE_ROCE_V2 = 2,  /* "RoCE v2" */
};

/* What ibv_query_port said of a port, in the verbs enums' values. */
struct xb_port_answer {
	int32_t state, active_mtu, link_layer, gid_tbl_len;
	uint16_t lid;
};

struct xb_pathlib {
	int (*query_port)(void *ctx, uint8_t port, struct xb_port_answer *a);
	/* query_gid: entry index of port's table and its type; 0 or an errno */
	int (*query_gid)(void *ctx, uint8_t port, int index, uint8_t gid[16], int *type);
	void *(*alloc_pd)(void *ctx);
	int (*dealloc_pd)(void *pd);
	void *(*create_cq)(void *ctx); /* one entry, no channel */
	int (*destroy_cq)(void *cq);
	int (*destroy_qp)(void *qp);
	int (*close_device)(void *ctx);
};

struct xb_path {
	/* asked: want_port 0 and want_gid -1 are automatic */
	int want_port, want_gid;
	int nports; /* the device's phys_port_cnt */
	/* found */
	int port_found; /* port, active, mtu, lid, is_global are set */
	uint8_t port;
	int active;
	int32_t mtu; /* enum ibv_mtu */
	uint16_t lid;
	int is_global;  /* the AV carries a GRH: RoCE, or a GID chosen on InfiniBand */
	int ethernet;   /* the port's link layer is Ethernet (RoCE) */
	int gid_found;  /* gid_index, gid_type, gid are set */
	int gid_index, gid_type;
	uint8_t gid[16];
	/* made for RTR's destination: the provider makes the send QP */
	void *pd, *cq, *ini;
};

/* xb_path_init starts a path for a device with nports ports. */
void xb_path_init(struct xb_path *p, int nports, int want_port, int want_gid);

/*
 * xb_path_choose finds the port (and, when one was asked for or RTR needs
 * it, the GID) once. A port asked for that does not exist fails EINVAL
 * with XB_STAGE_BADPORT, one that is not ACTIVE ENETDOWN with
 * XB_STAGE_PORT; a GID index past the table or at an empty entry EINVAL
 * with XB_STAGE_BADGID. With rtr set, what RTR needs must hold too: an
 * ACTIVE port (ENETDOWN, XB_STAGE_PORT) and an address (EADDRNOTAVAIL,
 * XB_STAGE_NOADDR). A failed query returns its errno (XB_STAGE_PORT).
 */
int xb_path_choose(const struct xb_pathlib *lib, void *ctx, struct xb_path *p, int rtr, int *stage);

/* xb_path_facts records in f the port and GID p has chosen so far. */
struct xb_devfacts;
void xb_path_facts(const struct xb_path *p, struct xb_devfacts *f);

/* xb_path_objects makes the PD and CQ the send QP needs, once; 0 or an errno. */
int xb_path_objects(const struct xb_pathlib *lib, void *ctx, struct xb_path *p);

/*
 * xb_path_move fills a (zeroed first) and *mask with the attributes and masks the kernel's
 * qp_state_table requires of an XRC_TGT QP for the transition to state
 * (XB_QPS_RESET, _INIT or _RTR; and OFED's ibv_modify_xrc_rcv_qp
 * documented the same): INIT the pkey index, port and access flags; RTR
 * the address vector, path MTU, destination QP dest_qpn, receive PSN,
 * responder resources and RNR timer (Open MPI openib's 4 and 25). INIT
 * and RTR choose the path first (xb_path_choose). 0 or an errno. The
 * struct is the verbs ABI's struct ibv_qp_attr, the same in OFED and
 * rdma-core (legacy_abi.h); rdma.c asserts it against its header and
 * copies it into its own.
 */
int xb_path_move(const struct xb_pathlib *lib, void *ctx, struct xb_path *p, int state, uint32_t dest_qpn,
		 struct xb_legacy_qp_attr *a, int *mask);

/*
 * xb_path_close releases what the path made (the send QP p->ini, the CQ,
 * the PD) and then closes ctx. A call that fails stops it with what is
 * left kept, so a retry goes on from there; 0 when all is released.
 */
int xb_path_close(const struct xb_pathlib *lib, void *ctx, struct xb_path *p);

#endif
