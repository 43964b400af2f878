/*
 * fakeverbs.c: a test double of libibverbs.so.1 (rdma-core), backed by the
 * sim core (../sim.c), so the rdma and legacy providers, and rdma-core's
 * own tools, run without RDMA hardware or RDMA in the kernel:
 *
 *   LD_LIBRARY_PATH=build/fakeverbs ibv_devinfo -v
 *
 * What is real: the SONAME, the symbol versions (libibverbs.map), and
 * struct verbs_context laid out by the installed <infiniband/verbs.h>, with
 * abi_compat and sz set as rdma-core's verbs_init_and_alloc_context sets
 * them and every op slot filled as verbs_init_context fills it (an op a
 * device lacks is a stub failing EOPNOTSUPP, as rdma-core's dummy ops), so
 * the static inlines (ibv_open_xrcd, ibv_create_qp_ex, ibv_open_qp,
 * ibv_close_xrcd, ibv_query_port) reach this file through the same slots
 * as they reach a provider. What the ops do past that is the sim's model of
 * the kernel's XRC semantics, not any provider's code (no mlx5 firmware
 * commands, no udata, no doorbells). XRC domains and receive QPs live in
 * the sim device, shared by every process that uses the same directory,
 * with the kernel's semantics (upstream handles for the verbs_context ops,
 * legacy registrations for the OFED calls).
 *
 * QP states: ibv_modify_qp moves an XRC receive QP through RESET, INIT
 * and RTR with the kernel's checks (qp_state_table's required and allowed
 * attribute masks for XRC_TGT, the port, pkey index, address and MTU),
 * the state kept in the sim QP and so shared by every handle.
 *
 * What is not: no MRs or data path. PDs and CQs are bare handles, and an
 * XRC send (XRC_INI) QP is only a number, enough for a receive QP's RTR
 * destination. Other calls fail with EOPNOTSUPP rather than pretend.
 *
 * Configuration, read once per process from the environment:
 *   XRCBENCH_FAKEVERBS_DIR      state directory (sim devices, a fake sysfs);
 *                               default /tmp/xrcbench-fakeverbs-<uid>, made
 *                               0700; an existing one must be ours, 0700
 *                               and not a symbolic link (see open_state)
 *   XRCBENCH_FAKEVERBS_DEVICES  comma-separated devices, each NAME[:FLAG...]
 *                               with flags noxrc (no IBV_DEVICE_XRC, the XRCD
 *                               ops are EOPNOTSUPP stubs, like rxe), noopenqp
 *                               (XRC, but open_qp is a stub, like qedr),
 *                               eacces (opening the uverbs file is
 *                               denied), portdown (the port is DOWN,
 *                               no LID), noaddr (ACTIVE, but LID 0),
 *                               roce (Ethernet ports addressed by GIDs,
 *                               no LID: per port a RoCE v1 and a v2 entry
 *                               for each of a link-local, an IPv4-mapped
 *                               192.0.2.P and an IPv6 2001:db8::P address,
 *                               indexes 0-5 of an 8-entry table, 6 and 7
 *                               empty), ports=N (N ports, 1-4, port P
 *                               with LID P), down=P (port P is DOWN;
 *                               repeatable), silentdestroy (the last
 *                               handle's ibv_destroy_qp returns 0 but the
 *                               hardware keeps the QP, as when the
 *                               kernel's shared-QP path ignores a failed
 *                               destroy), mlx5 (driver mlx5_core, with
 *                               mlx5's debugfs command counters: see
 *                               "mlx5's debugfs command counters"
 *                               below), fwfail=CMD (mlx5, and every CMD
 *                               fails in the firmware unreported),
 *                               driver=NAME;
 *                               default "xbfake0". "none": the
 *                               kernel has no RDMA (NULL list, ENOSYS);
 *                               "empty": no devices.
 *   XRCBENCH_FAKEVERBS_NOXRC    set to 1: every device lacks XRC
 *   XRCBENCH_FAKEVERBS_COST     sim cost model as --sim-cost takes it,
 *                               e.g. reg=2us,destroy=5.6us;
 *                               a new one on a device no live process uses
 *                               applies (the device is made afresh), on one
 *                               in use fails the open with a line saying so
 *   XRCBENCH_FAKEVERBS_FW_VER   the firmware version every device reports
 *                               (ibv_query_device, sysfs fw_ver), default
 *                               99.1.0: a test plays firmware builds with it
 *   XRCBENCH_FAKEVERBS_LEGACY   which library's legacy XRC calls the double
 *                               plays: "ofed1" (OFED 1.x: the kernel's
 *                               registrations, one per context) or
 *                               "mlnx-compat" (MLNX_OFED 2.x-4.x: a layer
 *                               over the upstream ops with one table of
 *                               QPs per process, below); default the
 *                               build's own (FAKE_LEGACY_DEFAULT)
 *
 * Two builds, one source: build/fakeverbs/libibverbs.so.1 plays OFED 1.x,
 * build/fakeverbs/mlnx-compat/libibverbs.so.1 (FAKE_MLNX_EXPORTS) plays
 * MLNX_OFED and also exports, at IBVERBS_1.1 as MLNX_OFED's
 * libibverbs.map does, the command calls that library's providers build
 * open_xrcd and open_qp on (ibv_cmd_open_xrcd, ibv_cmd_open_qp; here they
 * fail ENOSYS: only a provider calls them). Both export the legacy calls at
 * IBVERBS_1.1, as both real maps do. XRCBENCH_FAKEVERBS_LEGACY set against
 * its build plays a library whose exports and answers disagree.
 *
 * mlnx-compat, as MLNX_OFED's src/verbs.c: ibv_open_xrc_domain returns the
 * upstream struct ibv_xrcd (no handle at offset 8), ibv_create_xrc_rcv_qp
 * is create_qp_ex(XRC_RECV), ibv_reg_xrc_rcv_qp is open_qp, and each
 * opened QP goes into one process-wide table keyed by QP number only: a
 * second one for a number already there is destroyed again and answered
 * EEXIST; unreg (ibv_destroy_qp) and modify (ibv_modify_qp) find the
 * handle by number whatever the domain, EINVAL when there is none. As in
 * that library, ibv_close_device leaves the context's entries in the table;
 * where the library would then touch freed memory (an unreg or modify of
 * such an entry), the double says so on stderr and aborts, so that a
 * caller closing in the wrong order fails loudly, not by chance.
 *
 * The ports and GID tables are laid out in the fake sysfs as the kernel
 * does (ports/P/{state,link_layer,gids/I,gid_attrs/types/I}), and the
 * last modify to RTR the double accepted on a device is recorded in the
 * state folder, file rtr-<device>: "port P sgid_index I" (or "port P lid
 * L" without a GRH), so a test can see which port and GID the provider
 * used. The file is written when a context of that device closes
 * (ibv_close_device), not inside the modify: a modify is a timed
 * operation, and a file made and renamed in a folder on disk took 150-380
 * us against a 10 us injected cost. A silentdestroy
 * device appends the QP number of each destruction it did not perform to
 * silent-<device> (hex, one a line): the QPs its hardware still has, which
 * xrcbench reads as the device's list (verbs.DeviceQPs) as it reads RDMA
 * netlink for a kernel device.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "legacy_abi.h"
#include "qpntable.h"
#include "sim.h"

/* The legacy layouts must agree with the upstream ones where they overlap:
 * this is the ABI assumption of legacy_abi.h, checked where both exist. */
_Static_assert(offsetof(struct xb_legacy_qp_init_attr, sq_sig_all) == offsetof(struct ibv_qp_init_attr, sq_sig_all),
	       "legacy ibv_qp_init_attr prefix differs from upstream");
_Static_assert(offsetof(struct xb_legacy_qp_init_attr, xrc_domain) == sizeof(struct ibv_qp_init_attr),
	       "legacy xrc_domain is not right after the upstream fields");
_Static_assert(sizeof(struct xb_legacy_device_attr) == sizeof(struct ibv_device_attr), "ibv_device_attr layout");
_Static_assert(offsetof(struct xb_legacy_device_attr, phys_port_cnt) == offsetof(struct ibv_device_attr, phys_port_cnt),
	       "ibv_device_attr layout");
_Static_assert(offsetof(struct xb_legacy_device, ibdev_path) == offsetof(struct ibv_device, ibdev_path),
	       "ibv_device layout");
_Static_assert(sizeof(struct xb_legacy_qp_attr) == sizeof(struct ibv_qp_attr), "ibv_qp_attr layout");
_Static_assert(offsetof(struct xb_legacy_qp_attr, ah_attr) == offsetof(struct ibv_qp_attr, ah_attr), "ibv_qp_attr layout");
_Static_assert(offsetof(struct xb_legacy_qp_attr, alt_timeout) == offsetof(struct ibv_qp_attr, alt_timeout),
	       "ibv_qp_attr layout");
_Static_assert(sizeof(struct xb_legacy_ah_attr) == sizeof(struct ibv_ah_attr), "ibv_ah_attr layout");
_Static_assert(offsetof(struct xb_legacy_ah_attr, port_num) == offsetof(struct ibv_ah_attr, port_num), "ibv_ah_attr layout");
_Static_assert(offsetof(struct xb_legacy_port_attr, link_layer) == offsetof(struct ibv_port_attr, link_layer),
	       "ibv_port_attr layout");
_Static_assert(offsetof(struct xb_legacy_port_attr, room) >= offsetof(struct ibv_port_attr, flags), "ibv_port_attr layout");
_Static_assert(offsetof(struct xb_legacy_qp, qp_num) == offsetof(struct ibv_qp, qp_num), "ibv_qp layout");
_Static_assert(XB_LEGACY_QP_STATE == IBV_QP_STATE && XB_LEGACY_QP_ACCESS_FLAGS == IBV_QP_ACCESS_FLAGS &&
		       XB_LEGACY_QP_PKEY_INDEX == IBV_QP_PKEY_INDEX && XB_LEGACY_QP_PORT == IBV_QP_PORT &&
		       XB_LEGACY_QP_AV == IBV_QP_AV && XB_LEGACY_QP_RQ_PSN == IBV_QP_RQ_PSN &&
		       XB_LEGACY_QP_MIN_RNR_TIMER == IBV_QP_MIN_RNR_TIMER &&
		       XB_LEGACY_QP_MAX_DEST_RD_ATOMIC == IBV_QP_MAX_DEST_RD_ATOMIC &&
		       XB_LEGACY_QP_PATH_MTU == IBV_QP_PATH_MTU && XB_LEGACY_QP_DEST_QPN == IBV_QP_DEST_QPN,
	       "ibv_qp_attr_mask values");
_Static_assert(XB_LEGACY_ACCESS_REMOTE_WRITE == IBV_ACCESS_REMOTE_WRITE &&
		       XB_LEGACY_ACCESS_REMOTE_READ == IBV_ACCESS_REMOTE_READ && XB_LEGACY_PORT_ACTIVE == IBV_PORT_ACTIVE &&
		       XB_LEGACY_LINK_LAYER_ETHERNET == IBV_LINK_LAYER_ETHERNET,
	       "access, port state and link layer values");
_Static_assert((int)XB_QPS_RESET == (int)IBV_QPS_RESET && (int)XB_QPS_INIT == (int)IBV_QPS_INIT &&
		       (int)XB_QPS_RTR == (int)IBV_QPS_RTR,
	       "enum xb_qp_state follows enum ibv_qp_state");

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 16
#define FAKE_MAX_PORTS 4
#define ROCE_GID_TBL_LEN 8 /* entries 0-5 in use, 6 and 7 empty */

/* The marker of the double: a symbol no rdma-core exports, so xrcbench
 * (verbs/devinfo.go) can tell from the loaded library itself, not from its
 * file name, that its numbers are not hardware. */
EXPORT const char xrcbench_fakeverbs_test_double[] = "xrcbench fakeverbs: a test double of libibverbs, not hardware";

#define CTX_MAGIC 0x78626374u /* "xbct" */

struct fake_device {
	struct ibv_device dev; /* what applications see */
	int index;
	int noxrc, noopenqp, eacces, portdown, noaddr, roce;
	int silentdestroy; /* see XRCBENCH_FAKEVERBS_DEVICES */
	int mlx5;          /* mlx5's debugfs command counters (mlx5, fwfail=CMD) */
	unsigned fwfail;   /* bit C: every enum fw_cmd C fails in the firmware */
	int nports;     /* 1 to FAKE_MAX_PORTS */
	unsigned down;  /* bit P: port P is DOWN */
	char driver[64];
	char simdir[512];
	/* The last RTR this process's modifies of the device accepted, and
	 * whether rtr-<device> has it yet (under rtr_lock; see record_rtr). */
	char rtr[96];
	int rtr_unwritten;
};

