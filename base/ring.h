/*
 * Bounded lock-free rings of pointers between pipeline stages.
 *  - ingot_spsc_t: one producer thread, one consumer thread (wait-free push/pop).
 *  - ingot_mpmc_t: any number of producers and consumers (per-cell sequence numbers).
 * MPMC try_push may fail for a moment while a consumer is between claiming and releasing a
 * cell (and try_pop likewise against a producer): use the *_wait variants where an item must
 * go through.
 * Capacity is rounded up to a power of two and fixed at init; storage comes from the caller's
 * init call (one allocation, none afterwards). The *_wait variants block with a deadline and an
 * abort flag (backpressure), sleeping on the ring's events, never spinning forever.
 */
#ifndef INGOT_BASE_RING_H
#define INGOT_BASE_RING_H

#include "base/wait.h"
#include <stdalign.h>
#include <stddef.h>

#define INGOT_CACHE_LINE 64

typedef struct ingot_spsc {
    alignas(INGOT_CACHE_LINE) _Atomic size_t head; /* next slot to pop (consumer) */
    size_t tail_cache;                             /* consumer's view of tail */
    alignas(INGOT_CACHE_LINE) _Atomic size_t tail; /* next slot to push (producer) */
    size_t head_cache;                             /* producer's view of head */
    alignas(INGOT_CACHE_LINE) size_t mask;
    void **slots;
    ingot_event_t not_empty, not_full;
} ingot_spsc_t;

/** Initialise with room for at least @p capacity items. INGOT_ERR_NO_MEMORY, INVALID_PARAM. */
ingot_status_t ingot_spsc_init(ingot_spsc_t *r, size_t capacity);
void ingot_spsc_cleanup(ingot_spsc_t *r);
size_t ingot_spsc_capacity(const ingot_spsc_t *r);
/** Items in the ring (exact when producer and consumer are idle; a snapshot otherwise). */
size_t ingot_spsc_size(const ingot_spsc_t *r);
bool ingot_spsc_try_push(ingot_spsc_t *r, void *item);
bool ingot_spsc_try_pop(ingot_spsc_t *r, void **item_p);
ingot_status_t ingot_spsc_push_wait(ingot_spsc_t *r, void *item, uint64_t deadline_ns,
                                    const ingot_abort_t *abort);
ingot_status_t ingot_spsc_pop_wait(ingot_spsc_t *r, void **item_p, uint64_t deadline_ns,
                                   const ingot_abort_t *abort);

typedef struct ingot_mpmc_cell {
    _Atomic size_t seq;
    void *item;
} ingot_mpmc_cell_t;

typedef struct ingot_mpmc {
    alignas(INGOT_CACHE_LINE) _Atomic size_t head;
    alignas(INGOT_CACHE_LINE) _Atomic size_t tail;
    alignas(INGOT_CACHE_LINE) size_t mask;
    ingot_mpmc_cell_t *cells;
    ingot_event_t not_empty, not_full;
} ingot_mpmc_t;

ingot_status_t ingot_mpmc_init(ingot_mpmc_t *r, size_t capacity);
void ingot_mpmc_cleanup(ingot_mpmc_t *r);
size_t ingot_mpmc_size(const ingot_mpmc_t *r);
bool ingot_mpmc_try_push(ingot_mpmc_t *r, void *item);
bool ingot_mpmc_try_pop(ingot_mpmc_t *r, void **item_p);
ingot_status_t ingot_mpmc_push_wait(ingot_mpmc_t *r, void *item, uint64_t deadline_ns,
                                    const ingot_abort_t *abort);
ingot_status_t ingot_mpmc_pop_wait(ingot_mpmc_t *r, void **item_p, uint64_t deadline_ns,
                                   const ingot_abort_t *abort);
/** Wake every waiter (e.g. after raising the abort flag they observe). */
void ingot_mpmc_wake_all(ingot_mpmc_t *r);
void ingot_spsc_wake_all(ingot_spsc_t *r);

#endif
