/*
 * The UCX transport: context, worker, progress thread, endpoints, windows and the two read
 * protocols (see transport.h). Every ucp call runs under t->lock (worker SERIALIZED).
 */
#include "transport/transport_impl.h"
#include <ingot/info.h>
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

const char *const ingot_peer_protocol_names[] = {[INGOT_PEER_PROTOCOL_AUTO] = "auto",
                                                 [INGOT_PEER_PROTOCOL_GET] = "get",
                                                 [INGOT_PEER_PROTOCOL_AM] = "am",
                                                 [INGOT_PEER_PROTOCOL_PUT] = "put",
                                                 [INGOT_PEER_PROTOCOL_LAST] = NULL};

ingot_status_t ingot_ucx_check(int ucs_status, const char *call, const char *what)
{
    if (ucs_status == UCS_OK || ucs_status == UCS_INPROGRESS) {
        return INGOT_OK;
    }
    ingot_error("%s (%s) failed: %s", call, what, ucs_status_string((ucs_status_t)ucs_status));
    return INGOT_ERR_UCX;
}

/* ---------------------------------------------------------------- ops */

static void op_finish(ingot_transport_t *t, ingot_transport_op_t *op)
{
    if (op->finished) {
        return; /* once per use */
    }
    op->finished = 1;
    if (atomic_load(&op->status) == INGOT_OK && op->peer >= 0 && op->peer < t->world) {
        atomic_store(&t->peers[op->peer].silent_since, 0); /* it answered */
    }
    if (op->active) {
        ingot_transport_op_t **pp = &t->ops;
        while (*pp != NULL && *pp != op) {
            pp = &(*pp)->next;
        }
        if (*pp == op) {
            *pp = op->next;
        }
        op->active = 0;
    }
    if (op->cb != NULL) {
        op->cb(op);
    }
}

/* One read of @p op done with @p status (lock held). */
void ingot_transport_op_put(ingot_transport_t *t, ingot_transport_op_t *op, ingot_status_t status)
{
    if (status != INGOT_OK) {
        int expected = INGOT_OK;
        atomic_compare_exchange_strong(&op->status, &expected, status);
    }
    if (atomic_fetch_sub(&op->pending, 1) == 1) {
        op_finish(t, op);
    }
}

void ingot_transport_op_begin(ingot_transport_t *t, ingot_transport_op_t *op, int peer,
                              uint64_t deadline_ns, const void *tag)
{
    pthread_mutex_lock(&t->lock);
    op->tag = tag;
    op->finished = 0;
    atomic_store(&op->status, INGOT_OK);
    atomic_store(&op->pending, 1);
    op->t = t;
    op->peer = peer;
    op->deadline_ns = deadline_ns;
    op->gen++;
    op->next = t->ops;
    t->ops = op;
    op->active = 1;
    pthread_mutex_unlock(&t->lock);
}

void ingot_transport_op_end(ingot_transport_t *t, ingot_transport_op_t *op)
{
    pthread_mutex_lock(&t->lock);
    ingot_transport_op_put(t, op, INGOT_OK);
    int waits = op->active; /* reads still in flight: the progress thread must watch them */
    pthread_mutex_unlock(&t->lock);
    if (waits) {
        ingot_transport_wake(t);
    }
}

/* Drop @p op's active-message reads that no byte has been sent for; returns how many reads it
 * still has in flight (a rendezvous or get landing in its destination). Lock held. */
static uint32_t op_drop_waiting(ingot_transport_t *t, ingot_transport_op_t *op)
{
    for (uint32_t i = 0; i < TRANSPORT_AM_ENTRIES; i++) {
        transport_am_entry_t *e = &t->am[i];
        if (e->state == AM_ENTRY_WAIT && e->op == op) {
            ingot_transport_am_entry_free(t, e);
            atomic_fetch_sub(&op->pending, 1);
        }
    }
    return atomic_load(&op->pending);
}

void ingot_transport_settle(ingot_transport_t *t)
{
    pthread_mutex_lock(&t->lock);
    pthread_mutex_unlock(&t->lock);
}

