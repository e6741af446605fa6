/*
 * One copy of the manifest per node: 10,000 ranks must not open and validate the same file
 * 10,000 times. The node leader reads the file into an MPI-3 shared-memory window and validates
 * it once; the other ranks of the node open the same bytes in place. The only rank of a node maps
 * the file instead. A manifest at a URL (s3://, http(s)://) is fetched by the leader with one
 * GET (no LIST, no HEAD: a 1,000-node job makes 1,000 requests for it). Every step that can fail
 * on one rank is followed by an agreement, so no rank is left waiting in a collective.
 */
#include "runtime/node_manifest.h"
#include "runtime/context_impl.h"
#include "runtime/store/store.h"
#include "shard/manifest.h"
#include "base/file.h"
#include "base/arrival.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/status.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The leader's source of the manifest's bytes at @p loc: the file, or for a URL the object
 * fetched whole now (*data_p, malloc'd, read from memory through @p file). */
static ingot_status_t leader_open(ingot_location_t *loc, ingot_file_t *file, void **data_p)
{
    if (!ingot_location_is_remote(loc)) {
        return ingot_file_open(loc->text, file);
    }
    size_t size = 0;
    INGOT_CHECK(ingot_store_fetch(loc, INGOT_STORE_MANIFEST_MAX, data_p, &size, NULL));
    *file = (ingot_file_t){.fd = -1, .mem = *data_p, .size = size, .name = loc->text};
    return INGOT_OK;
}

/* The node's shared window: the leader allocates @p size bytes (broadcast to the node).
 * Collective over the node, and agreed there. */
static ingot_status_t node_window_create(MPI_Comm node, int leader, uint64_t *size_p, void **base_p,
                                         MPI_Win *win)
{
    ingot_status_t st = INGOT_MPI_CALL("manifest sharing", MPI_Bcast, size_p, 1, MPI_UINT64_T, 0,
                                       node);
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("manifest sharing", MPI_Win_allocate_shared,
                            leader ? (MPI_Aint)*size_p : 0, 1, MPI_INFO_NULL, node, base_p, win);
    }
    return ingot_mpi_agree(&node, st, "manifest sharing");
}

/* The leader copies the file into the window, the others look up its address; the node then
 * agrees on both, so that no rank opens a window the leader failed to fill (they would report
 * its garbage), and opens it: the leader validates everything once, the others trust it, open
 * in O(1) and look rows up unchecked. Collective over the node whatever fails. */
static ingot_status_t node_window_open(MPI_Comm node, int leader, const ingot_file_t *file,
                                       const ingot_location_t *loc, MPI_Win win, void *base,
                                       uint64_t size, ingot_manifest_h *manifest_p)
{
    ingot_status_t st;
    if (leader) {
        st = ingot_file_read(file, 0, base, (size_t)size);
    } else {
        MPI_Aint qsize;
        int disp;
        st = INGOT_MPI_CALL("manifest sharing", MPI_Win_shared_query, win, 0, &qsize, &disp, &base);
    }
    if ((st = ingot_mpi_agree(&node, st, "manifest copy")) != INGOT_OK) {
        return st;
    }
    ingot_location_t dir;
    INGOT_CHECK(ingot_location_dir(loc, &dir));
    /* the leader checks every row; the others look them up unchecked, once the node agreed */
    st = ingot_store_manifest_open(base, size, loc->text, &dir,
                                   leader ? 0 : INGOT_MANIFEST_OPEN_CHECKED, 0, manifest_p);
    ingot_location_release(&dir);
    return st;
}

/* A node of several ranks: the first reads the file into an MPI-3 shared window and validates
 * it, the others open that copy lazily. Every step is agreed over the node, so the node's ranks
 * return the same status; on failure whatever was made is released. */
