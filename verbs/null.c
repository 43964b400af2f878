/* null.c: the provider that does nothing, to measure the harness itself. */
#include <errno.h>
#include <stdlib.h>

#include "xb.h"

struct null_dev {
	uint32_t next_qpn;
};

int xb_null_open(void **dev)
{
	struct null_dev *d = calloc(1, sizeof(*d));

	if (!d)
		return ENOMEM;
	d->next_qpn = 0x100;
	*dev = d;
	return 0;
}

static int null_open_domain(void *dev, int fd, void **dom)
{
	(void)fd;
	*dom = dev; /* a domain of the null device is the device itself */
	return 0;
}

static int null_close_domain(void *dom)
{
	(void)dom;
	return 0;
}

static int null_create(void *dom, uint32_t *qpn, uint32_t *flags)
{
	struct null_dev *d = dom;

	(void)flags;
	*qpn = d->next_qpn;
	d->next_qpn = d->next_qpn >= XB_QPN_MAX ? 0x100 : d->next_qpn + 1;
	return 0;
}

static int null_reg(void *dom, uint32_t qpn, uint32_t *flags)
{
	(void)dom, (void)qpn, (void)flags;
	return 0;
}

static int null_modify(void *dom, uint32_t qpn, int state)
{
	(void)dom, (void)qpn, (void)state;
	return 0;
}

static int null_close_device(void *dev)
{
	free(dev);
	return 0;
}

const struct xb_ops xb_null_ops = {
	.name = "null",
	.open_domain = null_open_domain,
	.close_domain = null_close_domain,
	.create = null_create,
	.reg = null_reg,
	.unreg = null_reg,
	.modify = null_modify,
	.close_device = null_close_device,
};
