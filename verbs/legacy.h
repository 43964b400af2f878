/*
 * legacy.h: the legacy provider (OFED's ibv_reg_xrc_rcv_qp API), resolved
 * at run time with dlsym. Needs no rdma-core header.
 */
#ifndef XB_LEGACY_H
#define XB_LEGACY_H

#include <stddef.h>

#include "legacy_abi.h"
#include "rdma_facts.h"
#include "xb.h"

extern const struct xb_ops xb_legacy_ops;

/* xb_legacy_probe returns 0 when libibverbs exports the whole legacy XRC
 * API, else an errno, and says why in why. */
int xb_legacy_probe(char *why, size_t len);

/* As xb_rdma_open, through the legacy API; S11 is ENOSYS here. */
int xb_legacy_open(const char *name, int qp_state, int want_port, int want_gid, void **dev, struct xb_devfacts *facts,
		   int *stage);

/* As xb_rdma_list; needs only the device calls, not the XRC ones. */
int xb_legacy_list(struct xb_devfacts *facts, int max);

void xb_legacy_library(char *buf, size_t len);

/* The two libraries that implement the legacy API (legacy_abi.h):
 * OFED 1.x, where a registration is the kernel's and belongs to the
 * context, and MLNX_OFED 2.x-4.x, whose legacy calls are a compatibility
 * layer over the upstream ones keeping one process-wide table of opened
 * QPs, so that the process is the registrant. */
enum xb_legacy_flavor {
	XB_LEGACY_UNKNOWN = 0,
	XB_LEGACY_OFED1 = 1,
	XB_LEGACY_MLNX_COMPAT = 2,
};

/* xb_legacy_decide is the rule that names the flavor from its evidence:
 * compat_exports, whether the library exports the upstream command calls a
 * compatibility layer is built on (ibv_cmd_open_xrcd and ibv_cmd_open_qp
 * at IBVERBS_1.1, as MLNX_OFED's libibverbs.map has them), and probe_rc,
 * what a reg of a QP the same context created answered (0, EEXIST, another
 * errno, or -1 when no probe could run: no device with XRC). */
int xb_legacy_decide(int compat_exports, int probe_rc, char *why, size_t len);

/* xb_legacy_flavor is the flavor of the loaded library, decided once per
 * process (the first xb_legacy_open of a device with XRC probes it), with
 * the evidence in why. */
int xb_legacy_flavor(char *why, size_t len);

/* xb_legacy_symvers writes which symbol version each legacy XRC symbol the
 * loaded libibverbs exports is bound at ("ibv_reg_xrc_rcv_qp@IBVERBS_1.1
 * ..."), or "" when it exports none. */
void xb_legacy_symvers(char *buf, size_t len);

#endif
