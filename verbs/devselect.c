/* devselect.c: see devselect.h. */
#include <errno.h>
#include <string.h>

#include "devselect.h"

void xb_copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

int xb_select_device(const struct xb_devlib *lib, const char *name, void **ctx, struct xb_devfacts *facts, int *stage)
{
	void **list;
	int n = 0, rc = 0, found = 0;

	*ctx = NULL;
	*stage = XB_STAGE_OK;
	memset(facts, 0, sizeof(*facts));
	errno = 0;
	list = lib->get_device_list(&n);
	if (!list) {
		*stage = XB_STAGE_LIST;
		return errno > 0 ? errno : EIO;
	}
	if (n <= 0) {
		lib->free_device_list(list);
		*stage = XB_STAGE_NODEV;
		return ENODEV;
	}
	for (int i = 0; i < n; i++) {
		struct xb_devfacts f;
		int st = 0;

		if (name && *name) {
			if (strcmp(lib->get_device_name(list[i]), name) != 0)
				continue;
			found = 1;
			rc = lib->open_one(list[i], facts, ctx, stage);
			break;
		}
		/* No name: the first device with XRC. A device that cannot be
		 * opened is remembered, so "permission denied" is what the user
		 * hears when no device could be tried at all. */
		if (lib->open_one(list[i], &f, ctx, &st) != 0) {
			if (!found) {
				*facts = f;
				*stage = st;
				rc = f.open_errno;
			}
			found = 1;
			continue;
		}
		if (f.xrc) {
			*facts = f;
			*stage = XB_STAGE_OK;
			rc = 0;
			break;
		}
		lib->close_device(*ctx);
		*ctx = NULL;
		if (!found || *stage == XB_STAGE_NOXRC_ANY) {
			*facts = f;
			*stage = XB_STAGE_NOXRC_ANY;
			rc = lib->no_xrc_errno;
		}
		found = 1;
	}
	lib->free_device_list(list); /* an open context keeps its device */
	if (name && *name && !found) {
		xb_copy_str(facts->name, sizeof(facts->name), name);
		*stage = XB_STAGE_NOTFOUND;
		return ENODEV;
	}
	if (!*ctx)
		return rc ? rc : ENODEV;
	return 0;
}

int xb_list_devices(const struct xb_devlib *lib, struct xb_devfacts *facts, int max)
{
	void **list;
	int n = 0;

	errno = 0;
	list = lib->get_device_list(&n);
	if (!list)
		return -(errno > 0 ? errno : EIO);
	for (int i = 0; i < n && i < max; i++) {
		void *ctx = NULL;
		int stage = 0;

		if (lib->open_one(list[i], &facts[i], &ctx, &stage) == 0)
			lib->close_device(ctx);
	}
	lib->free_device_list(list);
	return n;
}
