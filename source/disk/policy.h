/*
 * The disk tier's clairvoyant policy (policy.c), for one node's keeper: every rank knows the order
 * of every future epoch, so the keeper knows when each of its pieces is needed next by any rank
 * of the job, and decides by that, never by recency.
 *
 * Time is the job's global step (epoch x steps per epoch + step). The trace of an epoch lists, in
 * order, the pieces its samples touch (only the pieces homed at this node); the policy holds the
 * traces of the current epoch and the next one, and as time advances it moves each used piece's
 * next use to its following occurrence (an indexed heap keeps the resident pieces by next use).
 *
 * Admission and eviction (INGOT_DISK_CACHE_POLICY=clairvoyant): a piece is admitted whenever the
 * budget has room (what this job will not read again may serve the next job); when full, victims
 * are, in order: a resident piece this job never reads again; another job's entry (its future is
 * unknown here), oldest first; the resident piece needed latest, but only if the newcomer is
 * needed sooner (Belady with bypass: otherwise the newcomer is refused, and in the last epoch
 * nothing useful is pushed out). INGOT_DISK_CACHE_POLICY=lru (for comparison on the same trace):
 * other jobs' entries, then the piece least recently used, always admitting.
 *
 * Prefetch: the next piece along the trace, from a lead of a few steps past the loader's own
 * reads, that is absent and admissible.
 *
 * Not thread-safe: the keeper calls it under its lock.
 */
#ifndef INGOT_SOURCE_DISK_POLICY_H
#define INGOT_SOURCE_DISK_POLICY_H

#include "source/disk/entry.h"
#include <ingot/order.h>
#include <ingot/shard.h>
#include <stdint.h>

#define INGOT_DISK_NEVER UINT64_MAX /* a next use that never comes in this job */

typedef struct ingot_disk_policy ingot_disk_policy_t;
struct ingot_disk_trace; /* trace.h */

/** Pieces of a manifest: shard s holds pieces [piece0[s], piece0[s + 1]). */
typedef struct ingot_disk_pieces {
    uint32_t nshards;
    uint32_t piece_log2;
    const uint64_t *piece0; /* nshards + 1 */
} ingot_disk_pieces_t;

typedef struct ingot_disk_policy_params {
    ingot_manifest_h manifest;
    ingot_order_h order; /* used by the policy alone (a copy of the loader's) */
    ingot_disk_pieces_t pieces;
    const uint8_t *homed; /* per piece: 1 when this node is its home; NULL: every piece (or
                             the pieces trace_items gives) */
    uint64_t first_step;  /* the job's first global step (resume included) */
    uint64_t end_step;    /* one past its last */
    uint64_t steps_per_epoch, global_batch;
    uint32_t lead; /* steps ahead of the clock the prefetcher starts */
    int lru;       /* INGOT_DISK_CACHE_POLICY=lru */
    /* NULL: each epoch's trace built from the order. Else it fills the trace's items (in the
     * epoch's order, only this node's pieces, with ingot_disk_trace_add()): a simulator of many
     * nodes computes every node's trace in one pass over the order. */
    ingot_status_t (*trace_items)(void *arg, uint64_t epoch, struct ingot_disk_trace *t);
    void *trace_arg;
} ingot_disk_policy_params_t;

/** A victim chosen to make room: a piece of this job, or another job's entry. */
typedef struct ingot_disk_victim {
    int foreign;          /* 1: another job's entry (key, bytes) */
    uint64_t piece;       /* this job's piece */
    ingot_disk_key_t key; /* foreign: its key */
    uint64_t bytes;       /* foreign: its size on disk */
} ingot_disk_victim_t;

/** Build the traces of the job's first two epochs. INGOT_ERR_NO_MEMORY; manifest errors. */
ingot_status_t ingot_disk_policy_create(const ingot_disk_policy_params_t *params,
                                        ingot_disk_policy_t **pol_p);
void ingot_disk_policy_destroy(ingot_disk_policy_t *pol);

/** Move the clock to global step @p step (uses of earlier steps are past; traces roll at epoch
 *  boundaries). A step at or behind the clock does nothing. */
