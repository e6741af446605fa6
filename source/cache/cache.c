/*
 * The peer cache: budget checks, placement, the window and its fill (see cache.h).
 */
#include "source/cache/cache_impl.h"
#include "base/errors.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/mem.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- budget */

/* MemAvailable of this machine in bytes, or 0 when unknown. */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    uint64_t kb = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kb * 1024;
}

/* "INGOT_CACHE_BYTES=96GiB" or "...=64GiB/node" as given, for messages. */
static const char *budget_text(const ingot_cache_t *c, char *buf, size_t len)
{
    snprintf(buf, len, "INGOT_CACHE_BYTES=%s", c->cfg->budget.given);
    return buf;
}

/* This rank's window: the job's budget over its ranks, or its node's over the node's ranks. */
static ingot_status_t cache_budget(ingot_cache_t *c)
{
    const ingot_node_info_t *node = c->plan.node;
    const ingot_cache_budget_t *b = &c->cfg->budget;
    char text[96];
    uint64_t share = b->per_node ? (uint64_t)node->local_size : (uint64_t)c->world;
    c->window_bytes = b->bytes / share;
    if (c->window_bytes < c->batch_stored) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "%s gives each of the %" PRIu64 " ranks %s a window of %" PRIu64
                          " bytes, smaller than one batch of this loader in flight (%" PRIu64
                          " bytes); raise it to at least %" PRIu64 "%s",
                          budget_text(c, text, sizeof(text)), share,
                          b->per_node ? "of this node" : "of the job", c->window_bytes,
                          c->batch_stored, c->batch_stored * share, b->per_node ? "/node" : "");
    }
    uint64_t node_bytes = c->window_bytes * (uint64_t)node->local_size;
    uint64_t avail = mem_available();
    if (avail > 0 && node_bytes > avail) {
        return ingot_fail(INGOT_ERR_NO_MEMORY,
                          "%s: the %d ranks on host %s would hold %" PRIu64 " bytes of cache "
                          "windows, more than its MemAvailable (%" PRIu64 " bytes)",
                          budget_text(c, text, sizeof(text)), node->local_size, node->hostname,
                          node_bytes, avail);
    }
    return INGOT_OK;
}

/* Every rank's window size and node (collective, called by every rank whatever its status):
 * homes are placed by every rank alike, so every rank must know every window. */
static ingot_status_t cache_windows(ingot_cache_t *c, ingot_status_t st)
{
    uint64_t mine = st == INGOT_OK ? c->window_bytes : 0;
    uint64_t *all = ingot_calloc((size_t)c->world * 2, sizeof(uint64_t), "cache windows");
    c->windows = ingot_calloc((size_t)c->world, sizeof(*c->windows), "cache windows");
    c->node_of = ingot_calloc((size_t)c->world, sizeof(*c->node_of), "cache window nodes");
    ingot_status_t gst = (all == NULL || c->windows == NULL || c->node_of == NULL)
                             ? INGOT_ERR_NO_MEMORY
                             : INGOT_OK;
    ingot_status_t ast = ingot_mpi_agree(&c->plan.comm, gst, "cache: windows");
    if (ast == INGOT_OK) {
        ast = ingot_tier_gather(&c->plan, &mine, 1, all, c->node_of, &c->facts);
    }
    /* (gst: the agreement fails on every rank when this one's allocations did) */
    for (int r = 0; ast == INGOT_OK && gst == INGOT_OK && r < c->world; r++) {
        c->windows[r] = all[2 * r + 1];
    }
    free(all);
    return st != INGOT_OK ? st : ast;
}

/* Every sample's home (place.c), from the windows every rank has. */
static ingot_status_t cache_place(ingot_cache_t *c)
{
    ingot_cache_place_in_t in = {.facts = &c->facts,
                                 .windows = c->windows,
                                 .per_node = c->cfg->budget.per_node,
                                 .manifest = c->plan.manifest,
                                 .order = c->plan.order,
                                 .fill_epoch = c->fill_epoch,
                                 .fill_step = c->fill_step,
                                 .steps_per_epoch = c->plan.steps_per_epoch,
                                 .slice = c->plan.slice,
                                 .slice_of = c->plan.slice_of};
    return ingot_cache_place(&in, &c->place);
}

