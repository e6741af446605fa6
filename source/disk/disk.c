/*
 * The disk tier's life (see disk.h): create (configuration, the manifest's pieces, the folder, the
 * homes, buffers, keeper and server), destroy; its buffers, its own entries' reads and bad
 * entries, the counters and the report.
 */
#include "source/disk/disk_impl.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/time.h"
#include "shard/manifest.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t ingot_disk_shard_of(const ingot_disk_t *d, uint64_t p)
{
    uint32_t lo = 0, hi = d->pieces.nshards;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d->piece0[mid] <= p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

ingot_disk_key_t ingot_disk_key(const ingot_disk_t *d, uint64_t p)
{
    uint32_t s = ingot_disk_shard_of(d, p);
    return (ingot_disk_key_t){d->shard_hash[s], p - d->piece0[s], d->piece_log2};
}

uint64_t ingot_disk_piece_len(const ingot_disk_t *d, uint64_t p)
{
    uint32_t s = ingot_disk_shard_of(d, p);
    uint64_t at = (p - d->piece0[s]) << d->piece_log2, size = d->shard_size[s];
    return size - at < d->piece_bytes ? size - at : d->piece_bytes;
}

uint64_t ingot_disk_piece_of(const ingot_disk_t *d, const ingot_disk_key_t *key)
{
    for (uint32_t s = 0; key->piece_log2 == d->piece_log2 && s < d->pieces.nshards; s++) {
        if (d->shard_hash[s] == key->shard_hash && key->piece < d->piece0[s + 1] - d->piece0[s]) {
            return d->piece0[s] + key->piece;
        }
    }
    return UINT64_MAX;
}

/* ---- buffers */

disk_buf_t *ingot_disk_buf_get(ingot_disk_t *d, uint64_t deadline_ns)
{
    void *b = NULL;
    return ingot_mpmc_pop_wait(&d->free_bufs, &b, deadline_ns, &d->abort) == INGOT_OK ? b : NULL;
}

disk_buf_t *ingot_disk_buf_try(ingot_disk_t *d)
{
    void *b = NULL;
    return ingot_mpmc_try_pop(&d->free_bufs, &b) ? b : NULL;
}

disk_buf_t *ingot_disk_buf_rx(ingot_disk_t *d)
{
    void *b = NULL;
    return ingot_mpmc_try_pop(&d->free_rx, &b) ? b : NULL;
}

void ingot_disk_buf_put(ingot_disk_t *d, disk_buf_t *b)
{
    if (b->credit) { /* a part's, handed over or dropped: its credit back */
        b->credit = 0;
        atomic_fetch_sub(&d->parts_out, 1);
    }
    /* The ring has room for every buffer, but a try could still find a slot that a preempted
     * consumer has not handed back yet (the buffer would be lost): wait that moment out. */
    (void)ingot_mpmc_push_wait(b->rx ? &d->free_rx : &d->free_bufs, b, INGOT_DEADLINE_NONE, NULL);
}

static ingot_status_t disk_bufs(ingot_disk_t *d)
{
    size_t each = INGOT_DISK_HEADER_BYTES + d->piece_bytes + DISK_SLACK;
    d->nbufs = d->p.nreqs / 2 + (d->parts ? DISK_PARTS_OUT : DISK_OUTBOX) + DISK_SPARE_BUFS;
    /* the node's lowest rank becomes its keeper: room for its writers' queue of pushes, and the
     * pushes its writers hold, too */
    d->nrx = DISK_RX_BUFS + (d->p.node->local_rank == 0 ? DISK_FILL_QUEUE + DISK_WRITERS : 0);
    uint32_t all = d->nbufs + d->nrx;
    ingot_manifest_maxima_t max;
    ingot_status_t st = ingot_manifest_maxima_get(d->p.manifest, &max);
    d->fields_max = st == INGOT_OK && max.fields > 0 ? max.fields : 1;
    d->bufs = ingot_calloc(all, sizeof(*d->bufs), "disk buffers");
    d->buf_rows = ingot_calloc((size_t)all * d->fields_max, sizeof(*d->buf_rows),
                               "disk buffers' field rows");
    st = st != INGOT_OK                    ? st
         : d->bufs == NULL || !d->buf_rows ? INGOT_ERR_NO_MEMORY
                                           : ingot_mpmc_init(&d->free_bufs, d->nbufs);
    if (st == INGOT_OK) {
        st = ingot_mpmc_init(&d->free_rx, d->nrx); /* both cleaned up by disk_free */
    }
    if (st == INGOT_OK) {
        st = ingot_mem_alloc(each * all, INGOT_MEM_F_HUGEPAGE, -1, "disk tier buffers",
                             &d->buf_mem);
    }
    for (uint32_t i = 0; st == INGOT_OK && i < all; i++) {
        d->bufs[i] = (disk_buf_t){.mem = (uint8_t *)d->buf_mem.ptr + i * each,
                                  .rx = i >= d->nbufs,
                                  .d = d,
                                  .rows = d->buf_rows + (size_t)i * d->fields_max};
        ingot_event_init(&d->bufs[i].ev); /* once: a late completion may still notify it */
        ingot_disk_buf_put(d, &d->bufs[i]);
    }
    return st;
}

/* ---- this node's entries */

/* Remove piece @p p's entry of this node's folder (the ledger told): its bytes, or 0. */
static uint64_t disk_remove(ingot_disk_t *d, uint64_t p)
{
    ingot_disk_key_t key = ingot_disk_key(d, p);
    ingot_disk_fd_drop(d, p);
    uint64_t gone = 0;
    if (ingot_disk_ledger_lock(&d->folder) == INGOT_OK) {
        gone = ingot_disk_folder_remove(&d->folder, &key);
        ingot_disk_ledger_add(&d->folder, -(int64_t)gone);
        ingot_disk_ledger_unlock(&d->folder);
    }
    return gone;
}

/* Count a bad entry of piece @p p (@p gone: this rank removed it), say the first one. */
static void disk_said_bad(ingot_disk_t *d, uint64_t p, uint64_t gone, const char *why)
{
    char name[INGOT_DISK_NAME_MAX];
    ingot_disk_key_t key = ingot_disk_key(d, p);
    ingot_disk_entry_name(&key, 0, name, sizeof(name));
    atomic_fetch_add(&d->bad_entries, 1);
    /* said by the rank that removed it (another may have found it too), once per process */
    if (gone != 0 && atomic_exchange(&d->said_bad, 1) == 0) {
        ingot_warn("disk tier: entry %s/%s is bad (%s): removed, its bytes read from storage "
                   "(further bad entries are counted in the report, not said)",
                   d->dir, name, why);
    } else {
        ingot_info("disk tier: entry %s/%s is bad (%s): removed", d->dir, name, why);
    }
}

void ingot_disk_bad_entry(ingot_disk_t *d, uint64_t p, const char *why)
{
    disk_said_bad(d, p, disk_remove(d, p), why);
}

int ingot_disk_damaged(ingot_disk_t *d, const ingot_sample_info_t *s)
{
    if (s->shard >= d->pieces.nshards || s->length == 0 || d->serving_nodes == 0) {
        return 0;
    }
    int held = 0;
    uint64_t k0 = s->offset >> d->piece_log2, k1 = (s->offset + s->length - 1) >> d->piece_log2;
    for (uint64_t k = k0; k <= k1 && d->piece0[s->shard] + k < d->piece0[s->shard + 1]; k++) {
        uint64_t p = d->piece0[s->shard] + k, gone;
        if (d->home[p] == d->node && (gone = disk_remove(d, p)) != 0) {
            disk_said_bad(d, p, gone, "a sample read from it failed its hash");
            held = 1;
        }
    }
    return held;
}

ingot_status_t ingot_disk_read_local(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                     void *window, size_t room, int check, size_t *shift_p)
{
    ingot_disk_bad_t bad;
    disk_fd_ref_t ref;
    ingot_status_t st = ingot_disk_fd_get(d, p, &ref, &bad);
    if (st == INGOT_OK) {
        st = ingot_disk_entry_blocks_read(ref.o, off, len, window, room, shift_p, check, &bad);
        if (st == INGOT_ERR_CORRUPT && !ingot_disk_fd_linked(&ref)) {
            st = INGOT_ERR_NOT_FOUND; /* evicted, and emptied, while it was read: a miss */
        }
        ingot_disk_fd_put(d, &ref);
    }
    if (st == INGOT_ERR_CORRUPT || st == INGOT_ERR_FORMAT) {
        ingot_disk_bad_entry(d, p, bad.why);
        return INGOT_ERR_NOT_FOUND;
    }
    if (st == INGOT_ERR_IO) {
        char name[INGOT_DISK_NAME_MAX];
        ingot_disk_key_t key = ingot_disk_key(d, p);
        ingot_disk_entry_name(&key, 0, name, sizeof(name));
        static _Atomic int said;
        if (atomic_exchange(&said, 1) == 0) {
            ingot_warn("disk tier: reading entry %s/%s failed (%s): read from storage (further "
                       "read errors are not said)",
                       d->dir, name, bad.why);
        }
        return INGOT_ERR_NOT_FOUND;
    }
    return st;
}

/* ---- create and destroy */

/* The manifest's pieces: shard s holds [piece0[s], piece0[s + 1]). */
static ingot_status_t disk_pieces(ingot_disk_t *d)
{
    ingot_manifest_info_t mi;
    ingot_status_t st = ingot_manifest_query(d->p.manifest, &mi);
    if (st != INGOT_OK) {
        return st;
    }
    uint32_t n = (uint32_t)mi.shard_count;
    d->piece0 = ingot_calloc((size_t)n + 1, sizeof(uint64_t), "disk pieces");
    d->shard_hash = ingot_calloc(n ? n : 1, sizeof(uint64_t), "disk pieces");
    d->shard_size = ingot_calloc(n ? n : 1, sizeof(uint64_t), "disk pieces");
    if (!d->piece0 || !d->shard_hash || !d->shard_size) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t s = 0; s < n; s++) {
        ingot_shard_info_t si;
        if ((st = ingot_manifest_shard_get(d->p.manifest, s, &si)) != INGOT_OK) {
            return st;
        }
        d->shard_hash[s] = si.hash;
        d->shard_size[s] = si.size;
        d->piece0[s + 1] = d->piece0[s] + ((si.size + d->piece_bytes - 1) >> d->piece_log2);
    }
    d->npieces = d->piece0[n];
    d->pieces = (ingot_disk_pieces_t){
        .nshards = n, .piece_log2 = d->piece_log2, .piece0 = d->piece0};
    return INGOT_OK;
}

