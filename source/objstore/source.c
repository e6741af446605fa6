/*
 * The object-store byte source (objstore_source.h): its life (client, one object per shard, the
 * request pool), a request's way (parts.c, or direct GETs cut into pieces of at least a part),
 * its end and its cancellation, describe, and the counters per epoch.
 */
#include "source/objstore/source_impl.h"
#include "client/objstore_impl.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ requests */

ingot_objstore_counters_t *ingot_objsrc_tally(os_source_t *s, uint64_t epoch)
{
    if (s->tallies == NULL || epoch < s->first_epoch || epoch - s->first_epoch >= s->nepochs) {
        return NULL;
    }
    return &s->tallies[epoch - s->first_epoch];
}

void ingot_objsrc_note_failure(os_req_t *r, ingot_status_t status, const char *message)
{
    if (r->status != INGOT_OK) {
        return;
    }
    r->status = status;
    snprintf(r->req->error, sizeof(r->req->error), "%s", message ? message : "");
}

void ingot_objsrc_copy_in(const ingot_source_req_t *req, uint64_t at, const char *from,
                          uint64_t len)
{
    int i = 0;
    while (i < req->iovcnt && at >= req->iov[i].iov_len) {
        at -= req->iov[i++].iov_len;
    }
    for (; len > 0 && i < req->iovcnt; i++, at = 0) {
        size_t n = req->iov[i].iov_len - (size_t)at;
        n = n < len ? n : (size_t)len;
        memcpy((char *)req->iov[i].iov_base + at, from, n);
        from += n;
        len -= n;
    }
}

void ingot_objsrc_finish(os_source_t *s, os_req_t *r)
{
    ingot_source_req_t *req = r->req;
    ingot_status_t status = r->cancelled ? INGOT_ERR_CANCELED : r->status;
    if (status == INGOT_OK) {
        req->error[0] = '\0';
    }
    pthread_mutex_lock(&s->lock);
    r->req = NULL;
    r->next_free = s->free_reqs;
    s->free_reqs = r;
    pthread_mutex_unlock(&s->lock);
    ingot_source_complete(req, status); /* last touch of req */
}

/* A direct GET ended (I/O thread, or destroy). */
static void piece_done(ingot_objstore_req_t *get)
{
    os_piece_t *p = get->arg;
    os_req_t *r = p->owner;
    os_source_t *s = r->src;
    pthread_mutex_lock(&s->lock);
    if (get->status != INGOT_OK) {
        ingot_objsrc_note_failure(r, get->status, get->message);
    }
    r->ended++;
    int last = --r->left == 0;
    pthread_mutex_unlock(&s->lock);
    if (last) {
        ingot_objsrc_finish(s, r);
    }
}

/* Bytes of direct GET @p k of @p r (each piece_len, the last what is left). */
static uint64_t piece_length(const os_req_t *r, uint32_t k)
{
    uint64_t at = k * r->piece_len, left = r->req->length - at;
    return left < r->piece_len ? left : r->piece_len;
}

/* A direct GET's bytes landing (I/O thread, which runs every piece of a request): the pieces
 * land at once and in any order, so the request's prefix is the pieces whole from the first on
 * and the next one's own prefix; reported to the caller at least req->piece bytes apart (0: once
 * every byte landed), and once the request is whole. */
static void piece_landed(ingot_objstore_req_t *get, uint64_t upto)
{
    os_piece_t *p = get->arg;
    os_req_t *r = p->owner;
    const ingot_source_req_t *req = r->req;
    p->landed = upto;
    /* lengths from the cut, not from the GETs still being set up */
    while (r->whole < r->npieces && r->pieces[r->whole].landed == piece_length(r, r->whole)) {
        r->whole++;
    }
    uint64_t prefix = r->whole == r->npieces ? req->length
                                             : r->whole * r->piece_len + r->pieces[r->whole].landed;
    uint64_t every = req->piece > 0 ? req->piece : req->length; /* 0: once, when all landed */
    if (prefix > r->reported && (prefix - r->reported >= every || prefix == req->length)) {
        r->reported = prefix;
        ingot_source_landed(r->req, prefix);
    }
}

