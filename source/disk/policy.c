/* The disk tier's clairvoyant policy (see policy.h): the clock, next uses, victims, prefetch. */
#include "source/disk/trace.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define POLICY_SKEW_STEPS 2 /* how far another rank's clock may run ahead of the keeper's */

typedef struct foreign {
    ingot_disk_key_t key;
    uint64_t bytes, mtime_ns;
} foreign_t;

struct ingot_disk_policy {
    ingot_disk_policy_params_t p;
    uint64_t npieces;
    uint64_t spe;             /* steps per epoch */
    uint64_t last_epoch;      /* the job's last epoch */
    uint64_t now;             /* the clock: uses before it are past */
    uint64_t done;            /* items of tr[0] already past */
    ingot_disk_trace_t tr[2]; /* the clock's epoch and the next one */
    uint64_t *nu;             /* per piece: next use (global step), INGOT_DISK_NEVER */
    uint64_t *lru_key;        /* per piece: UINT64_MAX - last use (LRU's heap key) */
    uint32_t *cur;            /* per piece: the tr[0] item nu comes from, or INGOT_DISK_NONE */
    uint8_t *state;           /* per piece: INGOT_DISK_ABSENT, RESIDENT, FILLING */
    ingot_disk_heap_t heap;
    foreign_t *foreign;
    uint64_t nforeign, foreign_cap, foreign_next;
    uint64_t pf_item; /* the prefetcher's place: an item of tr[pf_tr] */
    int pf_tr;
};

static uint64_t pol_epoch_start(const ingot_disk_policy_t *pol, uint64_t epoch)
{
    return epoch * pol->spe;
}

/* The first use of @p p in the next epoch's trace, or FAR / NEVER past it. */
static uint64_t pol_next_epoch_use(const ingot_disk_policy_t *pol, uint64_t p)
{
    const ingot_disk_trace_t *t = &pol->tr[1];
    if (t->epoch != UINT64_MAX && t->first[p] != INGOT_DISK_NONE) {
        return pol_epoch_start(pol, t->epoch) + t->step[t->first[p]];
    }
    uint64_t e = pol->tr[0].epoch + 2;
    return e <= pol->last_epoch ? pol_epoch_start(pol, e) : INGOT_DISK_NEVER; /* FAR: at least */
}

/* Set @p p's next use to item @p i of tr[0] (or past the epoch when NONE). */
static void pol_set_next(ingot_disk_policy_t *pol, uint32_t p, uint32_t i)
{
    pol->cur[p] = i;
    pol->nu[p] = i != INGOT_DISK_NONE ? pol_epoch_start(pol, pol->tr[0].epoch) + pol->tr[0].step[i]
                                      : pol_next_epoch_use(pol, p);
    if (!pol->p.lru) {
        ingot_disk_heap_update(&pol->heap, p);
    }
}

/* Every piece's next use from the start of tr[0]'s epoch. */
static void pol_reset_uses(ingot_disk_policy_t *pol)
{
    for (uint64_t p = 0; p < pol->npieces; p++) {
        pol_set_next(pol, (uint32_t)p, pol->tr[0].first[p]);
    }
    pol->done = 0;
    pol->pf_tr = 0;
    pol->pf_item = 0;
}

static ingot_status_t pol_build(ingot_disk_policy_t *pol, ingot_disk_trace_t *t, uint64_t epoch)
{
    if (epoch > pol->last_epoch) {
        t->epoch = UINT64_MAX;
        t->n = 0;
        return INGOT_OK;
    }
    if (pol->p.trace_items != NULL) {
        t->n = 0;
        t->epoch = UINT64_MAX;
        INGOT_CHECK(pol->p.trace_items(pol->p.trace_arg, epoch, t));
        return ingot_disk_trace_finish(t, pol->npieces, epoch);
    }
    return ingot_disk_trace_build(t, pol->p.manifest, pol->p.order, &pol->p.pieces, pol->p.homed,
                                  pol->npieces, epoch, pol->spe, pol->p.global_batch);
}

/* The clock passed into the next epoch: the next trace becomes the current one. */
static ingot_status_t pol_roll(ingot_disk_policy_t *pol)
{
    ingot_disk_trace_t old = pol->tr[0];
    pol->tr[0] = pol->tr[1];
    pol->tr[1] = old;
    ingot_status_t st = pol_build(pol, &pol->tr[1], pol->tr[0].epoch + 1);
    if (st == INGOT_OK) {
        pol_reset_uses(pol);
    }
    return st;
}

