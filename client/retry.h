/*
 * Retry policy and throttling (retry.c), all owned by the I/O thread:
 *  - backoff: the n-th retry waits a uniform random time in [0, min(max, base * 2^n)] (full
 *    jitter, so a fleet of clients that failed together does not retry together);
 *  - budget: client-wide retry tokens (a retry after an error costs INGOT_OBJSTORE_RETRY_COST, a
 *    success returns one); once spent, retries wait the longest backoff, so a store that fails
 *    everything is not hammered, while requests still retry until their deadlines;
 *  - throttle, per bucket: additive-increase/multiplicative-decrease of the transfers in flight
 *    (halved on SlowDown or 429, at most once per window of outstanding requests; grown by one
 *    per window of successes), and an optional token-bucket cap on requests started per second.
 */
#ifndef INGOT_CLIENT_RETRY_H
#define INGOT_CLIENT_RETRY_H

#include <stdint.h>

#define INGOT_OBJSTORE_RETRY_COST 5 /* tokens a non-throttle retry costs; a success returns 1 */

/** The n-th retry's wait (n from 0), random in [0, min(max_ns, base_ns * 2^n)]. */
uint64_t ingot_objstore_backoff_ns(uint64_t base_ns, uint64_t max_ns, unsigned n,
                                   uint64_t *rng_state);

typedef struct ingot_objstore_budget {
    int64_t tokens, cap;
} ingot_objstore_budget_t;

void ingot_objstore_budget_init(ingot_objstore_budget_t *b, int64_t cap);
/** Take @p cost tokens: 1 when there were enough, 0 (nothing taken) otherwise. */
int ingot_objstore_budget_take(ingot_objstore_budget_t *b, int64_t cost);
/** A success gives one token back (up to the cap). */
void ingot_objstore_budget_refund(ingot_objstore_budget_t *b);

typedef struct ingot_objstore_throttle {
    double window;     /* transfers allowed in flight (>= 1) */
    double max_window; /* INGOT_S3_CONNECTIONS */
    uint32_t inflight;
    uint64_t last_cut_ns; /* when the window was last halved */
    double rate;          /* starts per second, 0: no cap */
    double tokens;        /* rate-cap tokens */
    uint64_t refill_ns;
} ingot_objstore_throttle_t;

void ingot_objstore_throttle_init(ingot_objstore_throttle_t *t, double max_window, double rate);

/**
 * May one more transfer start now? 1: yes. 0: no; *wake_ns_p (if the rate cap is what holds it)
 * is lowered to when a token will be there, and *rate_held_p set.
 */
int ingot_objstore_throttle_may_start(ingot_objstore_throttle_t *t, uint64_t now,
                                      uint64_t *wake_ns_p, int *rate_held_p);
/** A transfer started (takes a rate token). */
void ingot_objstore_throttle_started(ingot_objstore_throttle_t *t);
/** A transfer ended; @p ok: it succeeded (the window grows by 1/window). */
void ingot_objstore_throttle_finished(ingot_objstore_throttle_t *t, int ok);
/**
 * A SlowDown or 429 answered a transfer that started at @p started_ns: halve the window unless
 * it was already cut after that transfer started. Returns 1 when it cut.
 */
int ingot_objstore_throttle_slowdown(ingot_objstore_throttle_t *t, uint64_t started_ns,
                                     uint64_t now);

#endif