/* Cut @p r's iovecs at request byte @p from for @p len bytes into @p out; returns the count. */
static int pieces_iov(const ingot_source_req_t *req, uint64_t from, uint64_t len, struct iovec *out)
{
    int i = 0, n = 0;
    while (i < req->iovcnt && from >= req->iov[i].iov_len) {
        from -= req->iov[i++].iov_len;
    }
    for (; len > 0 && i < req->iovcnt; i++, from = 0) {
        size_t take = req->iov[i].iov_len - (size_t)from;
        take = take < len ? take : (size_t)len;
        out[n++] = (struct iovec){(char *)req->iov[i].iov_base + from, take};
        len -= take;
    }
    return n;
}

/* Fill piece @p k of @p r: [at, at + len) of the request. */
static void piece_setup(os_source_t *s, os_req_t *r, uint32_t k, uint64_t at, uint64_t len,
                        struct iovec *iov, uint64_t deadline_ns)
{
    const ingot_source_req_t *req = r->req;
    os_piece_t *p = &r->pieces[k];
    int n = pieces_iov(req, at, len, iov);
    p->owner = r;
    p->get = (ingot_objstore_req_t){.object = s->objects[req->shard],
                                    .offset = req->offset + at,
                                    .length = len,
                                    .object_size = s->sizes[req->shard],
                                    .etag = s->etags[req->shard],
                                    .iov = iov,
                                    .iovcnt = n,
                                    .deadline_ns = deadline_ns,
                                    .cb = piece_done,
                                    .arg = p,
                                    .landed = req->landed != NULL ? piece_landed : NULL,
                                    .tally = ingot_objsrc_tally(s, req->epoch)};
}

/* The request's range as GETs of at least a part each, all in flight at once. */
static void direct_submit(os_source_t *s, os_req_t *r, uint64_t deadline_ns)
{
    const ingot_source_req_t *req = r->req;
    uint64_t piece = (req->length + OS_PIECES_MAX - 1) / OS_PIECES_MAX;
    piece = piece > s->part_size ? piece : s->part_size;
    struct iovec *iov = r->iov;
    r->direct = 1;
    r->npieces = (uint32_t)((req->length + piece - 1) / piece);
    r->left = r->npieces + 1; /* + 1 while submitting: no piece ends the request early */
    r->piece_len = piece;
    r->whole = 0;
    r->reported = 0;
    for (uint32_t k = 0; k < r->npieces; k++) { /* before any GET starts: a report reads them */
        r->pieces[k].landed = 0;
    }
    for (uint32_t k = 0; k < r->npieces; k++) {
        piece_setup(s, r, k, k * piece, piece_length(r, k), iov, deadline_ns);
        iov += r->pieces[k].get.iovcnt;
        ingot_status_t st = ingot_objstore_submit(s->client, &r->pieces[k].get);
        if (st != INGOT_OK) { /* refused: no callback; counts as ended */
            pthread_mutex_lock(&s->lock);
            ingot_objsrc_note_failure(r, st, ingot_last_error());
            r->left--;
            pthread_mutex_unlock(&s->lock);
        }
    }
    pthread_mutex_lock(&s->lock);
    int last = --r->left == 0;
    pthread_mutex_unlock(&s->lock);
    if (last) {
        ingot_objsrc_finish(s, r);
    }
}

