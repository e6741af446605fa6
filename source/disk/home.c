/*
 * The disk tier's nodes and homes: every rank's budget and folder verdict gathered once (budgets
 * that differ within a node refused, naming the ranks), then the plan from those facts alone
 * (ingot_disk_plan_homes: each node's ranks and keeper, its lowest rank, and each piece's home,
 * by rendezvous hashing of the piece's key over the names of the nodes whose folder serves), so a
 * later job on the same nodes, of any size, finds each piece where this one left it, and a
 * simulator plans the same homes without a communicator.
 */
#include "source/disk/disk_impl.h"
#include "base/errors.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/mix.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOME_RANKS_SHOWN 8
#define CARD_VALUES      2 /* a rank's budget and whether its folder serves */

uint64_t ingot_disk_key_hash(const ingot_disk_key_t *k)
{
    return ingot_mix64(k->shard_hash ^ ingot_mix64(k->piece ^ ((uint64_t)k->piece_log2 << 58)));
}

/* ---------------------------------------------------------------- the plan, from facts */

void ingot_disk_homes_free(ingot_disk_homes_t *h)
{
    free(h->node_usable);
    free(h->node_keeper);
    free(h->node_first);
    free(h->node_ranks);
    free(h->home);
    memset(h, 0, sizeof(*h));
}

/* Each node's ranks (ascending), its keeper and whether it serves. */
static void plan_nodes(const ingot_tier_facts_t *f, const uint64_t *usable, ingot_disk_homes_t *h)
{
    for (int n = 0; n < f->nnodes; n++) {
        h->node_usable[n] = 1;
        h->node_first[n + 1] = h->node_first[n];
        for (int r = 0; r < f->world; r++) {
            if (f->node_of[r] == n) {
                h->node_ranks[h->node_first[n + 1]++] = r;
                h->node_usable[n] &= usable[r] != 0;
            }
        }
        h->node_keeper[n] = h->node_first[n + 1] > h->node_first[n]
                                ? h->node_ranks[h->node_first[n]]
                                : -1;
        h->serving_nodes += h->node_usable[n];
    }
}

/* Every piece's home: the serving node whose salt (the hash of its name) weighs most with the
 * piece's key. */
static void plan_pieces(const ingot_tier_facts_t *f, const uint64_t *salt, const uint64_t *key_hash,
                        uint64_t npieces, ingot_disk_homes_t *h)
{
    for (uint64_t p = 0; p < npieces; p++) {
        uint64_t best = 0;
        int32_t home = -1;
        for (int nd = 0; nd < f->nnodes; nd++) {
            uint64_t w = ingot_mix64(key_hash[p] ^ salt[nd]);
            if (h->node_usable[nd] && (home < 0 || w > best)) {
                best = w;
                home = nd;
            }
        }
        h->home[p] = home;
    }
}

ingot_status_t ingot_disk_plan_homes(const ingot_tier_facts_t *f, const uint64_t *usable,
                                     const uint64_t *key_hash, uint64_t npieces,
                                     ingot_disk_homes_t *h)
{
    int nn = f->nnodes;
    *h = (ingot_disk_homes_t){.nnodes = nn};
    h->node_first = calloc((size_t)nn + 1, sizeof(int));
    h->node_ranks = calloc((size_t)f->world, sizeof(int));
    h->node_usable = calloc((size_t)nn, sizeof(int));
    h->node_keeper = calloc((size_t)nn, sizeof(int));
    h->home = malloc((npieces ? npieces : 1) * sizeof(int32_t));
    uint64_t *salt = calloc((size_t)nn, sizeof(uint64_t));
    if (!h->node_first || !h->node_ranks || !h->node_usable || !h->node_keeper || !h->home ||
        !salt) {
        free(salt);
        ingot_disk_homes_free(h);
        return ingot_fail(INGOT_ERR_NO_MEMORY,
                          "disk tier: no memory for the homes of %" PRIu64 " pieces over %d nodes",
                          npieces, nn);
    }
    for (int n = 0; n < nn; n++) {
        const char *host = ingot_tier_facts_host(f, n);
        salt[n] = ingot_hash64(host, strlen(host));
    }
    plan_nodes(f, usable, h);
    plan_pieces(f, salt, key_hash, npieces, h);
    free(salt);
    return INGOT_OK;
}

/* ---------------------------------------------------------------- the facts, gathered */

/* "rank 0 (64GiB), rank 1 (32GiB)": the ranks of node @p n and their budgets, into @p buf. */
static void home_budgets_text(const ingot_tier_facts_t *f, const uint64_t *cards, uint64_t n,
                              char *buf, size_t len)
{
    size_t o = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < f->world && o < len; r++) {
        if (f->node_of[r] != (int)n) {
            continue;
        }
        if (shown++ == HOME_RANKS_SHOWN) {
            snprintf(buf + o, len - o, ", ...");
            break;
        }
        o += (size_t)snprintf(buf + o, len - o, "%srank %d (%" PRIu64 " bytes)", o ? ", " : "", r,
                              cards[(size_t)r * (CARD_VALUES + 1) + 1]);
    }
}

