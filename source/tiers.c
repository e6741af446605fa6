/*
 * The chain of tiers (tiers.h): the table of every kind of tier, bottom up; the chain's creation
 * from the job plan, its dispatch to the tiers, and its end. Also the gathering of the facts a
 * tier plans from.
 */
#include "source/tiers.h"
#include "source/cache/cache.h"
#include "source/disk/disk.h"
#include "source/objstore/objstore_source.h"
#include "source/storage.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_KINDS (sizeof(chain_kinds) / sizeof(chain_kinds[0]))

/* Every kind of tier, bottom up: storage (one of the first two fits a location), the tiers that
 * decorate it, the tiers read by location. A new kind is a row here. */
static const ingot_tier_ops_t *const chain_kinds[] = {
    &ingot_storage_tier_ops,  /* files, behind the emulated store when asked */
    &ingot_objstore_tier_ops, /* an object store, with its part cache */
    &ingot_disk_tier_ops,     /* the node's disk */
    &ingot_cache_tier_ops,    /* the peer cache */
};

struct ingot_tier_chain {
    ingot_tier_plan_t plan;
    ingot_tier_t *tiers[INGOT_TIER_CHAIN_MAX];
    uint32_t ntiers;
    ingot_source_t *sources[INGOT_TIER_SOURCES_MAX]; /* the front sources, then storage's top */
    uint32_t nsources, nfront;
    int stopped;
};

ingot_status_t ingot_tier_gather(const ingot_tier_plan_t *plan, const uint64_t *mine, uint32_t k,
                                 uint64_t *all, int *node_of, ingot_tier_facts_t *facts)
{
    int rank, world;
    MPI_Comm_rank(plan->comm, &rank);
    MPI_Comm_size(plan->comm, &world);
    uint64_t card[16];
    if (k + 1 > sizeof(card) / sizeof(card[0])) {
        return ingot_mpi_agree(&plan->comm, INGOT_ERR_INTERNAL, "tier facts: too many values");
    }
    card[0] = (uint64_t)plan->node->node_id;
    memcpy(card + 1, mine, k * sizeof(uint64_t));
    ingot_status_t st = INGOT_MPI_CALL("tier facts", MPI_Allgather, card, (int)k + 1, MPI_UINT64_T,
                                       all, (int)k + 1, MPI_UINT64_T, plan->comm);
    if (st != INGOT_OK) {
        return st;
    }
    for (int r = 0; r < world; r++) {
        node_of[r] = (int)all[(size_t)r * (k + 1)];
    }
    *facts = (ingot_tier_facts_t){.world = world,
                                  .rank = rank,
                                  .nnodes = plan->node->node_count,
                                  .node_of = node_of,
                                  .node_names = plan->node->node_hostnames};
    return INGOT_OK;
}

ingot_status_t ingot_tier_config(ingot_tier_config_t *cfg_p)
{
    ingot_tier_config_t c = {0};
    ingot_status_t st = ingot_storage_config(&c.storage);
    if (st == INGOT_OK) { /* parsed together: the first accessor parsed every table */
        ingot_cache_config(&c.cache);
        ingot_disk_config(&c.disk);
        ingot_objstore_config(&c.objstore);
        ingot_parts_config(&c.parts);
        *cfg_p = c;
    }
    return st;
}

ingot_status_t ingot_tier_storage_create(const ingot_tier_plan_t *plan, const ingot_tier_ops_t *ops,
                                         ingot_status_t (*make)(const ingot_tier_plan_t *plan,
                                                                ingot_source_t **src_p),
                                         ingot_source_t **below_p, ingot_tier_t **tier_p)
{
    ingot_tier_storage_t *t = ingot_calloc(1, sizeof(*t), ops->name);
    ingot_status_t st = t ? make(plan, &t->src) : INGOT_ERR_NO_MEMORY;
    st = ingot_mpi_agree(&plan->comm, st, ops->name);
    st = st == INGOT_OK && t == NULL ? INGOT_ERR_NO_MEMORY : st; /* (cannot be: for the analyser) */
    if (st != INGOT_OK) {
        if (t != NULL) {
            ingot_tier_storage_destroy(&t->base);
        }
        return st;
    }
    t->base.ops = ops;
    *below_p = t->src;
    *tier_p = &t->base;
    return INGOT_OK;
}

