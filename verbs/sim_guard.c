/*
 * sim_guard.c: what happens when a sim device file shrinks under its
 * mappings.
 *
 * sim_open validates the file before it maps it (sizes, geometry, magic),
 * and every access is bounds-checked against the geometry it saw then.
 * What no check can prevent is another process truncating the file while
 * it is mapped: the next access to a page past the new end raises SIGBUS,
 * and in a Go process that is a fatal runtime error with a dump of every
 * goroutine.
 *
 * The design chosen: a SIGBUS handler that, when the faulting address lies
 * in a sim mapping, writes one line naming the file and the offset and
 * ends the process with _exit(SIM_GUARD_EXIT). The worker's death is then
 * one line in the coordinator's report and a failed result. Recovering
 * instead (sigsetjmp around each access and siglongjmp out of the handler)
 * was rejected: the fault can hit with a process-shared robust mutex held,
 * and jumping out would leave it locked for every other process, while
 * dying releases it (the next locker gets EOWNERDEAD and repairs). Dying is
 * also what the kernel does to a real verbs process whose device is gone.
 *
 * Every other SIGBUS goes to the handler that was installed before
 * (the Go runtime's), as the Go documentation for cgo programs asks of
 * non-Go code that handles synchronous signals. The handler is installed
 * only by the Go provider (sim_guard_install); the libibverbs double does
 * not take signals over in the programs that load it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

#define GUARD_SLOTS 64
#define GUARD_PATH 256

struct guard_slot {
	uintptr_t start; /* 0: free; published last, with release order */
	size_t len;
	char path[GUARD_PATH];
};

static struct guard_slot slots[GUARD_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static int install_errno;

void sim_guard_add(const void *addr, size_t len, const char *path)
{
	pthread_mutex_lock(&slots_lock);
	for (int i = 0; i < GUARD_SLOTS; i++)
		if (__atomic_load_n(&slots[i].start, __ATOMIC_ACQUIRE) == 0) {
			slots[i].len = len;
			snprintf(slots[i].path, sizeof(slots[i].path), "%s", path);
			__atomic_store_n(&slots[i].start, (uintptr_t)addr, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&slots_lock); /* full: that mapping is unguarded, no worse than before */
}

void sim_guard_remove(const void *addr)
{
	pthread_mutex_lock(&slots_lock);
	for (int i = 0; i < GUARD_SLOTS; i++)
		if (__atomic_load_n(&slots[i].start, __ATOMIC_ACQUIRE) == (uintptr_t)addr) {
			__atomic_store_n(&slots[i].start, 0, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&slots_lock);
}

/* put_str and put_num build the line with async-signal-safe code only. */
static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	return at;
}

static size_t put_num(char *buf, size_t at, size_t cap, uint64_t v)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0 && at + 1 < cap)
		buf[at++] = digits[--n];
	return at;
}

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
	uintptr_t a = (uintptr_t)info->si_addr;

	for (int i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t start = __atomic_load_n(&slots[i].start, __ATOMIC_ACQUIRE);

		if (start != 0 && a >= start && a - start < slots[i].len) {
			char line[512];
			size_t n = 0;

			n = put_str(line, n, sizeof(line), "xrcbench: sim device file ");
			n = put_str(line, n, sizeof(line), slots[i].path);
			n = put_str(line, n, sizeof(line), " was truncated while in use (bus error at offset ");
			n = put_num(line, n, sizeof(line), a - start);
			n = put_str(line, n, sizeof(line), "): this process stops\n");
			if (write(STDERR_FILENO, line, n) < 0) {
				/* nothing else to tell it with */
			}
			_exit(SIM_GUARD_EXIT);
		}
	}
	if (previous.sa_flags & SA_SIGINFO) {
		if (previous.sa_sigaction) {
			previous.sa_sigaction(sig, info, ctx);
			return;
		}
	} else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	/* No handler before ours: die of the signal, as without us. */
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	/* SA_ONSTACK: the Go runtime requires it of handlers that can run on
	 * its threads; its own handler is then called on that stack too. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) != 0)
		install_errno = errno;
}

int sim_guard_install(void)
{
	pthread_once(&installed, install);
	return install_errno;
}
