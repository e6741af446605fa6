/*
 * The transport's life: the UCX context and worker, the address exchange that gives every rank
 * every peer's worker address, node and host, the progress thread that serves the owner side and
 * expires ops past their deadline, and destroy. Every ucp call runs under t->lock (the worker
 * is SERIALIZED).
 */
#include "transport/transport_impl.h"
#include <ingot/info.h>
#include "base/errors.h"
#include "base/log.h"
#include "base/thread.h"
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

/* A wake this much later than the poll asked means this process did not run meanwhile. */
#define PROGRESS_LATE_NS (500ull * 1000 * 1000)

static void *progress_main(void *arg)
{
    ingot_transport_t *t = arg;
    uint64_t late = 0; /* how much later than asked the last poll returned */
    while (!atomic_load(&t->stop)) {
        pthread_mutex_lock(&t->lock);
        while (ucp_worker_progress(t->worker) > 0) {
        }
        ingot_transport_puts_serve(t);
        if (late > PROGRESS_LATE_NS) {
            /* stopped (SIGSTOP, a debugger) or starved: the peers' answers may be waiting to be
             * progressed, or their requests to be sent; their deadlines move by the lost time */
            ingot_transport_ops_postpone(t, late);
            late = 0;
            pthread_mutex_unlock(&t->lock);
            continue;
        }
        uint64_t next = ingot_transport_ops_expire(t, ingot_time_ns());
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
        uint64_t woke = ingot_time_ns(), asked = now + (uint64_t)ms * 1000000;
        late = woke > asked ? woke - asked : 0;
    }
    return NULL;
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

ingot_peer_failure_t ingot_transport_peer_failure(const ingot_transport_t *t)
{
    return t->peer_failure;
}

uint64_t ingot_transport_peer_timeout(const ingot_transport_t *t)
{
    return t->peer_timeout_ns;
}

const char *ingot_transport_host(const ingot_transport_t *t, int peer)
{
    return t->peers[peer].host;
}

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
    const ingot_transport_config_t *cfg = params->cfg;
    MPI_Comm comm = params->comm;
    ingot_transport_t *t = ingot_calloc(1, sizeof(*t), "transport");
    if (t == NULL) {
        (void)ingot_mpi_agree(&comm, INGOT_ERR_NO_MEMORY,
                              "transport: UCX set-up"); /* the others fail too */
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = cfg != NULL ? INGOT_OK : ingot_transport_config(&cfg);
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
        t->window_ucx = (cfg->window == INGOT_PEER_WINDOW_UCX);
        t->peer_failure = cfg->peer_failure;
        st = transport_ucp(t);
    }
    st = ingot_mpi_agree(&comm, st, "transport: UCX set-up");
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&comm, transport_exchange(t), "transport: address exchange");
    }
    if (st == INGOT_OK) {
        st = ingot_thread_start(&t->thread, "ingot-ucx", progress_main, t, 0);
        t->thread_started = st == INGOT_OK;
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