/* Device memory, an unknown shard or a range past the shard: answered now. 1 when answered. */
static int submit_answer_now(os_source_t *s, ingot_source_req_t *req)
{
    for (int i = 0; req->mem != NULL && i < req->iovcnt; i++) {
        if (req->mem[i] != INGOT_SOURCE_MEM_HOST) {
            ingot_source_retry(req, INGOT_ERR_UNSUPPORTED); /* a source with device reach may */
            return 1;
        }
    }
    if (req->iovcnt < 1 || (uint32_t)req->iovcnt > s->iov_max) {
        ingot_status_t st = ingot_fail(INGOT_ERR_INVALID_PARAM,
                                       "objstore: a read in %d iovecs (1-%u taken)", req->iovcnt,
                                       s->iov_max);
        snprintf(req->error, sizeof(req->error), "%s", ingot_last_error());
        ingot_source_complete(req, st);
        return 1;
    }
    if (req->shard >= s->nshards || req->offset > s->sizes[req->shard] ||
        req->length > s->sizes[req->shard] - req->offset || req->length == 0) {
        char d[INGOT_OBJSTORE_DESCRIBE_MAX];
        ingot_status_t st = ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                                       "objstore: read of %" PRIu64 " bytes at offset %" PRIu64
                                       " is beyond %s (%" PRIu64 " bytes recorded)",
                                       req->length, req->offset,
                                       req->shard < s->nshards
                                           ? ingot_objstore_object_describe(s->objects[req->shard],
                                                                            d, sizeof(d))
                                           : "the manifest's shards",
                                       req->shard < s->nshards ? s->sizes[req->shard] : 0);
        snprintf(req->error, sizeof(req->error), "%s", ingot_last_error());
        ingot_source_complete(req, st);
        return 1;
    }
    return 0;
}

static ingot_status_t os_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    os_source_t *s = (os_source_t *)src;
    if (submit_answer_now(s, req)) {
        return INGOT_OK;
    }
    pthread_mutex_lock(&s->lock);
    os_req_t *r = s->free_reqs;
    if (r != NULL) {
        s->free_reqs = r->next_free;
        r->src = s;
        r->req = req;
        r->direct = r->cancelled = 0;
        r->left = r->copying = r->ended = r->npieces = r->nwaits = 0;
        r->status = INGOT_OK;
    }
    pthread_mutex_unlock(&s->lock);
    if (r == NULL) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "objstore: more than %u requests in flight",
                          s->nreqs);
    }
    uint64_t deadline = req->deadline_ns;
    req->deadline_ns = deadline + OS_VERDICT_GRACE_NS;
    if (req->direct || (ingot_objsrc_node_submit(s, r, deadline) != 0 &&
                        ingot_objsrc_parts_submit(s, r, deadline) != 0)) {
        direct_submit(s, r, deadline);
    }
    return INGOT_OK;
}

static unsigned os_progress(ingot_source_t *src, uint64_t until_ns)
{
    (void)src;
    (void)until_ns;
    return 0; /* completions come from the client's I/O thread */
}

/* The pool entry serving @p req, or NULL (lock held). */
static os_req_t *os_find(os_source_t *s, const ingot_source_req_t *req)
{
    for (uint32_t i = 0; i < s->nreqs; i++) {
        if (s->reqs[i].req == req) {
            return &s->reqs[i];
        }
    }
    return NULL;
}

/* Direct GETs still queued are taken back; one in a transfer is stopped and ends soon. Called
 * with the lock held (and left > 0); returns with it released. */
static ingot_status_t direct_cancel(os_source_t *s, os_req_t *r)
{
    uint32_t taken = 0;
    r->left++; /* held: r stays this request's while its GETs are asked back */
    pthread_mutex_unlock(&s->lock);
    for (uint32_t k = 0; k < r->npieces; k++) {
        taken += ingot_objstore_cancel(s->client, &r->pieces[k].get) == INGOT_OK;
    }
    pthread_mutex_lock(&s->lock);
    r->left -= taken + 1;
    int over = r->left == 0, quiet = over && r->ended == 0;
    if (quiet) { /* every GET was taken back before it started: no completion comes */
        r->req = NULL;
        r->next_free = s->free_reqs;
        s->free_reqs = r;
    }
    pthread_mutex_unlock(&s->lock);
    if (over && !quiet) {
        ingot_objsrc_finish(s, r); /* the others ended while held: this is the last */
    }
    return quiet ? INGOT_OK : INGOT_ERR_BUSY;
}

