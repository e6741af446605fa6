/*
 * Endpoints, made at first use with the error mode agreed per pair (peer error handling where a
 * pair may fail apart, none within a node over shared memory), their failures, the protocol each
 * pair takes (get where UCX reads the window one-sidedly, am over tcp) and the path report.
 */
#include "transport/transport_impl.h"
#include "base/log.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    transport_peer_t *p = arg;
    (void)ep;
    if (!p->failed && !atomic_load(&p->t->closing)) {
        ingot_warn("transport: endpoint to rank %d (host %s) failed: %s", p->rank, p->host,
                   ucs_status_string(status));
    }
    p->failed = 1;
}

/* The endpoint to @p peer, created at first use with the pair's error mode. Lock held. */
ingot_status_t ingot_transport_ep_locked(ingot_transport_t *t, int peer, ucp_ep_h *ep_p)
{
    transport_peer_t *p = &t->peers[peer];
    if (p->ep != NULL) {
        *ep_p = p->ep;
        return INGOT_OK;
    }
    if (p->closed) {
        return ingot_fail(INGOT_ERR_UCX,
                          "transport: endpoint to rank %d (host %s) was closed "
                          "after a failure",
                          peer, p->host);
    }
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)p->address,
        .err_mode = p->err_peer ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE,
        .err_handler = {.cb = ep_error, .arg = p}};
    ucs_status_t s = ucp_ep_create(t->worker, &ep, &p->ep);
    if (s != UCS_OK) {
        const char *tls = getenv("UCX_TLS");
        p->ep = NULL;
        return ingot_fail(INGOT_ERR_CONFIG,
                          "transport: cannot reach rank %d on host %s (%s) with UCX_TLS=%s: %s",
                          peer, p->host, p->same_node ? "same node" : "another node",
                          tls ? tls : "(unset: all)", ucs_status_string(s));
    }
    *ep_p = p->ep;
    return INGOT_OK;
}

void ingot_transport_peer_close_locked(ingot_transport_t *t, int peer)
{
    transport_peer_t *p = &t->peers[peer];
    if (p->ep == NULL) {
        return;
    }
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                               .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *req = ucp_ep_close_nbx(p->ep, &prm);
    if (UCS_PTR_IS_PTR(req)) {
        ucp_request_free(req); /* completes in progress; nothing waits for it */
    }
    p->ep = NULL;
    p->closed = 1;
    p->failed = 1;
    ingot_transport_am_peer_closed(t, peer); /* its connection is gone: no put lands any more */
}

void ingot_transport_peer_close(ingot_transport_t *t, int peer)
{
    pthread_mutex_lock(&t->lock);
    if (t->peers[peer].err_peer) {
        ingot_transport_peer_close_locked(t, peer);
    }
    pthread_mutex_unlock(&t->lock);
}

ingot_status_t ingot_transport_paths(ingot_transport_t *t, char *buf, size_t len)
{
    ingot_status_t first = INGOT_OK;
    size_t used = strlen(buf);
    used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
                             "peer reads sent by this rank: get %" PRIu64 " (mapped window %" PRIu64
                             "), am %" PRIu64 ", put %" PRIu64 ", get into GPU memory %" PRIu64
                             "\n",
                             atomic_load(&t->reads_get), atomic_load(&t->reads_mapped),
                             atomic_load(&t->reads_am), atomic_load(&t->reads_put),
                             atomic_load(&t->reads_device));
    for (int r = 0; r < t->world && used < len; r++) {
        char line[512];
        ingot_status_t st = ingot_transport_path(t, r, line, sizeof(line));
        first = (first == INGOT_OK) ? st : first;
        used += (size_t)snprintf(buf + used, len - used, "%s\n", line);
    }
    return first;
}

/* The endpoint's lanes as UCX prints them (UCX 1.13 has no query for them): each transport
 * with its role, "sysv/memory(am) posix/memory(rma) cma/memory(rma_bw)" (a lane without a
 * marker is an RMA lane), into @p out; returns whether a lane other than tcp does RMA. Lock held. */
