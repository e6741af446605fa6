/* The policy's trace of an epoch and its indexed heap (see trace.h). */
#include "source/disk/trace.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_IDS_MAX 4096 /* sample ids fetched from the order at once */

/* Room for @p n items. */
static ingot_status_t trace_reserve(ingot_disk_trace_t *t, uint64_t n)
{
    if (n <= t->cap) {
        return INGOT_OK;
    }
    if (n >= INGOT_DISK_NONE) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "disk tier: an epoch touches %" PRIu64
                          " pieces, more than the policy counts (%u)",
                          n, INGOT_DISK_NONE - 1);
    }
    uint64_t cap = t->cap ? t->cap : 1024;
    while (cap < n) {
        cap *= 2;
    }
    uint32_t *piece = realloc(t->piece, cap * sizeof(uint32_t));
    t->piece = piece ? piece : t->piece;
    uint32_t *step = piece ? realloc(t->step, cap * sizeof(uint32_t)) : NULL;
    t->step = step ? step : t->step;
    uint32_t *next = step ? realloc(t->next, cap * sizeof(uint32_t)) : NULL;
    t->next = next ? next : t->next;
    uint32_t *bytes = next ? realloc(t->bytes, cap * sizeof(uint32_t)) : NULL;
    t->bytes = bytes ? bytes : t->bytes;
    if (bytes == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY,
                          "disk tier: no memory for a trace of %" PRIu64 " items", cap);
    }
    t->cap = cap;
    return INGOT_OK;
}

ingot_status_t ingot_disk_trace_add(ingot_disk_trace_t *t, uint64_t p, uint32_t step,
                                    uint32_t bytes)
{
    INGOT_CHECK(trace_reserve(t, t->n + 1));
    t->piece[t->n] = (uint32_t)p;
    t->step[t->n] = step;
    t->bytes[t->n] = bytes;
    t->n++;
    return INGOT_OK;
}

/* Append the pieces of sample @p id at step @p step. */
static ingot_status_t trace_sample(ingot_disk_trace_t *t, ingot_manifest_h manifest,
                                   const ingot_disk_pieces_t *pieces, const uint8_t *homed,
                                   uint64_t id, uint32_t step)
{
    ingot_sample_info_t si;
    ingot_status_t st = ingot_manifest_sample_get(manifest, id, &si);
    if (st != INGOT_OK || si.length == 0) {
        return st;
    }
    uint64_t base = pieces->piece0[si.shard];
    uint64_t p0 = base + (si.offset >> pieces->piece_log2);
    uint64_t p1 = base + ((si.offset + si.length - 1) >> pieces->piece_log2);
    for (uint64_t p = p0; p <= p1; p++) {
        if (homed != NULL && !homed[p]) {
            continue;
        }
        uint64_t at = (p - base) << pieces->piece_log2, end = at + (1ull << pieces->piece_log2);
        uint64_t lo = si.offset > at ? si.offset : at;
        uint64_t hi = si.offset + si.length < end ? si.offset + si.length : end;
        if ((st = ingot_disk_trace_add(t, p, step, (uint32_t)(hi - lo))) != INGOT_OK) {
            return st;
        }
    }
    return INGOT_OK;
}

/* Link each item to the next occurrence of its piece, and each piece to its first. */
static void trace_link(ingot_disk_trace_t *t, uint64_t npieces)
{
    for (uint64_t p = 0; p < npieces; p++) {
        t->first[p] = INGOT_DISK_NONE;
    }
    for (uint64_t i = t->n; i-- > 0;) {
        uint32_t p = t->piece[i];
        t->next[i] = t->first[p];
        t->first[p] = (uint32_t)i;
    }
}

ingot_status_t ingot_disk_trace_finish(ingot_disk_trace_t *t, uint64_t npieces, uint64_t epoch)
{
    if (t->first == NULL &&
        (t->first = ingot_calloc(npieces ? npieces : 1, sizeof(uint32_t), "disk trace")) == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint64_t i = 0; i < t->n; i++) { /* a caller's items (trace_items) name its pieces */
        if (t->piece[i] >= npieces) {
            return ingot_fail(INGOT_ERR_INTERNAL,
                              "disk tier: a trace item names piece %u of %" PRIu64, t->piece[i],
                              npieces);
        }
    }
    trace_link(t, npieces);
    t->epoch = epoch;
    return INGOT_OK;
}

