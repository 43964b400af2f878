/*
 * rdma_facts.h: what the rdma and legacy providers learn about a device,
 * in plain C types. No file of the providers includes <infiniband/verbs.h>:
 * both are built everywhere and load libibverbs at run time (ibvload.h),
 * so everything they share lives here, in values the verbs ABI fixes
 * (verbs/ctest/abi_check.c checks them against the header where it exists).
 */
#ifndef XB_RDMA_FACTS_H
#define XB_RDMA_FACTS_H

#include <stdint.h>

#define XB_IBV_NAME_MAX 64  /* IBV_SYSFS_NAME_MAX */
#define XB_IBV_PATH_MAX 256 /* IBV_SYSFS_PATH_MAX */
#define XB_IBV_DEVICE_XRC (1u << 20) /* IBV_DEVICE_XRC, stable since OFED 1.3 */
#define XB_MAX_PORTS 8 /* ports described in xb_devfacts; more are counted, not described */

/* One port's ibv_query_port answer, in the verbs enums' values (the same
 * in rdma-core and OFED): state enum ibv_port_state (4 ACTIVE), active_mtu
 * enum ibv_mtu (3 = 1024 bytes), link_layer IBV_LINK_LAYER_* (0 unset:
 * InfiniBand before OFED 1.5.2; 1 InfiniBand; 2 Ethernet). */
struct xb_portfacts {
	int32_t queried; /* 0: the query failed or was not made */
	int32_t state, active_mtu, link_layer;
};

struct xb_devfacts {
	char name[XB_IBV_NAME_MAX];       /* kernel device, e.g. mlx5_0 */
	char dev_name[XB_IBV_NAME_MAX];   /* uverbs device, e.g. uverbs0 */
	char ibdev_path[XB_IBV_PATH_MAX]; /* sysfs class device */
	char fw_ver[64];
	uint64_t node_guid; /* host byte order */
	uint32_t vendor_id, vendor_part_id, hw_ver;
	uint32_t device_cap_flags;
	int32_t max_qp;
	int32_t phys_port_cnt;
	int32_t node_type, transport_type;
	int32_t queried;   /* the device was opened and queried */
	int32_t open_errno; /* why it could not be, when it could not */
	int32_t xrc;       /* IBV_DEVICE_XRC is in device_cap_flags */
	/* The upstream XRC calls work on this device: established by calling
	 * them (rdma.c, probe_caps), since libibverbs fills every missing
	 * verbs_context op with a stub that fails EOPNOTSUPP, so the op
	 * pointers alone never say "no". */
	int32_t open_xrcd, create_qp_ex, open_qp;
	/* What each probe call returned: 0 it succeeded, else its errno;
	 * XB_PROBE_NOT_TRIED when it could not run (no scratch domain). */
	int32_t open_xrcd_probe, create_qp_ex_probe, open_qp_probe;
	int32_t legacy_api; /* the loaded libibverbs exports ibv_reg_xrc_rcv_qp & co */
	struct xb_portfacts ports[XB_MAX_PORTS]; /* port p at [p-1] */
	/* The port and GID an opened device moves QPs through (rtrpath.h):
	 * path_port 0 when none was chosen (--qp-state reset, or no XRC);
	 * path_gid_index -1 when no GID is used (InfiniBand by LID). */
	int32_t path_port, path_port_chosen, path_gid_index, path_gid_chosen, path_gid_type;
	uint8_t path_gid[16];
};

#define XB_PROBE_NOT_TRIED (-1)

/* The QP number the open_qp probe asks for in a fresh scratch domain:
 * 0xffffff is the multicast QPN, never a QP's number, so a provider that
 * implements ibv_open_qp fails it with EINVAL (kernel: no such target QP). */
#define XB_PROBE_QPN 0xffffffu

/* Where opening a device failed, so Go can write one clear line. */
enum xb_open_stage {
	XB_STAGE_OK = 0,
	XB_STAGE_LIST = 1,     /* ibv_get_device_list returned NULL */
	XB_STAGE_NODEV = 2,    /* the list is empty */
	XB_STAGE_NOTFOUND = 3, /* no device of that name */
	XB_STAGE_OPEN = 4,     /* ibv_open_device failed (uverbs file) */
	XB_STAGE_QUERY = 5,    /* ibv_query_device failed */
	XB_STAGE_NOXRC = 6,    /* the device lacks IBV_DEVICE_XRC */
	XB_STAGE_NOOPENQP = 7, /* XRC, but the provider has no open_qp */
	XB_STAGE_NOXRC_ANY = 8, /* no device given, and none has XRC */
	XB_STAGE_NOSYM = 9,    /* legacy: a symbol is missing */
	XB_STAGE_PORT = 10,    /* --qp-state rtr: the port is not ACTIVE (or cannot be queried) */
	XB_STAGE_NOADDR = 11,  /* --qp-state rtr: the port has no LID (InfiniBand) or GID (RoCE) */
	XB_STAGE_INI = 12,     /* --qp-state rtr: the local XRC send QP (or its PD, CQ) failed */
	XB_STAGE_BADPORT = 13, /* --ib-port: the device has no such port */
	XB_STAGE_BADGID = 14,  /* --gid-index: past the port's GID table, or an empty entry */
};

#endif
