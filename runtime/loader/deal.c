/*
 * The locality order dealt over nodes (include/ingot/order.h), as a loader runs it: how many
 * canonical nodes (as given, else the resumed cursor's, else the job's node count), which slice of
 * each step this rank takes (ranks numbered node by node, so a node's ranks take its canonical
 * nodes' samples), and, said once, what a layout costs when its nodes do not line up with the
 * canonical nodes (a canonical node read by two physical nodes leaves the store twice).
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The canonical nodes of a locality order: as given, else the resumed cursor's (1 for a cursor
 * older than version 3), else the job's node count; 0 under the full order. */
static uint32_t deal_canonical_nodes(ingot_loader_h l)
{
    const ingot_cursor_t *c = l->params.cursor;
    if (l->params.order_mode != INGOT_ORDER_LOCALITY) {
        return 0;
    }
    if (l->params.order_nodes > 0) {
        return l->params.order_nodes;
    }
    if (c != NULL && c->order_window > 0) {
        return c->order_nodes > 0 ? c->order_nodes : 1;
    }
    return (uint32_t)l->ctx->topo->node.node_count;
}

const char *ingot_loader_order_text(uint32_t window, uint32_t nodes, char *buf, size_t len)
{
    if (window == 0) {
        snprintf(buf, len, "full");
    } else if (nodes <= 1) {
        snprintf(buf, len, "window:%u", window); /* one canonical node: what it always was */
    } else {
        snprintf(buf, len, "window:%u,nodes:%u", window, nodes);
    }
    return buf;
}

ingot_status_t ingot_loader_deal_params(ingot_loader_h l)
{
    l->order_nodes = deal_canonical_nodes(l);
    if (l->order_nodes > 0 && l->params.global_batch % l->order_nodes != 0) {
        char text[48];
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_loader_create: INGOT_ORDER=%s deals every step over %u "
                          "canonical nodes, and the global batch %" PRIu64 " is not a multiple "
                          "of %u (set nodes:C to a divisor of the batch, or the batch to a "
                          "multiple of C)",
                          ingot_loader_order_text(l->params.order_window, l->order_nodes, text,
                                                  sizeof(text)),
                          l->order_nodes, l->params.global_batch, l->order_nodes);
    }
    return INGOT_OK;
}

/* Rank 0: the canonical nodes each physical node reads (@p first_of: per node, the slice index of
 * its first rank; @p ranks_of: its ranks), and, when some canonical node is read by two, the
 * bytes that cost, said once. */
static void deal_say_cost(ingot_loader_h l, const uint32_t *first_of, const uint32_t *ranks_of,
                          int nodes)
{
    uint64_t per_canonical = (uint64_t)l->world / l->order_nodes, pairs = 0;
    int worst = -1;
    uint64_t worst_reads = 0;
    for (int n = 0; n < nodes && per_canonical > 0; n++) {
        uint64_t a = first_of[n], b = first_of[n] + ranks_of[n]; /* slices [a, b) of world */
        /* canonical node k holds slices [k * world / C, (k + 1) * world / C) */
        uint64_t reads = (b * l->order_nodes + l->world - 1) / l->world -
                         (a * l->order_nodes) / l->world;
        pairs += reads;
        if (reads * nodes > l->order_nodes && reads > worst_reads) {
            worst = n;
            worst_reads = reads;
        }
    }
    if (l->rank != 0 || pairs <= l->order_nodes || worst < 0) {
        return;
    }
    char text[48];
    ingot_warn("INGOT_ORDER=%s over %d nodes (%u ranks on node %d): the nodes do not line up with "
               "the %u canonical nodes, so some are read by two nodes and their bytes leave the "
               "store twice: up to %.2fx the dataset per epoch (a node count that divides %u, "
               "with equal ranks per node, reads each byte once)",
               ingot_loader_order_text(l->params.order_window, l->order_nodes, text, sizeof(text)),
               nodes, ranks_of[worst], worst, l->order_nodes,
               (double)pairs / (double)l->order_nodes, l->order_nodes);
}

void ingot_loader_deal_number(const int *node_of, int world, int nodes, uint32_t *ranks_of,
                              uint32_t *first_of, uint32_t *slice_of)
{
    memset(ranks_of, 0, (size_t)nodes * sizeof(*ranks_of));
    for (int r = 0; r < world; r++) {
        ranks_of[node_of[r]]++;
    }
    first_of[0] = 0;
    for (int n = 1; n < nodes; n++) {
        first_of[n] = first_of[n - 1] + ranks_of[n - 1];
    }
    for (int r = 0; r < world; r++) {
        slice_of[r] = first_of[node_of[r]]++; /* ranks of a node in rank order */
    }
    for (int n = nodes - 1; n >= 0; n--) { /* first_of back to each node's first */
        first_of[n] -= ranks_of[n];
    }
}

/* Every rank's slice index from every rank's node (@p node_of), said when it costs. */
static ingot_status_t deal_number(ingot_loader_h l, const int *node_of)
{
    int nodes = l->ctx->topo->node.node_count;
    uint32_t *ranks_of = calloc((size_t)nodes + 1, sizeof(uint32_t));
    uint32_t *first_of = calloc((size_t)nodes + 1, sizeof(uint32_t));
    if (ranks_of == NULL || first_of == NULL) {
        free(ranks_of);
        free(first_of);
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_loader_deal_number(node_of, l->world, nodes, ranks_of, first_of, l->slice_of);
    deal_say_cost(l, first_of, ranks_of, nodes);
    free(ranks_of);
    free(first_of);
    return INGOT_OK;
}

ingot_status_t ingot_loader_deal_slices(ingot_loader_h l)
{
    l->slice_of = ingot_calloc((size_t)l->world, sizeof(uint32_t), "loader slices");
    int *node_of = ingot_calloc((size_t)l->world, sizeof(int), "loader slices");
    int have = l->slice_of != NULL && node_of != NULL;
    ingot_status_t st = ingot_mpi_agree(&l->ctx->comm, have ? INGOT_OK : INGOT_ERR_NO_MEMORY,
                                        "ingot_loader_create: slices");
    st = st == INGOT_OK && !have ? INGOT_ERR_NO_MEMORY : st; /* (cannot be: for the analyser) */
    if (st == INGOT_OK) {
        int mine = l->ctx->topo->node.node_id;
        st = INGOT_MPI_CALL("ingot_loader_create: slices", MPI_Allgather, &mine, 1, MPI_INT,
                            node_of, 1, MPI_INT, l->ctx->comm);
    }
    if (st == INGOT_OK && l->order_nodes > 1) { /* ranks numbered node by node */
        st = deal_number(l, node_of);
    } else {
        for (int r = 0; have && r < l->world; r++) {
            l->slice_of[r] = (uint32_t)r; /* one canonical node: any numbering reads it whole */
        }
    }
    free(node_of);
    if (st == INGOT_OK) {
        l->slice_rank = l->slice_of[l->rank];
    }
    return ingot_mpi_agree(&l->ctx->comm, st, "ingot_loader_create: slices");
}