ingot_status_t ingot_transport_op_cancel(ingot_transport_t *t, ingot_transport_op_t *op,
                                         const void *tag)
{
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = INGOT_OK;
    if (op->tag != tag || op->finished || !op->active) {
        st = INGOT_ERR_NOT_FOUND; /* that use is over */
    } else {
        if (op_drop_waiting(t, op) == 0) {
            ingot_transport_op_t **pp = &t->ops;
            while (*pp != NULL && *pp != op) {
                pp = &(*pp)->next;
            }
            if (*pp == op) {
                *pp = op->next;
            }
            op->active = 0;
        } else {
            st = INGOT_ERR_BUSY;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* Ops past their deadline: their waiting reads are dropped; a transfer still landing is ended
 * by closing the endpoint by force where the pair allows it. Lock held. Returns the earliest
 * deadline still ahead (or UINT64_MAX). */
static uint64_t ops_expire(ingot_transport_t *t, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    ingot_transport_op_t *op = t->ops;
    while (op != NULL) {
        ingot_transport_op_t *nx = op->next;
        if (op->deadline_ns > now) {
            next = op->deadline_ns < next ? op->deadline_ns : next;
            op = nx;
            continue;
        }
        int expected = INGOT_OK;
        atomic_compare_exchange_strong(&op->status, &expected, INGOT_ERR_TIMED_OUT);
        op->deadline_ns = UINT64_MAX; /* expired once */
        int peer = op->peer;
        uint64_t never = 0; /* silent from now on, until it answers a read again */
        atomic_compare_exchange_strong(&t->peers[peer].silent_since, &never, now);
        /* pending counts the waiting reads dropped now, and the +1 of op_end */
        uint32_t left = op_drop_waiting(t, op);
        if (left == 0) {
            op_finish(t, op);
        } else if (t->peers[peer].err_peer && t->peers[peer].ep != NULL) {
            /* closing may complete other ops in place (their callbacks unlink them): walk
             * again from the head; expired ops are not expired twice */
            ingot_transport_peer_close_locked(t, peer);
            nx = t->ops;
        }
        op = nx;
    }
    return next;
}

/* ---------------------------------------------------------------- progress */

void ingot_transport_wake(ingot_transport_t *t)
{
    if (atomic_load(&t->sleeping)) {
        ucp_worker_signal(t->worker);
    }
}

unsigned ingot_transport_progress(ingot_transport_t *t)
{
    if (pthread_mutex_trylock(&t->lock) != 0) {
        return 0; /* the progress thread is at it */
    }
    unsigned n = 0, k;
    while ((k = ucp_worker_progress(t->worker)) > 0) {
        n += k;
    }
    ingot_transport_puts_serve(t);
    pthread_mutex_unlock(&t->lock);
    return n;
}

static void *progress_main(void *arg)
{
    ingot_transport_t *t = arg;
    while (!atomic_load(&t->stop)) {
        pthread_mutex_lock(&t->lock);
        while (ucp_worker_progress(t->worker) > 0) {
        }
        ingot_transport_puts_serve(t);
        uint64_t next = ops_expire(t, ingot_time_ns());
        ucs_status_t s = ucp_worker_arm(t->worker);
        atomic_store(&t->sleeping, s == UCS_OK);
        pthread_mutex_unlock(&t->lock);
        if (s == UCS_ERR_BUSY) {
            continue; /* events arrived while arming */
        }
        /* Sleep on the worker's fd until an event, the next deadline, or 100 ms (stop). */
        uint64_t now = ingot_time_ns();
        int ms = 100;
        if (next != UINT64_MAX) {
            uint64_t d = next > now ? (next - now) / 1000000 + 1 : 0;
            ms = d < 100 ? (int)d : 100;
        }
        struct pollfd pfd = {.fd = t->efd, .events = POLLIN};
        poll(&pfd, 1, ms);
        atomic_store(&t->sleeping, 0);
    }
    return NULL;
}

/* ---------------------------------------------------------------- endpoints */

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

const char *ingot_transport_ucx_version(void)
{
    return ucp_get_version_string();
}

int ingot_transport_cuda_memory(const ingot_transport_t *t)
{
    return t->cuda_memory;
}

ingot_peer_protocol_t ingot_transport_protocol(const ingot_transport_t *t)
{
    return t->protocol;
}

uint64_t ingot_transport_peer_timeout(const ingot_transport_t *t)
{
    return t->peer_timeout_ns;
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

const char *ingot_transport_host(const ingot_transport_t *t, int peer)
{
    return t->peers[peer].host;
}

/* ---------------------------------------------------------------- path report */

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

/* ---------------------------------------------------------------- create / destroy */

/* Whether UCX offers a shared-memory transport to this process (within a node, the pair keeps
 * error mode none so UCX keeps it). */
static int context_has_shm(ucp_context_h ucp)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (f == NULL) {
        return 0;
    }
    ucp_context_print_info(ucp, f);
    fclose(f);
    int shm = 0;
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strstr(line, "resource") != NULL &&
            (strstr(line, "posix/") || strstr(line, "sysv/") || strstr(line, "cma/") ||
             strstr(line, "knem/") || strstr(line, "xpmem/"))) {
            shm = 1;
        }
    }
    free(text);
    return shm;
}

static ingot_status_t transport_ucp(ingot_transport_t *t)
{
    ucp_config_t *config;
    ingot_status_t st = INGOT_UCX_CALL("transport", ucp_config_read, NULL, NULL, &config);
    if (st != INGOT_OK) {
        return st;
    }
    if (getenv("UCX_ALLOC_PRIO") == NULL) {
        /* Windows from POSIX shared memory first: mapped by readers on the node, they read
         * 1.7x faster than System V segments here (docs/cache.md); the user's setting wins. */
        (void)ucp_config_modify(config, "ALLOC_PRIO", TRANSPORT_ALLOC_PRIO);
    }
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES |
                                         UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                           .features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
                           .mt_workers_shared = 0};
    st = INGOT_UCX_CALL("transport", ucp_init, &params, config, &t->ucp);
    ucp_config_release(config);
    if (st != INGOT_OK) {
        t->ucp = NULL;
        return st;
    }
    ucp_context_attr_t ca = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
    t->cuda_memory = (ucp_context_query(t->ucp, &ca) == UCS_OK &&
                      (ca.memory_types & (1ull << UCS_MEMORY_TYPE_CUDA)));
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    if ((st = INGOT_UCX_CALL("transport", ucp_worker_create, t->ucp, &wp, &t->worker))) {
        t->worker = NULL;
        return st;
    }
    if ((st = INGOT_UCX_CALL("transport", ucp_worker_get_efd, t->worker, &t->efd)) ||
        (st = ingot_transport_am_register(t))) {
        return st;
    }
    return INGOT_UCX_CALL("transport", ucp_worker_get_address, t->worker, &t->address,
                          &t->address_len);
}