/* ---------------------------------------------------------------- create / destroy */

/* What this rank can check alone: the window's memory and its size. */
static ingot_status_t cache_check(ingot_cache_t *c)
{
    const ingot_tier_plan_t *p = &c->plan;
    if (p->direct_io) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED,
                          "ingot_loader_create: INGOT_CACHE_BYTES with INGOT_DIRECT_IO is not "
                          "supported (a sample read again from storage needs no alignment "
                          "slack); set one of them off");
    }
    c->device = (c->cfg->memory == INGOT_CACHE_MEMORY_DEVICE) ? p->cuda_device : -1;
    if (c->cfg->memory == INGOT_CACHE_MEMORY_DEVICE && c->device < 0) {
        return ingot_fail(INGOT_ERR_NO_DEVICE,
                          "INGOT_CACHE_MEMORY=device: rank %d (host %s) has no GPU in its "
                          "placement",
                          c->rank, p->node->hostname);
    }
    return cache_budget(c);
}

static ingot_status_t cache_local(ingot_cache_t *c)
{
    ingot_status_t st = cache_windows(c, cache_check(c));
    if (st == INGOT_OK) {
        st = cache_place(c);
    }
    if (st == INGOT_OK) {
        st = ingot_cache_source_init(c);
    }
    return st;
}

#define CALIBRATE_BYTES ((uint64_t)16 << 20) /* read per calibration round, at most */

/* Why fetched bytes cannot land in GPU memory here (into @p why), or "" when they can. */
static void cache_fetch_possible(const ingot_cache_t *c, char *why, size_t len)
{
    const ingot_tier_plan_t *p = &c->plan;
    why[0] = '\0';
    if (p->gpu_slots < 0) {
        snprintf(why, len, "host memory: the loader delivers batches in host memory");
    } else if (p->gpu_host_only != NULL) {
        snprintf(why, len, "host memory, then copied to GPU %d: %s", p->gpu_slots,
                 p->gpu_host_only);
    } else if (!ingot_transport_cuda_memory(c->transport)) {
        snprintf(why, len,
                 "host memory, then copied to GPU %d: UCX %s here has no CUDA memory type, so it "
                 "cannot read into GPU memory (docs/cache.md, 'Using a CUDA-enabled UCX')",
                 p->gpu_slots, ingot_transport_ucx_version());
    } else if (c->world == 1) {
        snprintf(why, len, "host memory: one rank, nothing is fetched from peers");
    }
}

/* Where fetched bytes land (INGOT_CACHE_FETCH): host memory, unless GPU memory is possible and
 * asked for, or (auto) a calibration from the next rank shows that it beats host memory plus the
 * H2D copy. */
static void cache_fetch_destination(ingot_cache_t *c, ingot_cache_fetch_t fetch)
{
    const ingot_tier_plan_t *p = &c->plan;
    char *why = c->fetch_why;
    size_t len = sizeof(c->fetch_why);
    c->fetch_device = -1;
    if (fetch == INGOT_CACHE_FETCH_HOST) {
        snprintf(why, len, "host memory: INGOT_CACHE_FETCH=host");
        return;
    }
    cache_fetch_possible(c, why, len);
    if (why[0] != '\0') {
        if (fetch == INGOT_CACHE_FETCH_DEVICE) {
            ingot_warn("cache: INGOT_CACHE_FETCH=device cannot be done here; fetched bytes land "
                       "in %s",
                       why);
        }
        return;
    }
    if (fetch == INGOT_CACHE_FETCH_DEVICE) {
        c->fetch_device = p->gpu_slots;
        snprintf(why, len, "GPU memory (the batch slot): INGOT_CACHE_FETCH=device");
        return;
    }
    int peer = (c->rank + 1) % c->world;
    size_t bytes = (size_t)(c->window_bytes < CALIBRATE_BYTES ? c->window_bytes : CALIBRATE_BYTES);
    ingot_transport_gpu_calibration_t cal;
    ingot_status_t st = ingot_transport_calibrate_gpu(c->window, peer, p->gpu_slots, bytes, &cal);
    if (st != INGOT_OK) {
        snprintf(why, len, "host memory, then copied to GPU %d: the calibration failed (%s)",
                 p->gpu_slots, ingot_status_string(st));
        return;
    }
    int gpu = cal.device_gbps > cal.host_gbps;
    c->fetch_device = gpu ? p->gpu_slots : -1;
    snprintf(why, len,
             "%s: INGOT_CACHE_FETCH=auto calibrated at start-up reading %zu bytes of rank %d's "
             "window: straight into GPU %d %.2f GB/s, into pinned host memory then H2D %.2f GB/s",
             gpu ? "GPU memory (the batch slot)" : "host memory, then copied to the GPU", bytes,
             peer, p->gpu_slots, cal.device_gbps, cal.host_gbps);
}

