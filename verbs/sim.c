/*
 * sim.c: an XRC device emulated in a file-backed shared memory segment.
 *
 * Layout of <dir>/sim.dev: a header (with the process-shared robust mutex
 * that guards everything), the registrant, domain and domain-handle tables,
 * then max_qps QP slots of a fixed stride, each with max_regs registration
 * entries. A QP number maps to slot qpn % max_qps, so lookup is O(1);
 * allocation walks QP numbers upward from next_qpn and takes the first whose
 * slot is free, so numbers are not reused until the 24-bit space wraps.
 *
 * Locking follows the kernel (docs/design.md, "The sim's locks"). Each
 * domain has a lock that plays the XRCD's tgt_qps_rwsem: a reg takes it
 * shared (ib_open_qp's lookup), an unreg exclusive (the kernel closes every
 * opened handle under the rwsem held for write). With the pre-5.9 lookup
 * (SIM_LOOKUP_LIST) a reg takes it exclusive too, as tgt_qp_mutex was, and
 * walks the domain's QPs under it. Commands that reach the driver (create,
 * modify, the destroy of the last unreg) hold one of cmdq_depth
 * command-queue slots while they pay their cost. Every QP slot has its own
 * process-shared robust mutex, which plays the spinlock that guards the
 * QP's open_list (the kernel's is the device's qp_open_list_lock, one for
 * every QP; here one a QP): it guards the slot's registrations, so what a
 * reg or unreg changes is consistent whatever the domain lock does. The
 * device lock guards the registrant, domain and domain-handle tables and
 * QP allocation. Order: command-queue slot, domain lock, device lock, QP
 * lock. A held lock is spun on before its locker sleeps (LOCK_SPIN_NS).
 * A domain's live-QP count is atomic, because a destroy changes it under
 * the QP lock alone; a domain entry left with no handles and no QPs is
 * freed by the next operation that holds the device lock (domain_put).
 *
 * Crash safety: a process killed while holding a lock leaves the next
 * locker EOWNERDEAD; it repairs what that lock guards (sim_repair,
 * qp_repair) before trusting it, and drops what dead processes held.
 * Updates are ordered so that repair can always restore a consistent state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

#include "sim.h"

#define SIM_MAGIC 0x31304d4953435258ull /* "XRCSIM01" */
#define SIM_VERSION 5 /* 3: QP states and their costs; 4: domain locks, command queue; 5: its slots' due times */
#define SIM_FILE "sim.dev"
#define SIM_QPN_BASE 0x100u /* QP numbers below are reserved (QP0/QP1 on IB) */
#define SIM_MAX_REGISTRANTS 4096
#define SIM_MAX_DOMAINS 256
#define SIM_MAX_DHANDLES 4096
#define SIM_DEFAULT_MAX_QPS 16384
#define SIM_DEFAULT_MAX_REGS 128
#define SIM_LIMIT_QPS (1u << 20)
#define SIM_LIMIT_REGS 4096
#define SIM_NONE 0xffffffffu
#define SIM_LIMIT_COST_NS (60ull * 1000000000ull) /* a cost beyond is a damaged header */
#define SIM_LOCK_PATIENCE_MS 30000 /* a lock held longer is wedged or damaged */
#define SIM_LIMIT_SCAN_NS 1000000ull /* a scan cost per QP beyond is a damaged header */
#define SIM_FORGIVE_MS 10 /* a writer kept this long looks for dead readers */

struct sim_registrant {
	int32_t pid;
	uint32_t in_use;
	uint64_t start_time; /* of the process, to tell a reused pid */
};

/* The domain lock is a robust mutex (wlock) that writers hold, and a word
 * (rw) of readers plus DOM_WRITER. Not a pthread rwlock: glibc's is not
 * robust, and a process killed holding one would wedge the domain for
 * good. A writer holds wlock, sets DOM_WRITER and waits for the readers to
 * leave; a reader that finds DOM_WRITER waits on wlock, which the kernel
 * hands on (EOWNERDEAD) when its holder dies. A reader that dies inside
 * leaves its count in rw; each reader counts itself in its domain handle
 * (sim_dhandle.readers) first, so a writer kept waiting can tell the
 * counts of dead processes and drop them (dom_forgive). */
#define DOM_WRITER 0x80000000u

struct sim_domain {
	uint64_t dev, ino; /* the domain file: XRC domains are shared by inode */
	uint32_t handles;  /* open domain handles */
	uint32_t qps;      /* live QPs; atomic: destroy changes it under a QP lock */
	uint32_t in_use;
	uint32_t rw; /* readers, | DOM_WRITER; a futex */
	pthread_mutex_t wlock;
} __attribute__((aligned(64)));

struct sim_dhandle {
	uint32_t registrant, domain, in_use;
	uint32_t readers; /* this handle's threads inside the domain's lock shared; atomic */
};

struct sim_reg {
	uint32_t registrant;
	uint32_t count; /* 1 in legacy semantics; open handles in upstream */
};

struct sim_qp {
	pthread_mutex_t lock;
	uint32_t qpn;
	uint32_t domain;
	uint32_t nregs;
	uint32_t in_use;
	uint32_t state; /* enum xb_qp_state */
	uint32_t pad;
	struct sim_reg regs[];
};

struct sim_shared {
	uint64_t magic;
	uint32_t version;
	uint32_t ready;
	uint64_t size;
	struct sim_config cfg;
	uint64_t qp_off, qp_stride;
	uint32_t next_qpn;
	uint32_t pad;
	uint64_t created, destroyed, reaped;
	pthread_mutex_t lock;
	/* the command queue: a slot is a robust mutex, so a process killed in
	 * a command gives its slot back; cmdq_seq (a futex) counts releases,
	 * for waiters to sleep on */
	uint32_t cmdq_seq, cmdq_waiters;
	pthread_mutex_t cmdq[SIM_MAX_CMDQ];
	/* when each slot's command is due to end (CLOCK_MONOTONIC ns; 0:
	 * free), and the waiters spinning for one (CMDQ_EARLY_NS) */
	uint64_t cmdq_until[SIM_MAX_CMDQ];
	uint32_t cmdq_spinners, cmdq_pad;
	struct sim_registrant registrants[SIM_MAX_REGISTRANTS];
	struct sim_domain domains[SIM_MAX_DOMAINS];
	struct sim_dhandle dhandles[SIM_MAX_DHANDLES];
};

struct sim_dev {
	struct sim_shared *sh;
	size_t size;
	int semantics;
	int target; /* the QP state XB_QPS_TARGET means, for this registrant */
	uint32_t registrant;
	/* The geometry validated at attach. The shared copy is compared with
	 * it on every entry (sim_intact): a file another process scribbles
	 * on must fail an operation, not steer it outside the mapping. */
	uint32_t max_qps, max_regs;
	uint64_t qp_off, qp_stride;
	/* The file mapped, to tell when it was cut short under the mapping
	 * (sim_file_intact) before touching a page past its new end. */
	char path[512];
	dev_t fdev;
	ino_t fino;
};

struct sim_dom {
	struct sim_dev *dev;
	uint32_t domain;
	uint32_t dhandle;
	int semantics;
};

static struct sim_qp *qp_at(struct sim_shared *sh, uint32_t slot)
{
	return (struct sim_qp *)((char *)sh + sh->qp_off + (uint64_t)slot * sh->qp_stride);
}

static struct sim_qp *qp_slot(struct sim_shared *sh, uint32_t qpn)
{
	return qp_at(sh, qpn % sh->cfg.max_qps);
}

/* qp_is: under the slot's lock, whether it holds QP qpn. */
static int qp_is(const struct sim_qp *qp, uint32_t qpn)
{
	return qp->in_use && qp->qpn == qpn;
}

/* ---- process liveness ---------------------------------------------------- */

/* proc_start_time reads field 22 of /proc/<pid>/stat; 0 when the process is
 * gone or a zombie (a SIGKILLed child not yet reaped is dead to us). */
static uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p || p[1] != ' ')
		return 0;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return 0;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	return strtoull(p, NULL, 10);
}

static int registrant_alive(const struct sim_registrant *r)
{
	uint64_t st = proc_start_time(r->pid);

	return st != 0 && st == r->start_time;
}

/* ---- locks -------------------------------------------------------------- */

static int init_robust_mutex(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc;

	if ((rc = pthread_mutexattr_init(&a)) != 0)
		return rc;
	if ((rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)) == 0 &&
	    (rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)) == 0)
		rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

/* mutex_kind is what glibc keeps in a process-shared robust mutex's kind
 * field. A lock in the file with any other kind is damaged, and locking it
 * anyway could take glibc down a path (priority inheritance, an assertion)
 * that aborts the process; it is refused with EIO instead. */
static int mutex_kind = -1;
static pthread_once_t mutex_kind_once = PTHREAD_ONCE_INIT;

static void learn_mutex_kind(void)
{
	pthread_mutex_t m;

	if (init_robust_mutex(&m) == 0) {
#ifdef __GLIBC__
		mutex_kind = m.__data.__kind;
#endif
		pthread_mutex_destroy(&m);
	}
}

