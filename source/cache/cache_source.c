/*
 * The cache's byte source: a request names its samples (extents, all of one home); their
 * records are read from the home's window into the request's iovecs, pieces adjacent in both
 * the window and the destination merged into one read; from this rank's own window by memcpy.
 */
#include "source/cache/cache_impl.h"
#include "base/cuda.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include <inttypes.h>
#include <stddef.h>
#include <time.h>

/* How long past INGOT_PEER_TIMEOUT a reader waits for this source's own verdict on a read. */
#define CACHE_VERDICT_GRACE_NS (500ull * 1000 * 1000)

#define cache_of(_src) ((ingot_cache_t *)((char *)(_src)-offsetof(ingot_cache_t, source)))

/* ---------------------------------------------------------------- failures */

static void home_give_up(ingot_cache_t *c, int home, const char *why)
{
    int old = atomic_exchange(&c->home_state[home], HOME_FAILED);
    if (old != HOME_FAILED) {
        atomic_fetch_add(&c->peers_failed, 1);
        ingot_warn("cache: rank %d (host %s) %s; INGOT_PEER_FAILURE=storage: its samples are "
                   "read from storage from now on",
                   home, ingot_transport_host(c->transport, home), why);
    }
}

/* Complete @p req after its home answered @p st; @p unfilled: it timed out because the home's
 * window was not filled within INGOT_TIMEOUT (said by home_wait_ready), not for a silent home. */
static void finish(ingot_cache_t *c, ingot_source_req_t *req, int home, ingot_status_t st,
                   int unfilled)
{
    uint64_t ms = ingot_transport_peer_timeout(c->transport) / 1000000;
    if (st == INGOT_OK) {
        ingot_source_complete(req, INGOT_OK);
    } else if (st == INGOT_ERR_CONFIG || st == INGOT_ERR_FORMAT) {
        /* unreachable with this UCX_TLS, or its key or reply malformed: logged with the rank */
        ingot_source_complete(req, st);
    } else if (st == INGOT_ERR_TIMED_OUT && c->policy == INGOT_PEER_FAILURE_ABORT) {
        if (!unfilled) {
            ingot_error("cache: rank %d (host %s) did not answer a read of %" PRIu64
                        " bytes within INGOT_PEER_TIMEOUT (%" PRIu64 " ms); "
                        "INGOT_PEER_FAILURE=abort ends the job ('storage' would read its "
                        "samples from storage instead)",
                        home, ingot_transport_host(c->transport, home), req->length, ms);
        }
        ingot_abort_raise(c->plan.peer_lost); /* the trainer's reductions wait on it too */
        ingot_source_complete(req, st);
    } else {
        char why[160];
        if (st == INGOT_ERR_TIMED_OUT) {
            if (unfilled) {
                snprintf(why, sizeof(why), "has not filled its window within INGOT_TIMEOUT");
            } else {
                snprintf(why, sizeof(why),
                         "did not answer within INGOT_PEER_TIMEOUT (%" PRIu64 " ms)", ms);
            }
            home_give_up(c, home, why);
        } else {
            ingot_warn("cache: a read of %" PRIu64 " bytes from rank %d (host %s) failed (%s); "
                       "reading them from storage",
                       req->length, home, ingot_transport_host(c->transport, home),
                       ingot_status_string(st));
        }
        atomic_fetch_add(&c->peer_fallbacks, 1);
        ingot_source_retry(req, st);
    }
}

/* ---------------------------------------------------------------- requests */

static cache_req_t *req_get(ingot_cache_t *c)
{
    for (uint32_t i = 0; i < c->nreqs; i++) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&c->reqs[i].busy, &idle, 1)) {
            return &c->reqs[i];
        }
    }
    return NULL;
}

/* Every read of a request's op came back (transport lock held: no transport calls here). */
static void op_done(ingot_transport_op_t *op)
{
    cache_req_t *cr = op->arg;
    ingot_cache_t *c = cr->cache;
    ingot_source_req_t *req = cr->req;
    int home = cr->home;
    ingot_status_t st = cr->sync_st != INGOT_OK ? cr->sync_st : atomic_load(&op->status);
    atomic_store(&cr->busy, 0);
    finish(c, req, home, st, 0);
}

/* Wait until @p home has filled its window (it may still be in the fill epoch); *@p unfilled_p
 * set when it has not by @p deadline_ns (said here). */