int ingot_cache_fetch_device(const ingot_cache_t *c)
{
    return c->fetch_device;
}

/* Register the loader's destinations for put (collective, agreed): peers write fetched bytes
 * straight into them. */
static ingot_status_t cache_dests(ingot_cache_t *c)
{
    int n[2] = {(int)c->plan.ndests, -(int)c->plan.ndests}, agreed[2] = {0, 0};
    ingot_status_t st = INGOT_MPI_CALL("cache: put destinations", MPI_Allreduce, n, agreed, 2,
                                       MPI_INT, MPI_MAX, c->plan.comm);
    if (st == INGOT_OK && agreed[0] != -agreed[1]) {
        return ingot_fail(INGOT_ERR_INTERNAL,
                          "cache: ranks register %d to %d put destinations (rank %d: %u)",
                          -agreed[1], agreed[0], c->rank, c->plan.ndests);
    }
    c->dests = ingot_calloc(c->plan.ndests + 1, sizeof(ingot_transport_window_t *),
                            "cache put destinations");
    st = ingot_mpi_agree(&c->plan.comm, c->dests ? INGOT_OK : INGOT_ERR_NO_MEMORY,
                         "cache: put destinations");
    for (uint32_t i = 0; st == INGOT_OK && i < c->plan.ndests; i++) {
        st = ingot_transport_dest_create(c->transport, c->plan.dests[i].ptr, c->plan.dests[i].bytes,
                                         &c->dests[i]);
        c->ndests += (st == INGOT_OK);
    }
    return st;
}

static void cache_dests_free(ingot_cache_t *c)
{
    for (uint32_t i = 0; i < c->ndests; i++) {
        ingot_transport_window_destroy_local(c->dests[i]);
    }
    c->ndests = 0;
    free(c->dests);
    c->dests = NULL;
}

/* The cache object over @p plan, with the job's transport (collective, agreed). */
static ingot_status_t cache_new(const ingot_tier_plan_t *plan, ingot_cache_t **c_p)
{
    MPI_Comm comm = plan->comm;
    ingot_cache_t *c = ingot_calloc(1, sizeof(*c), "cache");
    ingot_status_t st = ingot_mpi_agree(&comm, c ? INGOT_OK : INGOT_ERR_NO_MEMORY, "cache");
    st = st == INGOT_OK && c == NULL ? INGOT_ERR_NO_MEMORY : st; /* (cannot be: for the analyser) */
    if (st != INGOT_OK) {
        free(c);
        return st;
    }
    c->tier.ops = &ingot_cache_tier_ops;
    c->plan = *plan;
    c->cfg = plan->cfg->cache;
    c->fill_epoch = plan->start_step / plan->steps_per_epoch;
    c->fill_step = plan->start_step % plan->steps_per_epoch;
    c->batch_stored = (uint64_t)plan->slice * plan->stored_max;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->world);
    st = plan->transport(plan->transport_arg, &c->transport); /* collective, agreed */
    if (st != INGOT_OK) {
        free(c);
        return st;
    }
    c->policy = ingot_transport_peer_failure(c->transport);
    *c_p = c;
    return INGOT_OK;
}

