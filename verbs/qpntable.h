/*
 * qpntable.h: a process-wide table of QP numbers, the shape of the one
 * MLNX_OFED's compatibility layer keeps (one entry per QP number, whatever
 * the domain or context), used by the legacy provider to mirror it and by
 * the libibverbs test double to be it. Each table has its own mutex.
 */
#ifndef XB_QPNTABLE_H
#define XB_QPNTABLE_H

#include <pthread.h>
#include <stdint.h>

#define XB_QPN_BUCKETS 1024u

struct xb_qpn_entry;

struct xb_qpn_table {
	pthread_mutex_t lock;
	struct xb_qpn_entry *bucket[XB_QPN_BUCKETS];
};

#define XB_QPN_TABLE_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

/* xb_qpn_put stores val under qpn: 0, EEXIST when qpn is there already
 * (the table is unchanged), or ENOMEM. */
int xb_qpn_put(struct xb_qpn_table *t, uint32_t qpn, void *val);

/* xb_qpn_get is the value stored under qpn, or NULL. */
void *xb_qpn_get(struct xb_qpn_table *t, uint32_t qpn);

/* xb_qpn_take removes qpn and returns its value, or NULL. */
void *xb_qpn_take(struct xb_qpn_table *t, uint32_t qpn);

/* xb_qpn_first finds an entry whose value match accepts (with arg), sets
 * *qpn and returns its value; NULL when none does. */
void *xb_qpn_first(struct xb_qpn_table *t, int (*match)(void *val, void *arg), void *arg, uint32_t *qpn);

#endif
