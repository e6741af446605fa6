/*
 * The disk tier's policy (policy.h) on a real manifest and order, without I/O: the reads of 4
 * epochs of fresh shuffles replayed against a budget of half the dataset's pieces, as the keeper
 * admits and evicts, once clairvoyant (Belady with bypass) and once LRU on the same trace. Per
 * epoch hit rates are printed; after the first epoch the clairvoyant policy must hit at least
 * 0.45 of the reads and LRU at least 0.25 less (pieces of 4 KiB hold about two samples, so both
 * see some reuse within an epoch: 0.73 and 0.32 here, where the simulation of one item
 * per piece puts them at 0.5 and 0.15). Deterministic: the packer, the order and the policy
 * are. Also: next uses follow the trace, and what is never read again goes first. And in bytes,
 * with pieces of 32 KiB (about 13 samples): fills admitted only when they pay for themselves
 * (ingot_disk_policy_pays) read below at most what no tier reads from the second epoch, about
 * half of it (0.49 here), where admission by a victim alone read 2.6 times more than no tier.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "source/disk/policy.h"
#include <ingot/order.h>
#include <ingot/shard.h>
#include <stdlib.h>

#define SAMPLES 6000
#define BATCH   60
#define EPOCHS  4
#define LOG2    12 /* 4 KiB pieces: about two samples each */

typedef struct sim {
    ingot_manifest_h m;
    ingot_order_h order;
    ingot_disk_pieces_t pieces;
    uint64_t *piece0, npieces, *len;
    uint64_t *shard_size;
} sim_t;

static void sim_setup(sim_t *s, const char *manifest, uint32_t log2)
{
    CHECK_OK(ingot_manifest_open(manifest, 0, &s->m));
    ingot_manifest_info_t mi;
    CHECK_OK(ingot_manifest_query(s->m, &mi));
    s->piece0 = calloc(mi.shard_count + 1, sizeof(uint64_t));
    s->shard_size = calloc(mi.shard_count, sizeof(uint64_t));
    for (uint32_t i = 0; i < mi.shard_count; i++) {
        ingot_shard_info_t si;
        CHECK_OK(ingot_manifest_shard_get(s->m, i, &si));
        s->shard_size[i] = si.size;
        s->piece0[i + 1] = s->piece0[i] + ((si.size + (1u << log2) - 1) >> log2);
    }
    s->npieces = s->piece0[mi.shard_count];
    s->pieces = (ingot_disk_pieces_t){(uint32_t)mi.shard_count, log2, s->piece0};
    ingot_order_params_t op = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES |
                                             INGOT_ORDER_PARAM_FIELD_BATCH |
                                             INGOT_ORDER_PARAM_FIELD_SEED,
                               .sample_count = SAMPLES,
                               .global_batch = BATCH,
                               .seed = 3};
    CHECK_OK(ingot_order_create(&op, &s->order));
}

/* Read piece @p p at the policy's clock: 1 a hit, else admitted when it can (budget in pieces). */
static int sim_read(ingot_disk_policy_t *pol, uint64_t p, uint64_t *used, uint64_t budget)
{
    if (ingot_disk_policy_state(pol, p) == INGOT_DISK_RESIDENT) {
        return 1;
    }
    uint64_t need = ingot_disk_policy_need(pol, p);
    while (*used >= budget) {
        ingot_disk_victim_t v;
        if (!ingot_disk_policy_victim(pol, need, &v)) {
            return 0; /* bypassed */
        }
        CHECK(!v.foreign);
        (*used)--;
    }
    ingot_disk_policy_set(pol, p, INGOT_DISK_RESIDENT);
    (*used)++;
    return 0;
}

/* Replay @p EPOCHS epochs of the order against @p pol, the clock moved at each step: @p visit
 * sees each sample read, with its epoch. */
static void sim_replay(sim_t *s, ingot_disk_policy_t *pol,
                       void (*visit)(void *arg, uint64_t e, const ingot_sample_info_t *si),
                       void *arg)
{
    uint64_t steps = SAMPLES / BATCH, ids[BATCH];
    for (uint64_t e = 0; e < EPOCHS; e++) {
        for (uint64_t st = 0; st < steps; st++) {
            CHECK_OK(ingot_disk_policy_advance(pol, e * steps + st));
            CHECK_OK(ingot_order_slice(s->order, e, st, 0, 1, ids, BATCH));
            for (uint64_t k = 0; k < BATCH; k++) {
                ingot_sample_info_t si;
                CHECK_OK(ingot_manifest_sample_get(s->m, ids[k], &si));
                visit(arg, e, &si);
            }
        }
    }
}

static ingot_disk_policy_t *sim_policy(sim_t *s, int lru)
{
    uint64_t steps = SAMPLES / BATCH;
    ingot_disk_policy_params_t pp = {.manifest = s->m,
                                     .order = s->order,
                                     .pieces = s->pieces,
                                     .first_step = 0,
                                     .end_step = EPOCHS * steps,
                                     .steps_per_epoch = steps,
                                     .global_batch = BATCH,
                                     .lru = lru};
    ingot_disk_policy_t *pol;
    CHECK_OK(ingot_disk_policy_create(&pp, &pol));
    return pol;
}