static ingot_status_t home_wait_ready(ingot_cache_t *c, int home, uint64_t deadline_ns,
                                      int *unfilled_p)
{
    for (;;) {
        int state = atomic_load(&c->home_state[home]);
        if (state != HOME_UNKNOWN) {
            return state == HOME_READY ? INGOT_OK : INGOT_ERR_TIMED_OUT;
        }
        int ready = 0;
        ingot_status_t st = INGOT_OK;
        if (home == c->rank) { /* this rank's own fill may still be in its last steps */
            ready = atomic_load_explicit(&c->filled, memory_order_acquire) >=
                    c->place.fill_expected;
        } else if ((st = ingot_transport_window_probe(c->window, home, &ready)) != INGOT_OK) {
            return st;
        }
        if (ready) {
            int unknown = HOME_UNKNOWN;
            atomic_compare_exchange_strong(&c->home_state[home], &unknown, HOME_READY);
            continue;
        }
        if (ingot_time_ns() >= deadline_ns) {
            ingot_error("cache: rank %d (host %s) has not filled its cache window within "
                        "INGOT_TIMEOUT (it is still in epoch %" PRIu64 ", or stopped)",
                        home, ingot_transport_host(c->transport, home), c->fill_epoch);
            *unfilled_p = 1;
            return INGOT_ERR_TIMED_OUT;
        }
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

typedef struct piece {
    uint64_t off; /* in the home's window */
    char *dst;
    size_t len;
    int device; /* dst is GPU memory */
} piece_t;

static ingot_status_t piece_emit(ingot_cache_t *c, cache_req_t *cr, const piece_t *p)
{
    if (cr == NULL && p->device) { /* this rank's own window, into GPU memory */
        return ingot_cuda_copy(p->dst, (char *)ingot_transport_window_data(c->window) + p->off,
                               p->len, "cache read into GPU memory");
    }
    if (cr == NULL) { /* this rank's own window */
        return ingot_transport_window_read_local(c->window, p->off, p->dst, p->len);
    }
    if (p->device) {
        return ingot_transport_read_device(c->window, &cr->op, p->off, p->dst, p->len);
    }
    return ingot_transport_read(c->window, &cr->op, p->off, p->dst, p->len);
}

/* Walk the request's extents over its iovecs, reading each piece from the home's window. */
static ingot_status_t read_pieces(ingot_cache_t *c, ingot_source_req_t *req, cache_req_t *cr)
{
    int i = 0;
    size_t in = 0;
    piece_t pend = {0};
    ingot_status_t st = INGOT_OK;
    for (uint32_t k = 0; k < req->nextents && st == INGOT_OK; k++) {
        ingot_cache_entry_t e = ingot_cache_entry(c, req->extents[k].index);
        uint64_t off = e.offset, left = req->extents[k].length;
        while (left > 0 && st == INGOT_OK) {
            if (i >= req->iovcnt) {
                return ingot_fail(INGOT_ERR_INTERNAL,
                                  "cache: the request's iovecs are shorter than its samples");
            }
            char *dst = (char *)req->iov[i].iov_base + in;
            size_t n = req->iov[i].iov_len - in;
            int device = (req->mem != NULL && req->mem[i] == INGOT_SOURCE_MEM_DEVICE);
            n = n < left ? n : (size_t)left;
            if (pend.len > 0 && pend.off + pend.len == off && pend.dst + pend.len == dst &&
                pend.device == device) {
                pend.len += n; /* adjacent in the window and in the destination */
            } else {
                if (pend.len > 0) {
                    st = piece_emit(c, cr, &pend);
                }
                pend = (piece_t){.off = off, .dst = dst, .len = n, .device = device};
            }
            off += n;
            left -= n;
            in += n;
            if (in == req->iov[i].iov_len) {
                i++;
                in = 0;
            }
        }
    }
    if (st == INGOT_OK && pend.len > 0) {
        st = piece_emit(c, cr, &pend);
    }
    return st;
}

/* ---------------------------------------------------------------- source ops */

static ingot_status_t cache_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    ingot_cache_t *c = cache_of(src);
    if (req->extents == NULL || req->nextents == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "cache: a request without samples");
    }
    /* A read from a peer is bounded by INGOT_PEER_TIMEOUT, and this source completes it by
     * then: the request's own deadline moves just past that bound, so the peer's verdict (which
     * names the rank) is what the reader sees, also when INGOT_TIMEOUT is as short or shorter. */
    uint64_t peer_deadline = ingot_deadline_after(ingot_transport_peer_timeout(c->transport));
    if (req->deadline_ns < peer_deadline + CACHE_VERDICT_GRACE_NS) {
        req->deadline_ns = peer_deadline + CACHE_VERDICT_GRACE_NS;
    }
    int home = ingot_cache_entry(c, req->extents[0].index).home;
    for (uint32_t k = 0; k < req->nextents; k++) {
        ingot_cache_entry_t e = ingot_cache_entry(c, req->extents[k].index);
        if (home < 0 || e.home != home || e.length != req->extents[k].length) {
            ingot_source_retry(req, INGOT_ERR_NOT_FOUND);
            return INGOT_OK;
        }
    }
    int unfilled = 0;
    ingot_status_t st = home_wait_ready(c, home, req->deadline_ns, &unfilled);
    if (st != INGOT_OK) {
        finish(c, req, home, st, unfilled);
        return INGOT_OK;
    }
    if (home == c->rank) {
        ingot_source_complete(req, read_pieces(c, req, NULL));
        return INGOT_OK;
    }
    cache_req_t *cr = req_get(c);
    if (cr == NULL) {
        return ingot_fail(INGOT_ERR_INTERNAL, "cache: more than %u requests in flight", c->nreqs);
    }
    cr->req = req;
    cr->home = home;
    cr->sync_st = INGOT_OK;
    ingot_transport_op_begin(c->transport, &cr->op, home, peer_deadline, req);
    cr->sync_st = read_pieces(c, req, cr);
    ingot_transport_op_end(c->transport, &cr->op); /* op_done comes once, maybe right here */
    return INGOT_OK;
}