ingot_status_t ingot_cache_create(const ingot_tier_plan_t *plan, ingot_cache_t **cache_p)
{
    ingot_cache_t *c;
    ingot_status_t st = cache_new(plan, &c);
    if (st != INGOT_OK) {
        return st;
    }
    st = ingot_mpi_agree(&c->plan.comm, cache_local(c), "cache: budget and placement");
    if (st == INGOT_OK) {
        st = ingot_transport_window_create(c->transport, c->window_bytes, plan->numa, c->device,
                                           &c->window); /* collective, agreed */
    }
    if (st == INGOT_OK && ingot_transport_protocol(c->transport) == INGOT_PEER_PROTOCOL_PUT) {
        st = cache_dests(c); /* collective, agreed */
    }
    c->plan.dests = NULL; /* the caller's array */
    if (st == INGOT_OK) {
        cache_fetch_destination(c, c->cfg->fetch);
    }
    if (st != INGOT_OK) {
        ingot_cache_free(c);
        return st;
    }
    if (c->place.fill_expected == 0) {
        ingot_transport_window_set_ready(c->window);
    }
    ingot_info("cache: this rank's window of %" PRIu64 " bytes (%s, registered once); "
               "%" PRIu64 " samples (%" PRIu64 " bytes) cached over %d ranks, %" PRIu64
               " here; filled in epoch %" PRIu64
               "; INGOT_PEER_FAILURE=%s; fetched bytes land in %s",
               c->window_bytes, c->device >= 0 ? "GPU memory" : "host memory",
               c->place.cached_samples, c->place.cached_bytes, c->world, c->place.fill_expected,
               c->fill_epoch, ingot_peer_failure_names[c->policy], c->fetch_why);
    *cache_p = c;
    return INGOT_OK;
}

void ingot_cache_quiesce(ingot_cache_t *c)
{
    if (c != NULL && !c->leaked && ingot_cache_source_fini(c)) {
        /* no read of this rank is in flight, so no peer writes into its memory any more; the
         * others' keys stay until destroy, for the ranks still reading from this one */
        for (uint32_t i = 0; i < c->ndests; i++) {
            ingot_transport_dest_release(c->dests[i]);
        }
    }
}

void ingot_cache_free(ingot_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    ingot_cache_quiesce(c);
    if (c->leaked) {
        return; /* left allocated on purpose: a read still landing would use it */
    }
    cache_dests_free(c);
    ingot_transport_window_destroy_local(c->window);
    free(c->place.entries);
    free(c->windows);
    free(c->node_of);
    free(c->home_state);
    free(c->reqs);
    free(c);
}

void ingot_cache_destroy(ingot_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    ingot_cache_quiesce(c);
    /* Every rank waits for the others here for at most INGOT_TIMEOUT; under
     * INGOT_PEER_FAILURE=abort a rank that stays silent for INGOT_PEER_TIMEOUT is named at
     * once (the job could not free its windows anyway), while under 'storage' a silent peer may
     * still come back. */
    uint64_t timeout = c->plan.timeout_ns;
    uint64_t silence = c->policy == INGOT_PEER_FAILURE_ABORT
                           ? ingot_transport_peer_timeout(c->transport)
                           : 0;
    if (c->leaked) {
        /* arrive still, so the others are not left waiting; the memory stays */
        ingot_transport_window_arrive(c->window, "cache: window free", timeout, silence);
        return;
    }
    ingot_transport_window_destroy(c->window, timeout, silence); /* nobody reads it any more */
    c->window = NULL;
    ingot_cache_free(c);
}

/* ---------------------------------------------------------------- fill */