typedef struct hits_sim {
    sim_t *s;
    ingot_disk_policy_t *pol;
    uint64_t used, budget, hits[EPOCHS], reads[EPOCHS];
} hits_sim_t;

static void hits_visit(void *arg, uint64_t e, const ingot_sample_info_t *si)
{
    hits_sim_t *h = arg;
    uint64_t p0 = h->s->piece0[si->shard] + (si->offset >> LOG2);
    uint64_t p1 = h->s->piece0[si->shard] + ((si->offset + si->length - 1) >> LOG2);
    for (uint64_t p = p0; p <= p1; p++, h->reads[e]++) {
        h->hits[e] += (uint64_t)sim_read(h->pol, p, &h->used, h->budget);
    }
}

/* Replay @p EPOCHS epochs under @p lru; hit rates per epoch into @p rate. */
static void sim_run(sim_t *s, int lru, double *rate)
{
    hits_sim_t h = {.s = s, .pol = sim_policy(s, lru), .budget = s->npieces / 2};
    sim_replay(s, h.pol, hits_visit, &h);
    for (uint64_t e = 0; e < EPOCHS; e++) {
        rate[e] = (double)h.hits[e] / (double)h.reads[e];
    }
    ingot_disk_policy_destroy(h.pol);
}

/* The first step of the first @p steps that reads a byte of piece @p p (the trace's rule: a
 * sample reads every piece its bytes touch), found by walking the order. */
static uint64_t first_use(sim_t *s, uint64_t p, uint64_t steps)
{
    uint64_t ids[BATCH];
    for (uint64_t step = 0; step < steps; step++) {
        CHECK_OK(ingot_order_slice(s->order, 0, step, 0, 1, ids, BATCH));
        for (int i = 0; i < BATCH; i++) {
            ingot_sample_info_t si;
            CHECK_OK(ingot_manifest_sample_get(s->m, ids[i], &si));
            uint64_t p0 = s->piece0[si.shard] + (si.offset >> LOG2);
            uint64_t p1 = s->piece0[si.shard] + ((si.offset + si.length - 1) >> LOG2);
            if (si.length > 0 && p0 <= p && p <= p1) {
                return step;
            }
        }
    }
    return INGOT_DISK_NEVER;
}

/* Next uses follow the trace; in the last epoch a newcomer pushes nothing useful out. */
static void test_next_use(sim_t *s)
{
    uint64_t steps = SAMPLES / BATCH, ids[BATCH];
    ingot_disk_policy_params_t pp = {.manifest = s->m,
                                     .order = s->order,
                                     .pieces = s->pieces,
                                     .end_step = steps,
                                     .steps_per_epoch = steps,
                                     .global_batch = BATCH};
    ingot_disk_policy_t *pol;
    CHECK_OK(ingot_disk_policy_create(&pp, &pol)); /* one epoch: the last */
    CHECK_OK(ingot_order_slice(s->order, 0, steps - 1, 0, 1, ids, BATCH));
    ingot_sample_info_t si;
    CHECK_OK(ingot_manifest_sample_get(s->m, ids[0], &si));
    uint64_t p = s->piece0[si.shard] + (si.offset >> LOG2);
    CHECK(ingot_disk_policy_need(pol, p) == first_use(s, p, steps)); /* read at the last step */
    CHECK_OK(ingot_disk_policy_advance(pol, steps)); /* past the job: nothing needed again */
    CHECK(ingot_disk_policy_need(pol, p) == INGOT_DISK_NEVER);
    /* never read again by this job: a fill pays only while the budget has room (for the next
     * job), not by pushing anything out */
    CHECK(ingot_disk_policy_pays(pol, p, 1, INGOT_DISK_NEVER, 1u << LOG2) == 1);
    CHECK(ingot_disk_policy_pays(pol, p, 0, INGOT_DISK_NEVER, 1u << LOG2) == 0);
    ingot_disk_policy_set(pol, p, INGOT_DISK_RESIDENT);
    ingot_disk_victim_t v; /* never read again: the first victim, whoever asks */
    CHECK(ingot_disk_policy_victim(pol, INGOT_DISK_NEVER, &v) == 1 && v.piece == p);
    CHECK(ingot_disk_policy_victim(pol, 0, &v) == 0); /* nothing left */
    ingot_disk_key_t other = {1, 2, LOG2};            /* then other jobs' entries, oldest first */
    CHECK_OK(ingot_disk_policy_foreign(pol, &other, 100, 50));
    other.piece = 3;
    CHECK_OK(ingot_disk_policy_foreign(pol, &other, 100, 10));
    ingot_disk_policy_foreign_done(pol);
    CHECK(ingot_disk_policy_victim(pol, 0, &v) == 1 && v.foreign && v.key.piece == 3);
    ingot_disk_policy_destroy(pol);
}