/* The configuration, this rank's folder (its verdict in *usable_p, said once per node). */
static ingot_status_t disk_setup(ingot_disk_t *d, int *usable_p)
{
    const ingot_disk_config_t *cfg = d->cfg;
    ingot_status_t st;
    d->budget = cfg->bytes;
    d->lru = cfg->policy == INGOT_DISK_POLICY_LRU;
    d->prefetch_pct = (int)cfg->prefetch;
    d->parts = cfg->fill == INGOT_DISK_FILL_PARTS;
    d->piece_log2 = cfg->piece_log2;
    d->piece_bytes = 1ull << d->piece_log2;
    ingot_log_expand_path(cfg->dir, d->dir, sizeof(d->dir));
    if (d->budget < INGOT_DISK_HEADER_BYTES + d->piece_bytes) { /* not 0: the tier is wanted */
        return ingot_fail(INGOT_ERR_CONFIG,
                          "INGOT_DISK_CACHE_BYTES=%" PRIu64 " is smaller than one entry: a piece "
                          "(INGOT_DISK_CACHE_PIECE=%" PRIu64 ") and its header (%d bytes) take "
                          "%" PRIu64 " bytes; give at least that, or 0 for no disk tier",
                          d->budget, d->piece_bytes, INGOT_DISK_HEADER_BYTES,
                          INGOT_DISK_HEADER_BYTES + d->piece_bytes);
    }
    if ((st = disk_pieces(d)) != INGOT_OK ||
        (d->parts && (st = ingot_disk_spans_build(d)) != INGOT_OK) ||
        (st = disk_bufs(d)) != INGOT_OK || (st = ingot_disk_fds_init(d)) != INGOT_OK) {
        return st;
    }
    char why[PATH_MAX + 512];
    int flags = INGOT_DISK_FOLDER_CREATE | (cfg->shared ? INGOT_DISK_FOLDER_SHARED : 0);
    st = ingot_disk_folder_open(d->dir, flags, d->p.timeout_ns, &d->folder, why, sizeof(why));
    *usable_p = (st == INGOT_OK);
    if (st != INGOT_OK && d->p.node->local_rank == 0) {
        ingot_warn("disk tier: %s; node %s reads storage as without the tier", why,
                   d->p.node->hostname);
    }
    return INGOT_OK;
}