/* What each rank tells the others at create. */
typedef struct transport_card {
    uint64_t address_len;
    int32_t node;
    int32_t shm;
    char host[INGOT_TOPO_HOST_MAX];
} transport_card_t;

static ingot_status_t transport_exchange(ingot_transport_t *t)
{
    const ingot_node_info_t *node = t->node;
    transport_card_t mine = {
        .address_len = t->address_len, .node = node->node_id, .shm = context_has_shm(t->ucp)};
    snprintf(mine.host, sizeof(mine.host), "%s", node->hostname);
    transport_card_t *cards = ingot_calloc((size_t)t->world, sizeof(*cards), "transport cards");
    int *counts = ingot_calloc((size_t)t->world, 2 * sizeof(int), "transport counts");
    if (cards == NULL || counts == NULL) {
        free(cards);
        free(counts);
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = INGOT_MPI_CALL("transport: address exchange", MPI_Allgather, &mine,
                                       sizeof(mine), MPI_BYTE, cards, sizeof(mine), MPI_BYTE,
                                       t->comm);
    int *displs = counts + t->world;
    size_t total = 0;
    for (int r = 0; st == INGOT_OK && r < t->world; r++) {
        if (cards[r].address_len == 0 || cards[r].address_len > TRANSPORT_ADDRESS_MAX) {
            st = ingot_fail(INGOT_ERR_FORMAT,
                            "transport: rank %d sent a worker address of %" PRIu64
                            " bytes (expected 1 to %d)",
                            r, cards[r].address_len, TRANSPORT_ADDRESS_MAX);
            break;
        }
        counts[r] = (int)cards[r].address_len;
        displs[r] = (int)total;
        total += cards[r].address_len;
    }
    if (st == INGOT_OK && (t->addresses = ingot_malloc(total, "transport addresses")) == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("transport: address exchange", MPI_Allgatherv, t->address,
                            (int)t->address_len, MPI_BYTE, t->addresses, counts, displs, MPI_BYTE,
                            t->comm);
    }
    for (int r = 0; st == INGOT_OK && t->peers != NULL && r < t->world; r++) {
        transport_peer_t *p = &t->peers[r];
        p->rank = r;
        p->t = t;
        p->address = (char *)t->addresses + displs[r];
        p->same_node = (cards[r].node == mine.node);
        /* the pair's mode, computed alike on both ends */
        p->err_peer = !(p->same_node && cards[r].shm && mine.shm);
        snprintf(p->host, sizeof(p->host), "%s", cards[r].host);
    }
    free(cards);
    free(counts);
    return st;
}

ingot_status_t ingot_transport_create(const ingot_transport_params_t *params,
                                      ingot_transport_t **t_p)
{
    const ingot_transport_config_t *cfg;
    MPI_Comm comm = params->comm;
    ingot_transport_t *t = ingot_calloc(1, sizeof(*t), "transport");
    if (t == NULL) {
        (void)ingot_mpi_agree(&comm, INGOT_ERR_NO_MEMORY,
                              "transport: UCX set-up"); /* the others fail too */
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = ingot_transport_config(&cfg);
    t->comm = comm;
    t->node = params->node;
    t->timeout_ns = params->timeout_ns;
    MPI_Comm_rank(comm, &t->rank);
    MPI_Comm_size(comm, &t->world);
    t->efd = -1;
    pthread_mutex_init(&t->lock, NULL);
    t->peers = ingot_calloc((size_t)t->world, sizeof(*t->peers), "transport peers");
    st = (st == INGOT_OK && t->peers == NULL) ? INGOT_ERR_NO_MEMORY : st;
    if (st == INGOT_OK) {
        t->protocol = cfg->protocol;
        t->peer_timeout_ns = cfg->peer_timeout;
        t->window_ucx = (cfg->window == INGOT_CACHE_WINDOW_UCX);
        st = transport_ucp(t);
    }
    st = ingot_mpi_agree(&comm, st, "transport: UCX set-up");
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&comm, transport_exchange(t), "transport: address exchange");
    }
    if (st == INGOT_OK) {
        if (pthread_create(&t->thread, NULL, progress_main, t) != 0) {
            st = ingot_fail(INGOT_ERR_NO_RESOURCE, "transport: cannot start its progress thread");
        } else {
            t->thread_started = 1;
            pthread_setname_np(t->thread, "ingot-ucx");
        }
        st = ingot_mpi_agree(&comm, st, "transport: progress thread");
    }
    if (st != INGOT_OK) {
        ingot_transport_free(t);
        return st;
    }
    ingot_debug("transport: UCX worker ready, %d peers, protocol %s, peer timeout %" PRIu64 " ms",
                t->world, ingot_peer_protocol_names[t->protocol], t->peer_timeout_ns / 1000000);
    *t_p = t;
    return INGOT_OK;
}