struct fake_qp;
struct fake_xrcd;
struct fake_ldom;

struct fake_ctx {
	struct verbs_context vctx; /* first, as in every rdma-core provider */
	uint32_t magic;
	struct fake_device *fdev;
	struct sim_dev *sim; /* this context is one registrant */
	pthread_mutex_t lock; /* guards the lists below */
	struct fake_xrcd *xrcds;
	struct fake_qp *qps;
	struct fake_ldom *ldoms;
};

struct fake_xrcd {
	struct ibv_xrcd xrcd;
	struct fake_ctx *ctx;
	struct sim_dom *dom;
	unsigned qps; /* handles that reference it: the kernel's usecnt */
	struct fake_xrcd *next;
};

struct fake_qp {
	struct ibv_qp qp;
	struct fake_xrcd *xrcd; /* NULL for an XRC send QP */
	struct fake_qp *next;
};

struct fake_ldom {
	struct xb_legacy_xrc_domain pub; /* what the legacy API hands out */
	uint32_t magic;
	struct fake_ctx *ctx;
	struct sim_dom *dom;
	struct fake_ldom *next;
};

static struct {
	pthread_once_t once;
	int list_errno; /* "none": ibv_get_device_list fails with this */
	int n;
	struct fake_device devs[MAX_DEVICES];
	char dir[512];
	int dirfd; /* the state folder, checked (open_state) */
	char sysfs[600];
	struct sim_config cfg;
	char fw_ver[64]; /* XRCBENCH_FAKEVERBS_FW_VER, as ibv_device_attr.fw_ver */
	int mlnx;        /* XRCBENCH_FAKEVERBS_LEGACY=mlnx-compat */
} g = {.once = PTHREAD_ONCE_INIT, .dirfd = -1, .fw_ver = "99.1.0"};

/* ---- configuration and the fake sysfs ----------------------------------- */

/*
 * The state folder is shared memory and files every process using the
 * double trusts, under a predictable default name in /tmp. So it is made
 * 0700, and one that exists already is used only when it is a real folder
 * of ours closed to group and other (a line on stderr says why not); every
 * file in it is made relative to its fd (g.dirfd) with O_NOFOLLOW, and a
 * file is written only through a name it has just created (O_EXCL), then
 * renamed into place: nothing planted there is ever written through.
 */

/* mkdirs makes the parents of a state folder given in the environment:
 * those are the user's own choice, as with mkdir -p. */
static int mkdirs(const char *path)
{
	char buf[1024];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return errno;
		*p = '/';
	}
	return 0;
}

static void refuse_state(const char *why)
{
	fprintf(stderr, "fakeverbs: state folder %s %s: refusing it (remove it, or set XRCBENCH_FAKEVERBS_DIR "
			"to a folder of yours with mode 0700)\n", g.dir, why);
}

/* open_state makes or opens the state folder and keeps its fd in g.dirfd;
 * 0 or an errno, with the line already written. */
static int open_state(int from_env)
{
	struct stat st;
	char why[128];
	int rc;

	if (from_env && (rc = mkdirs(g.dir)) != 0) {
		fprintf(stderr, "fakeverbs: cannot make the parents of state folder %s: %s\n", g.dir, strerror(rc));
		return rc;
	}
	if (mkdir(g.dir, 0700) != 0 && errno != EEXIST) {
		rc = errno;
		fprintf(stderr, "fakeverbs: cannot make state folder %s: %s\n", g.dir, strerror(rc));
		return rc;
	}
	g.dirfd = open(g.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g.dirfd < 0) {
		rc = errno;
		refuse_state(rc == ELOOP || rc == ENOTDIR ? "is a symbolic link or not a folder" : strerror(rc));
		return rc;
	}
	if (fstat(g.dirfd, &st) != 0)
		return errno;
	if (st.st_uid != geteuid()) {
		snprintf(why, sizeof(why), "belongs to uid %u, not to this process's uid %u", (unsigned)st.st_uid,
			 (unsigned)geteuid());
		refuse_state(why);
		return EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(why, sizeof(why), "is open to group or other (mode %04o)", (unsigned)(st.st_mode & 07777));
		refuse_state(why);
		return EPERM;
	}
	return 0;
}

/* dir_at opens (making) the folder rel under the state folder, one
 * component at a time, never following a symbolic link. */