/* Bytes read below per epoch in the byte simulation, and those the samples hold. */
typedef struct bytes_sim {
    sim_t *s;
    ingot_disk_policy_t *pol;
    int pays;
    uint64_t used, budget, below[EPOCHS], needed[EPOCHS];
} bytes_sim_t;

static void bytes_visit(void *arg, uint64_t e, const ingot_sample_info_t *si)
{
    bytes_sim_t *r = arg;
    uint32_t log2 = r->s->pieces.piece_log2;
    uint64_t size = r->s->shard_size[si->shard], end = si->offset + si->length;
    for (uint64_t at = si->offset; at < end;) {
        uint64_t p = r->s->piece0[si->shard] + (at >> log2), pend = ((at >> log2) + 1) << log2;
        uint64_t len = (pend < end ? pend : end) - at;
        uint64_t plen = (pend < size ? pend : size) - (pend - (1ull << log2));
        r->needed[e] += len;
        at += len;
        if (ingot_disk_policy_state(r->pol, p) == INGOT_DISK_RESIDENT) {
            continue;
        }
        uint64_t need = ingot_disk_policy_need(r->pol, p);
        int room = r->used < r->budget;
        int fill = r->pays ? ingot_disk_policy_pays(r->pol, p, room, need, plen - len)
                           : room || ingot_disk_policy_admissible(r->pol, need);
        r->below[e] += fill ? plen : len;
        ingot_disk_victim_t v;
        while (fill && r->used >= r->budget && ingot_disk_policy_victim(r->pol, need, &v)) {
            r->used--;
        }
        if (fill && r->used < r->budget) {
            ingot_disk_policy_set(r->pol, p, INGOT_DISK_RESIDENT);
            r->used++;
        }
    }
}

/* Replay @p EPOCHS epochs in bytes with pieces much larger than samples (the keeper's way: a miss
 * that fills reads its piece whole, one that bypasses only its bytes) under a budget of half the
 * pieces; @p pays: admission by ingot_disk_policy_pays, else by a victim alone (the rule before
 * it, which read pieces whole only to evict them before their other samples came). */
static void sim_bytes(sim_t *s, int pays, bytes_sim_t *r)
{
    *r = (bytes_sim_t){.s = s, .pol = sim_policy(s, 0), .pays = pays, .budget = s->npieces / 2};
    sim_replay(s, r->pol, bytes_visit, r);
    ingot_disk_policy_destroy(r->pol);
}

/* Pieces of 32 KiB (about 13 samples each) under half a budget: a fill that pays for itself in
 * bytes never makes an epoch read more below than no tier at all, and from the second epoch the
 * pieces kept serve about half the bytes; admission by a victim alone read more than no tier. */
static void test_bytes(const char *manifest)
{
    sim_t s;
    sim_setup(&s, manifest, 15);
    bytes_sim_t old, now;
    uint64_t stored = 0;
    for (uint32_t i = 0; i < s.pieces.nshards; i++) {
        stored += s.shard_size[i];
    }
    sim_bytes(&s, 0, &old);
    sim_bytes(&s, 1, &now);
    for (int e = 0; e < EPOCHS; e++) {
        printf("epoch %d bytes below / no tier's: paying fills %.3f, fills by a victim alone %.3f "
               "(%llu pieces of 32 KiB, budget half)\n",
               e, (double)now.below[e] / (double)now.needed[e],
               (double)old.below[e] / (double)old.needed[e], (unsigned long long)s.npieces);
        /* the first epoch fills half the pieces whole: tar headers and padding too, which no
         * sample needs (small samples here: a third of the bytes), never more than the shards */
        CHECK(e == 0 ? now.below[e] <= stored : now.below[e] <= now.needed[e]);
        CHECK(e == 0 || (double)now.below[e] <= 0.6 * (double)now.needed[e]);
    }
    CHECK(old.below[1] > old.needed[1]); /* the cost the rule removes */
    ingot_order_destroy(s.order);
    ingot_manifest_close(s.m);
    free(s.piece0);
    free(s.shard_size);
}

int main(void)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/data", test_tmpdir());
    CHECK(data_pack(dir, SAMPLES, 1 << 20, 0) == 0);
    strcat(dir, "/manifest.ingot");
    sim_t s;
    sim_setup(&s, dir, LOG2);
    double cv[EPOCHS], lru[EPOCHS];
    sim_run(&s, 0, cv);
    sim_run(&s, 1, lru);
    for (int e = 0; e < EPOCHS; e++) {
        printf("epoch %d hit rate: clairvoyant %.3f, lru %.3f (%llu pieces, budget half)\n", e,
               cv[e], lru[e], (unsigned long long)s.npieces);
    }
    for (int e = 1; e < EPOCHS; e++) {
        CHECK(cv[e] >= 0.45 && lru[e] + 0.25 <= cv[e]);
    }
    test_next_use(&s);
    ingot_order_destroy(s.order);
    ingot_manifest_close(s.m);
    free(s.piece0);
    free(s.shard_size);
    test_bytes(dir);
    printf("disk policy: ok\n");
    return 0;
}
