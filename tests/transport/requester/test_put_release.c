/*
 * The put protocol at the end of a run, 2 ranks: rank 1 has released its put destinations (its
 * loader quiesced: ingot_transport_dest_release) while rank 0 still reads rank 1's window with
 * put. Rank 1 must go on serving it (it keeps rank 0's key until the collective destroy): every
 * byte lands, none refused. Then a read past rank 1's window is refused by the requester, and a
 * read into memory rank 0 never registered goes by am.
 * Run with INGOT_PEER_PROTOCOL=put (the test checks it) and each UCX_TLS.
 */
#include "common/test.h"
#include "runtime/context_impl.h"
#include "transport/transport.h"
#include "common/transport_util.h"
#include "base/time.h"
#include <ingot/ingot.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW (1u << 20)
#define PIECE  (64u << 10)

/* Read all of rank 1's window into @p dst in PIECE reads; the op's status. */
static ingot_status_t read_window(ingot_transport_t *t, ingot_transport_window_t *w, char *dst)
{
    ingot_transport_op_t op = {.cb = transport_util_op_done};
    ingot_transport_op_begin(t, &op, 1, ingot_deadline_after(10000000000ull), &op);
    ingot_status_t st = INGOT_OK;
    for (size_t at = 0; at < WINDOW && st == INGOT_OK; at += PIECE) {
        st = ingot_transport_read(w, &op, at, dst + at, PIECE);
    }
    ingot_transport_op_end(t, &op);
    ingot_transport_op_wait(t, &op);
    return st != INGOT_OK ? st : atomic_load(&op.status);
}

int main(void)
{
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    CHECK(ctx->size == 2);
    ingot_transport_t *t;
    CHECK_OK(ingot_ctx_transport(ctx, &t));
    CHECK(ingot_transport_protocol(t) == INGOT_PEER_PROTOCOL_PUT);
    ingot_transport_window_t *w, *dest;
    CHECK_OK(ingot_transport_window_create(t, WINDOW, -1, -1, &w));
    char *data = ingot_transport_window_data(w);
    for (size_t i = 0; i < WINDOW; i++) {
        data[i] = (char)(i * 7 + (size_t)ctx->rank);
    }
    ingot_transport_window_set_ready(w);
    char *buf = calloc(1, WINDOW), *unregistered = calloc(1, PIECE);
    CHECK(buf != NULL && unregistered != NULL);
    CHECK_OK(ingot_transport_dest_create(t, buf, WINDOW, &dest));
    if (ctx->rank == 1) {
        ingot_transport_dest_release(dest); /* done reading: its memory is unregistered */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ctx->rank == 0) {
        CHECK_OK(read_window(t, w, buf)); /* rank 1 already released: it still serves */
        for (size_t i = 0; i < WINDOW; i++) {
            CHECK(buf[i] == (char)(i * 7 + 1));
        }
        /* outside rank 1's window: refused before anything is sent */
        ingot_transport_op_t op = {.cb = transport_util_op_done};
        ingot_transport_op_begin(t, &op, 1, ingot_deadline_after(10000000000ull), &op);
        CHECK_STATUS(ingot_transport_read(w, &op, WINDOW - 8, buf, 16), INGOT_ERR_OUT_OF_RANGE);
        /* a destination rank 0 did not register: am */
        CHECK_OK(ingot_transport_read(w, &op, 0, unregistered, PIECE));
        ingot_transport_op_end(t, &op);
        ingot_transport_op_wait(t, &op);
        CHECK_OK(atomic_load(&op.status));
        CHECK(memcmp(unregistered, buf, PIECE) == 0);
        char paths[2048] = "";
        CHECK_OK(ingot_transport_paths(t, paths, sizeof(paths)));
        printf("%s", paths);
        CHECK(strstr(paths, "put (request;") != NULL);
        CHECK(strstr(paths, "am 1, put 16,") != NULL); /* 16 puts of 64 KiB, the am read */
    }
    /* rank 1 waits without spinning: its progress thread serves rank 0 */
    transport_util_barrier();
    ingot_transport_window_destroy(dest, 30ull * 1000000000, 0);
    ingot_transport_window_destroy(w, 30ull * 1000000000, 0);
    free(buf);
    free(unregistered);
    ingot_finalize(ctx);
    if (ctx->rank == 0) {
        printf("put after release: ok\n");
    }
    return 0;
}
