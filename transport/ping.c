/*
 * Pings: an active message to a peer that its progress thread answers at once, whatever the
 * rank itself is doing; no answer by the deadline, or an endpoint that failed, says the peer is
 * silent (stopped, dead or hung). The liveness checks of the runtime and of arrivals use it.
 */
#include "transport/transport_impl.h"
#include <stdlib.h>

/* Send a ping to @p peer (lock taken here): 0 when sent, -1 when it could not be (then the
 * peer counts as silent when its endpoint failed, else as alive: the wait goes on). */
static int ping_send(ingot_transport_t *t, ingot_transport_op_t *op, int peer)
{
    ucp_ep_h ep;
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_ready_locked(t, peer, &ep);
    if (st == INGOT_OK) {
        st = ingot_transport_am_request(t, op, ep, TRANSPORT_PING_WINDOW, 0, NULL, 0, NULL, 0,
                                        NULL);
    }
    pthread_mutex_unlock(&t->lock);
    return st == INGOT_OK ? 0 : -1;
}

void ingot_transport_ping(ingot_transport_t *t, const int *ranks, int n, uint64_t deadline_ns,
                          int *silent)
{
    ingot_transport_op_t *ops = calloc((size_t)n, sizeof(*ops));
    int *sent = calloc((size_t)n, sizeof(*sent));
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        silent[i] = atomic_load(&t->peers[r].silent_since) != 0 || atomic_load(&t->peers[r].failed);
        if (silent[i] || ops == NULL || sent == NULL) {
            continue; /* known silent; or no memory to ask: taken as alive (the wait goes on) */
        }
        ingot_transport_op_begin(t, &ops[i], r, deadline_ns, &ops[i]);
        sent[i] = ping_send(t, &ops[i], r) == 0;
        ingot_transport_op_end(t, &ops[i]);
        silent[i] = !sent[i] && atomic_load(&t->peers[r].failed);
    }
    for (int i = 0; sent != NULL && i < n; i++) {
        if (sent[i]) {
            ingot_transport_op_wait(t, &ops[i]);
            ingot_status_t st = atomic_load(&ops[i].status);
            silent[i] = st == INGOT_ERR_TIMED_OUT || st == INGOT_ERR_UCX; /* no answer, or dead */
        }
    }
    free(ops);
    free(sent);
}
