/*
 * Bounded rings. SPSC: head and tail on separate cache lines, each side caching the other's
 * index so the common case touches no shared line. MPMC: a cell sequence number per slot
 * (Vyukov's bounded queue): a producer claims a slot by CAS on tail when the cell's sequence
 * equals the position, a consumer when it equals position + 1.
 */
#include "base/ring.h"
#include "base/mem.h"
#include <stdlib.h>
#include <string.h>

#define RING_CAPACITY_MAX (1ull << 30)

static size_t ring_round_up(size_t capacity)
{
    size_t n = 1;
    while (n < capacity) {
        n <<= 1;
    }
    return n;
}

/* ---------------------------------------------------------------- SPSC */

ingot_status_t ingot_spsc_init(ingot_spsc_t *r, size_t capacity)
{
    if (capacity == 0 || capacity > RING_CAPACITY_MAX) {
        return INGOT_ERR_INVALID_PARAM;
    }
    memset(r, 0, sizeof(*r));
    size_t n = ring_round_up(capacity);
    r->slots = ingot_calloc(n, sizeof(void *), "spsc ring");
    if (r->slots == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    r->mask = n - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    ingot_event_init(&r->not_empty);
    ingot_event_init(&r->not_full);
    return INGOT_OK;
}

void ingot_spsc_cleanup(ingot_spsc_t *r)
{
    free(r->slots);
    r->slots = NULL;
}

size_t ingot_spsc_capacity(const ingot_spsc_t *r)
{
    return r->mask + 1;
}

size_t ingot_spsc_size(const ingot_spsc_t *r)
{
    return atomic_load(&((ingot_spsc_t *)r)->tail) - atomic_load(&((ingot_spsc_t *)r)->head);
}

bool ingot_spsc_try_push(ingot_spsc_t *r, void *item)
{
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (tail - r->head_cache > r->mask) {
        r->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
        if (tail - r->head_cache > r->mask) {
            return false;
        }
    }
    r->slots[tail & r->mask] = item;
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
    ingot_event_notify(&r->not_empty);
    return true;
}

bool ingot_spsc_try_pop(ingot_spsc_t *r, void **item_p)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (head == r->tail_cache) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (head == r->tail_cache) {
            return false;
        }
    }
    *item_p = r->slots[head & r->mask];
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    ingot_event_notify(&r->not_full);
    return true;
}

/* ---------------------------------------------------------------- blocking waits, both rings */

typedef bool (*ring_try_push_t)(void *ring, void *item);
typedef bool (*ring_try_pop_t)(void *ring, void **item_p);

typedef struct ring_op {
    void *ring;
    void *item;
    void **item_p;
    ring_try_push_t push;
    ring_try_pop_t pop;
} ring_op_t;

static bool ring_push_cond(void *arg)
{
    ring_op_t *op = arg;
    return op->push(op->ring, op->item);
}

static bool ring_pop_cond(void *arg)
{
    ring_op_t *op = arg;
    return op->pop(op->ring, op->item_p);
}

/* Push, sleeping on @p not_full while the ring is full. */
static ingot_status_t ring_push_wait(void *ring, ring_try_push_t push, ingot_event_t *not_full,
                                     void *item, uint64_t deadline_ns, const ingot_abort_t *abort)
{
    ring_op_t op = {.ring = ring, .item = item, .push = push};
    return ingot_event_wait_until(not_full, ring_push_cond, &op, deadline_ns, abort);
}

/* Pop, sleeping on @p not_empty while the ring is empty. */
static ingot_status_t ring_pop_wait(void *ring, ring_try_pop_t pop, ingot_event_t *not_empty,
                                    void **item_p, uint64_t deadline_ns, const ingot_abort_t *abort)
{
    ring_op_t op = {.ring = ring, .item_p = item_p, .pop = pop};
    return ingot_event_wait_until(not_empty, ring_pop_cond, &op, deadline_ns, abort);
}