static int dir_at(const char *rel)
{
	char buf[1024];
	int fd = dup(g.dirfd);

	if (fd < 0)
		return -1;
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next;

		if (mkdirat(fd, c, 0700) != 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	return fd;
}

/* put writes a sysfs-like file atomically (processes start concurrently):
 * into a name it creates exclusively, then renamed over the old one. */
static int put(int dfd, const char *name, const char *value)
{
	char tmp[300];
	int fd, rc = 0;
	size_t len = strlen(value);

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) { /* left by a dead process of our pid: ours to remove */
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return errno;
	if (write(fd, value, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		rc = errno ? errno : EIO;
	if (close(fd) != 0 && rc == 0)
		rc = errno;
	if (rc == 0 && renameat(dfd, tmp, dfd, name) != 0)
		rc = errno;
	if (rc)
		unlinkat(dfd, tmp, 0);
	return rc;
}

static int link_to(const char *target, int dfd, const char *name)
{
	return symlinkat(target, dfd, name) != 0 && errno != EEXIST ? errno : 0;
}

static uint64_t node_guid(int index)
{
	return 0xfa4e000000000000ull | ((uint64_t)(index + 1) << 8);
}

/* The version the double's driver module reports (sysfs module/version),
 * as MLNX_OFED's modules do. */
#define FAKE_DRIVER_VERSION "xrcbench-fakeverbs-1"

static void fill_port(const struct fake_device *d, unsigned port, struct ibv_port_attr *p);
static int port_gid(const struct fake_device *d, unsigned port, unsigned index, union ibv_gid *gid, int *type);

/* make_sysfs_ports writes each port's state, link layer and GID table
 * under cls (ports/P/gids/I, eight groups of four hex digits, and
 * gid_attrs/types/I for a used entry, "IB/RoCE v1" or "RoCE v2"), as the
 * kernel's sysfs.c shows them: what devices reads to list the GIDs. */
static int make_sysfs_ports(const struct fake_device *d, const char *cls)
{
	static const char *const states[] = {"0: NOP", "1: DOWN", "2: INIT", "3: ARMED", "4: ACTIVE", "5: ACTIVE_DEFER"};
	char dir[400], buf[64];
	int rc = 0;

	for (int port = 1; port <= d->nports && rc == 0; port++) {
		struct ibv_port_attr pa;
		int pfd, gfd = -1, tfd = -1;

		fill_port(d, (unsigned)port, &pa);
		snprintf(dir, sizeof(dir), "%s/ports/%d", cls, port);
		if ((pfd = dir_at(dir)) < 0)
			return errno;
		snprintf(dir, sizeof(dir), "%s/ports/%d/gids", cls, port);
		gfd = dir_at(dir);
		snprintf(dir, sizeof(dir), "%s/ports/%d/gid_attrs/types", cls, port);
		tfd = dir_at(dir);
		if (gfd < 0 || tfd < 0)
			rc = errno;
		if (rc == 0)
			rc = put(pfd, "state", states[pa.state <= IBV_PORT_ACTIVE_DEFER ? pa.state : 0]);
		if (rc == 0)
			rc = put(pfd, "link_layer", pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
		for (int i = 0; rc == 0 && i < pa.gid_tbl_len; i++) {
			union ibv_gid gid;
			int type;
			char name[16];

			port_gid(d, (unsigned)port, (unsigned)i, &gid, &type);
			snprintf(name, sizeof(name), "%d", i);
			snprintf(buf, sizeof(buf), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
				 gid.raw[0], gid.raw[1], gid.raw[2], gid.raw[3], gid.raw[4], gid.raw[5], gid.raw[6],
				 gid.raw[7], gid.raw[8], gid.raw[9], gid.raw[10], gid.raw[11], gid.raw[12], gid.raw[13],
				 gid.raw[14], gid.raw[15]);
			rc = put(gfd, name, buf);
			/* the kernel has no type for an empty entry (EINVAL on read) */
			if (rc == 0 && memcmp(&gid, &(union ibv_gid){0}, sizeof(gid)))
				rc = put(tfd, name, type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
		}
		close(pfd);
		if (gfd >= 0)
			close(gfd);
		if (tfd >= 0)
			close(tfd);
	}
	return rc;
}

/* make_sysfs lays out what rdma-core and xrcbench read about a device:
 * <sysfs>/class/infiniband/<name>/{fw_ver,node_guid,board_id,hca_type}
 * with device -> a PCI-named directory holding numa_node, the PCIe link
 * (current_link_speed, current_link_width) and driver, whose module ->
 * <sysfs>/module/<driver> holds its version: the whole path a result's
 * bill of materials reads on an adapter. 0 or an errno. */
static int make_sysfs(struct fake_device *d)
{
	char cls[300], pci[300], drv[300], verbs[300], mod[300], buf[128], target[1100];
	uint64_t guid = node_guid(d->index);
	int cfd = -1, pfd = -1, dfd = -1, vfd = -1, mfd = -1, rc = 0;

	snprintf(cls, sizeof(cls), "sysfs/class/infiniband/%s", d->dev.name);
	snprintf(pci, sizeof(pci), "sysfs/devices/pci0000:fa/0000:fa:00.%d", d->index % 8);
	snprintf(drv, sizeof(drv), "sysfs/bus/pci/drivers/%s", d->driver);
	snprintf(verbs, sizeof(verbs), "sysfs/class/infiniband_verbs/%s", d->dev.dev_name);
	snprintf(mod, sizeof(mod), "sysfs/module/%s", d->driver);
	if ((cfd = dir_at(cls)) < 0 || (pfd = dir_at(pci)) < 0 || (dfd = dir_at(drv)) < 0 || (vfd = dir_at(verbs)) < 0 ||
	    (mfd = dir_at(mod)) < 0) {
		rc = errno;
		goto out;
	}
	snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	if ((rc = put(cfd, "node_guid", buf)) || (rc = put(cfd, "fw_ver", g.fw_ver)) ||
	    (rc = put(cfd, "board_id", "XRCBENCH_FAKE_0001")) || (rc = put(cfd, "hca_type", "xrcbench fakeverbs")) ||
	    (rc = put(cfd, "node_type", "1: CA")) || (rc = put(pfd, "numa_node", "0")) ||
	    (rc = put(pfd, "current_link_speed", "16.0 GT/s PCIe")) || (rc = put(pfd, "current_link_width", "16")) ||
	    (rc = put(mfd, "version", FAKE_DRIVER_VERSION)) || (rc = put(vfd, "ibdev", d->dev.name)))
		goto out;
	snprintf(target, sizeof(target), "%s/%s", g.dir, pci);
	if ((rc = link_to(target, cfd, "device")) != 0)
		goto out;
	snprintf(target, sizeof(target), "%s/%s", g.dir, mod);
	if ((rc = link_to(target, dfd, "module")) != 0)
		goto out;
	snprintf(target, sizeof(target), "%s/%s", g.dir, drv);
	if ((rc = link_to(target, pfd, "driver")) != 0)
		goto out;
	rc = make_sysfs_ports(d, cls);
out:
	for (int *fd = (int[]){cfd, pfd, dfd, vfd, mfd}, i = 0; i < 5; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return rc;
}

/* parse_dur reads [s, e) as Go's time.ParseDuration reads a --sim-cost
 * duration (verbs.ParseCost), so the double and the sim take the same
 * strings for the same nanoseconds: [+-]?([0-9]*(.[0-9]*)?UNIT)+ with UNIT
 * ns, us, µs, μs, ms, s, m or h, or a bare 0; a fraction truncated to the
 * nanosecond by the same double arithmetic (5.6us is 5600ns), digits past
 * what 63 bits hold ignored. Only 0 to 10 s is taken, as ParseCost's: a
 * negative or longer one is EINVAL, so nothing can overflow on the way. */
static int parse_dur(const char *s, const char *e, uint64_t *out)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {{"ns", 1},
		     {"us", 1000},
		     {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
		     {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
		     {"ms", 1000000},
		     {"s", 1000000000ull},
		     {"m", 60000000000ull},
		     {"h", 3600000000000ull}};
	const uint64_t most = 10000000000ull;
	uint64_t d = 0;
	int neg = 0;

#define DIGIT(c) ((c) >= '0' && (c) <= '9')
	if (s < e && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	if (e - s == 1 && *s == '0') {
		*out = 0;
		return 0;
	}
	if (s == e)
		return EINVAL;
	while (s < e) {
		uint64_t v = 0, f = 0, unit = 0;
		double scale = 1;
		const char *from = s;
		int pre, post = 0, overflow = 0;

		if (*s != '.' && !DIGIT(*s))
			return EINVAL;
		for (; s < e && DIGIT(*s); s++) {
			if (v > most)
				return EINVAL; /* too long already, whatever the unit */
			v = v * 10 + (uint64_t)(*s - '0');
		}
		pre = s != from;
		if (s < e && *s == '.') {
			from = ++s;
			for (; s < e && DIGIT(*s); s++) {
				uint64_t y;

				if (overflow)
					continue;
				if (f > (UINT64_C(1) << 63) / 10) {
					overflow = 1;
					continue;
				}
				y = f * 10 + (uint64_t)(*s - '0');
				if (y > UINT64_C(1) << 63) {
					overflow = 1;
					continue;
				}
				f = y;
				scale *= 10;
			}
			post = s != from;
		}
		if (!pre && !post)
			return EINVAL;
		from = s;
		while (s < e && *s != '.' && !DIGIT(*s))
			s++;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].name) == (size_t)(s - from) && !memcmp(units[i].name, from, s - from))
				unit = units[i].ns;
		if (unit == 0 || v > most / unit)
			return EINVAL;
		v *= unit;
		if (f > 0)
			v += (uint64_t)((double)f * ((double)unit / scale));
		if ((d += v) > most)
			return EINVAL;
	}
#undef DIGIT
	if (neg && d > 0)
		return EINVAL;
	*out = d;
	return 0;
}

/* parse_cost reads "op=DUR,..." as --sim-cost does (verbs.ParseCost): the
 * parts trimmed of spaces, each operation at most once, DUR as parse_dur
 * reads it; 0 or EINVAL, with the line written: a typo must not quietly
 * give another cost. */
static int parse_cost(const char *spec)
{
	static const char *const ops[] = {"create", "reg", "unreg", "destroy", "modify", "reset"};
	uint64_t *const fields[] = {&g.cfg.cost_create_ns,  &g.cfg.cost_reg_ns,	   &g.cfg.cost_unreg_ns,
				    &g.cfg.cost_destroy_ns, &g.cfg.cost_modify_ns, &g.cfg.cost_reset_ns};
	uint64_t val[6] = {0};
	int seen[6] = {0};
	const char *p = spec;

	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (!*p)
		return 0;
	for (const char *part = spec;; part++) {
		const char *end = strchrnul(part, ','), *a = part, *b = end, *eq;
		size_t op = 0;

		while (a < b && (*a == ' ' || (*a >= '\t' && *a <= '\r')))
			a++;
		while (b > a && (b[-1] == ' ' || (b[-1] >= '\t' && b[-1] <= '\r')))
			b--;
		eq = memchr(a, '=', b - a);
		for (; eq && op < 6; op++)
			if (strlen(ops[op]) == (size_t)(eq - a) && !memcmp(ops[op], a, eq - a))
				break;
		if (eq && op == 6) {
			fprintf(stderr, "fakeverbs: XRCBENCH_FAKEVERBS_COST=%s: unknown operation \"%.*s\" "
					"(have create, reg, unreg, destroy, modify, reset)\n", spec, (int)(eq - a), a);
			return EINVAL;
		}
		if (!eq || seen[op] || parse_dur(eq + 1, b, &val[op]) != 0) {
			fprintf(stderr, "fakeverbs: XRCBENCH_FAKEVERBS_COST=%s: bad part \"%.*s\" (want OP=DURATION as "
					"--sim-cost takes, each OP once, at most 10s, e.g. reg=2us,destroy=5.6us)\n",
				spec, (int)(b - a), a);
			return EINVAL;
		}
		seen[op] = 1;
		if (!*end)
			break;
		part = end;
	}
	for (size_t op = 0; op < 6; op++)
		if (seen[op])
			*fields[op] = val[op];
	return 0;
}

/* parse_fw_ver takes the firmware version the double reports, so a test
 * can play a baseline firmware and a candidate: what fits
 * ibv_device_attr.fw_ver and a sysfs line (printable, no '/', at most 63
 * bytes). 0 or EINVAL, with the line written. */
static int parse_fw_ver(const char *v)
{
	size_t n = strlen(v);
	int ok = n > 0 && n < sizeof(g.fw_ver);

	for (size_t i = 0; ok && i < n; i++)
		ok = v[i] > ' ' && v[i] < 0x7f && v[i] != '/';
	if (!ok) {
		fprintf(stderr, "fakeverbs: XRCBENCH_FAKEVERBS_FW_VER=\"%.80s\": want 1 to %zu printable characters "
				"without spaces or '/', e.g. 22.31.1014\n", v, sizeof(g.fw_ver) - 1);
		return EINVAL;
	}
	snprintf(g.fw_ver, sizeof(g.fw_ver), "%s", v);
	return 0;
}

/* ---- mlx5's debugfs command counters ----------------------------------
 *
 * A device with the flag mlx5 (driver mlx5_core unless driver= says
 * otherwise) keeps, as mlx5's debugfs.c does, per firmware command
 *
 *	<state>/debugfs/mlx5/<pci>/commands/<CMD>/{n,average,failed,
 *	    failed_mbox_status,last_failed_errno,last_failed_mbox_status,
 *	    last_failed_syndrome}
 *
 * for the commands of an XRC receive QP's life the upstream calls issue:
 * CREATE_QP (ibv_create_qp_ex), RST2INIT_QP and INIT2RTR_QP (ibv_modify_qp),
 * DESTROY_QP (the destroy of the last handle, or of what a closing context
 * held). Not 2RST_QP: the double would have to look up the QP's state
 * inside the timed destroy. The legacy calls are not counted. Counts are
 * kept in memory inside the timed calls and added to the files when a
 * context closes (ibv_close_device), under a lock file, as write_rtr
 * does: xrcbench reads them before and after a run, outside it.
 * fwfail=CMD: every CMD fails in the firmware with a bad mailbox status
 * (BAD_PARAM, 0x3; syndrome FW_FAIL_SYNDROME) that the verb does not
 * report (it succeeds), counted as mlx5's cmd_status_log counts it: failed
 * and failed_mbox_status, errno EREMOTEIO. */
enum fw_cmd { FW_CREATE_QP, FW_RST2INIT_QP, FW_INIT2RTR_QP, FW_DESTROY_QP, FW_NCMDS };

static const char *const fw_cmd_names[FW_NCMDS] = {"CREATE_QP", "RST2INIT_QP", "INIT2RTR_QP", "DESTROY_QP"};

#define FW_FAIL_STATUS 0x3u /* MLX5_CMD_STAT_BAD_PARAM_ERR */
#define FW_FAIL_SYNDROME 0x1ab2c3d4u

static pthread_mutex_t fw_lock = PTHREAD_MUTEX_INITIALIZER;
/* Not yet in the files: per device and command, the count and the sum of
 * durations (under fw_lock). */
static uint64_t fw_n[MAX_DEVICES][FW_NCMDS], fw_sum[MAX_DEVICES][FW_NCMDS];

static int fw_cmd_of(const char *name)
{
	for (int i = 0; i < FW_NCMDS; i++)
		if (!strcmp(name, fw_cmd_names[i]))
			return i;
	return -1;
}

static uint64_t fw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* fw_count counts one command of device d that took since t0. */
static void fw_count(const struct fake_device *d, enum fw_cmd c, uint64_t t0)
{
	if (!d->mlx5)
		return;
	uint64_t dt = fw_now() - t0;

	pthread_mutex_lock(&fw_lock);
	fw_n[d->index][c]++;
	fw_sum[d->index][c] += dt;
	pthread_mutex_unlock(&fw_lock);
}

/* fw_dir opens device d's commands folder (made if need be) and takes its
 * lock file: the lock's descriptor, the folder's in *dfd, or -1. */
static int fw_dir(const struct fake_device *d, int *dfd)
{
	char rel[128];
	int lfd;

	snprintf(rel, sizeof(rel), "debugfs/mlx5/0000:fa:00.%d/commands", d->index % 8);
	if ((*dfd = dir_at(rel)) < 0)
		return -1;
	lfd = openat(*dfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) != 0) {
		if (lfd >= 0)
			close(lfd);
		close(*dfd);
		return -1;
	}
	return lfd;
}

/* fw_get reads a counter file of folder dfd; 0 when absent or garbled. */
static uint64_t fw_get(int dfd, const char *name)
{
	char buf[64];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 0);
}

static int fw_put(int dfd, const char *name, const char *format, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), format, (unsigned long long)v);
	return put(dfd, name, buf);
}

/* fw_update adds n commands taking sum ns to command c's files in folder
 * cfd (all zero when made: fresh), failing them all when fail is set. */
static int fw_update(int cfd, uint64_t n, uint64_t sum, int fail, int fresh)
{
	uint64_t n0 = fresh ? 0 : fw_get(cfd, "n"), avg0 = fresh ? 0 : fw_get(cfd, "average");
	uint64_t failed = fresh ? 0 : fw_get(cfd, "failed"), mbox = fresh ? 0 : fw_get(cfd, "failed_mbox_status");
	uint64_t total = n0 + n;
	int rc;

	/* The kernel's average is sum / n in whole ns; the double keeps no
	 * sum, so the old one is recovered as avg0 * n0. */
	if ((rc = fw_put(cfd, "n", "%llu", total)) ||
	    (rc = fw_put(cfd, "average", "%llu", total ? (avg0 * n0 + sum) / total : 0)))
		return rc;
	if (!fresh && !(fail && n))
		return 0;
	if (fail)
		failed += n, mbox += n;
	if ((rc = fw_put(cfd, "failed", "%llu", failed)) || (rc = fw_put(cfd, "failed_mbox_status", "%llu", mbox)) ||
	    (rc = fw_put(cfd, "last_failed_errno", "%llu", fail && n ? EREMOTEIO : 0)) ||
	    (rc = fw_put(cfd, "last_failed_mbox_status", "%llu", fail && n ? FW_FAIL_STATUS : 0)) ||
	    (rc = fw_put(cfd, "last_failed_syndrome", "0x%08llx", fail && n ? FW_FAIL_SYNDROME : 0)))
		return rc;
	return 0;
}

/* fw_flush adds what this process counted on device d to its files
 * (fresh: lays them out at zero where a command has none yet). */
static int fw_flush(struct fake_device *d, int fresh)
{
	uint64_t n[FW_NCMDS], sum[FW_NCMDS];
	int dfd, lfd, rc = 0, any = fresh;

	if (!d->mlx5)
		return 0;
	pthread_mutex_lock(&fw_lock);
	for (int i = 0; i < FW_NCMDS; i++) {
		n[i] = fw_n[d->index][i], sum[i] = fw_sum[d->index][i];
		fw_n[d->index][i] = fw_sum[d->index][i] = 0;
		any |= n[i] != 0;
	}
	pthread_mutex_unlock(&fw_lock);
	if (!any)
		return 0;
	if ((lfd = fw_dir(d, &dfd)) < 0)
		return errno ? errno : EIO;
	for (int i = 0; i < FW_NCMDS && rc == 0; i++) {
		int cfd, made;

		if (mkdirat(dfd, fw_cmd_names[i], 0700) != 0 && errno != EEXIST) {
			rc = errno;
			break;
		}
		if ((cfd = openat(dfd, fw_cmd_names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = errno;
			break;
		}
		made = faccessat(cfd, "n", F_OK, AT_SYMLINK_NOFOLLOW) != 0;
		if (!fresh || made)
			rc = fw_update(cfd, n[i], sum[i], !!(d->fwfail & (1u << i)), made);
		close(cfd);
	}
	flock(lfd, LOCK_UN);
	close(lfd);
	close(dfd);
	return rc;
}

/* fw_init lays out device d's counters where no process has yet. */
static int fw_init(struct fake_device *d) { return fw_flush(d, 1); }

static void add_device(char *spec)
{
	char *save = NULL, *name = strtok_r(spec, ":", &save);
	struct fake_device *d;
	const char *noxrc = getenv("XRCBENCH_FAKEVERBS_NOXRC");
	int rc;

	if (!name || !*name || g.n == MAX_DEVICES)
		return;
	d = &g.devs[g.n];
	memset(d, 0, sizeof(*d));
	d->index = g.n;
	snprintf(d->driver, sizeof(d->driver), "xrcbench_fake");
	for (char *f = strtok_r(NULL, ":", &save); f; f = strtok_r(NULL, ":", &save)) {
		if (!strcmp(f, "noxrc"))
			d->noxrc = 1;
		else if (!strcmp(f, "noopenqp"))
			d->noopenqp = 1;
		else if (!strcmp(f, "eacces"))
			d->eacces = 1;
		else if (!strcmp(f, "portdown"))
			d->portdown = 1;
		else if (!strcmp(f, "noaddr"))
			d->noaddr = 1;
		else if (!strcmp(f, "roce"))
			d->roce = 1;
		else if (!strcmp(f, "silentdestroy"))
			d->silentdestroy = 1;
		else if (!strcmp(f, "mlx5"))
			d->mlx5 = 1;
		else if (!strncmp(f, "fwfail=", 7) && fw_cmd_of(f + 7) >= 0)
			d->mlx5 = 1, d->fwfail |= 1u << fw_cmd_of(f + 7);
		else if (!strncmp(f, "ports=", 6) && f[6] >= '1' && f[6] <= '0' + FAKE_MAX_PORTS && !f[7])
			d->nports = f[6] - '0';
		else if (!strncmp(f, "down=", 5) && f[5] >= '1' && f[5] <= '0' + FAKE_MAX_PORTS && !f[6])
			d->down |= 1u << (f[5] - '0');
		else if (!strncmp(f, "driver=", 7))
			snprintf(d->driver, sizeof(d->driver), "%s", f + 7);
		else {
			/* A typo must not quietly give a device other than the
			 * test asked for. */
			fprintf(stderr, "fakeverbs: XRCBENCH_FAKEVERBS_DEVICES: unknown flag \"%s\" of device %s "
					"(have noxrc, noopenqp, eacces, portdown, noaddr, roce, ports=1-%d, down=PORT, silentdestroy, "
					"mlx5, fwfail=CREATE_QP|RST2INIT_QP|INIT2RTR_QP|DESTROY_QP, driver=NAME)\n", f, name, FAKE_MAX_PORTS);
			g.list_errno = EINVAL;
			return;
		}
	}
	if (noxrc && !strcmp(noxrc, "1"))
		d->noxrc = 1;
	if (d->mlx5 && !strcmp(d->driver, "xrcbench_fake")) /* driver= may still name another */
		snprintf(d->driver, sizeof(d->driver), "mlx5_core");
	if (!d->nports)
		d->nports = 1;
	d->dev.node_type = IBV_NODE_CA;
	d->dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s", name);
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs%d", g.n);
	/* ibdev_path has 256 bytes in the ABI: a state directory too long
	 * for it fails the list rather than naming the wrong files. */
	if (snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "%s/class/infiniband_verbs/uverbs%d", g.sysfs, g.n) >=
		    (int)sizeof(d->dev.dev_path) ||
	    snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "%s/class/infiniband/%s", g.sysfs, name) >=
		    (int)sizeof(d->dev.ibdev_path) ||
	    snprintf(d->simdir, sizeof(d->simdir), "%s/%s", g.dir, name) >= (int)sizeof(d->simdir) ||
	    strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		g.list_errno = ENAMETOOLONG;
		return;
	}
	if ((rc = make_sysfs(d)) != 0 || (d->mlx5 && (rc = fw_init(d)) != 0)) {
		fprintf(stderr, "fakeverbs: cannot lay out the fake sysfs of %s in %s: %s\n", name, g.sysfs, strerror(rc));
		g.list_errno = rc;
		return;
	}
	g.n++;
}

#ifndef FAKE_LEGACY_DEFAULT
#define FAKE_LEGACY_DEFAULT "ofed1"
#endif

static int parse_legacy(const char *v)
{
	if (!v || !*v)
		v = FAKE_LEGACY_DEFAULT;
	if (!strcmp(v, "ofed1") || !strcmp(v, "mlnx-compat")) {
		g.mlnx = !strcmp(v, "mlnx-compat");
		return 0;
	}
	fprintf(stderr, "fakeverbs: XRCBENCH_FAKEVERBS_LEGACY=%s: want ofed1 or mlnx-compat\n", v);
	return EINVAL;
}

static void init(void)
{
	const char *dir = getenv("XRCBENCH_FAKEVERBS_DIR");
	const char *devs = getenv("XRCBENCH_FAKEVERBS_DEVICES");
	const char *cost = getenv("XRCBENCH_FAKEVERBS_COST");
	const char *fw = getenv("XRCBENCH_FAKEVERBS_FW_VER");
	char buf[1024], *save = NULL;

	if (dir && *dir)
		snprintf(g.dir, sizeof(g.dir), "%s", dir);
	else
		snprintf(g.dir, sizeof(g.dir), "/tmp/xrcbench-fakeverbs-%u", (unsigned)getuid());
	snprintf(g.sysfs, sizeof(g.sysfs), "%s/sysfs", g.dir);
	if (cost && (g.list_errno = parse_cost(cost)) != 0)
		return;
	if (fw && (g.list_errno = parse_fw_ver(fw)) != 0)
		return;
	if ((g.list_errno = parse_legacy(getenv("XRCBENCH_FAKEVERBS_LEGACY"))) != 0)
		return;
	if (!devs)
		devs = "xbfake0";
	if (!strcmp(devs, "none")) {
		/* rdma-core with no kernel support: ibverbs_init fails ENOSYS. */
		g.list_errno = ENOSYS;
		return;
	}
	if ((g.list_errno = open_state(dir && *dir)) != 0)
		return;
	snprintf(buf, sizeof(buf), "%s", devs);
	for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save))
		if (strcmp(s, "empty") != 0)
			add_device(s);
}