static unsigned cache_progress(ingot_source_t *src, uint64_t until_ns)
{
    (void)until_ns;
    return ingot_transport_progress(cache_of(src)->transport);
}

static ingot_status_t cache_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    ingot_cache_t *c = cache_of(src);
    for (uint32_t i = 0; i < c->nreqs; i++) {
        cache_req_t *cr = &c->reqs[i];
        if (atomic_load(&cr->busy) && cr->req == req) {
            /* the transport checks, under its lock, that the op still serves this request */
            ingot_status_t st = ingot_transport_op_cancel(c->transport, &cr->op, req);
            if (st == INGOT_ERR_BUSY) {
                return INGOT_ERR_BUSY; /* bytes are landing: op_done will come */
            }
            if (st == INGOT_OK) {
                atomic_store(&cr->busy, 0);
            }
            return INGOT_OK; /* cancelled, or completed already */
        }
    }
    return INGOT_OK;
}

static const char *cache_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    const ingot_cache_t *c = cache_of(src);
    (void)shard;
    snprintf(buf, len, "peer cache (%" PRIu64 " bytes per rank over %d ranks)", c->window_bytes,
             c->world);
    return buf;
}

static void cache_source_destroy(ingot_source_t *src)
{
    (void)src; /* owned by the cache: ingot_cache_destroy() */
}

static const ingot_source_ops_t cache_ops = {.submit = cache_submit,
                                             .progress = cache_progress,
                                             .cancel = cache_cancel,
                                             .describe = cache_describe,
                                             .destroy = cache_source_destroy};

ingot_source_t *ingot_cache_source(ingot_cache_t *c)
{
    return &c->source;
}

ingot_status_t ingot_cache_source_init(ingot_cache_t *c)
{
    c->source.ops = &cache_ops;
    c->nreqs = c->plan.nreqs;
    c->reqs = ingot_calloc(c->nreqs, sizeof(*c->reqs), "cache requests");
    c->home_state = ingot_calloc((size_t)c->world, sizeof(*c->home_state), "cache homes");
    if (c->reqs == NULL || c->home_state == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < c->nreqs; i++) {
        c->reqs[i].cache = c;
        c->reqs[i].op.cb = op_done;
        c->reqs[i].op.arg = &c->reqs[i];
    }
    return INGOT_OK;
}

int ingot_cache_source_fini(ingot_cache_t *c)
{
    for (uint32_t i = 0; c->reqs != NULL && i < c->nreqs; i++) {
        cache_req_t *cr = &c->reqs[i];
        if (!atomic_load(&cr->busy)) {
            continue;
        }
        ingot_status_t st = ingot_transport_op_cancel(c->transport, &cr->op, cr->req);
        if (st == INGOT_OK) {
            atomic_store(&cr->busy, 0);
            ingot_source_complete(cr->req, INGOT_ERR_CANCELED);
            continue;
        }
        if (st == INGOT_ERR_NOT_FOUND) {
            continue; /* completed: its callback ran or is running (settled below) */
        }
        /* Bytes still landing: end them by closing the endpoint where the pair allows it. */
        ingot_transport_peer_close(c->transport, cr->home);
        uint64_t deadline = ingot_deadline_after(1000000000ull);
        while (atomic_load(&cr->busy) && ingot_time_ns() < deadline) {
            ingot_transport_progress(c->transport);
        }
        if (atomic_load(&cr->busy)) {
            ingot_warn("cache: a read from rank %d is still landing at destroy; the cache's "
                       "memory is left allocated",
                       cr->home);
            c->leaked = 1; /* a late completion may still use it */
            return 0;
        }
    }
    if (c->transport != NULL) {
        ingot_transport_settle(c->transport); /* callbacks still running are over */
    }
    return 1;
}