void ingot_tier_storage_destroy(ingot_tier_t *tier)
{
    ingot_tier_storage_t *t = (ingot_tier_storage_t *)tier;
    ingot_source_destroy(t->src);
    free(t);
}

/* ---------------------------------------------------------------- create and end */

/* The kinds the configuration wants here, as a mask; every rank must want the same ones (a
 * manifest at another location, a variable set differently), or their creates would not match. */
static ingot_status_t chain_wanted(const ingot_tier_plan_t *plan, uint32_t *mask_p)
{
    uint32_t mine = 0, any = 0, all = 0;
    for (size_t k = 0; k < CHAIN_KINDS; k++) {
        mine |= chain_kinds[k]->wanted(plan) ? 1u << k : 0;
    }
    ingot_status_t st = INGOT_MPI_CALL("tiers", MPI_Allreduce, &mine, &any, 1, MPI_UINT32_T,
                                       MPI_BOR, plan->comm);
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("tiers", MPI_Allreduce, &mine, &all, 1, MPI_UINT32_T, MPI_BAND,
                            plan->comm);
    }
    for (size_t k = 0; st == INGOT_OK && k < CHAIN_KINDS; k++) {
        if (((any ^ all) >> k) & 1u) {
            ingot_error("tiers: the ranks of the job differ on the %s (this rank %s it; the "
                        "manifest '%s'): every rank must read the same manifest with the same "
                        "INGOT_* settings",
                        chain_kinds[k]->name, (mine >> k) & 1u ? "wants" : "does not want",
                        plan->location->text);
            st = INGOT_ERR_CONFIG;
        }
    }
    *mask_p = mine;
    return st;
}

static void chain_free(ingot_tier_chain_t *c)
{
    ingot_tier_chain_stop(c);
    for (uint32_t t = c->ntiers; t-- > 0;) {
        c->tiers[t]->ops->destroy(c->tiers[t]);
    }
    free(c);
}

/* Every wanted tier, bottom up; the top of storage in *below_p. */
static ingot_status_t chain_tiers(ingot_tier_chain_t *c, ingot_source_t **below_p)
{
    uint32_t wanted;
    ingot_status_t st = chain_wanted(&c->plan, &wanted); /* the same verdict on every rank */
    for (size_t k = 0; st == INGOT_OK && k < CHAIN_KINDS; k++) {
        const ingot_tier_ops_t *ops = chain_kinds[k];
        if (!((wanted >> k) & 1u)) {
            continue;
        }
        if (c->ntiers == INGOT_TIER_CHAIN_MAX) {
            return ingot_fail(INGOT_ERR_INTERNAL, "tiers: more than %d", INGOT_TIER_CHAIN_MAX);
        }
        ingot_tier_t *t = NULL;
        st = ops->create(&c->plan, below_p, &t); /* collective, agreed */
        if (st == INGOT_OK) {
            c->tiers[c->ntiers++] = t;
        }
    }
    if (st != INGOT_OK) {
        return st;
    }
    if (*below_p == NULL) {
        return ingot_fail(INGOT_ERR_INTERNAL, "tiers: no storage for this manifest");
    }
    return INGOT_OK;
}