static struct fake_device *fake_of(struct ibv_device *dev)
{
	for (int i = 0; i < g.n; i++)
		if (dev == &g.devs[i].dev)
			return &g.devs[i];
	return NULL;
}

static struct fake_ctx *ctx_of(struct ibv_context *c)
{
	struct fake_ctx *x;

	if (!c || c->abi_compat != __VERBS_ABI_IS_EXTENDED)
		return NULL;
	x = (struct fake_ctx *)((char *)c - offsetof(struct fake_ctx, vctx.context));
	return x->magic == CTX_MAGIC ? x : NULL;
}

static void *null_errno(int e)
{
	errno = e;
	return NULL;
}

/* ---- the ops a provider lacks -------------------------------------------- */

/* As rdma-core's verbs_init_context (dummy_ops.c): every op slot of the
 * context is filled, the ones this device lacks with a stub that fails
 * EOPNOTSUPP, so an application can never tell a missing op from its
 * pointer, only by calling it. */
#define STUB_PTR(name, ret, ...)                    \
	static ret name(__VA_ARGS__)                \
	{                                           \
		errno = EOPNOTSUPP;                 \
		return NULL;                        \
	}
#define STUB_INT(name, ...)                         \
	static int name(__VA_ARGS__)                \
	{                                           \
		return EOPNOTSUPP;                  \
	}
/* Unused parameters are the stubs' point: their signatures are the ABI. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
STUB_INT(stub_query_port, struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len)
STUB_INT(stub_advise_mr, struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg,
	 uint32_t n)
STUB_PTR(stub_alloc_null_mr, struct ibv_mr *, struct ibv_pd *pd)
STUB_INT(stub_read_counters, struct ibv_counters *c, uint64_t *v, uint32_t n, uint32_t flags)
STUB_INT(stub_attach_counters_point_flow, struct ibv_counters *c, struct ibv_counter_attach_attr *a, struct ibv_flow *f)
STUB_PTR(stub_create_counters, struct ibv_counters *, struct ibv_context *c, struct ibv_counters_init_attr *a)
STUB_INT(stub_destroy_counters, struct ibv_counters *c)
STUB_PTR(stub_reg_dm_mr, struct ibv_mr *, struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len,
	 unsigned int access)
STUB_PTR(stub_alloc_dm, struct ibv_dm *, struct ibv_context *c, struct ibv_alloc_dm_attr *a)
STUB_INT(stub_free_dm, struct ibv_dm *dm)
STUB_INT(stub_modify_flow_action_esp, struct ibv_flow_action *a, struct ibv_flow_action_esp_attr *e)
STUB_INT(stub_destroy_flow_action, struct ibv_flow_action *a)
STUB_PTR(stub_create_flow_action_esp, struct ibv_flow_action *, struct ibv_context *c,
	 struct ibv_flow_action_esp_attr *a)
STUB_INT(stub_modify_qp_rate_limit, struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *a)
STUB_PTR(stub_alloc_parent_domain, struct ibv_pd *, struct ibv_context *c, struct ibv_parent_domain_init_attr *a)
STUB_INT(stub_dealloc_td, struct ibv_td *td)
STUB_PTR(stub_alloc_td, struct ibv_td *, struct ibv_context *c, struct ibv_td_init_attr *a)
STUB_INT(stub_modify_cq, struct ibv_cq *cq, struct ibv_modify_cq_attr *a)
STUB_INT(stub_post_srq_ops, struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
STUB_INT(stub_destroy_rwq_ind_table, struct ibv_rwq_ind_table *t)
STUB_PTR(stub_create_rwq_ind_table, struct ibv_rwq_ind_table *, struct ibv_context *c,
	 struct ibv_rwq_ind_table_init_attr *a)
STUB_INT(stub_destroy_wq, struct ibv_wq *wq)
STUB_INT(stub_modify_wq, struct ibv_wq *wq, struct ibv_wq_attr *a)
STUB_PTR(stub_create_wq, struct ibv_wq *, struct ibv_context *c, struct ibv_wq_init_attr *a)
STUB_INT(stub_query_rt_values, struct ibv_context *c, struct ibv_values_ex *v)
STUB_PTR(stub_create_cq_ex, struct ibv_cq_ex *, struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
STUB_INT(stub_query_device_ex, struct ibv_context *c, const struct ibv_query_device_ex_input *in,
	 struct ibv_device_attr_ex *a, size_t len)
STUB_INT(stub_destroy_flow, struct ibv_flow *f)
STUB_PTR(stub_create_flow, struct ibv_flow *, struct ibv_qp *qp, struct ibv_flow_attr *a)
STUB_PTR(stub_open_qp, struct ibv_qp *, struct ibv_context *c, struct ibv_qp_open_attr *a)
STUB_PTR(stub_create_qp_ex, struct ibv_qp *, struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
STUB_INT(stub_get_srq_num, struct ibv_srq *srq, uint32_t *n)
STUB_PTR(stub_create_srq_ex, struct ibv_srq *, struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
STUB_PTR(stub_open_xrcd, struct ibv_xrcd *, struct ibv_context *c, struct ibv_xrcd_init_attr *a)
STUB_INT(stub_close_xrcd, struct ibv_xrcd *x)
/* struct ibv_context_ops: the data-path ops verbs_set_ops sets there. */
STUB_PTR(stub_alloc_mw, struct ibv_mw *, struct ibv_pd *pd, enum ibv_mw_type type)
STUB_INT(stub_bind_mw, struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
STUB_INT(stub_dealloc_mw, struct ibv_mw *mw)
STUB_INT(stub_poll_cq, struct ibv_cq *cq, int n, struct ibv_wc *wc)
STUB_INT(stub_req_notify_cq, struct ibv_cq *cq, int solicited)
STUB_INT(stub_post_srq_recv, struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
STUB_INT(stub_post_send, struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
STUB_INT(stub_post_recv, struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
STUB_INT(stub_compat_query_device, struct ibv_context *c, struct ibv_device_attr *a)
STUB_INT(stub_compat_query_port, struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *a)
#pragma GCC diagnostic pop

/* The other _compat_ slots are only kept for binaries of before 2018,
 * which never call them through a context this double made. */
static void *stub_compat(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static void fill_stub_ops(struct verbs_context *v)
{
	struct ibv_context_ops *o = &v->context.ops;

	v->query_port = stub_query_port;
	v->advise_mr = stub_advise_mr;
	v->alloc_null_mr = stub_alloc_null_mr;
	v->read_counters = stub_read_counters;
	v->attach_counters_point_flow = stub_attach_counters_point_flow;
	v->create_counters = stub_create_counters;
	v->destroy_counters = stub_destroy_counters;
	v->reg_dm_mr = stub_reg_dm_mr;
	v->alloc_dm = stub_alloc_dm;
	v->free_dm = stub_free_dm;
	v->modify_flow_action_esp = stub_modify_flow_action_esp;
	v->destroy_flow_action = stub_destroy_flow_action;
	v->create_flow_action_esp = stub_create_flow_action_esp;
	v->modify_qp_rate_limit = stub_modify_qp_rate_limit;
	v->alloc_parent_domain = stub_alloc_parent_domain;
	v->dealloc_td = stub_dealloc_td;
	v->alloc_td = stub_alloc_td;
	v->modify_cq = stub_modify_cq;
	v->post_srq_ops = stub_post_srq_ops;
	v->destroy_rwq_ind_table = stub_destroy_rwq_ind_table;
	v->create_rwq_ind_table = stub_create_rwq_ind_table;
	v->destroy_wq = stub_destroy_wq;
	v->modify_wq = stub_modify_wq;
	v->create_wq = stub_create_wq;
	v->query_rt_values = stub_query_rt_values;
	v->create_cq_ex = stub_create_cq_ex;
	v->query_device_ex = stub_query_device_ex;
	v->ibv_destroy_flow = stub_destroy_flow;
	v->ibv_create_flow = stub_create_flow;
	v->open_qp = stub_open_qp;
	v->create_qp_ex = stub_create_qp_ex;
	v->get_srq_num = stub_get_srq_num;
	v->create_srq_ex = stub_create_srq_ex;
	v->open_xrcd = stub_open_xrcd;
	v->close_xrcd = stub_close_xrcd;

	o->_compat_query_device = stub_compat_query_device;
	o->_compat_query_port = stub_compat_query_port;
	o->_compat_alloc_pd = o->_compat_dealloc_pd = o->_compat_reg_mr = o->_compat_rereg_mr = o->_compat_dereg_mr =
		stub_compat;
	o->_compat_create_cq = o->_compat_cq_event = o->_compat_resize_cq = o->_compat_destroy_cq = stub_compat;
	o->_compat_create_srq = o->_compat_modify_srq = o->_compat_query_srq = o->_compat_destroy_srq = stub_compat;
	o->_compat_create_qp = o->_compat_query_qp = o->_compat_modify_qp = o->_compat_destroy_qp = stub_compat;
	o->_compat_create_ah = o->_compat_destroy_ah = o->_compat_attach_mcast = o->_compat_detach_mcast =
		o->_compat_async_event = stub_compat;
	o->alloc_mw = stub_alloc_mw;
	o->bind_mw = stub_bind_mw;
	o->dealloc_mw = stub_dealloc_mw;
	o->poll_cq = stub_poll_cq;
	o->req_notify_cq = stub_req_notify_cq;
	o->post_srq_recv = stub_post_srq_recv;
	o->post_send = stub_post_send;
	o->post_recv = stub_post_recv;
}

/* ---- devices -------------------------------------------------------------- */

EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **list;

	pthread_once(&g.once, init);
	if (num)
		*num = 0;
	if (g.list_errno)
		return null_errno(g.list_errno);
	list = calloc((size_t)g.n + 1, sizeof(*list));
	if (!list)
		return null_errno(ENOMEM);
	for (int i = 0; i < g.n; i++)
		list[i] = &g.devs[i].dev;
	if (num)
		*num = g.n;
	return list;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list); /* the devices themselves live as long as the process */
}

EXPORT const char *ibv_get_device_name(struct ibv_device *dev)
{
	return dev ? dev->name : NULL;
}

EXPORT __be64 ibv_get_device_guid(struct ibv_device *dev)
{
	struct fake_device *d = fake_of(dev);

	return d ? htobe64(node_guid(d->index)) : 0;
}

EXPORT int ibv_get_device_index(struct ibv_device *dev)
{
	struct fake_device *d = fake_of(dev);

	return d ? d->index : -1;
}

static struct ibv_xrcd *fake_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *attr);
static int fake_close_xrcd(struct ibv_xrcd *xrcd);
static struct ibv_qp *fake_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr);
static struct ibv_qp *fake_open_qp(struct ibv_context *c, struct ibv_qp_open_attr *attr);
static int fake_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr, size_t len);

