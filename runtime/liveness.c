/* Finding a rank that went silent (liveness.h). */
#include "runtime/liveness.h"
#include "runtime/context_impl.h"
#include "transport/transport.h"
#include "base/time.h"
#include "base/watchdog.h"
#include <stdio.h>
#include <stdlib.h>

/* The watchdog asks about a call of ingot's that has waited this long (a healthy collective
 * of a large job can take a while: a ping costs the others little and answers fast). */
#define LIVENESS_AFTER_NS (1000ull * 1000 * 1000)

int ingot_liveness_find_lost(ingot_ctx_h ctx, char *why, size_t len)
{
    if (ingot_abort_is_raised(&ctx->peer_lost)) { /* a tier found one already (named by it) */
        snprintf(why, len,
                 "a rank was found silent for INGOT_PEER_TIMEOUT (named above) under "
                 "INGOT_PEER_FAILURE=abort");
        return 1;
    }
    if (ctx->transport == NULL ||
        ingot_transport_peer_failure(ctx->transport) != INGOT_PEER_FAILURE_ABORT) {
        return 0;
    }
    uint64_t peer_timeout = ingot_transport_peer_timeout(ctx->transport);
    int *ranks = malloc(sizeof(int) * (size_t)ctx->size);
    int *silent = ranks != NULL ? malloc(sizeof(int) * (size_t)ctx->size) : NULL;
    int n = 0, lost = -1;
    for (int r = 0; silent != NULL && r < ctx->size; r++) {
        if (r != ctx->rank) {
            ranks[n++] = r;
        }
    }
    ingot_transport_ping(ctx->transport, ranks, n, ingot_deadline_after(peer_timeout), silent);
    for (int i = 0; i < n && lost < 0; i++) {
        lost = silent[i] ? ranks[i] : -1;
    }
    if (lost >= 0) {
        snprintf(why, len, "rank %d (host %s) did not answer for INGOT_PEER_TIMEOUT (%.1f s)", lost,
                 ingot_transport_host(ctx->transport, lost), (double)peer_timeout / 1e9);
        ingot_abort_raise(&ctx->peer_lost);
    }
    free(ranks);
    free(silent);
    return lost >= 0;
}

static int liveness_check(void *arg, char *why, size_t len)
{
    return ingot_liveness_find_lost(arg, why, len);
}

void ingot_liveness_watch(ingot_ctx_h ctx)
{
    ingot_watchdog_set_liveness(liveness_check, ctx, LIVENESS_AFTER_NS);
}

void ingot_liveness_unwatch(ingot_ctx_h ctx)
{
    ingot_watchdog_unset_liveness(ctx);
}