static ingot_status_t node_manifest_shared(ingot_ctx_h ctx, ingot_status_t parsed,
                                           ingot_location_t *loc, ingot_manifest_h *manifest_p,
                                           MPI_Win **win_p)
{
    MPI_Comm node = ctx->topo->node.node_comm;
    int leader = (ctx->topo->node.local_rank == 0);
    ingot_file_t file = {.fd = -1};
    void *base = NULL, *data = NULL;
    ingot_manifest_h manifest = NULL;
    ingot_status_t st = (leader && parsed == INGOT_OK) ? leader_open(loc, &file, &data) : parsed;
    uint64_t size = file.size;
    /* MPI_Win is a pointer typedef: this allocates one handle.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    MPI_Win *win = malloc(sizeof(*win)); /* before any collective, so failure is agreed on */
    if (win == NULL && st == INGOT_OK) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if ((st = ingot_mpi_agree(&node, st, "manifest sharing")) == INGOT_OK &&
        (st = node_window_create(node, leader, &size, &base, win)) == INGOT_OK) {
        /* win was allocated: ingot_mpi_agree() returns the worst status of the node's ranks,
         * never OK when ours is not.
         * NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage,clang-analyzer-core.NullDereference) */
        st = node_window_open(node, leader, &file, loc, *win, base, size, &manifest);
        if ((st = ingot_mpi_agree(&node, st, "manifest sharing")) != INGOT_OK) {
            ingot_manifest_close(manifest);
            (void)INGOT_MPI_CALL("manifest sharing", MPI_Win_free, win);
        }
    }
    ingot_file_close(&file);
    free(data);
    if (st != INGOT_OK) {
        free(win);
        return st;
    }
    *manifest_p = manifest;
    *win_p = win;
    return INGOT_OK;
}

ingot_status_t ingot_node_manifest_open(ingot_ctx_h ctx, const char *path,
                                        ingot_manifest_h *manifest_p, void **window_p)
{
    ingot_manifest_h manifest = NULL;
    MPI_Win *win = NULL;
    ingot_location_t loc; /* where the dataset lives: resolved once, here */
    ingot_status_t st = ingot_location_parse(path, INGOT_LOCATION_OBJECT, &loc);
    /* The only rank of its node shares with nobody: it maps the file, as the open does (no copy
     * into fresh memory, which costs about as much as validating it), and validates it fully. */
    if (ctx->topo->node.local_size == 1) {
        st = st == INGOT_OK ? ingot_store_open(&loc, 0, &manifest) : st;
    } else { /* collective over the node even when the path is malformed */
        st = node_manifest_shared(ctx, st, &loc, &manifest, &win);
    }
    ingot_location_release(&loc);
    /* One job-wide agreement on every path, so that nodes of one rank and nodes of several (an
     * uneven launch) make the same collective calls; a node's own steps are agreed over it. */
    if ((st = ingot_mpi_agree(&ctx->comm, st, "manifest open")) != INGOT_OK) {
        ingot_node_manifest_close(ctx, manifest, win); /* collective over the node when win */
        return st;
    }
    *manifest_p = manifest;
    *window_p = win;
    return INGOT_OK;
}

static const char *node_host(int rank, void *arg)
{
    const ingot_node_info_t *node = arg;
    (void)rank; /* every rank of this wait shares this node */
    return node->hostname;
}

void ingot_node_manifest_close(ingot_ctx_h ctx, ingot_manifest_h manifest, void *window)
{
    ingot_manifest_close(manifest);
    if (window != NULL) {
        /* MPI_Win_free is a barrier of the node's ranks: first an arrival that names a rank
         * that never comes (after INGOT_TIMEOUT), rather than the watchdog's anonymous wait. */
        ingot_node_info_t *node = &ctx->topo->node;
        ingot_arrival_t a = {.comm = &node->node_comm,
                             .what = "loader destroy: manifest window",
                             .timeout_ns = ctx->cfg.base->timeout_ns,
                             .arg = node,
                             .host = node_host,
                             .job_comm = &ctx->comm};
        (void)ingot_mpi_arrive(&a);
        (void)INGOT_MPI_CALL("loader destroy: manifest window", MPI_Win_free, (MPI_Win *)window);
        free(window);
    }
}
