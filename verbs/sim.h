/*
 * sim.h: the sim device, an XRC device emulated in a file-backed shared
 * memory segment, with the semantics S1-S11 of docs/design.md. It backs both
 * the Go `sim` provider (through xb_sim_ops) and the libibverbs test
 * double (verbs/fakeverbs), so it is plain C with no Go in it.
 *
 * Identity: one struct sim_dev is one opened device context, that is one
 * registrant. Domains are shared by inode of the domain file, as the
 * kernel shares XRC domains. All processes that open the same directory
 * share one device.
 */
#ifndef XB_SIM_H
#define XB_SIM_H

#include <stdint.h>
#include <sys/types.h>

#include "xb.h"

enum sim_semantics {
	SIM_LEGACY = 0,   /* reg idempotent per registrant; unreg unregistered: EINVAL */
	SIM_UPSTREAM = 1, /* every reg (ibv_open_qp) is a counted handle */
};

struct sim_config {
	uint32_t max_qps;  /* live QPs; 0: default */
	uint32_t max_regs; /* registrants per QP; 0: default */
	int no_xrc;        /* a device without XRC (S11) */
	/* cost model, busy-waited outside the domain's lock (create, modify,
	 * destroy and reset inside a command-queue slot) */
	uint64_t cost_create_ns, cost_reg_ns, cost_unreg_ns, cost_destroy_ns;
	/* per QP state transition: modify is each move up (RESET to INIT,
	 * INIT to RTR); reset is the move back to RESET, paid on top of
	 * destroy when the last unreg destroys a QP out of RESET (on mlx5
	 * the driver issues 2RST_QP before DESTROY_QP) */
	uint64_t cost_modify_ns, cost_reset_ns;
	/* SIM_LOOKUP_LIST only: a reg's walk of the domain's list, per live
	 * target QP of the domain, paid under the domain's mutex */
	uint64_t cost_scan_ns;
	/* commands (create, modify, destroy) in flight at the "driver" at
	 * once; 0: SIM_DEFAULT_CMDQ, as mlx5's command interface */
	uint32_t cmdq_depth;
	uint32_t lookup; /* enum sim_lookup */
};

/* How ib_open_qp finds the target QP in its XRCD (the kernel's
 * drivers/infiniband/core/verbs.c): since Linux 5.9 an xarray read under
 * an rwsem held shared; before, a list walked under a mutex. */
enum sim_lookup {
	SIM_LOOKUP_XARRAY = 0,
	SIM_LOOKUP_LIST = 1,
};

#define SIM_DEFAULT_CMDQ 31 /* mlx5: at most 31 commands in flight */
#define SIM_MAX_CMDQ 64

struct sim_dev;
struct sim_dom;

/* sim_open opens (creating when missing) the device in dir, which must
 * exist, be ours and closed to group and other. A device created earlier
 * with other options is made afresh with the new ones when no live process
 * uses it, and fails with EEXIST while one does, unless cfg is NULL (take
 * the device as it is, as an observer that does not sweep dead registrants
 * on attach). A device file that is not a sim device of this version fails
 * with EPROTO, one damaged (sizes, geometry or tables that do not add up)
 * with EIO, a directory or file open to others with EPERM, a full file
 * system with ENOSPC (the file is allocated, never sparse). */
int sim_open(const char *dir, const struct sim_config *cfg, int semantics, struct sim_dev **out);
/* sim_open_explained is sim_open that, on EEXIST, fills *have with the
 * options the device in use was made with. */
int sim_open_explained(const char *dir, const struct sim_config *cfg, int semantics, struct sim_dev **out,
		       struct sim_config *have);
/* sim_device_size is the size of the file of a device made with cfg. */
uint64_t sim_device_size(const struct sim_config *cfg);
/* sim_config_string writes cfg as "max_qps=N max_regs=N xrc|noxrc cost
 * create=Nns,..." for messages. */
void sim_config_string(const struct sim_config *cfg, char *buf, size_t len);
int sim_close(struct sim_dev *dev);
/* sim_get_config reports the device's options as its creator set them. */
void sim_get_config(const struct sim_dev *dev, struct sim_config *cfg);

/* Domains: fd is an open file naming the domain (by inode). Without XRC
 * the open fails with ENOSYS (legacy) or EOPNOTSUPP (upstream). */
int sim_open_domain(struct sim_dev *dev, int fd, int semantics, struct sim_dom **out);

/* sim_dom_dev is the device (registrant) a domain handle was opened by. */
struct sim_dev *sim_dom_dev(const struct sim_dom *m);
int sim_close_domain(struct sim_dom *dom); /* EBUSY while registered (S9) */