/* robust_lock locks a mutex of the device file: EIO when it is not a
 * robust shared mutex, EDEADLK when it stays held SIM_LOCK_PATIENCE_MS (a
 * stopped holder, or a lock word scribbled over), else what
 * pthread_mutex_lock returns, EOWNERDEAD included. The uncontended path
 * is one trylock, as fast as a plain lock. */
static int lock_patience_ms = SIM_LOCK_PATIENCE_MS;

void sim_debug_lock_patience(int ms)
{
	__atomic_store_n(&lock_patience_ms, ms > 0 ? ms : SIM_LOCK_PATIENCE_MS, __ATOMIC_RELAXED);
}

/* What this thread waited on, for sim_thread_waits: only slow paths are
 * timed, so an uncontended lock costs no clock read. */
static __thread uint64_t waited_lock_ns, waited_cmdq_ns;

void sim_thread_waits(uint64_t *lock_ns, uint64_t *cmdq_ns)
{
	if (lock_ns)
		*lock_ns += waited_lock_ns;
	if (cmdq_ns)
		*cmdq_ns += waited_cmdq_ns;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int robust_lock_slow(pthread_mutex_t *m);

/* LOCK_SPIN_NS: how long a locker spins for a held lock before it sleeps.
 * The kernel's locks these play spin while their holder runs
 * (qp_open_list_lock; a writer of tgt_qps_rwsem spins on its owner), and
 * the sim holds each for a few hundred ns; a sleeper pays a wake-up
 * instead (20-40 us on the 2-CPU VM), and its waker a futex call. With
 * sleeping alone, 2 processes registering at reg=2us,unreg=2us on the
 * 2-CPU VM reached 1.60-1.85x one process's rate, 4-14 ms of 400 blocked
 * on the domain's lock each, and TestSimRegsScale passed 2 runs of 8;
 * spinning, 1.67-1.81x, 3-8 ms, 8 of 8. At no cost, where the lock is all
 * the work, spinners cost 6% of the pair's rate (the lock's line moves
 * between them, where a sleeper stepped aside). */
#define LOCK_SPIN_NS 5000u

/* lock_looks_free reads a mutex's word before a spinner tries its atomic,
 * so spinners leave the word's cache line with the holder. */
static inline int lock_looks_free(pthread_mutex_t *m)
{
#ifdef __GLIBC__
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0;
#else
	(void)m;
	return 1;
#endif
}

static int robust_lock(pthread_mutex_t *m)
{
	int rc;

#ifdef __GLIBC__
	if (mutex_kind != -1 && __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != mutex_kind)
		return EIO;
#endif
	if ((rc = pthread_mutex_trylock(m)) != EBUSY)
		return rc;
	uint64_t t0 = xb_now_ns(), t = t0;

	for (unsigned i = 1; t - t0 < LOCK_SPIN_NS; i++) {
		cpu_relax();
		if (lock_looks_free(m) && (rc = pthread_mutex_trylock(m)) != EBUSY) {
			waited_lock_ns += xb_now_ns() - t0;
			return rc;
		}
		if (i % 16 == 0)
			t = xb_now_ns();
	}
	rc = robust_lock_slow(m);
	waited_lock_ns += xb_now_ns() - t0;
	return rc;
}

static int robust_lock_slow(pthread_mutex_t *m)
{
	struct timespec deadline;
	int rc;

	clock_gettime(CLOCK_REALTIME, &deadline);
	int patience = __atomic_load_n(&lock_patience_ms, __ATOMIC_RELAXED);

	deadline.tv_sec += patience / 1000;
	deadline.tv_nsec += (long)(patience % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	rc = pthread_mutex_timedlock(m, &deadline);
	return rc == ETIMEDOUT ? EDEADLK : rc;
}

static void qp_repair(struct sim_shared *sh, struct sim_qp *qp);
static void sim_repair(struct sim_shared *sh);
static int sweep_dead(struct sim_shared *sh);

/* qp_lock takes a QP slot's lock, repairing the slot when its last holder
 * died holding it. A slot whose counts point outside it is damaged: EIO. */
static int qp_lock(struct sim_shared *sh, struct sim_qp *qp)
{
	int rc = robust_lock(&qp->lock);

	if (rc == EOWNERDEAD) {
		qp_repair(sh, qp);
		pthread_mutex_consistent(&qp->lock);
		rc = 0;
	}
	if (rc == 0 && (qp->nregs > sh->cfg.max_regs || (qp->in_use && qp->domain >= SIM_MAX_DOMAINS))) {
		pthread_mutex_unlock(&qp->lock);
		rc = EIO;
	}
	return rc;
}

static void qp_unlock(struct sim_qp *qp)
{
	pthread_mutex_unlock(&qp->lock);
}

static int sim_lock(struct sim_shared *sh)
{
	int rc = robust_lock(&sh->lock);

	if (rc == EOWNERDEAD) {
		sim_repair(sh);
		sweep_dead(sh);
		pthread_mutex_consistent(&sh->lock);
		rc = 0;
	}
	return rc;
}

static void sim_unlock(struct sim_shared *sh)
{
	pthread_mutex_unlock(&sh->lock);
}

/* futex_wait sleeps while *addr is val, at most ms: the waits below poll
 * too, since a holder that dies wakes nobody. Shared futexes: the word is
 * in a mapping of several processes. */
static void futex_wait(uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* ---- the domain's lock (tgt_qps_rwsem) ------------------------------------ */

/* dom_forgive drops from domain d's reader count the readers of processes
 * that died inside (SIM_FORGIVE_MS into a writer's wait). Each reader
 * counts itself in its handle before rw and leaves rw before its handle,
 * so the live handles' sum is never below the live readers in rw: taking
 * the smaller of the two never lets a writer in beside a live reader. */
static void dom_forgive(struct sim_shared *sh, uint32_t d)
{
	uint32_t live = 0, cur;
	int dead = 0;

	for (uint32_t h = 0; h < SIM_MAX_DHANDLES; h++) {
		struct sim_dhandle *dh = &sh->dhandles[h];
		uint32_t n = __atomic_load_n(&dh->readers, __ATOMIC_ACQUIRE);

		if (n == 0 || __atomic_load_n(&dh->domain, __ATOMIC_RELAXED) != d)
			continue;
		if (__atomic_load_n(&dh->in_use, __ATOMIC_RELAXED) &&
		    registrant_alive(&sh->registrants[__atomic_load_n(&dh->registrant, __ATOMIC_RELAXED) % SIM_MAX_REGISTRANTS]))
			live += n;
		else
			dead = 1;
	}
	if (!dead)
		return;
	cur = __atomic_load_n(&sh->domains[d].rw, __ATOMIC_ACQUIRE);
	while ((cur & ~DOM_WRITER) > live &&
	       !__atomic_compare_exchange_n(&sh->domains[d].rw, &cur, (cur & DOM_WRITER) | live, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

/* dom_wlock takes domain d's lock exclusive. A writer that died left
 * nothing to repair (the QP slots have their own locks), only DOM_WRITER,
 * which the next holder of wlock sets anyway. */
static int dom_wlock(struct sim_shared *sh, uint32_t d)
{
	struct sim_domain *dom = &sh->domains[d];
	uint32_t cur;
	uint64_t t0, waited;
	int rc = robust_lock(&dom->wlock), patience;

	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(&dom->wlock);
		rc = 0;
	}
	if (rc)
		return rc;
	cur = __atomic_or_fetch(&dom->rw, DOM_WRITER, __ATOMIC_SEQ_CST);
	/* Readers stay in for a few loads and stores: spin that long first. */
	for (int spin = 0; cur != DOM_WRITER && spin < 256; spin++) {
		cpu_relax();
		cur = __atomic_load_n(&dom->rw, __ATOMIC_ACQUIRE);
	}
	if (cur == DOM_WRITER)
		return 0;
	t0 = xb_now_ns();
	patience = __atomic_load_n(&lock_patience_ms, __ATOMIC_RELAXED);
	for (uint64_t next = SIM_FORGIVE_MS; (cur = __atomic_load_n(&dom->rw, __ATOMIC_ACQUIRE)) != DOM_WRITER;) {
		waited = (xb_now_ns() - t0) / 1000000;
		if (waited >= (uint64_t)patience) {
			__atomic_and_fetch(&dom->rw, ~DOM_WRITER, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&dom->wlock);
			waited_lock_ns += xb_now_ns() - t0;
			return EDEADLK;
		}
		if (waited >= next) {
			dom_forgive(sh, d);
			next = waited + SIM_FORGIVE_MS;
		}
		futex_wait(&dom->rw, cur, 1);
	}
	waited_lock_ns += xb_now_ns() - t0;
	return 0;
}

static void dom_wunlock(struct sim_shared *sh, uint32_t d)
{
	__atomic_and_fetch(&sh->domains[d].rw, ~DOM_WRITER, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sh->domains[d].wlock);
}

/* dom_rlock takes the domain's lock shared, through domain handle h. */
static int dom_rlock(struct sim_shared *sh, uint32_t d, uint32_t h)
{
	struct sim_domain *dom = &sh->domains[d];
	uint32_t *mine = &sh->dhandles[h].readers;

	for (;;) {
		uint32_t cur;
		int rc;

		__atomic_add_fetch(mine, 1, __ATOMIC_SEQ_CST);
		cur = __atomic_load_n(&dom->rw, __ATOMIC_RELAXED);
		while (!(cur & DOM_WRITER))
			if (__atomic_compare_exchange_n(&dom->rw, &cur, cur + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				return 0;
		__atomic_sub_fetch(mine, 1, __ATOMIC_RELEASE);
		/* Wait for the writer on its mutex. Holding it, no live writer
		 * is in, so DOM_WRITER set now was left by a dead one. */
		rc = robust_lock(&dom->wlock);
		if (rc == EOWNERDEAD) {
			pthread_mutex_consistent(&dom->wlock);
			rc = 0;
		}
		if (rc)
			return rc;
		__atomic_and_fetch(&dom->rw, ~DOM_WRITER, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&dom->wlock);
	}
}

static void dom_runlock(struct sim_shared *sh, uint32_t d, uint32_t h)
{
	if (__atomic_sub_fetch(&sh->domains[d].rw, 1, __ATOMIC_SEQ_CST) == DOM_WRITER)
		futex_wake(&sh->domains[d].rw, 1);
	__atomic_sub_fetch(&sh->dhandles[h].readers, 1, __ATOMIC_RELEASE);
}

/* ---- the command queue ---------------------------------------------------- */

/* pay spends cost_ns of the calling thread's time: the device at work. */
static void pay(uint64_t cost_ns)
{
	if (cost_ns)
		xb_spin_until(xb_now_ns() + cost_ns);
}

/* CMDQ_EARLY_NS: how a waiter for a command-queue slot waits. When a slot
 * is due back within this long (its command's cost known at its start), a
 * waiter spins for it; otherwise it sleeps, and the command wakes one
 * sleeper this long before its end, from inside its paid time, which then
 * spins twice this long before it sleeps again. Few waiters spin at once
 * (cmdq_spinners_max; a process killed while spinning leaves its place
 * taken, and the waits fall back to sleeping). Waiters that only
 * slept, woken at each release, took the slot after the wake-up's way
 * (the release's own futex call 20-40 us on the 2-CPU VM, an interrupt to
 * a sleeping CPU) while the slot stood idle, and a command of no cost (a
 * destroy) handed the slot over so every time: depth 1 from two processes
 * creating and destroying at create=100us made 7,460-7,670 creates a
 * second, and 8,150-8,300 so (the rest of the 10,000 is the processes'
 * own time between commands). The harness's waits spin as long
 * (XB_SPIN_NS). */
#define CMDQ_EARLY_NS XB_SPIN_NS

/* cmdq_due_soon says whether one of the depth slots is free or due back
 * within CMDQ_EARLY_NS of now. One overdue by more is not: its holder is
 * likely off its CPU, and a spinner might be what keeps it off. */
static int cmdq_due_soon(struct sim_shared *sh, uint32_t depth, uint64_t now)
{
	for (uint32_t i = 0; i < depth; i++) {
		uint64_t until = __atomic_load_n(&sh->cmdq_until[i], __ATOMIC_RELAXED);

		if (until == 0 || (until <= now + CMDQ_EARLY_NS && until + CMDQ_EARLY_NS >= now))
			return 1;
	}
	return 0;
}

/* cmdq_spinners_max is how many waiters may spin for a slot: one a slot,
 * while each has a CPU beside the slots' holders (depth of them, at
 * worst). A spinner sharing a CPU with a holder keeps the command it
 * waits for from ending: on 2 CPUs, depth 2 from four processes made 9,000
 * creates a second with spinners, 11,100 without. */
static uint32_t cmdq_spinners_max(uint32_t depth)
{
	/* The CPUs the first caller may run on, once known: a cpuset (a
	 * container, a Slurm job) can leave far fewer than are online, and a
	 * thread bound to one CPU (--pin) leaves none to spin on. */
	static uint32_t cpus;
	uint32_t n = __atomic_load_n(&cpus, __ATOMIC_RELAXED);

	if (n == 0) {
		cpu_set_t set;

		n = sched_getaffinity(0, sizeof(set), &set) == 0 ? (uint32_t)CPU_COUNT(&set) : 1;
		__atomic_store_n(&cpus, n ? n : 1, __ATOMIC_RELAXED);
	}
	if (n <= depth)
		return 0;
	return n - depth < depth ? n - depth : depth;
}

/* cmdq_enter takes a free command-queue slot for a command of cost_ns
 * (UINT64_MAX: held until further notice), spinning or sleeping while all
 * cmdq_depth are busy (CMDQ_EARLY_NS). A slot guards no data, so one its
 * holder died in is simply taken. */
static int cmdq_enter(struct sim_shared *sh, uint32_t *slot, uint64_t cost_ns)
{
	uint32_t depth = sh->cfg.cmdq_depth;
	uint64_t t0 = 0, spin_until = 0;
	int spinning = 0, rc = 0;

	for (;;) {
		uint32_t seq = __atomic_load_n(&sh->cmdq_seq, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < depth; i++) {
			pthread_mutex_t *m = &sh->cmdq[i];

#ifdef __GLIBC__
			if (mutex_kind != -1 && __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != mutex_kind) {
				rc = EIO;
				goto out;
			}
#endif
			rc = pthread_mutex_trylock(m);
			if (rc == EOWNERDEAD) {
				pthread_mutex_consistent(m);
				rc = 0;
			}
			if (rc == 0) {
				uint64_t now = xb_now_ns();

				*slot = i;
				__atomic_store_n(&sh->cmdq_until[i], cost_ns == UINT64_MAX ? UINT64_MAX : now + cost_ns,
						 __ATOMIC_RELAXED);
				if (t0)
					waited_cmdq_ns += now - t0;
				goto out;
			}
			if (rc != EBUSY)
				goto out;
		}
		uint64_t now = xb_now_ns();

		if (!t0)
			t0 = now;
		else if ((now - t0) / 1000000 >= (uint64_t)__atomic_load_n(&lock_patience_ms, __ATOMIC_RELAXED)) {
			waited_cmdq_ns += now - t0;
			rc = EDEADLK;
			goto out;
		}
		if (now < spin_until || cmdq_due_soon(sh, depth, now)) {
			if (!spinning) {
				spinning = __atomic_add_fetch(&sh->cmdq_spinners, 1, __ATOMIC_SEQ_CST) <= cmdq_spinners_max(depth);
				if (!spinning)
					__atomic_sub_fetch(&sh->cmdq_spinners, 1, __ATOMIC_SEQ_CST);
			}
			if (spinning) {
				cpu_relax();
				continue;
			}
		} else if (spinning) {
			__atomic_sub_fetch(&sh->cmdq_spinners, 1, __ATOMIC_SEQ_CST);
			spinning = 0;
		}
		/* A holder wakes one sleeper shortly before its release, or at
		 * it; the timeout is for a holder that died, which wakes
		 * nobody. Not shorter: a waiter woken for nothing queues for a
		 * CPU beside the slots' holders. */
		__atomic_add_fetch(&sh->cmdq_waiters, 1, __ATOMIC_SEQ_CST);
		futex_wait(&sh->cmdq_seq, seq, 20);
		__atomic_sub_fetch(&sh->cmdq_waiters, 1, __ATOMIC_RELAXED);
		spin_until = xb_now_ns() + 2 * CMDQ_EARLY_NS;
	}
out:
	if (spinning)
		__atomic_sub_fetch(&sh->cmdq_spinners, 1, __ATOMIC_SEQ_CST);
	return rc;
}

/* cmdq_leave gives slot back, and wakes a sleeper when no waiter spins
 * to take it. */
static void cmdq_leave(struct sim_shared *sh, uint32_t slot)
{
	__atomic_store_n(&sh->cmdq_until[slot], 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&sh->cmdq[slot]);
	__atomic_add_fetch(&sh->cmdq_seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->cmdq_waiters, __ATOMIC_SEQ_CST) && !__atomic_load_n(&sh->cmdq_spinners, __ATOMIC_SEQ_CST))
		futex_wake(&sh->cmdq_seq, 1);
}

/* cmdq_pay pays a command's cost in its slot. One longer than
 * CMDQ_EARLY_NS wakes a sleeper that long before its end, to spin for the
 * slot, while another may spin: the wake's cost is absorbed by the wait. */
static void cmdq_pay(struct sim_shared *sh, uint64_t cost_ns)
{
	uint64_t end;

	if (cost_ns <= CMDQ_EARLY_NS) {
		pay(cost_ns);
		return;
	}
	end = xb_now_ns() + cost_ns;
	xb_spin_until(end - CMDQ_EARLY_NS);
	if (__atomic_load_n(&sh->cmdq_waiters, __ATOMIC_SEQ_CST) &&
	    __atomic_load_n(&sh->cmdq_spinners, __ATOMIC_SEQ_CST) < cmdq_spinners_max(sh->cfg.cmdq_depth))
		futex_wake(&sh->cmdq_seq, 1);
	xb_spin_until(end);
}

/* ---- table maintenance -------------------------------------------------- */

/* domain_put frees a domain entry nothing refers to. Device lock held. */
static void domain_put(struct sim_shared *sh, uint32_t d)
{
	struct sim_domain *dom = &sh->domains[d];

	if (dom->in_use && dom->handles == 0 && __atomic_load_n(&dom->qps, __ATOMIC_ACQUIRE) == 0)
		dom->in_use = 0;
}

static void domains_put(struct sim_shared *sh)
{
	for (uint32_t d = 0; d < SIM_MAX_DOMAINS; d++)
		domain_put(sh, d);
}

/* qp_destroy frees a QP whose last registration went. QP lock held. */
static void qp_destroy(struct sim_shared *sh, struct sim_qp *qp)
{
	uint32_t d = qp->domain;

	qp->in_use = 0;
	qp->nregs = 0;
	__atomic_add_fetch(&sh->destroyed, 1, __ATOMIC_RELAXED);
	if (d < SIM_MAX_DOMAINS)
		__atomic_sub_fetch(&sh->domains[d].qps, 1, __ATOMIC_RELEASE);
}

/* reg_remove removes entry i, keeping the array dense. Order matters for
 * repair: the copy happens before nregs shrinks, so a crash in between
 * leaves a duplicate (which repair removes), never a lost entry. */
static void reg_remove(struct sim_qp *qp, uint32_t i)
{
	qp->regs[i] = qp->regs[qp->nregs - 1];
	qp->nregs--;
}

static int reg_find(const struct sim_qp *qp, uint32_t registrant)
{
	for (uint32_t i = 0; i < qp->nregs; i++)
		if (qp->regs[i].registrant == registrant)
			return (int)i;
	return -1;
}

/* drop_registrant releases everything registrant r holds, as the kernel
 * does when a uverbs file is closed: its registrations (destroying QPs it
 * was the last on) and its domain handles. Device lock held. Returns the
 * registrations dropped, or -errno. */
static int drop_registrant(struct sim_shared *sh, uint32_t r)
{
	int dropped = 0, rc;

	for (uint32_t s = 0; s < sh->cfg.max_qps; s++) {
		struct sim_qp *qp = qp_at(sh, s);
		int i;

		if ((rc = qp_lock(sh, qp)) != 0)
			return -rc;
		if (qp->in_use && (i = reg_find(qp, r)) >= 0) {
			reg_remove(qp, (uint32_t)i);
			dropped++;
			if (qp->nregs == 0)
				qp_destroy(sh, qp);
		}
		qp_unlock(qp);
	}
	for (uint32_t h = 0; h < SIM_MAX_DHANDLES; h++) {
		struct sim_dhandle *dh = &sh->dhandles[h];

		if (dh->in_use && dh->registrant == r) {
			dh->in_use = 0;
			if (dh->domain < SIM_MAX_DOMAINS && sh->domains[dh->domain].handles > 0)
				sh->domains[dh->domain].handles--;
		}
	}
	domains_put(sh);
	sh->registrants[r].in_use = 0;
	return dropped;
}

/* sweep_dead drops the registrants of processes that are gone. Device
 * lock held. */
static int sweep_dead(struct sim_shared *sh)
{
	int dropped = 0;

	for (uint32_t r = 0; r < SIM_MAX_REGISTRANTS; r++) {
		struct sim_registrant *reg = &sh->registrants[r];

		if (reg->in_use && !registrant_alive(reg)) {
			pid_t pid = reg->pid;

			/* one /proc read per dead process, not per registrant */
			for (uint32_t o = r; o < SIM_MAX_REGISTRANTS; o++)
				if (sh->registrants[o].in_use && sh->registrants[o].pid == pid) {
					int n = drop_registrant(sh, o);

					dropped += n > 0 ? n : 0;
					sh->reaped++;
				}
		}
	}
	return dropped;
}

/* qp_repair restores one QP slot after a holder of its lock died
 * mid-update: entries valid and unique, an empty QP destroyed. */
static void qp_repair(struct sim_shared *sh, struct sim_qp *qp)
{
	if (!qp->in_use)
		return;
	if (qp->nregs > sh->cfg.max_regs)
		qp->nregs = sh->cfg.max_regs;
	for (uint32_t i = 0; i < qp->nregs;) {
		struct sim_reg *e = &qp->regs[i];
		int dup = 0;

		for (uint32_t j = 0; j < i; j++)
			dup |= qp->regs[j].registrant == e->registrant;
		if (dup || e->count == 0 || e->registrant >= SIM_MAX_REGISTRANTS)
			reg_remove(qp, i);
		else
			i++;
	}
	if (qp->nregs == 0 || qp->domain >= SIM_MAX_DOMAINS)
		qp_destroy(sh, qp);
}

/* sim_repair restores the device tables after a holder of the device lock
 * died mid-update: handles recounted, live-QP counts recomputed, entries
 * of registrants that are gone dropped. */
static void sim_repair(struct sim_shared *sh)
{
	for (uint32_t d = 0; d < SIM_MAX_DOMAINS; d++)
		sh->domains[d].handles = 0;
	for (uint32_t h = 0; h < SIM_MAX_DHANDLES; h++) {
		struct sim_dhandle *dh = &sh->dhandles[h];

		if (dh->in_use && (dh->domain >= SIM_MAX_DOMAINS || dh->registrant >= SIM_MAX_REGISTRANTS ||
				   !sh->domains[dh->domain].in_use || !sh->registrants[dh->registrant].in_use))
			dh->in_use = 0;
		if (dh->in_use)
			sh->domains[dh->domain].handles++;
	}
	for (uint32_t d = 0; d < SIM_MAX_DOMAINS; d++)
		__atomic_store_n(&sh->domains[d].qps, 0, __ATOMIC_RELEASE);
	for (uint32_t s = 0; s < sh->cfg.max_qps; s++) {
		struct sim_qp *qp = qp_at(sh, s);

		if (qp_lock(sh, qp) != 0)
			continue;
		for (uint32_t i = 0; qp->in_use && i < qp->nregs;) {
			if (!sh->registrants[qp->regs[i].registrant % SIM_MAX_REGISTRANTS].in_use)
				reg_remove(qp, i);
			else
				i++;
		}
		if (qp->in_use && (qp->domain >= SIM_MAX_DOMAINS || !sh->domains[qp->domain].in_use || qp->nregs == 0)) {
			qp->in_use = 0;
			qp->nregs = 0;
		}
		if (qp->in_use)
			__atomic_add_fetch(&sh->domains[qp->domain].qps, 1, __ATOMIC_RELEASE);
		qp_unlock(qp);
	}
	domains_put(sh);
}

/* ---- device ------------------------------------------------------------- */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* prefault maps every page of this process's mapping writable now, so that
 * no timed operation takes the fault of a first write to a page (a
 * microsecond on tmpfs, several on a disk file system, in every mapping:
 * each registrant maps the device). Best effort: older kernels refuse the
 * advice, and an operation then pays the fault instead.
 *
 * Then it reads one byte of every page from user space. The advice fills
 * the page table from the kernel, and under a hypervisor that is not
 * enough: on a Firecracker guest the first user access to each page still
 * cost 4-5 us with no fault in the guest (the host's doing, presumably:
 * not verified), and a create that took a new QP slot paid it (a
 * lifecycle's create p50 24.2 us at 4 threads against 20.4 us alone, for
 * 20 us injected). A read once here removed it; a second read pass of the
 * whole mapping took 0.4 ms on that VM, about what a page's TLB miss
 * costs, so the pass should be that cheap where no hypervisor adds to it. */
static void prefault(void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);

	(void)madvise(p, len, MADV_POPULATE_WRITE);
	if (page <= 0)
		page = 4096;
	for (size_t o = 0; o < len; o += (size_t)page)
		(void)__atomic_load_n((const volatile char *)p + o, __ATOMIC_RELAXED);
}

static int config_normalize(struct sim_config *c)
{
	if (c->max_qps == 0)
		c->max_qps = SIM_DEFAULT_MAX_QPS;
	if (c->max_regs == 0)
		c->max_regs = SIM_DEFAULT_MAX_REGS;
	if (c->max_qps > SIM_LIMIT_QPS || c->max_regs > SIM_LIMIT_REGS)
		return EINVAL;
	c->no_xrc = !!c->no_xrc;
	if (c->cmdq_depth == 0)
		c->cmdq_depth = SIM_DEFAULT_CMDQ;
	if (c->cmdq_depth > SIM_MAX_CMDQ || c->lookup > SIM_LOOKUP_LIST || c->cost_scan_ns > SIM_LIMIT_SCAN_NS ||
	    (c->cost_scan_ns && c->lookup != SIM_LOOKUP_LIST))
		return EINVAL;
	return 0;
}

/* QP slots are cache-line aligned, so registrants working on different
 * QPs do not share a line (and so do not contend without a lock either). */
static uint64_t slot_stride(const struct sim_config *c)
{
	uint64_t n = sizeof(struct sim_qp) + (uint64_t)c->max_regs * sizeof(struct sim_reg);

	return (n + 63) & ~(uint64_t)63;
}

static uint64_t slots_offset(void)
{
	return (sizeof(struct sim_shared) + 63) & ~(uint64_t)63;
}

static uint64_t sim_size(const struct sim_config *c)
{
	return slots_offset() + (uint64_t)c->max_qps * slot_stride(c);
}

/* sim_init lays out a zeroed device. */
static int sim_init(struct sim_shared *sh, const struct sim_config *cfg, uint64_t size)
{
	int rc;

	sh->cfg = *cfg;
	sh->size = size;
	sh->qp_off = slots_offset();
	sh->qp_stride = slot_stride(cfg);
	sh->next_qpn = SIM_QPN_BASE;
	if ((rc = init_robust_mutex(&sh->lock)) != 0)
		return rc;
	for (uint32_t i = 0; i < SIM_MAX_CMDQ; i++)
		if ((rc = init_robust_mutex(&sh->cmdq[i])) != 0)
			return rc;
	for (uint32_t d = 0; d < SIM_MAX_DOMAINS; d++)
		if ((rc = init_robust_mutex(&sh->domains[d].wlock)) != 0)
			return rc;
	for (uint32_t s = 0; s < cfg->max_qps; s++)
		if ((rc = init_robust_mutex(&qp_at(sh, s)->lock)) != 0)
			return rc;
	sh->version = SIM_VERSION;
	sh->magic = SIM_MAGIC;
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	return 0;
}

static int config_matches(const struct sim_config *want, const struct sim_config *have)
{
	return want->max_qps == have->max_qps && want->max_regs == have->max_regs &&
	       want->no_xrc == have->no_xrc && want->cost_create_ns == have->cost_create_ns &&
	       want->cost_reg_ns == have->cost_reg_ns && want->cost_unreg_ns == have->cost_unreg_ns &&
	       want->cost_destroy_ns == have->cost_destroy_ns && want->cost_modify_ns == have->cost_modify_ns &&
	       want->cost_reset_ns == have->cost_reset_ns && want->cost_scan_ns == have->cost_scan_ns &&
	       want->cmdq_depth == have->cmdq_depth && want->lookup == have->lookup;
}

/* half_made reports whether the device file was left by a creator that
 * died before it was ready: no magic yet, or ours without the ready flag. */
static int half_made(int fd, off_t size)
{
	const struct sim_shared *sh;
	int half;

	if ((size_t)size < sizeof(struct sim_shared))
		return 0; /* not a device at all: let the caller refuse it */
	sh = mmap(NULL, sizeof(*sh), PROT_READ, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return 0;
	half = (sh->magic == 0 || sh->magic == SIM_MAGIC) && !__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE);
	munmap((void *)sh, sizeof(*sh));
	return half;
}

/* header_valid checks a mapped device before anything in it is used: what
 * it says of itself must be a geometry this code makes and add up to
 * exactly the file's size, so no index derived from it leaves the mapping.
 * EPROTO: not a sim device of this version; EIO: one, damaged. */
static int header_valid(const struct sim_shared *sh, uint64_t file_size)
{
	struct sim_config c = sh->cfg;

	if (sh->magic != SIM_MAGIC || sh->version != SIM_VERSION)
		return EPROTO;
	if (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE))
		return EIO; /* half-made ones were remade under the flock already */
	if (c.max_qps == 0 || c.max_qps > SIM_LIMIT_QPS || c.max_regs == 0 || c.max_regs > SIM_LIMIT_REGS ||
	    (c.no_xrc != 0 && c.no_xrc != 1))
		return EIO;
	if (c.cost_create_ns > SIM_LIMIT_COST_NS || c.cost_reg_ns > SIM_LIMIT_COST_NS ||
	    c.cost_unreg_ns > SIM_LIMIT_COST_NS || c.cost_destroy_ns > SIM_LIMIT_COST_NS ||
	    c.cost_modify_ns > SIM_LIMIT_COST_NS || c.cost_reset_ns > SIM_LIMIT_COST_NS)
		return EIO;
	if (c.cmdq_depth == 0 || c.cmdq_depth > SIM_MAX_CMDQ || c.lookup > SIM_LOOKUP_LIST || c.cost_scan_ns > SIM_LIMIT_SCAN_NS)
		return EIO;
	if (sh->size != file_size || sh->size != sim_size(&c) || sh->qp_off != slots_offset() ||
	    sh->qp_stride != slot_stride(&c))
		return EIO;
	if (sh->next_qpn < SIM_QPN_BASE || sh->next_qpn > XB_QPN_MAX)
		return EIO;
	return 0;
}

/* device_in_use says whether a live process is attached. Only with the
 * file's flock held: every attach happens under it. */
static int device_in_use(const struct sim_shared *sh)
{
	for (uint32_t r = 0; r < SIM_MAX_REGISTRANTS; r++)
		if (sh->registrants[r].in_use && registrant_alive(&sh->registrants[r]))
			return 1;
	return 0;
}

/* private_enough refuses (EPERM) a device directory or file that another
 * user owns or that group or other may use: the device is shared memory
 * that every registrant trusts. */
static int private_enough(const struct stat *st)
{
	return st->st_uid == geteuid() && (st->st_mode & 077) == 0 ? 0 : EPERM;
}

/* map_device maps the device file in dir, creating or remaking it when it
 * is empty, half-made or (unused) made with other options. It returns with
 * the file's flock held in *lockfd, so that attaching (sim_open) happens
 * under it too and device_in_use can trust what it reads. */
static int map_device(const char *dir, const struct sim_config *want, struct sim_shared **out, size_t *outsize,
		      int *lockfd, struct sim_config *have)
{
	struct sim_config cfg = {0};
	struct stat st;
	struct sim_shared *sh = MAP_FAILED;
	size_t mapped = 0;
	char path[512];
	int dfd, fd, rc = 0;

	if (want)
		cfg = *want;
	if ((rc = config_normalize(&cfg)) != 0)
		return rc;
	snprintf(path, sizeof(path), "%s/%s", dir, SIM_FILE);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno;
	if (fstat(dfd, &st) != 0 || (rc = private_enough(&st)) != 0) {
		rc = rc ? rc : errno;
		close(dfd);
		return rc;
	}
	fd = openat(dfd, SIM_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	rc = fd < 0 ? errno : 0;
	close(dfd);
	if (rc)
		return rc;
	if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0) {
		rc = errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = EINVAL;
		goto out;
	}
	if ((rc = private_enough(&st)) != 0)
		goto out;
	if (st.st_size != 0 && half_made(fd, st.st_size)) {
		/* Its creator died initialising it (we hold the flock it held):
		 * nobody can have used it, so make it afresh. */
		if (ftruncate(fd, 0) != 0) {
			rc = errno;
			goto out;
		}
		st.st_size = 0;
	}
	if (st.st_size != 0) {
		if ((size_t)st.st_size < sizeof(struct sim_shared)) {
			rc = EIO; /* a device cut short */
			goto out;
		}
		mapped = (size_t)st.st_size;
		sh = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (sh == MAP_FAILED) {
			rc = errno;
			goto out;
		}
		sim_guard_add(sh, mapped, path); /* from the first read of it on */
		if ((rc = header_valid(sh, (uint64_t)st.st_size)) != 0)
			goto out;
		if (want && !config_matches(&cfg, &sh->cfg)) {
			if (have)
				*have = sh->cfg;
			if (device_in_use(sh)) {
				rc = EEXIST;
				goto out;
			}
			/* Nobody uses it: the new options apply, as to a new device. */
			sim_guard_remove(sh);
			munmap(sh, mapped);
			sh = MAP_FAILED;
			if (ftruncate(fd, 0) != 0) {
				rc = errno;
				goto out;
			}
			st.st_size = 0;
		}
	}
	if (st.st_size == 0) {
		mapped = sim_size(&cfg);
		/* Allocated, not sparse: a full file system must fail here with
		 * ENOSPC, not later as a SIGBUS on first touch of a page. */
		if ((rc = posix_fallocate(fd, 0, (off_t)mapped)) != 0) {
			if (ftruncate(fd, 0) != 0) { /* give back what was allocated */
			}
			goto out;
		}
		sh = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (sh == MAP_FAILED) {
			rc = errno;
			goto out;
		}
		sim_guard_add(sh, mapped, path);
		if ((rc = sim_init(sh, &cfg, mapped)) != 0)
			goto out;
	}
	/* An observer (want NULL: inspection, reaping) times nothing, and
	 * may look every interval: reading the whole mapping through would
	 * cost it 90 ms on a VM each time. */
	if (want)
		prefault(sh, mapped);
	*out = sh;
	*outsize = mapped;
	*lockfd = fd;
	return 0;
out:
	if (sh != MAP_FAILED) {
		sim_guard_remove(sh);
		munmap(sh, mapped);
	}
	/* Unlock explicitly: the mapping holds the open file description,
	 * and with it the flock, long after close(). */
	flock(fd, LOCK_UN);
	close(fd);
	return rc;
}

static void unlock_file(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

static void unmap_device(struct sim_shared *sh, size_t size)
{
	sim_guard_remove(sh);
	munmap(sh, size);
}

int sim_file_intact(const struct sim_dev *d)
{
	struct stat st;

	/* Another file there now (or none) leaves our mapping whole. */
	if (stat(d->path, &st) == 0 && st.st_dev == d->fdev && st.st_ino == d->fino && (uint64_t)st.st_size < d->size)
		return EIO;
	return 0;
}

/* sim_intact: the shared geometry is still what was validated at attach. */
static int sim_intact(const struct sim_dev *d)
{
	const struct sim_shared *sh = d->sh;

	return sh->cfg.max_qps == d->max_qps && sh->cfg.max_regs == d->max_regs && sh->qp_off == d->qp_off &&
			       sh->qp_stride == d->qp_stride
		       ? 0
		       : EIO;
}

static int sim_open_config(const char *dir, const struct sim_config *cfg, int semantics, struct sim_dev **out,
			   struct sim_config *have)
{
	struct sim_dev *d;
	struct sim_shared *sh = NULL;
	size_t size = 0;
	uint64_t start;
	int rc, lockfd = -1;

	if (!dir || !out || (semantics != SIM_LEGACY && semantics != SIM_UPSTREAM))
		return EINVAL;
	pthread_once(&mutex_kind_once, learn_mutex_kind);
	start = proc_start_time(getpid());
	if (start == 0)
		return EIO; /* /proc is needed to tell dead registrants */
	if ((rc = map_device(dir, cfg, &sh, &size, &lockfd, have)) != 0)
		return rc;
	d = calloc(1, sizeof(*d));
	if (!d) {
		unmap_device(sh, size);
		unlock_file(lockfd);
		return ENOMEM;
	}
	d->sh = sh;
	d->size = size;
	d->semantics = semantics;
	{
		struct stat st;

		snprintf(d->path, sizeof(d->path), "%s/%s", dir, SIM_FILE);
		if (fstat(lockfd, &st) == 0)
			d->fdev = st.st_dev, d->fino = st.st_ino;
	}
	d->max_qps = sh->cfg.max_qps;
	d->max_regs = sh->cfg.max_regs;
	d->qp_off = sh->qp_off;
	d->qp_stride = sh->qp_stride;
	if ((rc = sim_lock(sh)) != 0)
		goto fail;
	/* Attaching is when dead registrants are noticed lazily (S10): a
	 * process that died without closing is dropped here at the latest.
	 * Observers (cfg NULL: inspection, reaping) leave that to the call
	 * they make, so it can count what it dropped. */
	if (cfg)
		sweep_dead(sh);
	rc = ENOMEM;
	for (uint32_t r = 0; r < SIM_MAX_REGISTRANTS; r++)
		if (!sh->registrants[r].in_use) {
			sh->registrants[r] = (struct sim_registrant){.pid = getpid(), .in_use = 1, .start_time = start};
			d->registrant = r;
			rc = 0;
			break;
		}
	sim_unlock(sh);
	if (rc == 0) {
		unlock_file(lockfd);
		*out = d;
		return 0;
	}
fail:
	unmap_device(sh, size);
	unlock_file(lockfd);
	free(d);
	return rc;
}

int sim_open(const char *dir, const struct sim_config *cfg, int semantics, struct sim_dev **out)
{
	return sim_open_config(dir, cfg, semantics, out, NULL);
}

int sim_open_explained(const char *dir, const struct sim_config *cfg, int semantics, struct sim_dev **out,
		       struct sim_config *have)
{
	return sim_open_config(dir, cfg, semantics, out, have);
}

uint64_t sim_device_size(const struct sim_config *cfg)
{
	struct sim_config c = *cfg;

	return config_normalize(&c) == 0 ? sim_size(&c) : 0;
}

void sim_config_string(const struct sim_config *c, char *buf, size_t len)
{
	snprintf(buf, len,
		 "max_qps=%u max_regs=%u %s cost create=%lluns,reg=%lluns,unreg=%lluns,destroy=%lluns,modify=%lluns,reset=%lluns,"
		 "scan=%lluns,cmdq=%u,lookup=%s",
		 c->max_qps, c->max_regs, c->no_xrc ? "noxrc" : "xrc", (unsigned long long)c->cost_create_ns,
		 (unsigned long long)c->cost_reg_ns, (unsigned long long)c->cost_unreg_ns,
		 (unsigned long long)c->cost_destroy_ns, (unsigned long long)c->cost_modify_ns,
		 (unsigned long long)c->cost_reset_ns, (unsigned long long)c->cost_scan_ns, c->cmdq_depth,
		 c->lookup == SIM_LOOKUP_LIST ? "list" : "xarray");
}

int sim_close(struct sim_dev *d)
{
	int rc;

	if (!d)
		return EINVAL;
	if ((rc = sim_file_intact(d)) == 0 && (rc = sim_intact(d)) == 0 && (rc = sim_lock(d->sh)) == 0) {
		drop_registrant(d->sh, d->registrant);
		sim_unlock(d->sh);
	}
	/* A damaged device still goes from this process: its registrant is
	 * dropped by the next attach's sweep once we are gone. */
	unmap_device(d->sh, d->size);
	free(d);
	return rc;
}

void sim_get_config(const struct sim_dev *d, struct sim_config *cfg)
{
	*cfg = d->sh->cfg;
}

/* ---- domains ------------------------------------------------------------ */

/* tables_sane: the registrant, domain and domain-handle tables hold only
 * what this code writes (in_use 0 or 1, indexes in range). Bytes scribbled
 * over them are a damaged device (EIO), not a full one (ENOMEM). With the
 * device lock held. */
static int tables_sane(const struct sim_shared *sh)
{
	for (uint32_t i = 0; i < SIM_MAX_REGISTRANTS; i++)
		if (sh->registrants[i].in_use > 1)
			return EIO;
	for (uint32_t i = 0; i < SIM_MAX_DOMAINS; i++)
		if (sh->domains[i].in_use > 1)
			return EIO;
	for (uint32_t i = 0; i < SIM_MAX_DHANDLES; i++) {
		const struct sim_dhandle *h = &sh->dhandles[i];

		if (h->in_use > 1 || (h->in_use && (h->registrant >= SIM_MAX_REGISTRANTS || h->domain >= SIM_MAX_DOMAINS)))
			return EIO;
	}
	return 0;
}

int sim_open_domain(struct sim_dev *d, int fd, int semantics, struct sim_dom **out)
{
	struct sim_shared *sh = d->sh;
	struct sim_dom *m;
	struct stat st;
	uint32_t dom = SIM_NONE, free_dom = SIM_NONE, h = SIM_NONE;
	int rc;

	if (semantics != SIM_LEGACY && semantics != SIM_UPSTREAM)
		return EINVAL;
	if ((rc = sim_intact(d)) != 0)
		return rc;
	if (sh->cfg.no_xrc) /* S11: how each API says "no XRC here" */
		return semantics == SIM_LEGACY ? ENOSYS : EOPNOTSUPP;
	if (fstat(fd, &st) != 0)
		return errno;
	if (!(m = calloc(1, sizeof(*m))))
		return ENOMEM;
	if ((rc = sim_lock(sh)) != 0) {
		free(m);
		return rc;
	}
	if ((rc = tables_sane(sh)) != 0) {
		sim_unlock(sh);
		free(m);
		return rc;
	}
	domains_put(sh); /* so entries nothing refers to any more are free */
	for (uint32_t i = 0; i < SIM_MAX_DOMAINS; i++) {
		struct sim_domain *x = &sh->domains[i];

		if (x->in_use && x->dev == (uint64_t)st.st_dev && x->ino == (uint64_t)st.st_ino) {
			dom = i;
			break;
		}
		if (!x->in_use && free_dom == SIM_NONE)
			free_dom = i;
	}
	for (uint32_t i = 0; i < SIM_MAX_DHANDLES && h == SIM_NONE; i++)
		if (!sh->dhandles[i].in_use)
			h = i;
	if (h == SIM_NONE || (dom == SIM_NONE && free_dom == SIM_NONE)) {
		sim_unlock(sh);
		free(m);
		return ENOMEM;
	}
	if (dom == SIM_NONE) {
		dom = free_dom;
		struct sim_domain *x = &sh->domains[dom];

		/* Field by field: the entry's wlock lives on. A reader count a
		 * dead process left in a domain nobody holds goes with it. */
		x->dev = (uint64_t)st.st_dev;
		x->ino = (uint64_t)st.st_ino;
		x->handles = 0;
		__atomic_store_n(&x->qps, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&x->rw, 0, __ATOMIC_RELAXED);
		x->in_use = 1;
	}
	__atomic_store_n(&sh->dhandles[h].readers, 0, __ATOMIC_RELAXED);
	sh->dhandles[h].registrant = d->registrant;
	__atomic_store_n(&sh->dhandles[h].domain, dom, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->dhandles[h].in_use, 1, __ATOMIC_RELEASE);
	sh->domains[dom].handles++;
	sim_unlock(sh);
	*m = (struct sim_dom){.dev = d, .domain = dom, .dhandle = h, .semantics = semantics};
	*out = m;
	return 0;
}

int sim_close_domain(struct sim_dom *m)
{
	struct sim_shared *sh = m->dev->sh;
	int rc;

	if ((rc = sim_file_intact(m->dev)) != 0 || (rc = sim_intact(m->dev)) != 0 || (rc = sim_lock(sh)) != 0)
		return rc;
	for (uint32_t s = 0; s < sh->cfg.max_qps; s++) {
		struct sim_qp *qp = qp_at(sh, s);
		int busy;

		if ((rc = qp_lock(sh, qp)) != 0) {
			sim_unlock(sh);
			return rc;
		}
		busy = qp->in_use && qp->domain == m->domain && reg_find(qp, m->dev->registrant) >= 0;
		qp_unlock(qp);
		if (busy) {
			sim_unlock(sh);
			return EBUSY; /* S9 */
		}
	}
	sh->dhandles[m->dhandle].in_use = 0;
	if (sh->domains[m->domain].handles > 0)
		sh->domains[m->domain].handles--;
	domain_put(sh, m->domain);
	sim_unlock(sh);
	free(m);
	return 0;
}

/* ---- QPs ---------------------------------------------------------------- */

/* sim_command pays a command's cost in a command-queue slot, as the
 * driver's command interface runs at most cmdq_depth at once. */
static int sim_command(struct sim_shared *sh, uint64_t cost_ns)
{
	uint32_t slot;
	int rc;

	if ((rc = cmdq_enter(sh, &slot, cost_ns)) != 0)
		return rc;
	cmdq_pay(sh, cost_ns);
	cmdq_leave(sh, slot);
	return 0;
}

/* sim_create is the driver's create (a command), then the QP's entry in
 * its domain: before 5.9 a list insert under the domain's mutex; since,
 * an xa_store, which takes no lock a lookup waits on (the QP slot's lock
 * makes the entry appear at once). */
int sim_create(struct sim_dom *m, uint32_t *qpn, uint32_t *flags)
{
	struct sim_shared *sh = m->dev->sh;
	struct sim_qp *qp = NULL;
	int rc, list;

	(void)flags;
	if ((rc = sim_intact(m->dev)) != 0 || (rc = sim_command(sh, sh->cfg.cost_create_ns)) != 0)
		return rc;
	list = sh->cfg.lookup == SIM_LOOKUP_LIST;
	if (list && (rc = dom_wlock(sh, m->domain)) != 0)
		return rc;
	if ((rc = sim_lock(sh)) != 0) {
		if (list)
			dom_wunlock(sh, m->domain);
		return rc;
	}
	for (int attempt = 0; attempt < 2 && !qp; attempt++) {
		uint32_t n = sh->next_qpn;

		for (uint32_t tries = 0; tries < sh->cfg.max_qps; tries++) {
			struct sim_qp *q = qp_slot(sh, n);
			uint32_t cand = n;

			n = n >= XB_QPN_MAX ? SIM_QPN_BASE : n + 1;
			if ((rc = qp_lock(sh, q)) != 0) {
				sim_unlock(sh);
				if (list)
					dom_wunlock(sh, m->domain);
				return rc;
			}
			if (!q->in_use) {
				/* Keep the slot's lock: the QP is born under it. */
				qp = q;
				qp->qpn = cand;
				sh->next_qpn = n;
				break;
			}
			qp_unlock(q);
		}
		if (!qp && (attempt > 0 || sweep_dead(sh) == 0))
			break; /* full of live QPs */
	}
	if (!qp) {
		sim_unlock(sh);
		if (list)
			dom_wunlock(sh, m->domain);
		return ENOMEM;
	}
	qp->domain = m->domain;
	qp->regs[0] = (struct sim_reg){.registrant = m->dev->registrant, .count = 1};
	qp->nregs = 1;
	qp->state = XB_QPS_RESET;
	__atomic_add_fetch(&sh->domains[m->domain].qps, 1, __ATOMIC_RELEASE);
	qp->in_use = 1;
	*qpn = qp->qpn;
	qp_unlock(qp);
	sh->created++;
	sim_unlock(sh);
	if (list)
		dom_wunlock(sh, m->domain);
	return 0;
}

/* reg_locked is sim_reg with the QP slot's lock held. */
static int reg_locked(struct sim_dom *m, struct sim_qp *qp, uint32_t qpn)
{
	int i;

	if (!qp_is(qp, qpn) || qp->domain != m->domain) /* S6, S7 */
		return EINVAL;
	i = reg_find(qp, m->dev->registrant);
	if (i >= 0) {
		/* S3: legacy registration is idempotent; upstream counts handles */
		if (m->semantics == SIM_UPSTREAM) {
			if (qp->regs[i].count == UINT32_MAX)
				return ENOMEM;
			qp->regs[i].count++;
		}
		return 0;
	}
	if (qp->nregs == m->dev->sh->cfg.max_regs)
		return ENOSPC; /* full: the caller sweeps and retries, then ENOMEM */
	qp->regs[qp->nregs] = (struct sim_reg){.registrant = m->dev->registrant, .count = 1};
	qp->nregs++;
	return 0;
}

int sim_reg(struct sim_dom *m, uint32_t qpn, uint32_t *flags)
{
	struct sim_shared *sh = m->dev->sh;
	struct sim_qp *qp;
	int rc;

	(void)flags;
	if (qpn > XB_QPN_MAX)
		return EINVAL;
	if ((rc = sim_intact(m->dev)) != 0)
		return rc;
	qp = qp_slot(sh, qpn);
	/* ib_open_qp: the lookup under the domain's lock, shared since 5.9;
	 * before, under its mutex, walking a list of the domain's QPs. */
	if (sh->cfg.lookup == SIM_LOOKUP_LIST) {
		if ((rc = dom_wlock(sh, m->domain)) != 0)
			return rc;
		pay(sh->cfg.cost_scan_ns * __atomic_load_n(&sh->domains[m->domain].qps, __ATOMIC_ACQUIRE));
	} else if ((rc = dom_rlock(sh, m->domain, m->dhandle)) != 0)
		return rc;
	if ((rc = qp_lock(sh, qp)) == 0) {
		rc = reg_locked(m, qp, qpn);
		qp_unlock(qp);
	}
	if (sh->cfg.lookup == SIM_LOOKUP_LIST)
		dom_wunlock(sh, m->domain);
	else
		dom_runlock(sh, m->domain, m->dhandle);
	if (rc == ENOSPC) {
		/* Dead registrants may hold the entries: sweep them (device lock
		 * first, then the QP lock, as everywhere) and try once more. */
		if ((rc = sim_lock(sh)) != 0)
			return rc;
		int swept = sweep_dead(sh);

		if ((rc = qp_lock(sh, qp)) == 0) {
			rc = swept > 0 ? reg_locked(m, qp, qpn) : ENOSPC;
			qp_unlock(qp);
		}
		sim_unlock(sh);
		if (rc == ENOSPC)
			rc = ENOMEM;
	}
	if (rc == 0)
		pay(sh->cfg.cost_reg_ns);
	return rc;
}

int sim_unreg(struct sim_dom *m, uint32_t qpn, uint32_t *flags)
{
	struct sim_shared *sh = m->dev->sh;
	struct sim_qp *qp;
	int rc, i, destroyed = 0, out_of_reset = 0;

	if (qpn > XB_QPN_MAX)
		return EINVAL;
	if ((rc = sim_intact(m->dev)) != 0)
		return rc;
	qp = qp_slot(sh, qpn);
	/* The kernel closes every opened handle under the domain's rwsem
	 * held for write (tgt_qp_mutex before 5.9), and the last one erases
	 * the QP from the domain there; the driver's destroy comes after. */
	if ((rc = dom_wlock(sh, m->domain)) != 0)
		return rc;
	if ((rc = qp_lock(sh, qp)) != 0) {
		dom_wunlock(sh, m->domain);
		return rc;
	}
	if (!qp_is(qp, qpn) || qp->domain != m->domain || (i = reg_find(qp, m->dev->registrant)) < 0) {
		qp_unlock(qp); /* S6, S7, S8 */
		dom_wunlock(sh, m->domain);
		return EINVAL;
	}
	if (m->semantics == SIM_UPSTREAM && qp->regs[i].count > 1)
		qp->regs[i].count--;
	else
		reg_remove(qp, (uint32_t)i);
	if (qp->nregs == 0) { /* S5 */
		out_of_reset = qp->state != XB_QPS_RESET;
		qp_destroy(sh, qp);
		destroyed = 1;
	}
	qp_unlock(qp);
	dom_wunlock(sh, m->domain);
	*flags |= XB_DESTROY_KNOWN | (destroyed ? XB_DESTROYED : 0);
	pay(sh->cfg.cost_unreg_ns);
	/* A QP destroyed out of INIT or RTR is reset first, as mlx5 does:
	 * two commands, paid here as one slot's time. The QP is gone
	 * whatever the queue says, so the unreg succeeded. */
	if (destroyed)
		(void)sim_command(sh, sh->cfg.cost_destroy_ns + (out_of_reset ? sh->cfg.cost_reset_ns : 0));
	return 0;
}

/* transition_ok: the kernel's qp_state_table for XRC_TGT, up to RTR. */
static int transition_ok(uint32_t cur, int next)
{
	switch (next) {
	case XB_QPS_RESET:
		return 1;
	case XB_QPS_INIT:
		return cur == XB_QPS_RESET || cur == XB_QPS_INIT;
	case XB_QPS_RTR:
		return cur == XB_QPS_INIT;
	}
	return 0;
}

/* held_qp locks QP qpn's slot when this registrant holds the QP in its
 * domain: 0 with the lock held, else an errno with it released. */
static int held_qp(struct sim_dom *m, uint32_t qpn, struct sim_qp **out)
{
	struct sim_shared *sh = m->dev->sh;
	struct sim_qp *qp;
	int rc;

	if (qpn > XB_QPN_MAX)
		return EINVAL;
	if ((rc = sim_intact(m->dev)) != 0)
		return rc;
	qp = qp_slot(sh, qpn);
	if ((rc = qp_lock(sh, qp)) != 0)
		return rc;
	if (!qp_is(qp, qpn) || qp->domain != m->domain || reg_find(qp, m->dev->registrant) < 0) {
		qp_unlock(qp);
		return EINVAL;
	}
	*out = qp;
	return 0;
}

int sim_modify(struct sim_dom *m, uint32_t qpn, int state)
{
	struct sim_qp *qp;
	uint64_t cost;
	int rc;

	if ((rc = held_qp(m, qpn, &qp)) != 0)
		return rc;
	if (!transition_ok(qp->state, state)) {
		qp_unlock(qp);
		return EINVAL;
	}
	cost = state == XB_QPS_RESET ? (qp->state != XB_QPS_RESET ? m->dev->sh->cfg.cost_reset_ns : 0)
				     : m->dev->sh->cfg.cost_modify_ns;
	qp->state = (uint32_t)state;
	qp_unlock(qp);
	return sim_command(m->dev->sh, cost);
}

int sim_qp_state(struct sim_dom *m, uint32_t qpn, int *state)
{
	struct sim_qp *qp;
	int rc;

	if ((rc = held_qp(m, qpn, &qp)) != 0)
		return rc;
	*state = (int)qp->state;
	qp_unlock(qp);
	return 0;
}

void sim_set_target(struct sim_dev *d, int state)
{
	d->target = state;
}

/* ---- inspection and recovery -------------------------------------------- */

int sim_reap(struct sim_dev *d, pid_t pid)
{
	struct sim_shared *sh = d->sh;
	int rc, dropped = 0;

	if ((rc = sim_intact(d)) != 0 || (rc = sim_lock(sh)) != 0)
		return -rc;
	for (uint32_t r = 0; r < SIM_MAX_REGISTRANTS; r++) {
		struct sim_registrant *reg = &sh->registrants[r];
		int n;

		if (!reg->in_use || reg->pid != pid)
			continue;
		if (registrant_alive(reg)) {
			sim_unlock(sh);
			return -EBUSY; /* never take a live process's registrations */
		}
		if ((n = drop_registrant(sh, r)) < 0) {
			sim_unlock(sh);
			return n;
		}
		dropped += n;
		sh->reaped++;
	}
	sim_unlock(sh);
	return dropped;
}

int sim_inspect(struct sim_dev *d, struct sim_qp_info *out, int max, int *nregistrants, int *ndomains)
{
	struct sim_shared *sh = d->sh;
	int rc, n = 0, nr = 0, nd = 0;

	if ((rc = sim_intact(d)) != 0 || (rc = sim_lock(sh)) != 0)
		return -rc;
	sweep_dead(sh);
	for (uint32_t s = 0; s < sh->cfg.max_qps; s++) {
		struct sim_qp *qp = qp_at(sh, s);

		if ((rc = qp_lock(sh, qp)) != 0) {
			sim_unlock(sh);
			return -rc;
		}
		if (qp->in_use) {
			if (n < max) {
				uint32_t handles = 0;

				for (uint32_t i = 0; i < qp->nregs; i++)
					handles += qp->regs[i].count;
				out[n] = (struct sim_qp_info){.qpn = qp->qpn, .domain = qp->domain, .nregs = qp->nregs, .handles = handles};
			}
			n++;
		}
		qp_unlock(qp);
	}
	domains_put(sh);
	for (uint32_t r = 0; r < SIM_MAX_REGISTRANTS; r++)
		nr += sh->registrants[r].in_use != 0;
	for (uint32_t i = 0; i < SIM_MAX_DOMAINS; i++)
		nd += sh->domains[i].in_use != 0;
	sim_unlock(sh);
	if (nregistrants)
		*nregistrants = nr;
	if (ndomains)
		*ndomains = nd;
	return n;
}

int sim_qp_registrants(struct sim_dev *d, uint32_t qpn, pid_t *pids, uint32_t *counts, int max)
{
	struct sim_shared *sh = d->sh;
	struct sim_qp *qp;
	int rc, n = 0;

	if (qpn > XB_QPN_MAX)
		return -EINVAL;
	if ((rc = sim_intact(d)) != 0)
		return -rc;
	qp = qp_slot(sh, qpn);
	if ((rc = qp_lock(sh, qp)) != 0)
		return -rc;
	if (!qp_is(qp, qpn)) {
		qp_unlock(qp);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < qp->nregs; i++, n++)
		if (n < max) {
			pids[n] = sh->registrants[qp->regs[i].registrant % SIM_MAX_REGISTRANTS].pid;
			counts[n] = qp->regs[i].count;
		}
	qp_unlock(qp);
	return n;
}

int sim_debug_hold_lock(struct sim_dev *d, uint32_t qpn)
{
	if (sim_intact(d) != 0)
		return EIO;
	if (qpn == 0)
		return sim_lock(d->sh);
	if (qpn > XB_QPN_MAX)
		return EINVAL;
	return qp_lock(d->sh, qp_slot(d->sh, qpn));
}

void sim_debug_cmdq(struct sim_dev *d, uint32_t *spinners, uint32_t *busy)
{
	struct sim_shared *sh = d->sh;

	*spinners = __atomic_load_n(&sh->cmdq_spinners, __ATOMIC_SEQ_CST);
	*busy = 0;
	for (uint32_t i = 0; i < SIM_MAX_CMDQ; i++)
		*busy += __atomic_load_n(&sh->cmdq_until[i], __ATOMIC_RELAXED) != 0;
}

int sim_debug_hold_domain(struct sim_dom *m, int how)
{
	struct sim_shared *sh = m->dev->sh;
	uint32_t slot;

	if (sim_intact(m->dev) != 0)
		return EIO;
	switch (how) {
	case SIM_HOLD_SHARED:
		return dom_rlock(sh, m->domain, m->dhandle);
	case SIM_HOLD_EXCLUSIVE:
		return dom_wlock(sh, m->domain);
	case SIM_HOLD_CMDQ:
		return cmdq_enter(sh, &slot, UINT64_MAX);
	}
	return EINVAL;
}

struct sim_dev *sim_dom_dev(const struct sim_dom *m)
{
	return m ? m->dev : NULL;
}

/* ---- the xb_ops table of the Go sim provider ----------------------------- */

static int ops_open_domain(void *dev, int fd, void **dom)
{
	struct sim_dev *d = dev;

	return sim_open_domain(d, fd, d->semantics, (struct sim_dom **)dom);
}

static int ops_close_domain(void *dom) { return sim_close_domain(dom); }
static int ops_create(void *dom, uint32_t *qpn, uint32_t *flags) { return sim_create(dom, qpn, flags); }
static int ops_reg(void *dom, uint32_t qpn, uint32_t *flags) { return sim_reg(dom, qpn, flags); }
static int ops_unreg(void *dom, uint32_t qpn, uint32_t *flags) { return sim_unreg(dom, qpn, flags); }
static int ops_close_device(void *dev) { return sim_close(dev); }

static int ops_modify(void *dom, uint32_t qpn, int state)
{
	struct sim_dom *m = dom;
	int rc = 0;

	if (state != XB_QPS_TARGET)
		return sim_modify(m, qpn, state);
	for (int s = XB_QPS_INIT; s <= m->dev->target && rc == 0; s++)
		rc = sim_modify(m, qpn, s);
	return rc;
}

const struct xb_ops xb_sim_ops = {
	.name = "sim",
	.open_domain = ops_open_domain,
	.close_domain = ops_close_domain,
	.create = ops_create,
	.reg = ops_reg,
	.unreg = ops_unreg,
	.modify = ops_modify,
	.close_device = ops_close_device,
};