static void disk_free(ingot_disk_t *d)
{
    ingot_disk_fds_fini(d);
    ingot_disk_folder_close(&d->folder);
    ingot_mem_free(&d->buf_mem);
    if (d->bufs != NULL) {
        ingot_mpmc_cleanup(&d->free_bufs);
        ingot_mpmc_cleanup(&d->free_rx);
    }
    ingot_order_destroy(d->order);
    free(d->bufs);
    free(d->buf_rows);
    free(d->piece0);
    free(d->shard_hash);
    free(d->shard_size);
    ingot_disk_spans_free(d);
    ingot_disk_homes_free(&d->homes);
    free(d->homed);
    free((void *)d->piece_hits);
    free(d);
}

/* After the homes: the keeper (this node's lowest rank), the server, the hit counters. */
static ingot_status_t disk_roles(ingot_disk_t *d)
{
    d->piece_hits = ingot_calloc(d->npieces ? d->npieces : 1, sizeof(uint32_t), "disk hits");
    ingot_status_t st = d->piece_hits ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK && d->usable && d->node_keeper[d->node] == d->rank) {
        st = ingot_disk_keeper_create(d);
    }
    if (st == INGOT_OK && d->transport != NULL) {
        st = ingot_disk_serve_start(d);
    }
    if (st == INGOT_OK && d->serving_nodes > 0) {
        st = ingot_disk_pusher_start(d);
    }
    return st;
}