ingot_status_t ingot_disk_policy_advance(ingot_disk_policy_t *pol, uint64_t step)
{
    if (step > pol->p.end_step) {
        step = pol->p.end_step;
    }
    while (step > pol->now) {
        const ingot_disk_trace_t *t = &pol->tr[0];
        uint64_t base = pol_epoch_start(pol, t->epoch);
        uint64_t until = step < base + pol->spe ? step : base + pol->spe;
        for (; pol->done < t->n && base + t->step[pol->done] < until; pol->done++) {
            uint32_t p = t->piece[pol->done];
            pol->lru_key[p] = UINT64_MAX - (base + t->step[pol->done]);
            if (pol->p.lru) {
                ingot_disk_heap_update(&pol->heap, p);
            }
            pol_set_next(pol, p, t->next[pol->done]);
        }
        pol->now = until;
        if (until == base + pol->spe && pol->tr[1].epoch != UINT64_MAX) {
            ingot_status_t st = pol_roll(pol);
            if (st != INGOT_OK) {
                return st;
            }
        } else if (until == base + pol->spe) {
            pol->now = step; /* past the job's last epoch */
        }
    }
    return INGOT_OK;
}

uint64_t ingot_disk_policy_now(const ingot_disk_policy_t *pol)
{
    return pol->now;
}

uint64_t ingot_disk_policy_need(const ingot_disk_policy_t *pol, uint64_t p)
{
    const ingot_disk_trace_t *t = &pol->tr[0];
    uint64_t base = pol_epoch_start(pol, t->epoch), horizon = pol->now + POLICY_SKEW_STEPS;
    uint32_t i = pol->cur[p];
    if (i == INGOT_DISK_NONE) {
        return pol->nu[p]; /* next epoch or later: past any skew */
    }
    while (i != INGOT_DISK_NONE && base + t->step[i] <= horizon) {
        i = t->next[i]; /* the use being served now, and any within the skew */
    }
    return i != INGOT_DISK_NONE ? base + t->step[i] : pol_next_epoch_use(pol, p);
}

uint64_t ingot_disk_policy_need_later(const ingot_disk_policy_t *pol, uint64_t p)
{
    return pol_next_epoch_use(pol, p);
}

int ingot_disk_policy_fresh(const ingot_disk_policy_t *pol, uint64_t p)
{
    const ingot_disk_trace_t *t = &pol->tr[0];
    if (t->epoch == UINT64_MAX || t->first[p] == INGOT_DISK_NONE) {
        return 0;
    }
    uint64_t first = pol_epoch_start(pol, t->epoch) + t->step[t->first[p]];
    return first + pol->p.lead + POLICY_SKEW_STEPS >= pol->now;
}

int ingot_disk_policy_ahead(const ingot_disk_policy_t *pol, uint64_t p)
{
    return pol->cur[p] != INGOT_DISK_NONE;
}

int ingot_disk_policy_state(const ingot_disk_policy_t *pol, uint64_t p)
{
    return pol->state[p];
}

void ingot_disk_policy_set(ingot_disk_policy_t *pol, uint64_t p, int state)
{
    pol->state[p] = (uint8_t)state;
    if (state == INGOT_DISK_RESIDENT) {
        ingot_disk_heap_push(&pol->heap, (uint32_t)p);
    } else {
        ingot_disk_heap_remove(&pol->heap, (uint32_t)p);
    }
}

ingot_status_t ingot_disk_policy_foreign(ingot_disk_policy_t *pol, const ingot_disk_key_t *key,
                                         uint64_t bytes, uint64_t mtime_ns)
{
    if (pol->nforeign == pol->foreign_cap) {
        uint64_t cap = pol->foreign_cap ? 2 * pol->foreign_cap : 256;
        foreign_t *f = realloc(pol->foreign, cap * sizeof(*f));
        if (f == NULL) {
            return ingot_fail(INGOT_ERR_NO_MEMORY,
                              "disk tier: no memory for %" PRIu64 " other jobs' entries", cap);
        }
        pol->foreign = f;
        pol->foreign_cap = cap;
    }
    pol->foreign[pol->nforeign++] = (foreign_t){*key, bytes, mtime_ns};
    return INGOT_OK;
}

