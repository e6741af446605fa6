/*
 * Finding a rank that went silent. A stopped or dead rank holds the others in whatever they
 * next do together: one of ingot's MPI calls (a loader's creation, an agreement), a gradient
 * reduction, a destroy. Where the peer cache runs under INGOT_PEER_FAILURE=abort, the context's
 * transport can tell: every rank's progress thread answers a ping while the rank does anything
 * else, so a rank silent for INGOT_PEER_TIMEOUT is stopped, dead or hung, not late. The
 * watchdog asks once one of ingot's MPI calls has waited a second, the collectives once a
 * reduction has; the rank is named and the job ends then, not at INGOT_TIMEOUT. A tier that
 * finds a silent rank by other means (a fetcher of the node's part cache whose heartbeat
 * stopped) raises the context's peer_lost, which the watchdog's next question sees.
 */
#ifndef INGOT_RUNTIME_LIVENESS_H
#define INGOT_RUNTIME_LIVENESS_H

#include <ingot/ingot.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Ping every other rank of @p ctx (blocks up to INGOT_PEER_TIMEOUT); on a silent one, write
 * "rank N (host H) did not answer for INGOT_PEER_TIMEOUT (S s)" into @p why, raise the
 * context's peer_lost (so the collectives' waits end) and return 1. 1 at once when a tier of a
 * loader declared a rank lost already (the part cache a node's ranks share, which has no
 * transport: it raised peer_lost). 0 when every rank answered, or when there is nothing to ask
 * with (no transport, or INGOT_PEER_FAILURE=storage).
 */
int ingot_liveness_find_lost(ingot_ctx_h ctx, char *why, size_t len);

/** Let the watchdog ask (at init, and again when the transport exists: the same hook). */
void ingot_liveness_watch(ingot_ctx_h ctx);
/** Before the transport goes: the watchdog stops asking. */
void ingot_liveness_unwatch(ingot_ctx_h ctx);

#endif