ingot_status_t ingot_tier_chain_create(const ingot_tier_plan_t *plan, ingot_source_t *const *front,
                                       uint32_t nfront, ingot_tier_chain_t **chain_p)
{
    ingot_tier_chain_t *c = ingot_calloc(1, sizeof(*c), "tier chain");
    ingot_status_t st = c ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK && nfront >= INGOT_TIER_SOURCES_MAX) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM, "%u byte sources before storage, at most %d",
                        nfront, INGOT_TIER_SOURCES_MAX - 1);
    }
    for (uint32_t i = 0; i < nfront; i++) {
        if (st == INGOT_OK) {
            c->sources[c->nfront++] = front[i];
        } else {
            ingot_source_destroy(front[i]); /* the chain's from the call on */
        }
    }
    st = ingot_mpi_agree(&plan->comm, st, "tiers");
    st = st == INGOT_OK && c == NULL ? INGOT_ERR_NO_MEMORY : st; /* (cannot be: for the analyser) */
    if (st != INGOT_OK) {
        if (c != NULL) {
            chain_free(c);
        }
        return st;
    }
    c->plan = *plan;
    c->nsources = c->nfront;
    ingot_source_t *below = NULL;
    st = chain_tiers(c, &below);
    if (st == INGOT_OK) {
        c->sources[c->nsources++] = below;
    }
    for (uint32_t t = 0; st == INGOT_OK && t < c->ntiers; t++) {
        if (c->tiers[t]->ops->check != NULL) {
            st = c->tiers[t]->ops->check(c->tiers[t], plan->comm); /* collective */
        }
    }
    if (st != INGOT_OK) {
        chain_free(c);
        return st;
    }
    *chain_p = c;
    return INGOT_OK;
}

void ingot_tier_chain_stop(ingot_tier_chain_t *c)
{
    if (c == NULL || c->stopped) {
        return;
    }
    c->stopped = 1;
    for (uint32_t t = c->ntiers; t-- > 0;) {
        if (c->tiers[t]->ops->quiesce != NULL) {
            c->tiers[t]->ops->quiesce(c->tiers[t]);
        }
    }
    for (uint32_t i = 0; i < c->nfront; i++) {
        ingot_source_destroy(c->sources[i]);
    }
    /* storage and what decorates it, top down (the disk tier's end is collective) */
    for (uint32_t t = c->ntiers; t-- > 0;) {
        if (c->tiers[t]->ops->source == NULL) {
            c->tiers[t]->ops->destroy(c->tiers[t]);
            c->tiers[t] = NULL;
        }
    }
    uint32_t kept = 0;
    for (uint32_t t = 0; t < c->ntiers; t++) {
        if (c->tiers[t] != NULL) {
            c->tiers[kept++] = c->tiers[t];
        }
    }
    c->ntiers = kept;
    c->nsources = 0;
}

void ingot_tier_chain_destroy(ingot_tier_chain_t *c)
{
    if (c != NULL) {
        chain_free(c);
    }
}

/* ---------------------------------------------------------------- the loader's calls */

uint32_t ingot_tier_chain_sources(const ingot_tier_chain_t *c, ingot_source_t *const **srcs_p)
{
    *srcs_p = c->sources;
    return c->nsources;
}

const char *ingot_tier_chain_describe(const ingot_tier_chain_t *c, uint32_t shard, char *buf,
                                      size_t len)
{
    if (c->nsources == 0) {
        snprintf(buf, len, "(stopped)");
        return buf;
    }
    return ingot_source_describe(c->sources[c->nsources - 1], shard, buf, len);
}

void ingot_tier_chain_advance(ingot_tier_chain_t *c, uint64_t step)
{
    for (uint32_t t = 0; t < c->ntiers; t++) {
        if (c->tiers[t]->ops->advance != NULL) {
            c->tiers[t]->ops->advance(c->tiers[t], step);
        }
    }
}

void ingot_tier_chain_step(const ingot_tier_chain_t *c, uint64_t epoch, ingot_tier_step_t *step)
{
    *step = (ingot_tier_step_t){.epoch = epoch};
    for (uint32_t t = 0; t < c->ntiers; t++) {
        const ingot_tier_t *tier = c->tiers[t];
        if (tier->ops->locates != NULL && tier->ops->locates(tier, epoch)) {
            step->locating |= 1u << t;
        }
        if (tier->ops->fills != NULL && tier->ops->fills(tier, epoch)) {
            step->filling |= 1u << t;
        }
    }
}