/* Not collective: stops the thread, closes endpoints, frees everything. */
void ingot_transport_free(ingot_transport_t *t)
{
    if (t == NULL) {
        return;
    }
    atomic_store(&t->closing, 1); /* peers closing their ends are no failure now */
    if (t->thread_started) {
        atomic_store(&t->stop, 1);
        if (t->worker != NULL) {
            ucp_worker_signal(t->worker);
        }
        pthread_join(t->thread, NULL);
    }
    for (int r = 0; t->peers != NULL && r < t->world; r++) {
        if (t->peers[r].ep != NULL) {
            pthread_mutex_lock(&t->lock);
            ingot_transport_peer_close_locked(t, r);
            pthread_mutex_unlock(&t->lock);
        }
    }
    if (t->worker != NULL) {
        while (ucp_worker_progress(t->worker) > 0) {
        }
        if (t->address != NULL) {
            ucp_worker_release_address(t->worker, t->address);
        }
        ucp_worker_destroy(t->worker);
    }
    if (t->ucp != NULL) {
        ucp_cleanup(t->ucp);
    }
    pthread_mutex_destroy(&t->lock);
    free(t->addresses);
    free(t->peers);
    free(t);
}

void ingot_transport_destroy(ingot_transport_t *t)
{
    if (t == NULL) {
        return;
    }
    /* Nobody reads from anybody once every rank is here; from now on a peer closing its end
     * is no failure. */
    atomic_store(&t->closing, 1);
    INGOT_MPI_CALL("transport: destroy", MPI_Barrier, t->comm);
    ingot_transport_free(t);
}
