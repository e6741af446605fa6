/*
 * Peer fetch throughput of the cache's transport (run by hand through tests/perf/cache_perf.sh):
 * 2 ranks; rank 1 owns a window of WINDOW_MIB (UCX-allocated and registered once, as the cache's),
 * filled; rank 0 streams it once untimed (mapping it) and then PASSES times in reads of PIECE bytes, INFLIGHT bytes outstanding,
 * into a destination ring of RING_MIB (64: written back to memory, as ucx_perftest's 64 MiB
 * buffers are; 8: the size of a loader's batch slots, which stay in the L3 for the verify that
 * follows), with the protocol INGOT_PEER_PROTOCOL picks; the window is far above the L3, so the
 * source is never cache-hot. Prints one line: "fetch PIECE GB/s ... path".
 * usage: mpirun -np 2 cache_fetch PIECE [WINDOW_MIB [INFLIGHT [PASSES [RING_MIB]]]]
 */
#include "common/test.h"
#include "runtime/context_impl.h"
#include "transport/transport.h"
#include "common/transport_util.h"
#include "base/time.h"
#include <ingot/ingot.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OPS_MAX 256

int main(int argc, char **argv)
{
    CHECK(argc >= 2);
    size_t piece = strtoull(argv[1], NULL, 0);
    size_t window = (argc > 2 ? strtoull(argv[2], NULL, 0) : 1024) << 20;
    size_t inflight = argc > 3 ? strtoull(argv[3], NULL, 0) : 16u << 20;
    int passes = argc > 4 ? atoi(argv[4]) : 2;
    size_t ring_bytes = (argc > 5 ? strtoull(argv[5], NULL, 0) : 64) << 20;
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    CHECK(ctx->size == 2 && piece > 0 && window % piece == 0 && ring_bytes % piece == 0);
    ingot_transport_t *t;
    CHECK_OK(ingot_ctx_transport(ctx, &t));
    ingot_transport_window_t *w;
    CHECK_OK(ingot_transport_window_create(t, window, -1, -1, &w));
    if (ctx->rank == 1) {
        memset(ingot_transport_window_data(w), 0x5a, window); /* touched: resident */
    }
    /* the destination ring, registered on both ranks under put (collective) */
    char *ring = malloc(ring_bytes);
    CHECK(ring != NULL);
    memset(ring, 0, ring_bytes);
    ingot_transport_window_t *dest = NULL;
    if (ingot_transport_protocol(t) == INGOT_PEER_PROTOCOL_PUT) {
        CHECK_OK(ingot_transport_dest_create(t, ring, ring_bytes, &dest));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ctx->rank == 0) {
        size_t nops = inflight / piece;
        nops = nops < 1 ? 1 : nops > OPS_MAX ? OPS_MAX : nops;
        static ingot_transport_op_t ops[OPS_MAX];
        for (size_t i = 0; i < nops; i++) {
            ops[i].cb = transport_util_op_done;
        }
        /* One pass first, untimed: the first read of a window maps it here (populating its
         * pages), a cost paid once per window per reader; it is reported apart. */
        uint64_t warm = window, total = (uint64_t)window * (uint64_t)(passes + 1), issued = 0;
        uint64_t ring_at = 0, t0 = ingot_time_ns(), t_warm = 0;
        size_t next = 0;
        int active[OPS_MAX] = {0};
        for (;;) {
            int busy = 0;
            for (size_t i = 0; i < nops; i++) {
                if (active[i] && atomic_load(&ops[i].pending) != 0) {
                    busy++;
                    continue;
                }
                if (active[i]) {
                    CHECK_OK(atomic_load(&ops[i].status));
                    active[i] = 0;
                }
                if (issued < total) {
                    ingot_transport_op_begin(t, &ops[i], 1, ingot_deadline_after(10000000000ull),
                                             &ops[i]);
                    CHECK_OK(ingot_transport_read(w, &ops[i], next, ring + ring_at, piece));
                    ingot_transport_op_end(t, &ops[i]);
                    active[i] = 1;
                    busy++;
                    issued += piece;
                    if (issued == warm + piece) { /* the timed passes start */
                        t_warm = ingot_time_ns() - t0;
                        t0 = ingot_time_ns();
                    }
                    next = (next + piece) % window;
                    ring_at = (ring_at + piece) % ring_bytes;
                }
            }
            if (busy == 0) {
                break;
            }
            /* wait as the loader's readers do: the progress thread completes the reads */
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
        double s = (double)(ingot_time_ns() - t0) / 1e9;
        total -= warm;
        CHECK(ring[0] == 0x5a && ring[piece - 1] == 0x5a);
        char path[512];
        ingot_transport_path(t, 1, path, sizeof(path));
        printf("fetch %zu %.3f GB/s window %zu MiB ring %zu MiB inflight %zu first pass %.3f s: "
               "%s\n",
               piece, (double)total / s / 1e9, window >> 20, ring_bytes >> 20, nops * piece,
               (double)t_warm / 1e9, path);
    }
    transport_util_barrier(); /* the owner serves the reads meanwhile */
    ingot_transport_window_destroy(dest, 30ull * 1000000000, 0);
    free(ring);
    ingot_transport_window_destroy(w, 30ull * 1000000000, 0);
    ingot_finalize(ctx);
    return 0;
}