/* The tier object over @p plan and @p below, with the job's transport when it has more than one
 * rank (collective, agreed). */
static ingot_status_t disk_new(const ingot_tier_plan_t *plan, ingot_source_t *below,
                               ingot_disk_t **d_p)
{
    ingot_disk_t *d = ingot_calloc(1, sizeof(*d), "disk tier");
    ingot_status_t st = ingot_mpi_agree(&plan->comm, d ? INGOT_OK : INGOT_ERR_NO_MEMORY,
                                        "disk tier");
    st = st == INGOT_OK && d == NULL ? INGOT_ERR_NO_MEMORY : st; /* (cannot be: for the analyser) */
    if (st != INGOT_OK) {
        free(d);
        return st;
    }
    d->tier.ops = &ingot_disk_tier_ops;
    d->source.ops = &ingot_disk_source_ops;
    d->below = below;
    d->p = *plan;
    d->cfg = plan->cfg->disk;
    d->folder.fd = d->folder.ledger_fd = -1;
    MPI_Comm_rank(plan->comm, &d->rank);
    MPI_Comm_size(plan->comm, &d->world);
    d->node = plan->node->node_id;
    d->nnodes = plan->node->node_count;
    st = d->world > 1 ? plan->transport(plan->transport_arg, &d->transport) : INGOT_OK; /* agreed */
    if (st != INGOT_OK) {
        free(d);
        return st;
    }
    *d_p = d;
    return INGOT_OK;
}