static ingot_status_t os_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    os_source_t *s = (os_source_t *)src;
    pthread_mutex_lock(&s->lock);
    os_req_t *r = os_find(s, req);
    if (r == NULL || r->left == 0) { /* ending right now: its completion is on its way */
        pthread_mutex_unlock(&s->lock);
        return INGOT_ERR_BUSY;
    }
    r->cancelled = 1;
    if (!r->direct) {
        ingot_status_t st = ingot_objsrc_parts_cancel(s, r);
        pthread_mutex_unlock(&s->lock);
        return st;
    }
    return direct_cancel(s, r);
}

static const char *os_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    const os_source_t *s = (const os_source_t *)src;
    char d[INGOT_OBJSTORE_DESCRIBE_MAX];
    if (shard == INGOT_SOURCE_ALL || shard >= s->nshards) {
        snprintf(buf, len, "%s, parts of %" PRIu64 " KiB, part cache %u parts",
                 ingot_objstore_describe(s->client, d, sizeof(d)), s->part_size >> 10, s->nparts);
    } else {
        snprintf(buf, len, "objstore:%s",
                 ingot_objstore_object_describe(s->objects[shard], d, sizeof(d)));
    }
    return buf;
}

static void os_destroy(ingot_source_t *src)
{
    os_source_t *s = (os_source_t *)src;
    if (s->nparts > 0 || s->node != NULL) {
        ingot_info("objstore: %s part cache of %u parts: %" PRIu64 " fetched, %" PRIu64
                   " reads served from parts, %" PRIu64 " reads bypassed it (no part free)",
                   s->node ? "the node's" : "this rank's",
                   s->node ? ingot_objsrc_node_parts(s->node) : s->nparts,
                   atomic_load(&s->part_fetches), atomic_load(&s->part_hits),
                   atomic_load(&s->part_bypass));
    }
    ingot_objstore_destroy(s->client); /* outstanding GETs end CANCELED: their requests too */
    ingot_objsrc_node_destroy(s->node);
    for (uint32_t i = 0; s->objects != NULL && i < s->nshards; i++) {
        ingot_objstore_object_destroy(s->objects[i]);
    }
    ingot_objsrc_parts_destroy(s);
    pthread_mutex_destroy(&s->lock);
    free(s->objects);
    free(s->sizes);
    free(s->etags);
    free(s->part_len);
    free(s->reqs);
    free(s->iov_pool);
    free(s->tallies);
    free(s);
}

static const ingot_source_ops_t os_ops = {.submit = os_submit,
                                          .progress = os_progress,
                                          .cancel = os_cancel,
                                          .describe = os_describe,
                                          .destroy = os_destroy};

/* ------------------------------------------------------------------ create */

/* The length of the parts of a shard of @p size: parts of up to an eighth over INGOT_S3_PART_SIZE,
 * all of one length but the last (no sliver of a part). */
uint64_t ingot_objsrc_part_len(uint64_t size, uint64_t part_size)
{
    uint64_t room = OS_PART_ROOM(part_size), n = (size + room - 1) / room;
    return n > 0 ? (size + n - 1) / n : part_size;
}

