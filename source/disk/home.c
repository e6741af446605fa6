/*
 * The disk tier's nodes and homes: every rank's node, budget and folder verdict gathered once
 * (budgets that differ within a node refused, naming the ranks), each node's ranks and keeper
 * (its lowest rank), and each piece's home: rendezvous hashing of the piece's key over the names
 * of the nodes whose folder serves, so a later job on the same nodes, of any size, finds each
 * piece where this one left it.
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

/* One rank's card, gathered from every rank. */
typedef struct home_card {
    uint64_t node, budget, usable;
} home_card_t;

uint64_t ingot_disk_key_hash(const ingot_disk_key_t *k)
{
    return ingot_mix64(k->shard_hash ^ ingot_mix64(k->piece ^ ((uint64_t)k->piece_log2 << 58)));
}

/* "rank 0 (64GiB), rank 1 (32GiB)": the ranks of node @p n and their budgets, into @p buf. */
static void home_budgets_text(const home_card_t *cards, int world, uint64_t n, char *buf,
                              size_t len)
{
    size_t o = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < world && o < len; r++) {
        if (cards[r].node != n) {
            continue;
        }
        if (shown++ == HOME_RANKS_SHOWN) {
            snprintf(buf + o, len - o, ", ...");
            break;
        }
        o += (size_t)snprintf(buf + o, len - o, "%srank %d (%" PRIu64 " bytes)", o ? ", " : "", r,
                              cards[r].budget);
    }
}

/* INGOT_ERR_CONFIG when the ranks of a node give different budgets (logged, naming them). */
static ingot_status_t home_check_budgets(const ingot_disk_t *d, const home_card_t *cards)
{
    for (int n = 0; n < d->nnodes; n++) {
        uint64_t first = UINT64_MAX;
        int differs = 0;
        for (int r = 0; r < d->world; r++) {
            if (cards[r].node == (uint64_t)n) {
                differs |= first != UINT64_MAX && cards[r].budget != first;
                first = first == UINT64_MAX ? cards[r].budget : first;
            }
        }
        if (differs) {
            char ranks[512];
            home_budgets_text(cards, d->world, (uint64_t)n, ranks, sizeof(ranks));
            return ingot_fail(INGOT_ERR_CONFIG,
                              "INGOT_DISK_CACHE_BYTES is per node, but the ranks of node %d "
                              "(host %s) give different values: %s; set the same value on every "
                              "rank of a node",
                              n, ingot_topo_node_hostname(d->p.node, n), ranks);
        }
    }
    return INGOT_OK;
}

/* Each node's ranks (ascending), its keeper and whether it serves. */
static ingot_status_t home_nodes(ingot_disk_t *d, const home_card_t *cards)
{
    int nn = d->nnodes;
    d->node_first = ingot_calloc((size_t)nn + 1, sizeof(int), "disk nodes");
    d->node_ranks = ingot_calloc((size_t)d->world, sizeof(int), "disk nodes");
    d->node_usable = ingot_calloc((size_t)nn, sizeof(int), "disk nodes");
    d->node_keeper = ingot_calloc((size_t)nn, sizeof(int), "disk nodes");
    d->node_salt = ingot_calloc((size_t)nn, sizeof(uint64_t), "disk nodes");
    if (!d->node_first || !d->node_ranks || !d->node_usable || !d->node_keeper || !d->node_salt) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (int n = 0; n < nn; n++) {
        const char *host = ingot_topo_node_hostname(d->p.node, n);
        d->node_salt[n] = ingot_hash64(host, strlen(host));
        d->node_usable[n] = 1;
        d->node_first[n + 1] = d->node_first[n];
        for (int r = 0; r < d->world; r++) {
            if (cards[r].node == (uint64_t)n) {
                d->node_ranks[d->node_first[n + 1]++] = r;
                d->node_usable[n] &= (int)cards[r].usable;
            }
        }
        d->node_keeper[n] = d->node_first[n + 1] > d->node_first[n]
                                ? d->node_ranks[d->node_first[n]]
                                : -1;
    }
    d->usable = d->node_usable[d->node];
    for (int n = 0; n < nn; n++) {
        d->serving_nodes += d->node_usable[n];
    }
    return INGOT_OK;
}

/* Every piece's home: the serving node whose salt weighs most with the piece's key. */
static ingot_status_t home_pieces(ingot_disk_t *d)
{
    uint64_t n = d->npieces ? d->npieces : 1;
    d->home = ingot_malloc(n * sizeof(int32_t), "disk homes");
    d->homed = ingot_calloc(n, 1, "disk homes");
    if (d->home == NULL || d->homed == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint64_t p = 0; p < d->npieces; p++) {
        ingot_disk_key_t k = ingot_disk_key(d, p);
        uint64_t kh = ingot_disk_key_hash(&k), best = 0;
        int32_t home = -1;
        for (int nd = 0; nd < d->nnodes; nd++) {
            uint64_t w = ingot_mix64(kh ^ d->node_salt[nd]);
            if (d->node_usable[nd] && (home < 0 || w > best)) {
                best = w;
                home = nd;
            }
        }
        d->home[p] = home;
        d->homed[p] = (home == d->node);
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_homes(ingot_disk_t *d, int usable)
{
    home_card_t mine = {(uint64_t)d->node, d->budget, (uint64_t)usable};
    home_card_t *cards = ingot_calloc((size_t)d->world, sizeof(*cards), "disk cards");
    ingot_status_t st = ingot_mpi_agree(&d->p.comm, cards ? INGOT_OK : INGOT_ERR_NO_MEMORY,
                                        "disk tier: cards");
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("disk tier: cards", MPI_Allgather, &mine, 3, MPI_UINT64_T, cards, 3,
                            MPI_UINT64_T, d->p.comm);
    }
    if (st == INGOT_OK) {
        st = home_check_budgets(d, cards); /* every rank sees every card: the same verdict */
    }
    if (st == INGOT_OK) {
        st = home_nodes(d, cards);
    }
    if (st == INGOT_OK) {
        st = home_pieces(d);
    }
    free(cards);
    return st;
}

int ingot_disk_home_rank(const ingot_disk_t *d, int node, uint64_t p)
{
    ingot_disk_key_t k = ingot_disk_key(d, p);
    int first = d->node_first[node], n = d->node_first[node + 1] - first;
    return d->node_ranks[first + (int)(ingot_disk_key_hash(&k) % (uint64_t)n)];
}
