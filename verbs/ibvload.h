/*
 * ibvload.h: the one libibverbs.so.1 of the process, loaded on first use.
 *
 * Nothing in xrcbench links libibverbs: the rdma provider (rdma.c) and the
 * legacy one (legacy.c) resolve their calls from this handle (dlvsym at
 * rdma-core's symbol versions, dlsym for the legacy API), so the binary
 * starts, and runs everything else, on a machine without rdma-core.
 * dlopen honours LD_LIBRARY_PATH, which is how the tests' double is found.
 */
#ifndef XB_IBVLOAD_H
#define XB_IBVLOAD_H

#include <stddef.h>

/* The file name both providers dlopen (the soname of every libibverbs
 * since OFED 1.1). */
#define XB_IBV_SONAME "libibverbs.so.1"

/* What to install when it cannot be loaded, for the one line users read. */
#define XB_IBV_PACKAGES "install libibverbs1 (Debian, Ubuntu) or libibverbs from rdma-core (RHEL, Fedora, SUSE)"

/*
 * xb_ibv_lib returns the dlopen handle of libibverbs.so.1, loading it on
 * the first call (once per process, whichever provider asks first), or
 * NULL when it cannot be loaded; then why (when not NULL) gets one line
 * naming the library, the loader's reason and the package to install.
 */
void *xb_ibv_lib(char *why, size_t len);

/* xb_ibv_lib_file names the file the handle was loaded from ("" if none). */
void xb_ibv_lib_file(char *buf, size_t len);

#endif