int ingot_tier_chain_locate(const ingot_tier_chain_t *c, const ingot_tier_step_t *step,
                            const ingot_sample_info_t *s, ingot_tier_loc_t *loc)
{
    for (uint32_t t = 0, m = step->locating; m != 0; t++, m >>= 1) {
        if ((m & 1u) && c->tiers[t]->ops->locate(c->tiers[t], s, loc)) {
            loc->tier = (uint8_t)t;
            return 1;
        }
    }
    return 0;
}

ingot_source_t *ingot_tier_chain_source(ingot_tier_chain_t *c, uint32_t tier)
{
    return c->tiers[tier]->ops->source(c->tiers[tier]);
}

void ingot_tier_chain_corrupt(ingot_tier_chain_t *c, uint32_t tier, const ingot_sample_info_t *s,
                              int32_t group)
{
    if (c->tiers[tier]->ops->corrupt != NULL) {
        c->tiers[tier]->ops->corrupt(c->tiers[tier], s, group);
    }
}

int ingot_tier_chain_damaged(ingot_tier_chain_t *c, const ingot_sample_info_t *s)
{
    int from = INGOT_TIER_FROM_STORAGE;
    for (uint32_t t = 0; t < c->ntiers; t++) {
        const ingot_tier_ops_t *ops = c->tiers[t]->ops;
        if (ops->damaged != NULL && ops->damaged(c->tiers[t], s) && ops->kind == INGOT_TIER_DISK) {
            from = INGOT_TIER_FROM_DISK;
        }
    }
    return from;
}

void ingot_tier_chain_fill(ingot_tier_chain_t *c, const ingot_tier_step_t *step,
                           const ingot_shard_rows_t *rows, const void *stored, int packed)
{
    for (uint32_t t = 0, m = step->filling; m != 0; t++, m >>= 1) {
        if (m & 1u) {
            c->tiers[t]->ops->fill(c->tiers[t], rows, stored, packed);
        }
    }
}

int ingot_tier_chain_fetch_device(const ingot_tier_chain_t *c)
{
    for (uint32_t t = 0; t < c->ntiers; t++) {
        const ingot_tier_t *tier = c->tiers[t];
        int dev = tier->ops->fetch_device != NULL ? tier->ops->fetch_device(tier) : -1;
        if (dev >= 0) {
            return dev;
        }
    }
    return -1;
}

void ingot_tier_chain_stats(const ingot_tier_chain_t *c, ingot_loader_stats_t *s)
{
    for (uint32_t t = 0; t < c->ntiers; t++) {
        if (c->tiers[t]->ops->stats != NULL) {
            c->tiers[t]->ops->stats(c->tiers[t], s);
        }
    }
}

ingot_status_t ingot_tier_chain_epoch_stats(const ingot_tier_chain_t *c, uint64_t epoch,
                                            ingot_loader_store_stats_t *s)
{
    for (uint32_t t = 0; t < c->ntiers; t++) {
        if (c->tiers[t]->ops->epoch_stats != NULL) {
            return c->tiers[t]->ops->epoch_stats(c->tiers[t], epoch, s);
        }
    }
    return INGOT_ERR_NOT_FOUND;
}

ingot_status_t ingot_tier_chain_report(ingot_tier_chain_t *c, ingot_tier_kind_t kind, char *buf,
                                       size_t len)
{
    for (uint32_t t = 0; t < c->ntiers; t++) {
        if (c->tiers[t]->ops->kind == kind && c->tiers[t]->ops->report != NULL) {
            c->tiers[t]->ops->report(c->tiers[t], buf, len);
            return INGOT_OK;
        }
    }
    return INGOT_ERR_NOT_FOUND;
}