ingot_status_t ingot_disk_trace_build(ingot_disk_trace_t *t, ingot_manifest_h manifest,
                                      ingot_order_h order, const ingot_disk_pieces_t *pieces,
                                      const uint8_t *homed, uint64_t npieces, uint64_t epoch,
                                      uint64_t steps, uint64_t batch)
{
    uint64_t ids[TRACE_IDS_MAX];
    uint64_t chunk = batch <= TRACE_IDS_MAX ? batch : 0;
    t->n = 0;
    t->epoch = UINT64_MAX;
    for (uint64_t s = 0; s < steps; s++) {
        for (uint64_t k = 0; k < batch; k += chunk ? chunk : 1) {
            ingot_status_t st = INGOT_OK;
            uint64_t got = chunk ? chunk : 1;
            if (chunk) { /* the whole step at once (a world of one takes all of it) */
                st = ingot_order_slice(order, epoch, s, 0, 1, ids, TRACE_IDS_MAX);
            } else {
                st = ingot_order_at(order, epoch, s * batch + k, &ids[0]);
            }
            for (uint64_t j = 0; j < got && st == INGOT_OK; j++) {
                st = trace_sample(t, manifest, pieces, homed, ids[j], (uint32_t)s);
            }
            if (st != INGOT_OK) {
                return st;
            }
        }
    }
    return ingot_disk_trace_finish(t, npieces, epoch);
}

void ingot_disk_trace_free(ingot_disk_trace_t *t)
{
    free(t->piece);
    free(t->step);
    free(t->next);
    free(t->bytes);
    free(t->first);
    memset(t, 0, sizeof(*t));
}

/* ---- the heap */

ingot_status_t ingot_disk_heap_init(ingot_disk_heap_t *h, uint64_t npieces, const uint64_t *key)
{
    uint64_t n = npieces ? npieces : 1;
    h->item = ingot_calloc(n, sizeof(uint32_t), "disk heap");
    h->pos = ingot_malloc(n * sizeof(uint32_t), "disk heap");
    h->n = 0;
    h->key = key;
    if (h->item == NULL || h->pos == NULL) {
        ingot_disk_heap_free(h);
        return INGOT_ERR_NO_MEMORY;
    }
    memset(h->pos, 0xff, n * sizeof(uint32_t)); /* INGOT_DISK_NONE */
    return INGOT_OK;
}

void ingot_disk_heap_free(ingot_disk_heap_t *h)
{
    free(h->item);
    free(h->pos);
    h->item = h->pos = NULL;
    h->n = 0;
}

static void heap_place(ingot_disk_heap_t *h, uint32_t i, uint32_t p)
{
    h->item[i] = p;
    h->pos[p] = i;
}

static void heap_up(ingot_disk_heap_t *h, uint32_t i)
{
    uint32_t p = h->item[i];
    while (i > 0 && h->key[h->item[(i - 1) / 2]] < h->key[p]) {
        heap_place(h, i, h->item[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_place(h, i, p);
}

static void heap_down(ingot_disk_heap_t *h, uint32_t i)
{
    uint32_t p = h->item[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n) {
            break;
        }
        if (c + 1 < h->n && h->key[h->item[c + 1]] > h->key[h->item[c]]) {
            c++;
        }
        if (h->key[h->item[c]] <= h->key[p]) {
            break;
        }
        heap_place(h, i, h->item[c]);
        i = c;
    }
    heap_place(h, i, p);
}

void ingot_disk_heap_push(ingot_disk_heap_t *h, uint32_t p)
{
    if (h->pos[p] != INGOT_DISK_NONE) {
        ingot_disk_heap_update(h, p);
        return;
    }
    heap_place(h, h->n++, p);
    heap_up(h, h->n - 1);
}

void ingot_disk_heap_remove(ingot_disk_heap_t *h, uint32_t p)
{
    uint32_t i = h->pos[p];
    if (i == INGOT_DISK_NONE) {
        return;
    }
    h->pos[p] = INGOT_DISK_NONE;
    uint32_t last = h->item[--h->n];
    if (i == h->n) {
        return;
    }
    heap_place(h, i, last);
    heap_up(h, i);
    heap_down(h, h->pos[last]);
}

void ingot_disk_heap_update(ingot_disk_heap_t *h, uint32_t p)
{
    uint32_t i = h->pos[p];
    if (i != INGOT_DISK_NONE) {
        heap_up(h, i);
        heap_down(h, h->pos[p]);
    }
}
