/*
 * Ops: a group of reads to one peer with one deadline and one completion. Begin, add reads, end;
 * the callback comes once, when the last read completes or the deadline passes (the progress
 * thread expires ops: their waiting reads are dropped, a transfer still landing is ended by
 * closing the endpoint where the pair allows it). A peer whose op expired is silent until it
 * answers again.
 */
#include "transport/transport_impl.h"
#include "base/log.h"
#include "base/time.h"
#include <time.h>

static void op_finish(ingot_transport_t *t, ingot_transport_op_t *op)
{
    if (op->finished) {
        return; /* once per use */
    }
    op->finished = 1;
    if (atomic_load(&op->status) == INGOT_OK && op->peer >= 0 && op->peer < t->world) {
        atomic_store(&t->peers[op->peer].silent_since, 0); /* it answered */
    }
    if (op->active) {
        ingot_transport_op_t **pp = &t->ops;
        while (*pp != NULL && *pp != op) {
            pp = &(*pp)->next;
        }
        if (*pp == op) {
            *pp = op->next;
        }
        op->active = 0;
    }
    if (op->cb != NULL) {
        op->cb(op);
    }
}

/* One read of @p op done with @p status (lock held). */
void ingot_transport_op_put(ingot_transport_t *t, ingot_transport_op_t *op, ingot_status_t status)
{
    if (status != INGOT_OK) {
        int expected = INGOT_OK;
        atomic_compare_exchange_strong(&op->status, &expected, status);
    }
    if (atomic_fetch_sub(&op->pending, 1) == 1) {
        op_finish(t, op);
    }
}

void ingot_transport_op_begin(ingot_transport_t *t, ingot_transport_op_t *op, int peer,
                              uint64_t deadline_ns, const void *tag)
{
    pthread_mutex_lock(&t->lock);
    op->tag = tag;
    op->finished = 0;
    atomic_store(&op->status, INGOT_OK);
    atomic_store(&op->pending, 1);
    op->t = t;
    op->peer = peer;
    op->deadline_ns = deadline_ns;
    op->gen++;
    op->next = t->ops;
    t->ops = op;
    op->active = 1;
    pthread_mutex_unlock(&t->lock);
}

void ingot_transport_op_end(ingot_transport_t *t, ingot_transport_op_t *op)
{
    pthread_mutex_lock(&t->lock);
    ingot_transport_op_put(t, op, INGOT_OK);
    int waits = op->active; /* reads still in flight: the progress thread must watch them */
    pthread_mutex_unlock(&t->lock);
    if (waits) {
        ingot_transport_wake(t);
    }
}

/* Drop @p op's active-message reads that no byte has been sent for; returns how many reads it
 * still has in flight (a rendezvous or get landing in its destination). Lock held. */
static uint32_t op_drop_waiting(ingot_transport_t *t, ingot_transport_op_t *op)
{
    for (uint32_t i = 0; i < TRANSPORT_AM_ENTRIES; i++) {
        transport_am_entry_t *e = &t->am[i];
        if (e->state == AM_ENTRY_WAIT && e->op == op) {
            ingot_transport_am_entry_free(t, e);
            atomic_fetch_sub(&op->pending, 1);
        }
    }
    return atomic_load(&op->pending);
}

void ingot_transport_settle(ingot_transport_t *t)
{
    pthread_mutex_lock(&t->lock);
    pthread_mutex_unlock(&t->lock);
}

ingot_status_t ingot_transport_op_cancel(ingot_transport_t *t, ingot_transport_op_t *op,
                                         const void *tag)
{
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = INGOT_OK;
    if (op->tag != tag || op->finished || !op->active) {
        st = INGOT_ERR_NOT_FOUND; /* that use is over */
    } else {
        if (op_drop_waiting(t, op) == 0) {
            ingot_transport_op_t **pp = &t->ops;
            while (*pp != NULL && *pp != op) {
                pp = &(*pp)->next;
            }
            if (*pp == op) {
                *pp = op->next;
            }
            op->active = 0;
        } else {
            st = INGOT_ERR_BUSY;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* Ops past their deadline: their waiting reads are dropped; a transfer still landing is ended
 * by closing the endpoint by force where the pair allows it. Lock held. Returns the earliest
 * deadline still ahead (or UINT64_MAX). */
uint64_t ingot_transport_ops_expire(ingot_transport_t *t, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    ingot_transport_op_t *op = t->ops;
    while (op != NULL) {
        ingot_transport_op_t *nx = op->next;
        if (op->deadline_ns > now) {
            next = op->deadline_ns < next ? op->deadline_ns : next;
            op = nx;
            continue;
        }
        int expected = INGOT_OK;
        atomic_compare_exchange_strong(&op->status, &expected, INGOT_ERR_TIMED_OUT);
        op->deadline_ns = UINT64_MAX; /* expired once */
        int peer = op->peer;
        uint64_t never = 0; /* silent from now on, until it answers a read again */
        atomic_compare_exchange_strong(&t->peers[peer].silent_since, &never, now);
        /* pending counts the waiting reads dropped now, and the +1 of op_end */
        uint32_t left = op_drop_waiting(t, op);
        if (left == 0) {
            op_finish(t, op);
        } else if (t->peers[peer].err_peer && t->peers[peer].ep != NULL) {
            /* closing may complete other ops in place (their callbacks unlink them): walk
             * again from the head; expired ops are not expired twice */
            ingot_transport_peer_close_locked(t, peer);
            nx = t->ops;
        }
        op = nx;
    }
    return next;
}

void ingot_transport_ops_postpone(ingot_transport_t *t, uint64_t by_ns)
{
    for (ingot_transport_op_t *op = t->ops; op != NULL; op = op->next) {
        if (op->deadline_ns != UINT64_MAX) {
            op->deadline_ns += by_ns;
        }
    }
}

void ingot_transport_op_wait(ingot_transport_t *t, ingot_transport_op_t *op)
{
    /* progress here; the progress thread expires the op at its deadline */
    while (atomic_load(&op->pending) != 0) {
        if (ingot_transport_progress(t) == 0) {
            struct timespec pause = {0, 20000};
            nanosleep(&pause, NULL);
        }
    }
    ingot_transport_settle(t); /* the thread that finished the op has let go of it */
}