ingot_status_t ingot_disk_policy_advance(ingot_disk_policy_t *pol, uint64_t step);
uint64_t ingot_disk_policy_now(const ingot_disk_policy_t *pol);

/** When piece @p p is needed after the use being served now (a few steps of skew between the
 *  ranks' clocks allowed); INGOT_DISK_NEVER when not again in this job. */
uint64_t ingot_disk_policy_need(const ingot_disk_policy_t *pol, uint64_t p);
/** When piece @p p is needed once this epoch's uses of it are over (its first use in a later
 *  epoch): from when a piece assembled from this epoch's misses serves. */
uint64_t ingot_disk_policy_need_later(const ingot_disk_policy_t *pol, uint64_t p);
/** Whether piece @p p's first use in the clock's epoch is recent (within the loader's lead and
 *  the ranks' skew): a miss now is likely its first of the epoch, so every later one can bring
 *  its bytes and a piece assembled from them is whole by the epoch's end. */
int ingot_disk_policy_fresh(const ingot_disk_policy_t *pol, uint64_t p);
/** Whether piece @p p has a use ahead of the clock in the clock's epoch. */
int ingot_disk_policy_ahead(const ingot_disk_policy_t *pol, uint64_t p);

/** Piece states. */
enum { INGOT_DISK_ABSENT = 0, INGOT_DISK_RESIDENT = 1, INGOT_DISK_FILLING = 2 };
int ingot_disk_policy_state(const ingot_disk_policy_t *pol, uint64_t p);
/** Set @p p's state (RESIDENT enters the victim heap, anything else leaves it). */
void ingot_disk_policy_set(ingot_disk_policy_t *pol, uint64_t p, int state);

/** Another job's entry found by the scan (a victim before this job's, oldest first). */
ingot_status_t ingot_disk_policy_foreign(ingot_disk_policy_t *pol, const ingot_disk_key_t *key,
                                         uint64_t bytes, uint64_t mtime_ns);
/** Sort the foreign entries by age (after the scan). */
void ingot_disk_policy_foreign_done(ingot_disk_policy_t *pol);

/** Whether a newcomer needed at @p need could take the place of a victim (nothing changed). */
int ingot_disk_policy_admissible(const ingot_disk_policy_t *pol, uint64_t need);
/**
 * Whether a fill of piece @p p pays for itself in bytes from below: it costs @p cost bytes read
 * below that no miss needed (a miss's fill: the piece less the bytes the miss reads anyway; a
 * prefetch: the whole piece), and saves the bytes of the piece's uses from step @p from on that it
 * serves before it would be evicted (Belady with bypass, in bytes): with a victim never read
 * again or of another job, as long as the traces reach (this epoch and the next); else until the
 * resident piece needed latest would be. 0 when nothing could make room. With @p room (the budget
 * has room): 1, as what this job does not read again may serve the next job (and with room a
 * piece stays until its other samples are read, which then hit). LRU: whether a victim exists.
 */
int ingot_disk_policy_pays(const ingot_disk_policy_t *pol, uint64_t p, int room, uint64_t from,
                           uint64_t cost);
/** Choose and take out the next victim for a newcomer needed at @p need: 1 (in *@p v), 0 none
 *  (bypass). A piece of this job leaves the heap and becomes ABSENT. */
int ingot_disk_policy_victim(ingot_disk_policy_t *pol, uint64_t need, ingot_disk_victim_t *v);

/**
 * The next piece to prefetch: absent, homed here, along the trace from the clock + lead, and
 * admissible for its use (@p room: the budget has room for a piece, else a victim needed later):
 * 1 with *@p p_p and its use *@p need_p (the piece is then FILLING), 0 when none (everything
 * ahead is resident or in flight, or the budget holds only pieces needed sooner).
 */
int ingot_disk_policy_prefetch(ingot_disk_policy_t *pol, int room, uint64_t *p_p, uint64_t *need_p);

/** Counters: the pieces this node is home to, and those resident now. */
void ingot_disk_policy_counts(const ingot_disk_policy_t *pol, uint64_t *homed_p,
                              uint64_t *resident_p);

#endif