/* INGOT_ERR_CONFIG when the ranks of a node give different budgets (logged, naming them). */
static ingot_status_t home_check_budgets(const ingot_tier_facts_t *f, const uint64_t *cards)
{
    for (int n = 0; n < f->nnodes; n++) {
        uint64_t first = UINT64_MAX;
        int differs = 0;
        for (int r = 0; r < f->world; r++) {
            uint64_t budget = cards[(size_t)r * (CARD_VALUES + 1) + 1];
            if (f->node_of[r] == n) {
                differs |= first != UINT64_MAX && budget != first;
                first = first == UINT64_MAX ? budget : first;
            }
        }
        if (differs) {
            char ranks[512];
            home_budgets_text(f, cards, (uint64_t)n, ranks, sizeof(ranks));
            return ingot_fail(INGOT_ERR_CONFIG,
                              "INGOT_DISK_CACHE_BYTES is per node, but the ranks of node %d "
                              "(host %s) give different values: %s; set the same value on every "
                              "rank of a node",
                              n, ingot_tier_facts_host(f, n), ranks);
        }
    }
    return INGOT_OK;
}

/* The plan's arrays under the tier's names, and this node's share of them. */
static ingot_status_t home_adopt(ingot_disk_t *d)
{
    ingot_disk_homes_t *h = &d->homes;
    d->node_usable = h->node_usable;
    d->node_keeper = h->node_keeper;
    d->node_first = h->node_first;
    d->node_ranks = h->node_ranks;
    d->serving_nodes = h->serving_nodes;
    d->home = h->home;
    d->usable = h->node_usable[d->node];
    d->homed = ingot_calloc(d->npieces ? d->npieces : 1, 1, "disk homes");
    for (uint64_t p = 0; d->homed != NULL && p < d->npieces; p++) {
        d->homed[p] = (d->home[p] == d->node);
    }
    return d->homed ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

/* The hash of every piece's key. */
static uint64_t *home_key_hashes(const ingot_disk_t *d)
{
    uint64_t *kh = ingot_calloc(d->npieces ? d->npieces : 1, sizeof(uint64_t), "disk keys");
    for (uint64_t p = 0; kh != NULL && p < d->npieces; p++) {
        ingot_disk_key_t k = ingot_disk_key(d, p);
        kh[p] = ingot_disk_key_hash(&k);
    }
    return kh;
}

ingot_status_t ingot_disk_homes(ingot_disk_t *d, int usable)
{
    uint64_t mine[CARD_VALUES] = {d->budget, (uint64_t)usable};
    size_t w = (size_t)d->world;
    uint64_t *cards = ingot_calloc(w * (CARD_VALUES + 1), sizeof(uint64_t), "disk cards");
    uint64_t *usable_of = ingot_calloc(w, sizeof(uint64_t), "disk cards");
    int *node_of = ingot_calloc(w, sizeof(int), "disk cards");
    uint64_t *kh = home_key_hashes(d);
    ingot_tier_facts_t facts;
    int have = cards && usable_of && node_of && kh;
    ingot_status_t st = ingot_mpi_agree(&d->p.comm, have ? INGOT_OK : INGOT_ERR_NO_MEMORY,
                                        "disk tier: cards");
    st = st == INGOT_OK && !have ? INGOT_ERR_NO_MEMORY : st; /* (cannot be: for the analyser) */
    if (st == INGOT_OK) {
        st = ingot_tier_gather(&d->p, mine, CARD_VALUES, cards, node_of, &facts);
    }
    if (st == INGOT_OK) {
        st = home_check_budgets(&facts, cards); /* every rank sees every card: one verdict */
    }
    for (size_t r = 0; st == INGOT_OK && r < w; r++) {
        usable_of[r] = cards[r * (CARD_VALUES + 1) + 2];
    }
    if (st == INGOT_OK) {
        st = ingot_disk_plan_homes(&facts, usable_of, kh, d->npieces, &d->homes);
    }
    if (st == INGOT_OK) {
        st = home_adopt(d);
    }
    free(cards);
    free(usable_of);
    free(node_of);
    free(kh);
    return st;
}

int ingot_disk_home_rank(const ingot_disk_t *d, int node, uint64_t p)
{
    ingot_disk_key_t k = ingot_disk_key(d, p);
    int first = d->node_first[node], n = d->node_first[node + 1] - first;
    return d->node_ranks[first + (int)(ingot_disk_key_hash(&k) % (uint64_t)n)];
}
