/*
 * ibvload.c: the shared libibverbs handle (ibvload.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>

#include "ibvload.h"
#include "devselect.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *lib;
static char lib_why[512];

static void load(void)
{
	/* RTLD_GLOBAL: the legacy provider's MLNX_OFED layer and old OFED
	 * providers look libibverbs' symbols up in the global scope, as
	 * they would in a program linked against it. */
	lib = dlopen(XB_IBV_SONAME, RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		const char *e = dlerror();

		snprintf(lib_why, sizeof(lib_why), "%s cannot be loaded (%s): %s", XB_IBV_SONAME,
			 e ? e : "unknown error", XB_IBV_PACKAGES);
	}
}

void *xb_ibv_lib(char *why, size_t len)
{
	pthread_once(&once, load);
	if (!lib && why && len)
		xb_copy_str(why, len, lib_why);
	return lib;
}

void xb_ibv_lib_file(char *buf, size_t len)
{
	struct link_map *map = NULL;

	if (!len)
		return;
	buf[0] = '\0';
	if (xb_ibv_lib(NULL, 0) && dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
		xb_copy_str(buf, len, map->l_name);
}