/* explain_open says on stderr why the device's sim state could not be
 * opened where an errno alone would mislead: the caller sees only
 * ibv_open_device failing, as if /dev/infiniband/uverbsN did. */
static void explain_open(const struct fake_device *d, int rc, const struct sim_config *want,
			 const struct sim_config *have)
{
	char old[200], new[200];

	switch (rc) {
	case EEXIST:
		sim_config_string(have, old, sizeof(old));
		sim_config_string(want, new, sizeof(new));
		fprintf(stderr, "fakeverbs: state folder %s: device %s is in use by a live process with settings "
				"\"%s\"; this process asks for \"%s\" (XRCBENCH_FAKEVERBS_COST, _NOXRC): stop the "
				"processes using it, or set XRCBENCH_FAKEVERBS_DIR to another folder\n",
			g.dir, d->dev.name, old, new);
		break;
	case EIO:
	case EPROTO:
		fprintf(stderr, "fakeverbs: %s/sim.dev is damaged or not a sim device of this version: remove it\n",
			d->simdir);
		break;
	case EPERM:
		fprintf(stderr, "fakeverbs: %s or its sim.dev belongs to another user or is open to group or other: "
				"refusing it\n", d->simdir);
		break;
	case ENOSPC:
		fprintf(stderr, "fakeverbs: no space left in %s for the sim device of %s\n", d->simdir, d->dev.name);
		break;
	case ELOOP:
	case ENOTDIR:
		fprintf(stderr, "fakeverbs: %s is a symbolic link or not a folder: refusing it (remove it)\n", d->simdir);
		break;
	}
}

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	struct fake_device *d = fake_of(dev);
	struct fake_ctx *x;
	struct sim_config cfg, have;
	int rc;

	if (!d)
		return null_errno(EINVAL);
	if (d->eacces) /* as opening /dev/infiniband/uverbsN without rights */
		return null_errno(EACCES);
	if (mkdirat(g.dirfd, d->dev.name, 0700) != 0 && errno != EEXIST)
		return null_errno(errno);
	x = calloc(1, sizeof(*x));
	if (!x)
		return null_errno(ENOMEM);
	cfg = g.cfg;
	cfg.no_xrc = d->noxrc;
	rc = sim_open_explained(d->simdir, &cfg, SIM_UPSTREAM, &x->sim, &have);
	if (rc) {
		explain_open(d, rc, &cfg, &have);
		free(x);
		return null_errno(rc);
	}
	x->magic = CTX_MAGIC;
	x->fdev = d;
	pthread_mutex_init(&x->lock, NULL);
	/* As rdma-core's verbs_init_and_alloc_context: the extended ABI
	 * marker, the size this provider was built with, then the ops. */
	x->vctx.sz = sizeof(struct verbs_context);
	x->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	x->vctx.context.device = dev;
	x->vctx.context.cmd_fd = -1;
	x->vctx.context.async_fd = -1;
	x->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&x->vctx.context.mutex, NULL);
	fill_stub_ops(&x->vctx);
	x->vctx.query_port = fake_query_port;
	x->vctx.create_qp_ex = fake_create_qp_ex;
	if (!d->noxrc) { /* like rxe: the XRCD ops are stubs */
		x->vctx.open_xrcd = fake_open_xrcd;
		x->vctx.close_xrcd = fake_close_xrcd;
		if (!d->noopenqp) /* like qedr: XRC, but open_qp is a stub */
			x->vctx.open_qp = fake_open_qp;
	}
	return &x->vctx.context;
}

static void mlnx_forget_ctx(struct fake_ctx *x);
static void write_rtr(struct fake_device *d);

EXPORT int ibv_close_device(struct ibv_context *c)
{
	struct fake_ctx *x = ctx_of(c);
	uint32_t flags = 0;

	if (!x)
		return EINVAL;
	mlnx_forget_ctx(x);
	/* What the kernel does when the uverbs file closes: every handle
	 * goes (a last one destroys its QP), then the domains. */
	while (x->qps) {
		struct fake_qp *q = x->qps;

		x->qps = q->next;
		if (q->xrcd) {
			uint64_t t0 = x->fdev->mlx5 ? fw_now() : 0;

			flags = 0;
			if (sim_unreg(q->xrcd->dom, q->qp.qp_num, &flags) == 0 && (flags & XB_DESTROYED))
				fw_count(x->fdev, FW_DESTROY_QP, t0);
		}
		free(q);
	}
	/* A domain still busy here (legacy registrations in it, which are
	 * not handles) is released by sim_close with the registrant; its
	 * struct sim_dom is then only memory, freed after, however many. */
	struct fake_xrcd *busy_xrcds = NULL;

	while (x->xrcds) {
		struct fake_xrcd *xd = x->xrcds;

		x->xrcds = xd->next;
		if (sim_close_domain(xd->dom) != 0) {
			xd->next = busy_xrcds;
			busy_xrcds = xd;
		} else {
			free(xd);
		}
	}
	struct fake_ldom *busy = NULL;

	while (x->ldoms) {
		struct fake_ldom *l = x->ldoms;

		x->ldoms = l->next;
		if (sim_close_domain(l->dom) == 0) {
			l->magic = 0;
			free(l);
		} else {
			l->next = busy;
			busy = l;
		}
	}
	sim_close(x->sim);
	write_rtr(x->fdev);
	if (fw_flush(x->fdev, 0) != 0)
		fprintf(stderr, "fakeverbs: cannot add %s's firmware command counts to its debugfs folder\n", x->fdev->dev.name);
	while (busy_xrcds) {
		struct fake_xrcd *xd = busy_xrcds;

		busy_xrcds = xd->next;
		free(xd->dom); /* calloc'd by sim_open_domain; its slot went with sim_close */
		free(xd);
	}
	while (busy) {
		struct fake_ldom *l = busy;

		busy = l->next;
		free(l->dom); /* sim_close released its slot; see sim_open_domain */
		l->magic = 0;
		free(l);
	}
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->vctx.context.mutex);
	x->magic = 0;
	free(x);
	return 0;
}

EXPORT int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	struct fake_ctx *x = ctx_of(c);
	struct sim_config cfg;

	if (!x || !a)
		return EINVAL;
	sim_get_config(x->sim, &cfg);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", g.fw_ver);
	a->node_guid = htobe64(node_guid(x->fdev->index));
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = ~0ull;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0xfa4e;
	a->vendor_part_id = 4242;
	a->hw_ver = 1;
	a->max_qp = (int)cfg.max_qps;
	a->max_qp_wr = 32768;
	a->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_CHANGE_PHY_PORT |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN;
	if (!x->fdev->noxrc)
		a->device_cap_flags |= IBV_DEVICE_XRC;
	a->max_sge = 30;
	a->max_cq = 1 << 24;
	a->max_cqe = 4194303;
	a->max_mr = 1 << 24;
	a->max_pd = 1 << 24;
	a->max_qp_rd_atom = 16;
	a->max_res_rd_atom = 16 << 16;
	a->max_qp_init_rd_atom = 16;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = 1 << 23;
	a->max_srq_wr = 32767;
	a->max_srq_sge = 31;
	a->max_pkeys = 128;
	a->local_ca_ack_delay = 16;
	a->phys_port_cnt = (uint8_t)x->fdev->nports;
	return 0;
}

static int port_ok(const struct fake_device *d, unsigned port)
{
	return port >= 1 && port <= (unsigned)d->nports;
}

/* port_gid is entry index of port's GID table and its type (enum
 * ibv_gid_type); an empty entry is all zero. EINVAL past the table. An
 * InfiniBand port has one entry, its link-local GID from the node GUID;
 * a RoCE port the table make_sysfs describes, as mlx5 fills one: per
 * address a RoCE v1 and then a v2 entry. */