static bool spsc_try_push(void *r, void *item)
{
    return ingot_spsc_try_push(r, item);
}
static bool spsc_try_pop(void *r, void **item_p)
{
    return ingot_spsc_try_pop(r, item_p);
}

ingot_status_t ingot_spsc_push_wait(ingot_spsc_t *r, void *item, uint64_t deadline_ns,
                                    const ingot_abort_t *abort)
{
    return ring_push_wait(r, spsc_try_push, &r->not_full, item, deadline_ns, abort);
}

ingot_status_t ingot_spsc_pop_wait(ingot_spsc_t *r, void **item_p, uint64_t deadline_ns,
                                   const ingot_abort_t *abort)
{
    return ring_pop_wait(r, spsc_try_pop, &r->not_empty, item_p, deadline_ns, abort);
}

void ingot_spsc_wake_all(ingot_spsc_t *r)
{
    ingot_event_notify(&r->not_empty);
    ingot_event_notify(&r->not_full);
}

/* ---------------------------------------------------------------- MPMC */

ingot_status_t ingot_mpmc_init(ingot_mpmc_t *r, size_t capacity)
{
    if (capacity == 0 || capacity > RING_CAPACITY_MAX) {
        return INGOT_ERR_INVALID_PARAM;
    }
    memset(r, 0, sizeof(*r));
    size_t n = ring_round_up(capacity < 2 ? 2 : capacity);
    r->cells = ingot_calloc(n, sizeof(*r->cells), "mpmc ring");
    if (r->cells == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        atomic_init(&r->cells[i].seq, i);
    }
    r->mask = n - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    ingot_event_init(&r->not_empty);
    ingot_event_init(&r->not_full);
    return INGOT_OK;
}

void ingot_mpmc_cleanup(ingot_mpmc_t *r)
{
    free(r->cells);
    r->cells = NULL;
}

size_t ingot_mpmc_size(const ingot_mpmc_t *r)
{
    size_t tail = atomic_load(&((ingot_mpmc_t *)r)->tail);
    size_t head = atomic_load(&((ingot_mpmc_t *)r)->head);
    return (tail > head) ? tail - head : 0;
}

bool ingot_mpmc_try_push(ingot_mpmc_t *r, void *item)
{
    size_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        ingot_mpmc_cell_t *cell = &r->cells[pos & r->mask];
        size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)pos;
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                cell->item = item;
                atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
                ingot_event_notify_one(&r->not_empty);
                return true;
            }
        } else if (dif < 0) {
            return false; /* full */
        } else {
            pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
}

bool ingot_mpmc_try_pop(ingot_mpmc_t *r, void **item_p)
{
    size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        ingot_mpmc_cell_t *cell = &r->cells[pos & r->mask];
        size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)(pos + 1);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *item_p = cell->item;
                atomic_store_explicit(&cell->seq, pos + r->mask + 1, memory_order_release);
                ingot_event_notify_one(&r->not_full);
                return true;
            }
        } else if (dif < 0) {
            return false; /* empty */
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

static bool mpmc_try_push(void *r, void *item)
{
    return ingot_mpmc_try_push(r, item);
}
static bool mpmc_try_pop(void *r, void **item_p)
{
    return ingot_mpmc_try_pop(r, item_p);
}

ingot_status_t ingot_mpmc_push_wait(ingot_mpmc_t *r, void *item, uint64_t deadline_ns,
                                    const ingot_abort_t *abort)
{
    return ring_push_wait(r, mpmc_try_push, &r->not_full, item, deadline_ns, abort);
}

ingot_status_t ingot_mpmc_pop_wait(ingot_mpmc_t *r, void **item_p, uint64_t deadline_ns,
                                   const ingot_abort_t *abort)
{
    return ring_pop_wait(r, mpmc_try_pop, &r->not_empty, item_p, deadline_ns, abort);
}

void ingot_mpmc_wake_all(ingot_mpmc_t *r)
{
    ingot_event_notify(&r->not_empty);
    ingot_event_notify(&r->not_full);
}