ingot_status_t ingot_objsrc_shape(ingot_manifest_h manifest, uint64_t part_size,
                                  ingot_objsrc_shape_t *shape_p)
{
    ingot_manifest_info_t mi;
    INGOT_CHECK(ingot_manifest_query(manifest, &mi));
    ingot_objsrc_shape_t sh = {.parts_max = 1};
    for (uint64_t i = 0; i < mi.shard_count; i++) {
        ingot_shard_info_t si;
        INGOT_CHECK(ingot_manifest_shard_get(manifest, i, &si));
        uint64_t len = si.size > 0 ? ingot_objsrc_part_len(si.size, part_size)
                                   : 0; /* empty: no part */
        uint64_t parts = len > 0 ? (si.size + len - 1) / len : 1;
        sh.slot = len > sh.slot ? len : sh.slot;
        sh.largest = si.size > sh.largest ? si.size : sh.largest;
        sh.parts_max = parts > sh.parts_max ? (uint32_t)parts : sh.parts_max;
    }
    sh.slot = sh.slot > 0 ? sh.slot : 1;
    sh.samples_mean = mi.shard_count > 0 ? (double)mi.sample_count / (double)mi.shard_count : 1;
    *shape_p = sh;
    return INGOT_OK;
}

/* Shard @p i's object (its URL beside the manifest), its size, ETag and part length. */
static ingot_status_t os_object(os_source_t *s, uint32_t i, char *url)
{
    ingot_shard_info_t si;
    INGOT_CHECK(ingot_manifest_shard_get(s->manifest, i, &si));
    INGOT_CHECK(ingot_manifest_shard_path(s->manifest, i, url, OS_URL_MAX));
    INGOT_CHECK(ingot_objstore_object_create(s->client, url, &s->objects[i]));
    s->sizes[i] = si.size;
    s->etags[i] = ingot_manifest_shard_etag(s->manifest, i);
    s->part_len[i] = ingot_objsrc_part_len(si.size,
                                           s->part_size); /* an empty shard's: never used */
    if (si.size > 0 && s->part_len[i] > s->slot_room) {
        s->slot_room = s->part_len[i];
    }
    return INGOT_OK;
}


/* One object per shard. */
static ingot_status_t os_objects(os_source_t *s)
{
    char *url = ingot_malloc(OS_URL_MAX, "objstore URL");
    ingot_status_t st = url ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < s->nshards && st == INGOT_OK; i++) {
        st = os_object(s, i, url);
    }
    free(url);
    if (st == INGOT_OK && s->nshards > 0) {
        const ingot_objstore_object_t *o = s->objects[0];
        snprintf(s->bucket, sizeof(s->bucket), "%s", o->url.bucket ? o->url.bucket : o->url.host);
    }
    return st;
}

/* The request pool, its iovec room, the per-epoch counters. */
static ingot_status_t os_pool(os_source_t *s, const ingot_source_objstore_params_t *p)
{
    size_t per = (size_t)p->iov_max + OS_PIECES_MAX;
    s->nreqs = p->nreqs > 0 ? p->nreqs : 1;
    s->iov_max = p->iov_max;
    s->reqs = ingot_calloc(s->nreqs, sizeof(*s->reqs), "objstore requests");
    s->iov_pool = ingot_calloc(s->nreqs * per, sizeof(struct iovec), "objstore iovecs");
    s->first_epoch = p->first_epoch;
    s->nepochs = p->nepochs;
    s->tallies = p->nepochs ? ingot_calloc(p->nepochs, sizeof(*s->tallies), "objstore epochs")
                            : NULL;
    if (s->reqs == NULL || s->iov_pool == NULL || (p->nepochs && s->tallies == NULL)) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = s->nreqs; i-- > 0;) {
        s->reqs[i].iov = s->iov_pool + i * per;
        s->reqs[i].next_free = s->free_reqs;
        s->free_reqs = &s->reqs[i];
    }
    return INGOT_OK;
}

