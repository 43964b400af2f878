/*
 * rdma.h: the rdma provider, rdma-core's upstream XRC API
 * (ibv_open_xrcd / ibv_create_qp_ex / ibv_open_qp / ibv_destroy_qp).
 */
#ifndef XB_RDMA_H
#define XB_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "rdma_facts.h"
#include "xb.h"

extern const struct xb_ops xb_rdma_ops;

/*
 * xb_rdma_load loads libibverbs.so.1 and resolves the provider's calls
 * (once per process; ibvload.h). Returns 0, ENOENT when the library cannot
 * be loaded or ENOSYS when it lacks a call (an old OFED or pre-v32
 * rdma-core one), and then writes one line saying so into why. Every
 * other xb_rdma_ function fails the same way until it succeeds.
 */
int xb_rdma_load(char *why, size_t len);

/*
 * xb_rdma_open opens a device context (one registrant): the device called
 * name, or when name is NULL or "" the first device with IBV_DEVICE_XRC.
 * On failure it returns a positive errno and sets *stage, and fills facts
 * as far as it got (facts->name names the device that failed).
 * qp_state (enum xb_qp_state) is what XB_QPS_TARGET moves a QP to; for
 * RTR the port, its address and a local XRC send QP are prepared here,
 * and a port that is not ACTIVE fails with XB_STAGE_PORT (ENETDOWN), one
 * without a LID or GID with XB_STAGE_NOADDR (EADDRNOTAVAIL).
 * want_port (0: automatic) and want_gid (-1: automatic) choose the port
 * and GID (rtrpath.h); one the device lacks fails the open whatever
 * qp_state is, with XB_STAGE_BADPORT, _BADGID or _PORT (not ACTIVE).
 * A device with XRC whose provider lacks ibv_open_qp (qedr) fails with
 * XB_STAGE_NOOPENQP unless allow_no_open_qp is set: then it opens, and
 * every reg fails EOPNOTSUPP (conform's S1 needs no reg).
 */
int xb_rdma_open(const char *name, int qp_state, int want_port, int want_gid, int allow_no_open_qp, void **dev,
		 struct xb_devfacts *facts, int *stage);

/*
 * xb_rdma_list fills up to max entries of facts, one per device, opening
 * each to query it. Returns the number of devices (which may exceed max),
 * or -errno when ibv_get_device_list fails.
 */
int xb_rdma_list(struct xb_devfacts *facts, int max);

/* xb_rdma_count is the number of devices, or -errno; it opens none. */
int xb_rdma_count(void);

/* xb_rdma_library names the file libibverbs was loaded from ("" if unknown). */
void xb_rdma_library(char *buf, size_t len);

/*
 * The kernel asked without the harness's guards (conform's S8 and S9, in
 * a child process, since what a provider does after such a call is not
 * the harness's to know):
 * xb_rdma_kernel_close_xrcd calls ibv_close_xrcd on dom's XRCD whatever
 * handles it still has, and returns the call's errno (0: dom is gone);
 * xb_rdma_kernel_unreg destroys a handle to qpn that dom's device context
 * holds through any of its domains and returns the call's errno, or -1
 * when the context holds none (no call can name the QP).
 */
int xb_rdma_kernel_close_xrcd(void *dom);
int xb_rdma_kernel_unreg(void *dom, uint32_t qpn);

/* Inspection for tests: live handles this registrant holds in dom. */
size_t xb_rdma_dom_handles(void *dom);

#endif
