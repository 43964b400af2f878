/*
 * devselect.h: device selection shared by the rdma provider (linked
 * against libibverbs) and the legacy one (libibverbs through dlsym): the
 * same walk over ibv_get_device_list, through a small table of the
 * library's functions, so both choose and describe devices alike.
 */
#ifndef XB_DEVSELECT_H
#define XB_DEVSELECT_H

#include <stddef.h>

#include "rdma_facts.h"

struct xb_devlib {
	/* ibv_get_device_list, ibv_free_device_list, ibv_get_device_name,
	 * ibv_close_device, with the device and context types erased. */
	void **(*get_device_list)(int *num);
	void (*free_device_list)(void **list);
	const char *(*get_device_name)(void *dev);
	int (*close_device)(void *ctx);
	/* open_one opens dev and fills f; on success *ctx is open, else it
	 * returns the errno and sets *stage (XB_STAGE_OPEN or _QUERY). */
	int (*open_one)(void *dev, struct xb_devfacts *f, void **ctx, int *stage);
	/* what the API says when no device has XRC: EOPNOTSUPP upstream,
	 * ENOSYS in the legacy API. */
	int no_xrc_errno;
};

/*
 * xb_select_device opens the device called name, or when name is NULL or
 * "" the first with XRC. On success *ctx is open and facts describes it;
 * else it returns an errno, sets *stage, and fills facts as far as it got.
 * A device named on purpose that lacks XRC still opens: the domain open is
 * where each API says so (S11).
 */
int xb_select_device(const struct xb_devlib *lib, const char *name, void **ctx, struct xb_devfacts *facts, int *stage);

/* xb_list_devices fills up to max entries of facts, one per device, opening
 * each; returns the number of devices (which may exceed max) or -errno. */
int xb_list_devices(const struct xb_devlib *lib, struct xb_devfacts *facts, int max);

/* xb_copy_str copies src (NULL: "") into dst of len bytes, always
 * terminated. */
void xb_copy_str(char *dst, size_t len, const char *src);

#endif