static ingot_status_t os_init(os_source_t *s, const ingot_source_objstore_params_t *p)
{
    const ingot_objstore_config_t *cfg;
    INGOT_CHECK(ingot_objstore_config(&cfg));
    ingot_objstore_params_t cp = {.field_mask = INGOT_OBJSTORE_PARAM_URL, .url = p->url};
    INGOT_CHECK(ingot_objstore_create(&cp, &s->client));
    ingot_manifest_info_t mi;
    INGOT_CHECK(ingot_manifest_query(p->manifest, &mi));
    s->manifest = p->manifest;
    s->nshards = (uint32_t)mi.shard_count;
    s->part_size = cfg->part_size;
    s->objects = ingot_calloc(s->nshards + 1, sizeof(ingot_objstore_object_t *),
                              "objstore objects");
    s->sizes = ingot_calloc(s->nshards + 1, sizeof(*s->sizes), "objstore sizes");
    s->etags = ingot_calloc(s->nshards + 1, sizeof(*s->etags), "objstore etags");
    s->part_len = ingot_calloc(s->nshards + 1, sizeof(*s->part_len), "objstore parts");
    if (!s->objects || !s->sizes || !s->etags || !s->part_len) {
        return INGOT_ERR_NO_MEMORY;
    }
    INGOT_CHECK(os_objects(s));
    s->slot_room = s->slot_room > 0 ? s->slot_room : OS_PART_ROOM(s->part_size); /* no shards */
    INGOT_CHECK(os_pool(s, p));
    return ingot_objsrc_parts_create(s, p->cache_bytes, p->numa_node);
}

ingot_status_t ingot_source_objstore_create(const ingot_source_objstore_params_t *params,
                                            ingot_source_t **src_p)
{
    os_source_t *s = ingot_calloc(1, sizeof(*s), "objstore source");
    if (s == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    s->base.ops = &os_ops;
    s->lru.next = s->lru.prev = &s->lru;
    pthread_mutex_init(&s->lock, NULL);
    ingot_status_t st = os_init(s, params);
    if (st != INGOT_OK) {
        os_destroy(&s->base);
        return st;
    }
    *src_p = &s->base;
    return INGOT_OK;
}

void ingot_source_objstore_identity(const ingot_source_t *src, ingot_objstore_identity_t *id_p)
{
    ingot_objstore_identity(((const os_source_t *)src)->client, id_p);
}

const char *ingot_source_objstore_bucket(const ingot_source_t *src)
{
    return ((const os_source_t *)src)->bucket;
}

uint64_t ingot_source_objstore_part_hits(const ingot_source_t *src)
{
    return atomic_load(&((const os_source_t *)src)->part_hits);
}

ingot_status_t ingot_source_objstore_share(ingot_source_t *src, const ingot_tier_plan_t *plan,
                                           uint64_t bytes)
{
    os_source_t *s = (os_source_t *)src;
    ingot_status_t st = ingot_objsrc_node_create(s, plan, bytes, &s->node); /* agreed on the node */
    return ingot_mpi_agree(&plan->comm, st, "object store: the node's part cache");
}

void ingot_source_objstore_advance(ingot_source_t *src, uint64_t step)
{
    ingot_objsrc_node_advance(((os_source_t *)src)->node, step);
}

ingot_status_t ingot_source_objstore_node_epoch(const ingot_source_t *src, uint64_t epoch,
                                                uint64_t *gets_p, uint64_t *bytes_p,
                                                uint64_t *needed_p)
{
    const os_source_t *s = (const os_source_t *)src;
    return ingot_objsrc_node_epoch(s->node, epoch, gets_p, bytes_p, needed_p) == 0
               ? INGOT_OK
               : INGOT_ERR_NOT_FOUND;
}

ingot_status_t ingot_source_objstore_stats(const ingot_source_t *src, uint64_t epoch,
                                           ingot_objstore_stats_t *stats_p)
{
    os_source_t *s = (os_source_t *)src;
    if (epoch == INGOT_SOURCE_OBJSTORE_ALL) {
        ingot_objstore_stats(s->client, stats_p);
        return INGOT_OK;
    }
    const ingot_objstore_counters_t *t = ingot_objsrc_tally(s, epoch);
    if (t == NULL) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    ingot_objstore_counters_snapshot(t, stats_p);
    return INGOT_OK;
}