ingot_status_t ingot_disk_create(const ingot_tier_plan_t *plan, ingot_source_t *below,
                                 ingot_disk_t **d_p)
{
    ingot_disk_t *d;
    ingot_status_t st = disk_new(plan, below, &d);
    if (st != INGOT_OK) {
        return st;
    }
    int usable = 0;
    st = disk_setup(d, &usable);
    if (st == INGOT_OK) {
        st = ingot_order_copy(plan->order, &d->order);
    }
    st = ingot_mpi_agree(&plan->comm, st, "disk tier: set-up");
    if (st == INGOT_OK) {
        st = ingot_disk_homes(d, usable); /* collective */
    }
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&plan->comm, disk_roles(d), "disk tier: keeper and server");
    }
    if (st != INGOT_OK) {
        ingot_disk_pusher_drain(d);
        ingot_disk_serve_stop(d);
        ingot_disk_keeper_destroy(d);
        disk_free(d);
        return st;
    }
    ingot_info("disk tier: folder %s (%s), budget %" PRIu64 " bytes per node, pieces of %" PRIu64
               " bytes, %" PRIu64 " pieces over %d node(s), %s",
               d->dir, d->usable ? "serving" : "not usable", d->budget, d->piece_bytes, d->npieces,
               d->nnodes, d->keeper ? "keeper of this node" : "reader");
    *d_p = d;
    return INGOT_OK;
}

/* Add this rank's hit counts to its node's entries (statistics for ingot-cache list). */
static void disk_flush_hits(ingot_disk_t *d)
{
    for (uint64_t p = 0; d->usable && d->piece_hits != NULL && p < d->npieces; p++) {
        uint32_t h = atomic_load(&d->piece_hits[p]);
        if (h != 0) {
            ingot_disk_key_t k = ingot_disk_key(d, p);
            ingot_disk_entry_add_hits(d->folder.fd, &k, h);
        }
    }
}

uint64_t ingot_disk_deadline(const ingot_disk_t *d, int share)
{
    uint64_t deadline = ingot_deadline_after(d->p.timeout_ns), end = atomic_load(&d->end_ns);
    if (end != 0) {
        uint64_t cut = end - d->p.timeout_ns + d->p.timeout_ns / 100 * (uint64_t)share;
        deadline = cut < deadline ? cut : deadline;
    }
    return deadline;
}

void ingot_disk_destroy(ingot_disk_t *d)
{
    /* One INGOT_TIMEOUT for all of it, however long the queues: what is not handed over or
     * written by then is dropped (counted as refused; the ledger counts published entries only,
     * and a dropped fill never made a temporary). */
    atomic_store(&d->end_ns, ingot_deadline_after(d->p.timeout_ns));
    /* every rank's pieces handed to their keepers (each push answered) before a keeper stops:
     * within the first half, so that the barrier's watchdog fires only for a rank really gone */
    ingot_disk_pusher_drain(d);
    (void)INGOT_MPI_CALL("disk tier: destroy", MPI_Barrier, d->p.comm);
    /* every part handed over: what the assemblies still miss read, before reads stop */
    ingot_disk_keeper_finish(d, 75);
    ingot_abort_raise(&d->abort);
    ingot_disk_serve_stop(d);
    ingot_disk_keeper_destroy(d); /* pending fills written, or dropped at the end */
    disk_flush_hits(d);
    if (atomic_load(&d->replies_out) > 0) {
        /* a reply the transport still holds will call serve_sent on its buffer: both kept */
        ingot_warn("disk tier: %" PRIu64 " replies to peers still unsent after INGOT_TIMEOUT; "
                   "their buffers are left allocated",
                   atomic_load(&d->replies_out));
        return;
    }
    disk_free(d);
}