static int cmp_age(const void *a, const void *b)
{
    const foreign_t *x = a, *y = b;
    return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

void ingot_disk_policy_foreign_done(ingot_disk_policy_t *pol)
{
    if (pol->nforeign > 1) { /* none: no array at all (qsort must not be given NULL) */
        qsort(pol->foreign, pol->nforeign, sizeof(*pol->foreign), cmp_age);
    }
    pol->foreign_next = 0;
}

/* The kind of victim a newcomer needed at @p need finds: 1 a piece never read again, 2 another
 * job's entry, 3 the piece needed latest (or least recently used), 0 none. */
static int pol_victim_kind(const ingot_disk_policy_t *pol, uint64_t need, uint32_t *top_p)
{
    uint32_t top = ingot_disk_heap_top(&pol->heap);
    *top_p = top;
    if (!pol->p.lru && top != INGOT_DISK_NONE && pol->nu[top] == INGOT_DISK_NEVER) {
        return 1;
    }
    if (pol->foreign_next < pol->nforeign) {
        return 2;
    }
    if (top != INGOT_DISK_NONE && (pol->p.lru || pol->nu[top] > need)) {
        return 3;
    }
    return 0;
}

int ingot_disk_policy_admissible(const ingot_disk_policy_t *pol, uint64_t need)
{
    uint32_t top;
    return pol_victim_kind(pol, need, &top) != 0;
}

/* The bytes of piece @p p's uses at global steps [@p from, @p until) that the two traces hold,
 * counted up to @p enough. */
static uint64_t pol_bytes_between(const ingot_disk_policy_t *pol, uint32_t p, uint64_t from,
                                  uint64_t until, uint64_t enough)
{
    uint64_t sum = 0;
    for (int k = 0; k < 2 && sum < enough; k++) {
        const ingot_disk_trace_t *t = &pol->tr[k];
        if (t->epoch == UINT64_MAX) {
            break;
        }
        uint64_t base = pol_epoch_start(pol, t->epoch);
        for (uint32_t i = k == 0 ? pol->cur[p] : t->first[p];
             i != INGOT_DISK_NONE && base + t->step[i] < until && sum < enough; i = t->next[i]) {
            sum += base + t->step[i] >= from ? t->bytes[i] : 0;
        }
    }
    return sum;
}

int ingot_disk_policy_pays(const ingot_disk_policy_t *pol, uint64_t p, int room, uint64_t from,
                           uint64_t cost)
{
    uint32_t top;
    if (room) {
        return 1; /* what this job does not read again may serve the next job */
    }
    int kind = pol_victim_kind(pol, from, &top);
    if (kind == 0 || pol->p.lru) {
        return kind != 0; /* LRU knows no future: a victim is enough */
    }
    /* kept until the victim would be needed: the piece needed latest now, unless a piece never
     * read again or another job's entry makes the room (then as long as the traces reach) */
    uint64_t until = kind == 3 ? pol->nu[top] : INGOT_DISK_NEVER;
    return pol_bytes_between(pol, (uint32_t)p, from, until, cost) >= cost;
}

int ingot_disk_policy_victim(ingot_disk_policy_t *pol, uint64_t need, ingot_disk_victim_t *v)
{
    uint32_t top;
    int kind = pol_victim_kind(pol, need, &top);
    if (kind == 0) {
        return 0;
    }
    if (kind == 2) {
        const foreign_t *f = &pol->foreign[pol->foreign_next++];
        *v = (ingot_disk_victim_t){.foreign = 1, .key = f->key, .bytes = f->bytes};
        return 1;
    }
    *v = (ingot_disk_victim_t){.piece = top};
    ingot_disk_policy_set(pol, top, INGOT_DISK_ABSENT);
    return 1;
}

/* The next item the prefetcher looks at (moved up to the clock + lead), or 0 at the end. */
static int pol_pf_item(ingot_disk_policy_t *pol, const ingot_disk_trace_t **t_p, uint64_t *i_p)
{
    uint64_t from = pol->now + pol->p.lead;
    for (; pol->pf_tr < 2; pol->pf_tr++, pol->pf_item = 0) {
        const ingot_disk_trace_t *t = &pol->tr[pol->pf_tr];
        uint64_t base = pol_epoch_start(pol, t->epoch);
        if (t->epoch == UINT64_MAX) {
            return 0;
        }
        while (pol->pf_item < t->n && base + t->step[pol->pf_item] < from) {
            pol->pf_item++;
        }
        if (pol->pf_item < t->n) {
            *t_p = t;
            *i_p = pol->pf_item;
            return 1;
        }
    }
    return 0;
}

int ingot_disk_policy_prefetch(ingot_disk_policy_t *pol, int room, uint64_t *p_p, uint64_t *need_p)
{
    const ingot_disk_trace_t *t;
    uint64_t i;
    while (pol_pf_item(pol, &t, &i)) {
        uint32_t p = t->piece[i];
        uint64_t need = pol_epoch_start(pol, t->epoch) + t->step[i];
        if (pol->state[p] != INGOT_DISK_ABSENT) {
            pol->pf_item++;
            continue;
        }
        if (!ingot_disk_policy_pays(pol, p, room, need, 1ull << pol->p.pieces.piece_log2)) {
            return 0; /* the budget holds pieces needed sooner: wait for the clock */
        }
        pol->pf_item++;
        pol->state[p] = INGOT_DISK_FILLING;
        *p_p = p;
        *need_p = need;
        return 1;
    }
    return 0;
}

void ingot_disk_policy_counts(const ingot_disk_policy_t *pol, uint64_t *homed_p,
                              uint64_t *resident_p)
{
    uint64_t homed = 0;
    for (uint64_t p = 0; p < pol->npieces; p++) {
        homed += pol->p.homed == NULL || pol->p.homed[p];
    }
    *homed_p = homed;
    *resident_p = pol->heap.n;
}

ingot_status_t ingot_disk_policy_create(const ingot_disk_policy_params_t *params,
                                        ingot_disk_policy_t **pol_p)
{
    ingot_disk_policy_t *pol = ingot_calloc(1, sizeof(*pol), "disk policy");
    if (pol == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    pol->p = *params;
    pol->npieces = params->pieces.piece0[params->pieces.nshards];
    pol->spe = params->steps_per_epoch;
    pol->last_epoch = (params->end_step - 1) / pol->spe;
    uint64_t n = pol->npieces ? pol->npieces : 1, first = params->first_step / pol->spe;
    pol->nu = ingot_calloc(n, sizeof(uint64_t), "disk policy");
    pol->lru_key = ingot_calloc(n, sizeof(uint64_t), "disk policy");
    pol->cur = ingot_calloc(n, sizeof(uint32_t), "disk policy");
    pol->state = ingot_calloc(n, 1, "disk policy");
    pol->tr[0].epoch = pol->tr[1].epoch = UINT64_MAX;
    ingot_status_t st = (pol->nu && pol->lru_key && pol->cur && pol->state) ? INGOT_OK
                                                                            : INGOT_ERR_NO_MEMORY;
    for (uint64_t p = 0; p < n && st == INGOT_OK; p++) {
        pol->lru_key[p] = UINT64_MAX; /* never used: the oldest */
    }
    if (st == INGOT_OK) {
        st = ingot_disk_heap_init(&pol->heap, n, params->lru ? pol->lru_key : pol->nu);
    }
    if (st == INGOT_OK && (st = pol_build(pol, &pol->tr[0], first)) == INGOT_OK &&
        (st = pol_build(pol, &pol->tr[1], first + 1)) == INGOT_OK) {
        pol_reset_uses(pol);
        pol->now = pol_epoch_start(pol, first);
        st = ingot_disk_policy_advance(pol, params->first_step);
    }
    if (st != INGOT_OK) {
        ingot_disk_policy_destroy(pol);
        return st;
    }
    *pol_p = pol;
    return INGOT_OK;
}

void ingot_disk_policy_destroy(ingot_disk_policy_t *pol)
{
    if (pol == NULL) {
        return;
    }
    ingot_disk_trace_free(&pol->tr[0]);
    ingot_disk_trace_free(&pol->tr[1]);
    ingot_disk_heap_free(&pol->heap);
    free(pol->nu);
    free(pol->lru_key);
    free(pol->cur);
    free(pol->state);
    free(pol->foreign);
    free(pol);
}