static int port_gid(const struct fake_device *d, unsigned port, unsigned index, union ibv_gid *gid, int *type)
{
	memset(gid, 0, sizeof(*gid));
	*type = IBV_GID_TYPE_IB;
	if (!port_ok(d, port) || index >= (d->roce ? ROCE_GID_TBL_LEN : 1u))
		return EINVAL;
	if (!d->roce) {
		gid->global.subnet_prefix = htobe64(0xfe80000000000000ull);
		gid->global.interface_id = htobe64(node_guid(d->index) + port - 1);
		return 0;
	}
	*type = index % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	switch (index / 2) {
	case 0: /* link-local, from the port's MAC as a kernel makes it */
		gid->global.subnet_prefix = htobe64(0xfe80000000000000ull);
		gid->global.interface_id = htobe64(node_guid(d->index) + port - 1);
		break;
	case 1: /* IPv4-mapped ::ffff:192.0.2.P (TEST-NET-1) */
		gid->raw[10] = gid->raw[11] = 0xff;
		gid->raw[12] = 192, gid->raw[13] = 0, gid->raw[14] = 2, gid->raw[15] = (uint8_t)(d->index * 16 + port);
		break;
	case 2: /* IPv6 2001:db8::P (documentation prefix) */
		gid->raw[0] = 0x20, gid->raw[1] = 0x01, gid->raw[2] = 0x0d, gid->raw[3] = 0xb8;
		gid->raw[15] = (uint8_t)(d->index * 16 + port);
		break;
	default: /* an empty slot */
		*type = IBV_GID_TYPE_IB;
	}
	return 0;
}

static void fill_port(const struct fake_device *d, unsigned port, struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = IBV_MTU_4096;
	p->gid_tbl_len = d->roce ? ROCE_GID_TBL_LEN : 1;
	p->port_cap_flags = 0x2651e848;
	p->max_msg_sz = 0x40000000;
	p->pkey_tbl_len = 1;
	p->lid = (uint16_t)port;
	p->sm_lid = 1;
	p->max_vl_num = 4;
	p->subnet_timeout = 18;
	p->active_width = 2;  /* 4X */
	p->active_speed = 32; /* 25 Gbps per lane */
	p->phys_state = 5;    /* LINK_UP */
	p->link_layer = IBV_LINK_LAYER_INFINIBAND;
	if (d->roce) { /* RoCE ports have no LID; the GID table addresses them */
		p->link_layer = IBV_LINK_LAYER_ETHERNET;
		p->lid = p->sm_lid = 0;
		p->active_mtu = IBV_MTU_1024;
	}
	if (d->noaddr)
		p->lid = 0;
	if (d->portdown || (d->down & (1u << port))) {
		p->state = IBV_PORT_DOWN;
		p->phys_state = 3; /* DISABLED */
		p->lid = 0;
	}
}

static int fake_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr, size_t len)
{
	struct fake_ctx *x = ctx_of(c);
	struct ibv_port_attr p;

	if (!x || !attr)
		return EINVAL;
	if (!port_ok(x->fdev, port))
		return EINVAL;
	fill_port(x->fdev, port, &p);
	memcpy(attr, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

/* The exported ibv_query_port is the pre-verbs_context entry point; its
 * struct is the prefix of struct ibv_port_attr up to link_layer. */
#undef ibv_query_port
EXPORT int ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	return fake_query_port(c, port, (struct ibv_port_attr *)attr, offsetof(struct ibv_port_attr, flags));
}

EXPORT int ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
	struct fake_ctx *x = ctx_of(c);
	int type;

	if (!x || !gid || index < 0)
		return EINVAL;
	return port_gid(x->fdev, port, (unsigned)index, gid, &type) ? EINVAL : 0;
}

EXPORT int _ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index, struct ibv_gid_entry *entry,
			     uint32_t flags, size_t entry_size)
{
	struct fake_ctx *x = ctx_of(c);
	struct ibv_gid_entry e;
	int type;

	if (!x || flags || !entry || entry_size < sizeof(e))
		return EINVAL;
	memset(&e, 0, sizeof(e));
	if (port_gid(x->fdev, port, index, &e.gid, &type))
		return EINVAL;
	/* rdma-core fails an empty entry ENODATA (it has no type) */
	if (!memcmp(&e.gid, &(union ibv_gid){0}, sizeof(e.gid)))
		return ENODATA;
	e.gid_index = index;
	e.port_num = port;
	e.gid_type = (uint32_t)type;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

/* rdma-core's private ibv_query_gid_type (driver.h), which ibv_devinfo
 * uses; the type is enum ibv_gid_type_sysfs: 0 "IB/RoCE v1", 1 "RoCE v2". */
EXPORT int ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index, int *type)
{
	union ibv_gid gid;
	int t;

	if (!ctx_of(c) || !type || port_gid(ctx_of(c)->fdev, port, index, &gid, &t))
		return EINVAL;
	*type = t == IBV_GID_TYPE_ROCE_V2;
	return 0;
}

EXPORT int ibv_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey)
{
	if (!ctx_of(c) || !port_ok(ctx_of(c)->fdev, port) || index != 0 || !pkey)
		return EINVAL;
	*pkey = htobe16(0xffff);
	return 0;
}

EXPORT int ibv_get_pkey_index(struct ibv_context *c, uint8_t port, __be16 pkey)
{
	if (!ctx_of(c) || !port_ok(ctx_of(c)->fdev, port))
		return -EINVAL;
	return pkey == htobe16(0xffff) ? 0 : -ENOENT;
}

/* ---- upstream XRC: the verbs_context ops ---------------------------------- */

static struct ibv_xrcd *fake_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *attr)
{
	struct fake_ctx *x = ctx_of(c);
	struct fake_xrcd *xd;
	int rc;

	if (!x || !attr)
		return null_errno(EINVAL);
	/* As ibv_cmd_open_xrcd: unknown bits are EOPNOTSUPP, and both FD
	 * and OFLAGS are required. */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED)
		return null_errno(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS))
		return null_errno(EINVAL);
	if (attr->oflags & ~O_CREAT || attr->fd < 0) /* no private (fd -1) XRCDs here */
		return null_errno(EINVAL);
	xd = calloc(1, sizeof(*xd));
	if (!xd)
		return null_errno(ENOMEM);
	rc = sim_open_domain(x->sim, attr->fd, SIM_UPSTREAM, &xd->dom);
	if (rc) {
		if (rc == EIO) /* as ibv_open_device says of a damaged device */
			fprintf(stderr, "fakeverbs: %s/sim.dev is damaged: remove it\n", x->fdev->simdir);
		free(xd);
		return null_errno(rc);
	}
	xd->xrcd.context = c;
	xd->ctx = x;
	pthread_mutex_lock(&x->lock);
	xd->next = x->xrcds;
	x->xrcds = xd;
	pthread_mutex_unlock(&x->lock);
	return &xd->xrcd;
}

static int fake_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct fake_xrcd *xd = (struct fake_xrcd *)xrcd;
	struct fake_ctx *x;
	int rc;

	if (!xd || !(x = ctx_of(xrcd->context)))
		return EINVAL;
	pthread_mutex_lock(&x->lock);
	if (xd->qps) { /* the XRCD is still referenced (S9) */
		pthread_mutex_unlock(&x->lock);
		return EBUSY;
	}
	rc = sim_close_domain(xd->dom);
	if (rc == 0) {
		struct fake_xrcd **p = &x->xrcds;

		while (*p && *p != xd)
			p = &(*p)->next;
		if (*p)
			*p = xd->next;
	}
	pthread_mutex_unlock(&x->lock);
	if (rc)
		return rc;
	free(xd);
	return 0;
}

static struct fake_xrcd *xrcd_of(struct fake_ctx *x, struct ibv_xrcd *xrcd)
{
	for (struct fake_xrcd *xd = x->xrcds; xd; xd = xd->next)
		if (&xd->xrcd == xrcd)
			return xd;
	return NULL;
}

static struct ibv_qp *new_handle(struct fake_ctx *x, struct fake_xrcd *xd, uint32_t qpn)
{
	struct fake_qp *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->qp.context = &x->vctx.context;
	q->qp.qp_num = qpn;
	q->qp.qp_type = IBV_QPT_XRC_RECV;
	q->qp.state = IBV_QPS_RESET;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	q->xrcd = xd;
	xd->qps++;
	q->next = x->qps;
	x->qps = q;
	return &q->qp;
}

/* ---- PDs, CQs and XRC send QPs: handles and numbers, nothing behind ------ */

#define PD_MAGIC 0x78627064u /* "xbpd" */
#define CQ_MAGIC 0x78626371u /* "xbcq" */

struct fake_pd {
	struct ibv_pd pd;
	uint32_t magic;
};

struct fake_cq {
	struct ibv_cq cq;
	uint32_t magic;
};

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
	struct fake_pd *p;

	if (!ctx_of(c))
		return null_errno(EINVAL);
	if (!(p = calloc(1, sizeof(*p))))
		return null_errno(ENOMEM);
	p->pd.context = c;
	p->magic = PD_MAGIC;
	return &p->pd;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct fake_pd *p = (struct fake_pd *)pd;

	if (!p || p->magic != PD_MAGIC)
		return EINVAL;
	p->magic = 0;
	free(p);
	return 0;
}

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *cq_context, struct ibv_comp_channel *ch,
				    int vector)
{
	struct fake_cq *q;

	(void)vector;
	if (!ctx_of(c) || cqe < 1 || ch)
		return null_errno(EINVAL);
	if (!(q = calloc(1, sizeof(*q))))
		return null_errno(ENOMEM);
	q->cq.context = c;
	q->cq.cq_context = cq_context;
	q->cq.cqe = cqe;
	pthread_mutex_init(&q->cq.mutex, NULL);
	pthread_cond_init(&q->cq.cond, NULL);
	q->magic = CQ_MAGIC;
	return &q->cq;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct fake_cq *q = (struct fake_cq *)cq;

	if (!q || q->magic != CQ_MAGIC)
		return EINVAL;
	q->magic = 0;
	pthread_mutex_destroy(&q->cq.mutex);
	pthread_cond_destroy(&q->cq.cond);
	free(q);
	return 0;
}

/* send_qpn numbers XRC send QPs from the top of the 24-bit space, far
 * from the sim's receive QPs (numbered upward from 0x100): only a
 * receive QP's RTR destination ever names one. */
static uint32_t send_qpn(void)
{
	static uint32_t next;

	return 0xf00000u + (__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 0xfffffu);
}

/* create_send_qp makes an XRC send (XRC_INI) QP: as the kernel, it needs
 * a PD and a send CQ, and no XRCD. */
static struct ibv_qp *send_qp(struct fake_ctx *x, struct ibv_pd *pdp, struct ibv_cq *cqp, struct ibv_cq *recv_cq,
			      void *qp_context, enum ibv_qp_type type)
{
	struct fake_pd *pd = (struct fake_pd *)pdp;
	struct fake_cq *cq = (struct fake_cq *)cqp;
	struct fake_qp *q;

	if (!pd || pd->magic != PD_MAGIC || !cq || cq->magic != CQ_MAGIC || pd->pd.context != &x->vctx.context)
		return null_errno(EINVAL);
	if (!(q = calloc(1, sizeof(*q))))
		return null_errno(ENOMEM);
	q->qp.context = &x->vctx.context;
	q->qp.pd = &pd->pd;
	q->qp.send_cq = &cq->cq;
	q->qp.recv_cq = recv_cq;
	q->qp.qp_num = send_qpn();
	q->qp.qp_type = type;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_context = qp_context;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	pthread_mutex_lock(&x->lock);
	q->next = x->qps;
	x->qps = q;
	pthread_mutex_unlock(&x->lock);
	return &q->qp;
}

static struct ibv_qp *create_send_qp(struct fake_ctx *x, struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		return null_errno(EINVAL);
	return send_qp(x, attr->pd, attr->send_cq, attr->recv_cq, attr->qp_context, IBV_QPT_XRC_SEND);
}

/* The masks of the kernel's qp_state_table (drivers/infiniband/core/
 * verbs.c) for an XRC_TGT QP, for the transitions the double models. */
#define XRC_TGT_INIT_REQ (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define XRC_TGT_INIT_OPT (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define XRC_TGT_RTR_REQ                                                                                  \
	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | \
	 IBV_QP_MIN_RNR_TIMER)
#define XRC_TGT_RTR_OPT (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX)

/* modify_ok is ib_modify_qp_is_ok for XRC_TGT: the transition must be in
 * the table, every required attribute given and nothing else but the
 * allowed ones. */
static int modify_ok(int cur, int next, int mask)
{
	int req, opt;

	mask &= ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (next == IBV_QPS_RESET) {
		req = opt = 0;
	} else if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT) {
		req = XRC_TGT_INIT_REQ, opt = 0;
	} else if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT) {
		req = 0, opt = XRC_TGT_INIT_OPT;
	} else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		req = XRC_TGT_RTR_REQ, opt = XRC_TGT_RTR_OPT;
	} else {
		return 0;
	}
	return (mask & req) == req && (mask & ~(req | opt)) == 0;
}

