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

/* xb_legacy_symvers writes which symbol version each legacy XRC symbol the
 * loaded libibverbs exports is bound at ("ibv_reg_xrc_rcv_qp@IBVERBS_1.1
 * ..."), or "" when it exports none. */
void xb_legacy_symvers(char *buf, size_t len);

#endif