int sim_create(struct sim_dom *dom, uint32_t *qpn, uint32_t *flags);
int sim_reg(struct sim_dom *dom, uint32_t qpn, uint32_t *flags);
int sim_unreg(struct sim_dom *dom, uint32_t qpn, uint32_t *flags);

/* QP states (enum xb_qp_state). The QP is shared: a modify through any
 * registrant's handle moves it for all, as the kernel moves the real QP
 * behind every ib_open_qp handle. sim_modify moves QP qpn, which this
 * registrant must hold, one transition to state; the transitions of the
 * kernel's qp_state_table for XRC_TGT up to RTR are allowed (RESET->INIT,
 * INIT->INIT, INIT->RTR, any->RESET), any other is EINVAL. */
int sim_modify(struct sim_dom *dom, uint32_t qpn, int state);
/* sim_qp_state reads QP qpn's state; EINVAL when this registrant does not
 * hold it. */
int sim_qp_state(struct sim_dom *dom, uint32_t qpn, int *state);
/* sim_set_target sets the state the xb_sim_ops modify of XB_QPS_TARGET
 * moves a QP to (XB_QPS_RESET by default). Per registrant. */
void sim_set_target(struct sim_dev *dev, int state);

/* sim_reap drops every registration and domain handle of process pid
 * (which must be dead), destroying QPs whose last registration it held
 * (S10). Returns the number of registrations dropped, or -errno. */
int sim_reap(struct sim_dev *dev, pid_t pid);

/* Inspection, for tests and the engine's leak check. */
struct sim_qp_info {
	uint32_t qpn;
	uint32_t domain;   /* domain slot */
	uint32_t nregs;    /* registrant entries */
	uint32_t handles;  /* sum of counts (upstream handles) */
};
/* Fills up to max entries; returns the number of live QPs. Reaps dead
 * processes first. */
int sim_inspect(struct sim_dev *dev, struct sim_qp_info *qps, int max, int *nregistrants, int *ndomains);
/* Registrants of one QP: pids and counts, up to max. Returns the count or -errno. */
int sim_qp_registrants(struct sim_dev *dev, uint32_t qpn, pid_t *pids, uint32_t *counts, int max);

/* sim_thread_waits adds to *lock_ns the time the calling thread has spent
 * blocked on the device's locks (a domain's, a QP slot's, the device
 * table's) and to *cmdq_ns the time it waited for a command-queue slot,
 * since it first used a sim device: what a thread waits on in the model,
 * as opposed to what it does. Either may be NULL. */
void sim_thread_waits(uint64_t *lock_ns, uint64_t *cmdq_ns);

/* Test hook: take the device lock (qpn 0) or the lock of QP qpn's slot
 * and return without releasing it, so a test can kill the holder and check
 * the lock is recovered. */
int sim_debug_hold_lock(struct sim_dev *dev, uint32_t qpn);
/* Test hook: take domain dom's lock shared or exclusive, or a
 * command-queue slot, and return without releasing it. */
enum { SIM_HOLD_SHARED = 1, SIM_HOLD_EXCLUSIVE = 2, SIM_HOLD_CMDQ = 3 };
int sim_debug_hold_domain(struct sim_dom *dom, int how);
/* Test hook: the command queue at rest or not: the waiters spinning for a
 * slot and the slots due back (their commands under way). */
void sim_debug_cmdq(struct sim_dev *dev, uint32_t *spinners, uint32_t *busy);
/* Test hook: how long a lock may stay held before an operation gives up
 * with EDEADLK (default 30 s; ms <= 0 restores it). */
void sim_debug_lock_patience(int ms);

/* sim_guard (sim_guard.c): a SIGBUS inside a sim mapping (its file
 * truncated while in use) ends the process with one line naming the file
 * and exit status SIM_GUARD_EXIT instead of a crash dump. sim_open and
 * sim_close register their mappings; sim_guard_install puts the handler
 * in place (the Go provider calls it; returns 0 or an errno). */
#define SIM_GUARD_EXIT 75
/* sim_file_intact is EIO when the device file was cut short under dev's
 * mapping (the next touch past its end would be that SIGBUS), else 0: a
 * process that must outlive the device (the coordinator) asks before it
 * touches it; sim_close and sim_close_domain ask themselves. */
int sim_file_intact(const struct sim_dev *dev);
int sim_guard_install(void);
void sim_guard_add(const void *addr, size_t len, const char *path);
void sim_guard_remove(const void *addr);

extern const struct xb_ops xb_sim_ops;

/* xb_sim_mlnx_ops: the sim device behind MLNX_OFED's legacy layer
 * (sim_mlnx.c), --sim-semantics legacy-mlnx. */
extern const struct xb_ops xb_sim_mlnx_ops;

#endif