/* attrs_ok checks the values the kernel and the driver would: the port
 * exists, the pkey index is in its table, and the address vector names
 * this port's own address (a LID on InfiniBand, a GID of its table on
 * RoCE) with an MTU the port runs. */
static int attrs_ok(const struct fake_device *d, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_port_attr p;
	unsigned port = (mask & IBV_QP_AV) ? a->ah_attr.port_num : a->port_num;

	if (((mask & IBV_QP_PORT) && !port_ok(d, a->port_num)) || ((mask & IBV_QP_AV) && !port_ok(d, port)))
		return 0;
	if (!(mask & (IBV_QP_PORT | IBV_QP_AV)))
		port = 1;
	fill_port(d, port, &p);
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= p.pkey_tbl_len)
		return 0;
	if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > p.active_mtu))
		return 0;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff)
		return 0;
	if (mask & IBV_QP_AV) {
		union ibv_gid gid;
		int type;

		if (p.link_layer == IBV_LINK_LAYER_ETHERNET && !a->ah_attr.is_global)
			return 0; /* RoCE: the GRH is mandatory */
		if (p.link_layer != IBV_LINK_LAYER_ETHERNET && (a->ah_attr.dlid == 0 || a->ah_attr.dlid != p.lid))
			return 0; /* a loopback path: the port's own LID */
		/* The source GID must be a used entry of the table, and the
		 * loopback destination that same address. */
		if (a->ah_attr.is_global &&
		    (port_gid(d, port, a->ah_attr.grh.sgid_index, &gid, &type) ||
		     !memcmp(&gid, &(union ibv_gid){0}, sizeof(gid)) || memcmp(&gid, &a->ah_attr.grh.dgid, sizeof(gid))))
			return 0;
	}
	return 1;
}

static pthread_mutex_t rtr_lock = PTHREAD_MUTEX_INITIALIZER;

/* record_rtr keeps which port and GID (or LID) the last accepted RTR of a
 * device used, for tests (rtr-<device>). Only in memory: it runs inside
 * the timed modify, where a file write in the state folder would be timed
 * with it; write_rtr puts it in the file when a context closes. */
static void record_rtr(struct fake_device *d, const struct ibv_qp_attr *a)
{
	pthread_mutex_lock(&rtr_lock);
	if (a->ah_attr.is_global)
		snprintf(d->rtr, sizeof(d->rtr), "port %u sgid_index %u", a->ah_attr.port_num, a->ah_attr.grh.sgid_index);
	else
		snprintf(d->rtr, sizeof(d->rtr), "port %u lid %u", a->ah_attr.port_num, a->ah_attr.dlid);
	d->rtr_unwritten = 1;
	pthread_mutex_unlock(&rtr_lock);
}

/* write_rtr writes device d's last RTR to rtr-<device>, if the file does
 * not have it yet: outside any timed operation (ibv_close_device). */
static void write_rtr(struct fake_device *d)
{
	char name[128], v[sizeof(d->rtr)];
	int unwritten;

	pthread_mutex_lock(&rtr_lock);
	unwritten = d->rtr_unwritten;
	memcpy(v, d->rtr, sizeof(v));
	d->rtr_unwritten = 0;
	pthread_mutex_unlock(&rtr_lock);
	if (!unwritten)
		return;
	snprintf(name, sizeof(name), "rtr-%s", d->dev.name);
	put(g.dirfd, name, v);
}

/* modify_rcv moves XRC receive QP qpn of dom as the kernel would. */
static int modify_rcv(struct fake_ctx *x, struct sim_dom *dom, uint32_t qpn, struct ibv_qp_attr *attr, int mask)
{
	int cur, rc;

	if (!(mask & IBV_QP_STATE)) /* the double models state changes only */
		return EOPNOTSUPP;
	if (attr->qp_state > IBV_QPS_RTR)
		return EOPNOTSUPP;
	if ((rc = sim_qp_state(dom, qpn, &cur)) != 0)
		return rc;
	if ((mask & IBV_QP_CUR_STATE) && (int)attr->cur_qp_state != cur)
		return EINVAL;
	if (!modify_ok(cur, attr->qp_state, mask) || !attrs_ok(x->fdev, attr, mask))
		return EINVAL;
	uint64_t t0 = x->fdev->mlx5 ? fw_now() : 0;

	if ((rc = sim_modify(dom, qpn, attr->qp_state)) == 0 && attr->qp_state == IBV_QPS_RTR)
		record_rtr(x->fdev, attr);
	if (rc == 0 && cur == IBV_QPS_RESET && attr->qp_state == IBV_QPS_INIT)
		fw_count(x->fdev, FW_RST2INIT_QP, t0);
	else if (rc == 0 && cur == IBV_QPS_INIT && attr->qp_state == IBV_QPS_RTR)
		fw_count(x->fdev, FW_INIT2RTR_QP, t0);
	return rc;
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fake_ctx *x;
	struct fake_qp *q = NULL;
	struct sim_dom *dom = NULL;
	int rc;

	if (!qp || !attr || !(x = ctx_of(qp->context)))
		return EINVAL;
	pthread_mutex_lock(&x->lock);
	for (struct fake_qp *p = x->qps; p; p = p->next)
		if (&p->qp == qp) {
			q = p;
			dom = p->xrcd ? p->xrcd->dom : NULL;
			break;
		}
	pthread_mutex_unlock(&x->lock);
	if (!q)
		return EINVAL;
	if (!(mask & IBV_QP_STATE)) /* the double models state changes only */
		return EOPNOTSUPP;
	if (attr->qp_state > IBV_QPS_RTR)
		return EOPNOTSUPP;
	if (!dom) { /* a send QP: its state only */
		qp->state = attr->qp_state;
		return 0;
	}
	if ((rc = modify_rcv(x, dom, qp->qp_num, attr, mask)) != 0)
		return rc;
	qp->state = attr->qp_state;
	return 0;
}

static struct ibv_qp *fake_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr)
{
	struct fake_ctx *x = ctx_of(c);
	struct fake_xrcd *xd;
	struct ibv_qp *qp;
	uint32_t qpn = 0, flags = 0;
	int rc;

	if (!x || !attr)
		return null_errno(EINVAL);
	if (attr->qp_type == IBV_QPT_XRC_SEND)
		return create_send_qp(x, attr);
	if (attr->qp_type != IBV_QPT_XRC_RECV) /* the double has no data path */
		return null_errno(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)
		return null_errno(EINVAL);
	pthread_mutex_lock(&x->lock);
	xd = xrcd_of(x, attr->xrcd);
	pthread_mutex_unlock(&x->lock);
	if (!xd)
		return null_errno(EINVAL);
	uint64_t t0 = x->fdev->mlx5 ? fw_now() : 0;

	rc = sim_create(xd->dom, &qpn, &flags);
	if (rc)
		return null_errno(rc);
	fw_count(x->fdev, FW_CREATE_QP, t0);
	pthread_mutex_lock(&x->lock);
	qp = new_handle(x, xd, qpn);
	pthread_mutex_unlock(&x->lock);
	if (!qp) {
		sim_unreg(xd->dom, qpn, &flags);
		return null_errno(ENOMEM);
	}
	qp->qp_context = attr->qp_context;
	return qp;
}

static struct ibv_qp *fake_open_qp(struct ibv_context *c, struct ibv_qp_open_attr *attr)
{
	struct fake_ctx *x = ctx_of(c);
	struct fake_xrcd *xd;
	struct ibv_qp *qp;
	uint32_t flags = 0;
	int rc;

	if (!x || !attr)
		return null_errno(EINVAL);
	/* As ibv_cmd_open_qp: NUM, XRCD and TYPE are all required. */
	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED)
		return null_errno(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_QP_OPEN_ATTR_NUM) || !(attr->comp_mask & IBV_QP_OPEN_ATTR_XRCD) ||
	    !(attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE))
		return null_errno(EINVAL);
	if (attr->qp_type != IBV_QPT_XRC_RECV || attr->qp_num > 0xffffff)
		return null_errno(EINVAL);
	pthread_mutex_lock(&x->lock);
	xd = xrcd_of(x, attr->xrcd);
	pthread_mutex_unlock(&x->lock);
	if (!xd)
		return null_errno(EINVAL);
	rc = sim_reg(xd->dom, attr->qp_num, &flags);
	if (rc)
		return null_errno(rc);
	pthread_mutex_lock(&x->lock);
	qp = new_handle(x, xd, attr->qp_num);
	pthread_mutex_unlock(&x->lock);
	if (!qp) {
		sim_unreg(xd->dom, attr->qp_num, &flags);
		return null_errno(ENOMEM);
	}
	qp->qp_context = attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT ? attr->qp_context : NULL;
	return qp;
}

/* record_silent appends qpn to the state folder's silent-<device>: a
 * line of its own, written at once (O_APPEND), so concurrent processes'
 * lines never mix. */
static void record_silent(const struct fake_device *d, uint32_t qpn)
{
	char name[128], line[16];
	int fd, n;

	snprintf(name, sizeof(name), "silent-%s", d->dev.name);
	fd = openat(g.dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%06x\n", qpn);
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "fakeverbs: cannot record the silent destruction of qp %#x of %s\n", qpn, d->dev.name);
	close(fd);
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fake_ctx *x;
	struct fake_qp **p, *q = NULL;
	uint32_t flags = 0;
	int rc;

	if (!qp || !(x = ctx_of(qp->context)))
		return EINVAL;
	pthread_mutex_lock(&x->lock);
	for (p = &x->qps; *p; p = &(*p)->next)
		if (&(*p)->qp == qp) {
			q = *p;
			break;
		}
	if (!q) {
		pthread_mutex_unlock(&x->lock);
		return EINVAL;
	}
	/* Dropping this handle is the unreg; the last one destroys the QP.
	 * A send QP is only a number. silentdestroy: the kernel's shared-QP
	 * path (__ib_destroy_shared_qp) returns 0 even when destroying the
	 * real QP failed; here the QP leaves the XRC domain and stays on the
	 * device (silent-<device>). */
	uint64_t t0 = x->fdev->mlx5 ? fw_now() : 0;

	rc = q->xrcd ? sim_unreg(q->xrcd->dom, qp->qp_num, &flags) : 0;
	if (rc == 0 && q->xrcd && (flags & XB_DESTROYED))
		fw_count(x->fdev, FW_DESTROY_QP, t0);
	if (rc == 0 && q->xrcd && x->fdev->silentdestroy && (flags & XB_DESTROYED))
		record_silent(x->fdev, qp->qp_num);
	if (rc == 0) {
		*p = q->next;
		if (q->xrcd)
			q->xrcd->qps--;
	}
	pthread_mutex_unlock(&x->lock);
	if (rc)
		return rc;
	pthread_mutex_destroy(&q->qp.mutex);
	pthread_cond_destroy(&q->qp.cond);
	free(q);
	return 0;
}

/* Reached by ibv_create_qp_ex with only IBV_QP_INIT_ATTR_PD. The double
 * has no data path, so no ordinary QPs. */
static struct fake_ldom *ldom_of(struct xb_legacy_xrc_domain *d);
static struct fake_xrcd *mlnx_xrcd_of(struct xb_legacy_xrc_domain *d);

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct xb_legacy_qp_init_attr *la = (struct xb_legacy_qp_init_attr *)attr;
	struct fake_ldom *l;

	if (!pd || !attr)
		return null_errno(EINVAL);
	/* An XRC send QP, which ibv_create_qp_ex with only a PD reaches
	 * through here as in rdma-core: only a number, for a receive QP's RTR
	 * destination. */
	if (attr->qp_type == IBV_QPT_XRC_SEND) {
		struct fake_ctx *x = ctx_of(pd->context);

		return x ? send_qp(x, pd, attr->send_cq, attr->recv_cq, attr->qp_context, IBV_QPT_XRC_SEND)
			 : null_errno(EINVAL);
	}
	/* The legacy API's XRC send QP: type 5, in an XRC domain (an
	 * upstream XRCD on mlnx-compat). */
	if ((int)attr->qp_type != XB_LEGACY_QPT_XRC)
		return null_errno(EOPNOTSUPP);
	if (g.mlnx) {
		struct fake_xrcd *xd = mlnx_xrcd_of(la->xrc_domain);

		if (!xd || &xd->ctx->vctx.context != pd->context)
			return null_errno(EINVAL);
		return send_qp(xd->ctx, pd, attr->send_cq, attr->recv_cq, attr->qp_context,
			       (enum ibv_qp_type)XB_LEGACY_QPT_XRC);
	}
	if (!(l = ldom_of(la->xrc_domain)) || &l->ctx->vctx.context != pd->context)
		return null_errno(EINVAL);
	return send_qp(l->ctx, pd, attr->send_cq, attr->recv_cq, attr->qp_context, (enum ibv_qp_type)XB_LEGACY_QPT_XRC);
}

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	return null_errno(EOPNOTSUPP);
}

EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0;
}

/* ---- the legacy XRC API, MLNX_OFED's compatibility layer ------------------ */

/* One entry of the process-wide table: the handle, and the context it was
 * opened in, which ibv_close_device marks closed (qp then dangles in the
 * real library; here it is dropped and the entry only remembered). */
struct mlnx_entry {
	struct ibv_qp *qp;
	struct fake_ctx *ctx;
	int closed;
};

static struct xb_qpn_table mlnx_qps = XB_QPN_TABLE_INIT;

static struct fake_xrcd *mlnx_xrcd_of(struct xb_legacy_xrc_domain *d)
{
	struct ibv_xrcd *xrcd = (struct ibv_xrcd *)d;
	struct fake_ctx *x = xrcd ? ctx_of(xrcd->context) : NULL;
	struct fake_xrcd *xd;

	if (!x)
		return NULL;
	pthread_mutex_lock(&x->lock);
	xd = xrcd_of(x, xrcd);
	pthread_mutex_unlock(&x->lock);
	return xd;
}

static int open_in_ctx(void *val, void *x)
{
	struct mlnx_entry *e = val;

	return !e->closed && e->ctx == x;
}

static void mlnx_forget_ctx(struct fake_ctx *x)
{
	struct mlnx_entry *e;
	uint32_t qpn;

	if (!g.mlnx)
		return;
	while ((e = xb_qpn_first(&mlnx_qps, open_in_ctx, x, &qpn)) != NULL) {
		e->closed = 1;
		e->qp = NULL;
	}
}

/* mlnx_store is the library's ibv_store_xrc_qp: a number already in the
 * table keeps its first handle, and the new one is destroyed again. */
static int mlnx_store(struct ibv_qp *qp)
{
	struct mlnx_entry *e = malloc(sizeof(*e));
	int rc;

	if (!e) {
		ibv_destroy_qp(qp);
		return ENOMEM;
	}
	*e = (struct mlnx_entry){.qp = qp, .ctx = ctx_of(qp->context)};
	if ((rc = xb_qpn_put(&mlnx_qps, qp->qp_num, e)) != 0) {
		free(e);
		ibv_destroy_qp(qp);
	}
	return rc;
}

/* mlnx_find is the library's ibv_find_xrc_qp, for a caller about to use
 * the handle: one whose context was closed is where the library would
 * touch freed memory. */
static struct ibv_qp *mlnx_find(const char *call, uint32_t qpn)
{
	struct mlnx_entry *e = xb_qpn_get(&mlnx_qps, qpn);

	if (e && e->closed) {
		fprintf(stderr,
			"fakeverbs: %s(qp %#x): its handle's context was closed; MLNX_OFED would now use a freed "
			"struct ibv_qp\n",
			call, qpn);
		abort();
	}
	return e ? e->qp : NULL;
}

static struct xb_legacy_xrc_domain *mlnx_open_domain(struct ibv_context *c, int fd, int oflag)
{
	struct ibv_xrcd_init_attr a = {.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
				       .fd = fd, .oflags = oflag};

	/* MLNX_OFED's ibv_open_xrcd is ENOSYS where the provider left the
	 * op empty (no dummy ops in that library), as a driver without XRC
	 * does. */
	if (ctx_of(c)->fdev->noxrc)
		return null_errno(ENOSYS);
	return (struct xb_legacy_xrc_domain *)fake_open_xrcd(c, &a);
}

static int mlnx_create(struct xb_legacy_qp_init_attr *attr, uint32_t *qpn)
{
	struct fake_xrcd *xd = mlnx_xrcd_of(attr->xrc_domain);
	struct ibv_qp_init_attr_ex a = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD};
	struct ibv_qp *qp;

	if (!xd)
		return EINVAL;
	a.xrcd = &xd->xrcd;
	if (!(qp = fake_create_qp_ex(xd->xrcd.context, &a)))
		return errno;
	*qpn = qp->qp_num;
	return mlnx_store(qp);
}

static int mlnx_reg(struct xb_legacy_xrc_domain *d, uint32_t qpn)
{
	struct fake_xrcd *xd = mlnx_xrcd_of(d);
	struct ibv_qp_open_attr a = {.comp_mask = IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_TYPE,
				     .qp_num = qpn, .qp_type = IBV_QPT_XRC_RECV};
	struct ibv_qp *qp;

	if (!xd)
		return EINVAL;
	a.xrcd = &xd->xrcd;
	if (!(qp = fake_open_qp(xd->xrcd.context, &a)))
		return errno;
	return mlnx_store(qp);
}

static int mlnx_unreg(uint32_t qpn)
{
	struct ibv_qp *qp;
	struct mlnx_entry *e;

	if (!mlnx_find("ibv_unreg_xrc_rcv_qp", qpn)) /* the domain is not looked at */
		return EINVAL;
	/* Taken out before the destroy (the library finds, clears, then
	 * destroys): of two racing unregs, one gets the handle. */
	if (!(e = xb_qpn_take(&mlnx_qps, qpn)))
		return EINVAL;
	qp = e->qp;
	free(e);
	return ibv_destroy_qp(qp);
}

/* ---- the legacy OFED XRC API ---------------------------------------------- */

static struct fake_ldom *ldom_of(struct xb_legacy_xrc_domain *d)
{
	struct fake_ldom *l = (struct fake_ldom *)d;

	return l && l->magic == CTX_MAGIC ? l : NULL;
}

EXPORT struct xb_legacy_xrc_domain *ibv_open_xrc_domain(struct ibv_context *c, int fd, int oflag)
{
	struct fake_ctx *x = ctx_of(c);
	struct fake_ldom *l;
	int rc;

	if (!x || fd < 0 || (oflag & ~O_CREAT))
		return null_errno(EINVAL);
	if (g.mlnx)
		return mlnx_open_domain(c, fd, oflag);
	l = calloc(1, sizeof(*l));
	if (!l)
		return null_errno(ENOMEM);
	rc = sim_open_domain(x->sim, fd, SIM_LEGACY, &l->dom); /* ENOSYS without XRC (S11) */
	if (rc) {
		free(l);
		return null_errno(rc);
	}
	l->pub.context = c;
	l->magic = CTX_MAGIC;
	l->ctx = x;
	pthread_mutex_lock(&x->lock);
	l->next = x->ldoms;
	x->ldoms = l;
	pthread_mutex_unlock(&x->lock);
	return &l->pub;
}

EXPORT int ibv_close_xrc_domain(struct xb_legacy_xrc_domain *d)
{
	struct fake_ldom *l, **p;
	struct fake_ctx *x;
	int rc;

	if (g.mlnx) /* ibv_close_xrcd: EBUSY while a QP handle is open in it */
		return mlnx_xrcd_of(d) ? fake_close_xrcd((struct ibv_xrcd *)d) : EINVAL;
	if (!(l = ldom_of(d)))
		return EINVAL;
	x = l->ctx;
	pthread_mutex_lock(&x->lock);
	rc = sim_close_domain(l->dom); /* EBUSY while registered (S9) */
	if (rc == 0) {
		for (p = &x->ldoms; *p && *p != l; p = &(*p)->next)
			;
		if (*p)
			*p = l->next;
	}
	pthread_mutex_unlock(&x->lock);
	if (rc)
		return rc;
	l->magic = 0;
	free(l);
	return 0;
}

EXPORT int ibv_create_xrc_rcv_qp(struct xb_legacy_qp_init_attr *attr, uint32_t *qpn)
{
	struct fake_ldom *l;
	uint32_t flags = 0;

	if (!attr || !qpn || !attr->xrc_domain)
		return EINVAL;
	if (g.mlnx) /* the type is not looked at: XRC_RECV is what is made */
		return mlnx_create(attr, qpn);
	if (!(l = ldom_of(attr->xrc_domain)) || attr->qp_type != XB_LEGACY_QPT_XRC)
		return EINVAL;
	return sim_create(l->dom, qpn, &flags);
}

EXPORT int ibv_reg_xrc_rcv_qp(struct xb_legacy_xrc_domain *d, uint32_t qpn)
{
	struct fake_ldom *l;
	uint32_t flags = 0;

	if (g.mlnx)
		return mlnx_reg(d, qpn);
	l = ldom_of(d);
	return l ? sim_reg(l->dom, qpn, &flags) : EINVAL;
}

EXPORT int ibv_modify_xrc_rcv_qp(struct xb_legacy_xrc_domain *d, uint32_t qpn, struct ibv_qp_attr *attr, int mask)
{
	struct fake_ldom *l;

	if (g.mlnx) {
		struct ibv_qp *qp = mlnx_find("ibv_modify_xrc_rcv_qp", qpn);

		return qp ? ibv_modify_qp(qp, attr, mask) : EINVAL; /* the domain is not looked at */
	}
	if (!(l = ldom_of(d)) || !attr)
		return EINVAL;
	return modify_rcv(l->ctx, l->dom, qpn, attr, mask);
}

EXPORT int ibv_unreg_xrc_rcv_qp(struct xb_legacy_xrc_domain *d, uint32_t qpn)
{
	struct fake_ldom *l;
	uint32_t flags = 0;

	if (g.mlnx)
		return mlnx_unreg(qpn);
	l = ldom_of(d);
	return l ? sim_unreg(l->dom, qpn, &flags) : EINVAL;
}

#ifdef FAKE_MLNX_EXPORTS
/* MLNX_OFED's providers implement open_xrcd and open_qp with these; an
 * application never calls them, and here nothing does. */
EXPORT int ibv_cmd_open_xrcd(void)
{
	return ENOSYS;
}

EXPORT int ibv_cmd_open_qp(void)
{
	return ENOSYS;
}
#endif

/* ---- small exported helpers rdma-core has and tools use ------------------- */

EXPORT const char *ibv_get_sysfs_path(void)
{
	pthread_once(&g.once, init);
	return g.sysfs;
}

EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[1024];
	ssize_t len;
	int fd;

	if (!dir || !file || !buf || size == 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return -1;
	if (buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else
		return -1; /* as rdma-core: an unterminated string is a failure */
	return (int)len;
}

EXPORT int ibv_fork_init(void)
{
	return 0;
}

EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

EXPORT const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {"unknown", "InfiniBand channel adapter", "InfiniBand switch",
					"InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP", "unspecified"};

	return t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) ? s[t] : s[0];
}

EXPORT const char *ibv_port_state_str(enum ibv_port_state st)
{
	static const char *const s[] = {"no state change (NOP)", "down", "init", "armed", "active", "active defer"};

	return st >= 0 && (size_t)st < sizeof(s) / sizeof(s[0]) ? s[st] : "unknown";
}

EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	switch (rate) {
	case IBV_RATE_2_5_GBPS:
		return 1;
	case IBV_RATE_5_GBPS:
		return 2;
	case IBV_RATE_10_GBPS:
		return 4;
	case IBV_RATE_20_GBPS:
		return 8;
	case IBV_RATE_40_GBPS:
		return 16;
	default:
		return -1;
	}
}

EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	switch (mult) {
	case 1:
		return IBV_RATE_2_5_GBPS;
	case 2:
		return IBV_RATE_5_GBPS;
	case 4:
		return IBV_RATE_10_GBPS;
	case 8:
		return IBV_RATE_20_GBPS;
	case 16:
		return IBV_RATE_40_GBPS;
	default:
		return IBV_RATE_MAX;
	}
}

/* Memory registration exists in every version of the chain; the double
 * has no memory to register. */
EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				       unsigned int access)
{
	(void)pd, (void)addr, (void)length, (void)iova, (void)access;
	return null_errno(EOPNOTSUPP);
}

#undef ibv_reg_mr_iova
EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	(void)pd, (void)addr, (void)length, (void)iova, (void)access;
	return null_errno(EOPNOTSUPP);
}

EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
					int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	return null_errno(EOPNOTSUPP);
}

EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	return null_errno(EOPNOTSUPP);
}
