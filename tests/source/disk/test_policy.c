/*
 * The disk tier's policy (policy.h) on a real manifest and order, without I/O: the reads of 4
 * epochs of fresh shuffles replayed against a budget of half the dataset's pieces, as the keeper
 * admits and evicts, once clairvoyant (Belady with bypass) and once LRU on the same trace. Per
 * epoch hit rates are printed; after the first epoch the clairvoyant policy must hit at least
 * 0.45 of the reads and LRU at least 0.25 less (pieces of 4 KiB hold about two samples, so both
 * see some reuse within an epoch: 0.73 and 0.32 here, where the simulation of one item
 * per piece puts them at 0.5 and 0.15). Deterministic: the packer, the order and the policy
 * are. Also: next uses follow the trace, and what is never read again goes first.
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
} sim_t;

static void sim_setup(sim_t *s, const char *manifest)
{
    CHECK_OK(ingot_manifest_open(manifest, 0, &s->m));
    ingot_manifest_info_t mi;
    CHECK_OK(ingot_manifest_query(s->m, &mi));
    s->piece0 = calloc(mi.shard_count + 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < mi.shard_count; i++) {
        ingot_shard_info_t si;
        CHECK_OK(ingot_manifest_shard_get(s->m, i, &si));
        s->piece0[i + 1] = s->piece0[i] + ((si.size + (1u << LOG2) - 1) >> LOG2);
    }
    s->npieces = s->piece0[mi.shard_count];
    s->pieces = (ingot_disk_pieces_t){(uint32_t)mi.shard_count, LOG2, s->piece0};
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

/* Replay @p EPOCHS epochs under @p lru; hit rates per epoch into @p rate. */
static void sim_run(sim_t *s, int lru, double *rate)
{
    uint64_t steps = SAMPLES / BATCH, used = 0, budget = s->npieces / 2, ids[BATCH];
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
    for (uint64_t e = 0; e < EPOCHS; e++) {
        uint64_t hits = 0, reads = 0;
        for (uint64_t st = 0; st < steps; st++) {
            CHECK_OK(ingot_disk_policy_advance(pol, e * steps + st));
            CHECK_OK(ingot_order_slice(s->order, e, st, 0, 1, ids, BATCH));
            for (uint64_t k = 0; k < BATCH; k++) {
                ingot_sample_info_t si;
                CHECK_OK(ingot_manifest_sample_get(s->m, ids[k], &si));
                uint64_t p0 = s->piece0[si.shard] + (si.offset >> LOG2);
                uint64_t p1 = s->piece0[si.shard] + ((si.offset + si.length - 1) >> LOG2);
                for (uint64_t p = p0; p <= p1; p++, reads++) {
                    hits += (uint64_t)sim_read(pol, p, &used, budget);
                }
            }
        }
        rate[e] = (double)hits / (double)reads;
    }
    ingot_disk_policy_destroy(pol);
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

int main(void)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/data", test_tmpdir());
    CHECK(data_pack(dir, SAMPLES, 1 << 20, 0) == 0);
    strcat(dir, "/manifest.ingot");
    sim_t s;
    sim_setup(&s, dir);
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
    printf("disk policy: ok\n");
    return 0;
}
