/*
 * Hedged GETs (hedge.c), the policy alone, owned by the I/O thread: when an attempt has run past
 * what the client's recent attempts of its size took (INGOT_S3_HEDGE times the p95 of their
 * durations, within INGOT_S3_HEDGE_FLOOR and INGOT_S3_HEDGE_CEILING), a second attempt asks for
 * the bytes it still lacks on another connection; the first to finish wins, the other is
 * stopped (io.c, response.c). A body that, once begun, goes quiet for INGOT_S3_HEDGE times its
 * longest gap so far (at least the floor) is hedged too (io.c): a stall is caught before its
 * size class has durations. A class with too few durations borrows the client's pace: its
 * bytes at the median time per MiB of the client's recent GETs of any size, as its expected time. Hedges draw on tokens that successes earn (one per ten requests,
 * plus a start of INGOT_OBJSTORE_HEDGE_TOKENS), so a store where one request in ten misbehaves
 * is hedged throughout, and one that misbehaves everywhere is not flooded.
 */
#ifndef INGOT_CLIENT_HEDGE_H
#define INGOT_CLIENT_HEDGE_H

#include <stdint.h>

#define INGOT_OBJSTORE_HEDGE_CLASSES 24 /* size classes: attempts of [2^k, 2^(k+1)) KiB */
#define INGOT_OBJSTORE_HEDGE_RING    32 /* the durations each class remembers */
#define INGOT_OBJSTORE_HEDGE_MIN_N   4  /* durations a class needs before its p95 is used */
#define INGOT_OBJSTORE_HEDGE_TOKENS  10 /* hedges allowed before any success earned one */
#define INGOT_OBJSTORE_HEDGE_PER_MAX 2  /* hedges of one request at once (a hedge is hedged) */

/** The last INGOT_OBJSTORE_HEDGE_RING values of a measure. */
typedef struct ingot_objstore_hedge_ring {
    uint64_t v[INGOT_OBJSTORE_HEDGE_RING];
    uint32_t n, next;
} ingot_objstore_hedge_ring_t;

typedef struct ingot_objstore_hedge_class {
    ingot_objstore_hedge_ring_t ns; /* durations of its GETs */
    uint64_t after_ns;              /* the threshold, computed when a duration is added */
} ingot_objstore_hedge_class_t;

typedef struct ingot_objstore_hedge {
    uint32_t factor;                   /* INGOT_S3_HEDGE; 0: no hedging */
    ingot_objstore_hedge_ring_t paces; /* ns per MiB of recent GETs of 64 KiB or more */
    uint64_t pace_median;              /* their median, computed when one is added */
    uint64_t floor_ns, ceiling_ns;     /* bounds of the threshold */
    int64_t tokens_tenths;             /* hedge tokens, in tenths (a success earns one tenth) */
    ingot_objstore_hedge_class_t cls[INGOT_OBJSTORE_HEDGE_CLASSES];
} ingot_objstore_hedge_t;

/** Set up @p h: hedge after @p factor x p95 (0: never), within [@p floor_ns, @p ceiling_ns]. */
void ingot_objstore_hedge_init(ingot_objstore_hedge_t *h, uint32_t factor, uint64_t floor_ns,
                               uint64_t ceiling_ns);
/** A successful attempt of @p bytes took @p ns. */
void ingot_objstore_hedge_record(ingot_objstore_hedge_t *h, uint64_t bytes, uint64_t ns);
/** How long an attempt of @p bytes may run before it is hedged (UINT64_MAX: never). */
uint64_t ingot_objstore_hedge_after_ns(const ingot_objstore_hedge_t *h, uint64_t bytes);
/** A request completed: earn a tenth of a token (up to a cap). */
void ingot_objstore_hedge_earn(ingot_objstore_hedge_t *h);
/** Take a token for a hedge: 1 when there was one, 0 otherwise (nothing taken). */
int ingot_objstore_hedge_take(ingot_objstore_hedge_t *h);

#endif