void ingot_disk_stats(const ingot_disk_t *d, ingot_disk_stats_t *s)
{
    *s = (ingot_disk_stats_t){.hits = atomic_load(&d->hits),
                              .remote_hits = atomic_load(&d->remote_hits),
                              .misses = atomic_load(&d->misses),
                              .bytes_disk = atomic_load(&d->bytes_disk),
                              .bytes_below = atomic_load(&d->bytes_below),
                              .admitted = atomic_load(&d->admitted),
                              .refused = atomic_load(&d->refused),
                              .evictions = atomic_load(&d->evictions),
                              .prefetched = atomic_load(&d->prefetched),
                              .prefetch_bytes = atomic_load(&d->prefetch_bytes),
                              .bad_entries = atomic_load(&d->bad_entries),
                              .fill_errors = atomic_load(&d->fill_errors),
                              .damaged_fills = atomic_load(&d->damaged_fills),
                              .keeper_busy = atomic_load(&d->keeper_busy),
                              .parts = atomic_load(&d->parts_in),
                              .parts_dropped = atomic_load(&d->parts_dropped),
                              .asm_below = atomic_load(&d->asm_below),
                              .assembled = atomic_load(&d->assembled),
                              .assembling = atomic_load(&d->assembling)};
}

/* The keeper's ", in effect N bytes[, fills off]" into @p buf; "" on other ranks. */
static const char *disk_effect_text(const ingot_disk_t *d, char *buf, size_t len)
{
    buf[0] = '\0';
    if (d->keeper != NULL) {
        snprintf(buf, len, ", in effect %" PRIu64 " bytes%s", atomic_load(&d->keeper->budget),
                 atomic_load(&d->keeper->fills_off) ? ", fills off" : "");
    }
    return buf;
}

const char *ingot_disk_report(const ingot_disk_t *d, char *buf, size_t len)
{
    ingot_disk_stats_t s;
    ingot_disk_stats(d, &s);
    uint64_t homed = 0;
    for (uint64_t p = 0; p < d->npieces; p++) {
        homed += d->homed[p];
    }
    char effect[64];
    snprintf(buf, len,
             "disk tier: folder %s (%s), budget %" PRIu64 " bytes per node%s, pieces of %" PRIu64
             " bytes, %" PRIu64 " of the %" PRIu64 " pieces homed on this node (%d nodes), policy "
             "%s, fill %s, prefetch %d%%%s\n"
             "disk tier counters: hits %" PRIu64 " (%" PRIu64 " from other nodes), misses %" PRIu64
             ", bytes from disk %" PRIu64 ", bytes from below %" PRIu64 ", admitted %" PRIu64
             ", refused %" PRIu64 ", evictions %" PRIu64 ", prefetched %" PRIu64 " (%" PRIu64
             " bytes), bad entries %" PRIu64 ", failed fills %" PRIu64 ", damaged fills %" PRIu64
             ", keeper busy %" PRIu64 ", parts %" PRIu64 " bytes (%" PRIu64 " dropped, %" PRIu64
             " bytes read below to complete pieces), assembled %" PRIu64
             ", being assembled %" PRIu64 "\n",
             d->dir, d->usable ? "serving" : "not usable", d->budget,
             disk_effect_text(d, effect, sizeof(effect)), d->piece_bytes, homed, d->npieces,
             d->nnodes, ingot_disk_policy_names[d->lru],
             ingot_disk_fill_names[d->parts ? INGOT_DISK_FILL_PARTS : INGOT_DISK_FILL_WHOLE],
             d->prefetch_pct, d->keeper ? ", keeper of this node" : "", s.hits, s.remote_hits,
             s.misses, s.bytes_disk, s.bytes_below, s.admitted, s.refused, s.evictions,
             s.prefetched, s.prefetch_bytes, s.bad_entries, s.fill_errors, s.damaged_fills,
             s.keeper_busy, s.parts, s.parts_dropped, s.asm_below, s.assembled, s.assembling);
    return buf;
}
