/* qpntable.c: see qpntable.h. */
#include <errno.h>
#include <stdlib.h>

#include "qpntable.h"

struct xb_qpn_entry {
	uint32_t qpn;
	void *val;
	struct xb_qpn_entry *next;
};

static struct xb_qpn_entry **slot(struct xb_qpn_table *t, uint32_t qpn)
{
	struct xb_qpn_entry **p = &t->bucket[qpn % XB_QPN_BUCKETS];

	while (*p && (*p)->qpn != qpn)
		p = &(*p)->next;
	return p;
}

int xb_qpn_put(struct xb_qpn_table *t, uint32_t qpn, void *val)
{
	struct xb_qpn_entry *e = malloc(sizeof(*e)), **p;

	if (!e)
		return ENOMEM;
	pthread_mutex_lock(&t->lock);
	p = slot(t, qpn);
	if (*p) {
		pthread_mutex_unlock(&t->lock);
		free(e);
		return EEXIST;
	}
	*e = (struct xb_qpn_entry){.qpn = qpn, .val = val};
	*p = e;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void *xb_qpn_get(struct xb_qpn_table *t, uint32_t qpn)
{
	void *v;

	pthread_mutex_lock(&t->lock);
	v = *slot(t, qpn) ? (*slot(t, qpn))->val : NULL;
	pthread_mutex_unlock(&t->lock);
	return v;
}

void *xb_qpn_take(struct xb_qpn_table *t, uint32_t qpn)
{
	struct xb_qpn_entry **p, *e;
	void *v = NULL;

	pthread_mutex_lock(&t->lock);
	p = slot(t, qpn);
	e = *p;
	if (e) {
		*p = e->next;
		v = e->val;
	}
	pthread_mutex_unlock(&t->lock);
	free(e);
	return v;
}

void *xb_qpn_first(struct xb_qpn_table *t, int (*match)(void *val, void *arg), void *arg, uint32_t *qpn)
{
	void *v = NULL;

	pthread_mutex_lock(&t->lock);
	for (unsigned b = 0; b < XB_QPN_BUCKETS && !v; b++)
		for (struct xb_qpn_entry *e = t->bucket[b]; e && !v; e = e->next)
			if (match(e->val, arg)) {
				v = e->val;
				*qpn = e->qpn;
			}
	pthread_mutex_unlock(&t->lock);
	return v;
}
