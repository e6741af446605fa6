/*
 * The policy's two data structures (trace.c): the trace of one epoch (the pieces the job's
 * samples touch, in the order of the epoch's permutation, with each occurrence's step and the next
 * occurrence of the same piece), and an indexed binary heap of pieces by a key (the policy's next
 * use, or the reverse of last use for LRU) that supports changing a member's key.
 */
#ifndef INGOT_SOURCE_DISK_TRACE_H
#define INGOT_SOURCE_DISK_TRACE_H

#include "source/disk/policy.h"
#include <stdint.h>

#define INGOT_DISK_NONE UINT32_MAX /* no item, no heap position */

typedef struct ingot_disk_trace {
    uint64_t epoch;                /* UINT64_MAX: none built */
    uint64_t n;                    /* items */
    uint32_t *piece, *step, *next; /* per item: the piece, its step in the epoch, the next item of
                                      the same piece (INGOT_DISK_NONE) */
    uint32_t *bytes;               /* per item: the sample's bytes within the piece */
    uint32_t *first;               /* per piece: its first item, or INGOT_DISK_NONE */
    uint64_t cap;
} ingot_disk_trace_t;

/** Build epoch @p epoch's trace (steps [0, @p steps) of @p order, batches of @p batch), keeping
 *  the pieces with homed[p] set (NULL: all). The arrays grow as needed and are reused. */
ingot_status_t ingot_disk_trace_build(ingot_disk_trace_t *t, ingot_manifest_h manifest,
                                      ingot_order_h order, const ingot_disk_pieces_t *pieces,
                                      const uint8_t *homed, uint64_t npieces, uint64_t epoch,
                                      uint64_t steps, uint64_t batch);
/** Append an item: piece @p p at step @p step, @p bytes of a sample in it (a trace being filled
 *  for ingot_disk_trace_finish()). INGOT_ERR_NO_MEMORY, INGOT_ERR_NO_RESOURCE (too many). */
ingot_status_t ingot_disk_trace_add(ingot_disk_trace_t *t, uint64_t p, uint32_t step,
                                    uint32_t bytes);
/** Link the items added since the trace was emptied (t->n = 0) as epoch @p epoch's.
 *  INGOT_ERR_NO_MEMORY; INGOT_ERR_INTERNAL for an item past @p npieces. */
ingot_status_t ingot_disk_trace_finish(ingot_disk_trace_t *t, uint64_t npieces, uint64_t epoch);
void ingot_disk_trace_free(ingot_disk_trace_t *t);

typedef struct ingot_disk_heap {
    uint32_t *item; /* heap order: piece ids */
    uint32_t *pos;  /* per piece: its place in item[], or INGOT_DISK_NONE */
    uint32_t n;
    const uint64_t *key; /* per piece: the key (largest on top) */
} ingot_disk_heap_t;

ingot_status_t ingot_disk_heap_init(ingot_disk_heap_t *h, uint64_t npieces, const uint64_t *key);
void ingot_disk_heap_free(ingot_disk_heap_t *h);
void ingot_disk_heap_push(ingot_disk_heap_t *h, uint32_t p);
void ingot_disk_heap_remove(ingot_disk_heap_t *h, uint32_t p);
/** After key[p] changed. No-op for a piece not in the heap. */
void ingot_disk_heap_update(ingot_disk_heap_t *h, uint32_t p);
/** The piece with the largest key, or INGOT_DISK_NONE. */
static inline uint32_t ingot_disk_heap_top(const ingot_disk_heap_t *h)
{
    return h->n ? h->item[0] : INGOT_DISK_NONE;
}

#endif
