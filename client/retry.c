/* Backoff with full jitter, the retry budget, and per-bucket AIMD + rate cap (see retry.h). */
#include "client/retry.h"

/* xorshift64*: the jitter needs spread, not secrecy. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint64_t ingot_objstore_backoff_ns(uint64_t base_ns, uint64_t max_ns, unsigned n,
                                   uint64_t *rng_state)
{
    uint64_t ceil = base_ns;
    for (unsigned i = 0; i < n && ceil < max_ns; i++) ceil *= 2;
    if (ceil > max_ns) ceil = max_ns;
    return next_random(rng_state) % (ceil + 1);
}

void ingot_objstore_budget_init(ingot_objstore_budget_t *b, int64_t cap)
{
    b->tokens = b->cap = cap;
}

int ingot_objstore_budget_take(ingot_objstore_budget_t *b, int64_t cost)
{
    if (b->tokens < cost || b->cap == 0) return 0;
    b->tokens -= cost;
    return 1;
}

void ingot_objstore_budget_refund(ingot_objstore_budget_t *b)
{
    if (b->tokens < b->cap) b->tokens++;
}

void ingot_objstore_throttle_init(ingot_objstore_throttle_t *t, double max_window, double rate)
{
    t->window = t->max_window = max_window < 1 ? 1 : max_window;
    t->inflight = 0;
    t->last_cut_ns = 0;
    t->rate = rate;
    t->tokens = 1;
    t->refill_ns = 0;
}

/* Burst of the rate cap: a tenth of a second's worth, at least one request. */
static double rate_burst(const ingot_objstore_throttle_t *t)
{
    return t->rate / 10 > 1 ? t->rate / 10 : 1;
}

int ingot_objstore_throttle_may_start(ingot_objstore_throttle_t *t, uint64_t now,
                                      uint64_t *wake_ns_p, int *rate_held_p)
{
    if ((double)t->inflight + 1 > t->window) return 0;
    if (t->rate <= 0) return 1;
    if (t->refill_ns != 0 && now > t->refill_ns) {
        t->tokens += (double)(now - t->refill_ns) * t->rate / 1e9;
        if (t->tokens > rate_burst(t)) t->tokens = rate_burst(t);
    }
    t->refill_ns = now;
    if (t->tokens >= 1) return 1;
    uint64_t wake = now + (uint64_t)((1 - t->tokens) * 1e9 / t->rate) + 1;
    if (wake < *wake_ns_p) *wake_ns_p = wake;
    *rate_held_p = 1;
    return 0;
}

void ingot_objstore_throttle_started(ingot_objstore_throttle_t *t)
{
    t->inflight++;
    if (t->rate > 0) t->tokens -= 1;
}

void ingot_objstore_throttle_finished(ingot_objstore_throttle_t *t, int ok)
{
    if (t->inflight > 0) t->inflight--;
    if (ok && t->window < t->max_window) {
        t->window += 1 / t->window;
        if (t->window > t->max_window) t->window = t->max_window;
    }
}

int ingot_objstore_throttle_slowdown(ingot_objstore_throttle_t *t, uint64_t started_ns,
                                     uint64_t now)
{
    if (t->last_cut_ns != 0 && started_ns <= t->last_cut_ns) return 0;
    t->window = t->window / 2 < 1 ? 1 : t->window / 2;
    t->last_cut_ns = now;
    return 1;
}
