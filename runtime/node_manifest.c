/*
 * One copy of the manifest per node: 10,000 ranks must not open and validate the same file
 * 10,000 times. The node leader reads the file into an MPI-3 shared-memory window and validates
 * it once; the other ranks of the node open the same bytes in place. The only rank of a node maps
 * the file instead. Every step that can fail on one rank is followed by an agreement, so no rank
 * is left waiting in a collective.
 */
#include "runtime/node_manifest.h"
#include "runtime/context_impl.h"
#include "base/io.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Leader: size of the manifest file, or an error. */
static ingot_status_t leader_stat(const char *path, uint64_t *size_p, int *fd_p)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        ingot_error("cannot open manifest '%s': %s", path, strerror(err));
        if (fd >= 0) {
            close(fd);
        }
        return ingot_status_from_errno(err);
    }
    *size_p = (uint64_t)st.st_size;
    *fd_p = fd;
    return INGOT_OK;
}

static ingot_status_t leader_read(int fd, const char *path, void *buf, uint64_t size)
{
    ingot_io_fail_t fail;
    ingot_status_t st = ingot_io_pread_full(fd, buf, (size_t)size, 0, &fail);
    if (st != INGOT_OK) {
        ingot_error("cannot read manifest '%s' at offset %llu: %s", path,
                    (unsigned long long)fail.offset,
                    fail.err ? strerror(fail.err) : "unexpected end of file");
        return INGOT_ERR_IO;
    }
    return INGOT_OK;
}

/* The only rank of its node shares with nobody: it maps the file (no copy into fresh memory,
 * which costs about as much as validating it) and validates it fully. */
static ingot_status_t node_manifest_alone(ingot_ctx_h ctx, const char *path,
                                          ingot_manifest_h *manifest_p, void **window_p)
{
    ingot_manifest_h manifest = NULL;
    ingot_status_t st = ingot_manifest_open(path, 0, &manifest);
    if ((st = ingot_mpi_agree(&ctx->comm, st, "manifest open")) != INGOT_OK) {
        ingot_manifest_close(manifest);
        return st;
    }
    *manifest_p = manifest;
    *window_p = NULL;
    return INGOT_OK;
}

ingot_status_t ingot_node_manifest_open(ingot_ctx_h ctx, const char *path,
                                        ingot_manifest_h *manifest_p, void **window_p)
{
    if (ctx->topo->node.local_size == 1) {
        return node_manifest_alone(ctx, path, manifest_p, window_p);
    }
    int leader = (ctx->topo->node.local_rank == 0), fd = -1;
    uint64_t size = 0;
    ingot_status_t st = leader ? leader_stat(path, &size, &fd) : INGOT_OK;
    /* MPI_Win is a pointer typedef: this allocates one handle.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    MPI_Win *win = malloc(sizeof(*win)); /* before any collective, so failure is agreed on */
    if (win == NULL && st == INGOT_OK) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if ((st = ingot_mpi_agree(&ctx->comm, st, "manifest sharing")) != INGOT_OK) {
        free(win);
        goto out_fd;
    }
    void *base = NULL;
    st = INGOT_MPI_CALL("manifest sharing", MPI_Bcast, &size, 1, MPI_UINT64_T, 0,
                        ctx->topo->node.node_comm);
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("manifest sharing", MPI_Win_allocate_shared,
                            leader ? (MPI_Aint)size : 0, 1, MPI_INFO_NULL,
                            ctx->topo->node.node_comm, &base, win);
    }
    if ((st = ingot_mpi_agree(&ctx->comm, st, "manifest sharing")) != INGOT_OK) {
        free(win);
        goto out_fd;
    }
    if (leader) {
        st = leader_read(fd, path, base, size);
    } else {
        MPI_Aint qsize;
        int disp;
        /* win was allocated: ingot_mpi_agree() returns the worst status of all ranks, never OK
         * when ours is not.
         * NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage,clang-analyzer-core.NullDereference) */
        st = INGOT_MPI_CALL("manifest sharing", MPI_Win_shared_query, *win, 0, &qsize, &disp,
                            &base);
    }
    /* The leader's copy is complete, and the node knows whether it succeeded: the others must
     * not open a window the leader failed to fill (they would report its garbage). */
    st = ingot_mpi_agree(&ctx->topo->node.node_comm, st, "manifest copy");
    char *dir_copy = strdup(path);
    ingot_manifest_h manifest = NULL;
    if (st == INGOT_OK && dir_copy != NULL) {
        /* The leader validates everything once; the others trust it and open in O(1). */
        st = ingot_manifest_open_buffer(base, size, dirname(dir_copy),
                                        leader ? 0 : INGOT_MANIFEST_OPEN_LAZY, &manifest);
    } else if (dir_copy == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    free(dir_copy);
    if ((st = ingot_mpi_agree(&ctx->comm, st, "manifest sharing")) != INGOT_OK) {
        ingot_manifest_close(manifest);
        MPI_Win_free(win);
        free(win);
        goto out_fd;
    }
    *manifest_p = manifest;
    *window_p = win;
out_fd:
    if (fd >= 0) {
        close(fd);
    }
    return st;
}

void ingot_node_manifest_close(ingot_ctx_h ctx, ingot_manifest_h manifest, void *window)
{
    (void)ctx;
    ingot_manifest_close(manifest);
    if (window != NULL) {
        MPI_Win_free((MPI_Win *)window);
        free(window);
    }
}