void ingot_cache_fill(ingot_cache_t *c, const ingot_shard_rows_t *rows, const void *stored,
                      int packed)
{
    const ingot_sample_info_t *s = rows->sample;
    ingot_cache_entry_t e = ingot_cache_entry(c, s->index);
    if (e.home != c->rank) {
        return;
    }
    if (stored != NULL) {
        ingot_status_t st = INGOT_OK;
        if (packed) { /* fields back to back: put each at its place in the record */
            const char *src = stored;
            for (uint32_t f = 0; f < s->field_count && st == INGOT_OK; f++) {
                st = ingot_transport_window_write(c->window, e.offset + rows->fields[f].offset, src,
                                                  rows->fields[f].stored_len);
                src += rows->fields[f].stored_len;
            }
        } else {
            st = ingot_transport_window_write(c->window, e.offset, stored, e.length);
        }
        if (st != INGOT_OK) { /* a device copy failed: readers will see a bad hash */
            ingot_warn("cache: sample '%s' could not be put in this rank's window (%s)", s->key,
                       ingot_status_string(st));
        }
        if (c->device < 0 && ingot_fault_check(INGOT_FAULT_CACHE_FILL) != 0) {
            char *dst = (char *)ingot_transport_window_data(c->window) + e.offset;
            dst[rows->fields[0].offset] ^= 0x5a; /* a damaged byte in the window */
        }
    }
    if (atomic_fetch_add(&c->filled, 1) + 1 == c->place.fill_expected) {
        ingot_transport_window_set_ready(c->window);
        ingot_debug("cache: window filled (%" PRIu64 " samples)", c->place.fill_expected);
    }
}

/* ---------------------------------------------------------------- report */

void ingot_cache_report_corrupt(ingot_cache_t *c, const ingot_sample_info_t *s, int home)
{
    atomic_fetch_add(&c->hash_fallbacks, 1);
    ingot_warn("cache: sample '%s' (index %" PRIu64 ") from the window of rank %d (host %s) "
               "failed its content hash; read again from storage",
               s->key, s->index, home, ingot_transport_host(c->transport, home));
}

/* Whether the budget holds the dataset, and what would (a line of the cache's report). */
static void cache_budget_line(const ingot_cache_t *c, char *buf, size_t len)
{
    const double mib = 1024.0 * 1024.0;
    char given[96], fix[96];
    budget_text(c, given, sizeof(given));
    const ingot_cache_placement_t *pl = &c->place;
    if (pl->cached_samples == pl->count) {
        snprintf(buf, len, "budget: %s holds the whole dataset (%" PRIu64 " samples, %.1f MiB)\n",
                 given, pl->count, (double)pl->dataset_bytes / mib);
        return;
    }
    uint64_t mibs = (pl->needed + (1u << 20) - 1) >> 20; /* rounded up to a MiB */
    snprintf(fix, sizeof(fix), "INGOT_CACHE_BYTES=%" PRIu64 "MiB%s", mibs,
             c->cfg->budget.per_node ? "/node" : "");
    snprintf(buf, len,
             "budget: %s holds only %.1f of the dataset's %.1f MiB (%.0f%%, %" PRIu64 " of %" PRIu64
             " samples): every epoch after the first reads the rest from storage; %s would hold "
             "it all\n",
             given, (double)pl->cached_bytes / mib, (double)pl->dataset_bytes / mib,
             pl->dataset_bytes ? 100.0 * (double)pl->cached_bytes / (double)pl->dataset_bytes : 0,
             pl->cached_samples, pl->count, fix);
}

const char *ingot_cache_paths(ingot_cache_t *c, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "window %" PRIu64 " bytes in %s memory; %" PRIu64 " samples (%" PRIu64
                     " bytes) cached over %d ranks, %" PRIu64 " here; hash fallbacks %" PRIu64
                     ", reads sent to storage %" PRIu64 ", homes given up %" PRIu64 "\n",
                     c->window_bytes, c->device >= 0 ? "GPU" : "host", c->place.cached_samples,
                     c->place.cached_bytes, c->world, c->place.fill_expected,
                     atomic_load(&c->hash_fallbacks), atomic_load(&c->peer_fallbacks),
                     atomic_load(&c->peers_failed));
    if (n > 0 && (size_t)n < len) {
        cache_budget_line(c, buf + n, len - (size_t)n);
        n += (int)strlen(buf + n);
    }
    if (n > 0 && (size_t)n < len) {
        snprintf(buf + n, len - (size_t)n, "fetched bytes land in %s\n", c->fetch_why);
    }
    (void)ingot_transport_paths(c->transport, buf, len);
    return buf;
}