static int ep_lanes(ucp_ep_h ep, char *out, size_t len)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    out[0] = '\0';
    if (f == NULL) {
        return 0;
    }
    ucp_ep_print_info(ep, f);
    fclose(f);
    ingot_trace("transport: endpoint lanes:\n%s", text);
    size_t used = 0;
    int rma = 0;
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char *lane = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;
        char *arrow = colon ? strstr(colon, "->") : NULL;
        char tl[64];
        /* "lane[3]:  5:cma/memory.0 md[4]  -> md[4]/cma/sysdev[255] rma_bw#0" */
        if (arrow == NULL || sscanf(colon + 1, " %*d:%63[^. ]", tl) != 1) {
            continue;
        }
        /* the role markers after the remote md ("am am_bw#0", "rma_bw#0"; none: an RMA lane;
         * UCX 1.22 adds "seg SIZE" to every lane) */
        char marks[160] = "";
        char *save = NULL, *rest = strchr(arrow + 3, ' ');
        for (char *tok = rest ? strtok_r(rest, " ", &save) : NULL; tok != NULL;
             tok = strtok_r(NULL, " ", &save)) {
            if (strcmp(tok, "seg") == 0) {
                strtok_r(NULL, " ", &save); /* its size */
                continue;
            }
            size_t m = strlen(marks);
            snprintf(marks + m, sizeof(marks) - m, " %s", tok);
        }
        const char *role = marks[0] == '\0'                   ? "rma"
                           : strstr(marks, " rma_bw") != NULL ? "rma_bw"
                           : strstr(marks, " rma") != NULL    ? "rma"
                           : strstr(marks, " am") != NULL     ? "am"
                                                              : "other";
        int is_rma = (strcmp(role, "rma") == 0 || strcmp(role, "rma_bw") == 0);
        rma |= is_rma && strncmp(tl, "tcp", 3) != 0 && strncmp(tl, "self", 4) != 0;
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s(%s)",
                                 used ? " " : "", tl, role);
    }
    free(text);
    return rma;
}

/* Decide a pair's protocol once its endpoint exists. Lock held. */
static void peer_protocol(ingot_transport_t *t, transport_peer_t *p)
{
    if (p->proto != INGOT_PEER_PROTOCOL_AUTO) {
        return;
    }
    int rma = ep_lanes(p->ep, p->lanes, sizeof(p->lanes));
    if (t->protocol != INGOT_PEER_PROTOCOL_AUTO) {
        p->proto = t->protocol;
    } else {
        /* get where an RMA lane other than tcp reads the window (tcp's get is emulated over
         * active messages in UCX 1.13, ten times slower than am here) */
        p->proto = rma ? INGOT_PEER_PROTOCOL_GET : INGOT_PEER_PROTOCOL_AM;
    }
}

ingot_status_t ingot_transport_peer_ready_locked(ingot_transport_t *t, int peer, ucp_ep_h *ep_p)
{
    ingot_status_t st = ingot_transport_ep_locked(t, peer, ep_p);
    if (st == INGOT_OK) {
        peer_protocol(t, &t->peers[peer]);
    }
    return st;
}

ingot_status_t ingot_transport_path(ingot_transport_t *t, int peer, char *buf, size_t len)
{
    ucp_ep_h ep;
    transport_peer_t *p = &t->peers[peer];
    if (peer == t->rank) {
        snprintf(buf, len, "rank %d (itself): local copy", peer);
        return INGOT_OK;
    }
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_ready_locked(t, peer, &ep);
    if (st == INGOT_OK) {
        int get = (p->proto == INGOT_PEER_PROTOCOL_GET), mapped = 0;
        int put = (p->proto == INGOT_PEER_PROTOCOL_PUT);
        int rma = strstr(p->lanes, "(rma") != NULL && strstr(p->lanes, "tcp") == NULL;
        for (uint32_t i = 0; i < t->nwindows; i++) {
            mapped |= (t->windows[i] != NULL && t->windows[i]->remote[peer].mapped != NULL);
        }
        snprintf(buf, len, "rank %d (%s host %s): %s over %s, err mode %s", peer,
                 p->same_node ? "same node," : "other node,", p->host,
                 put      ? "put (request; the owner writes into this rank's registered "
                            "buffer, flushes, then answers)"
                 : !get   ? "am (request, eager reply)"
                 : mapped ? "get (its window mapped here: one memcpy)"
                 : rma    ? "get"
                          : "get (emulated by UCX over active messages)",
                 p->lanes, p->err_peer ? "peer" : "none");
    } else {
        snprintf(buf, len, "rank %d (host %s): unreachable", peer, p->host);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}
