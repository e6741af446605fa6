/*
 * The peer cache's INGOT_* table: the budget (job-wide, or per node with "/node"), where windows
 * live, where fetched bytes land, and what a silent peer does.
 */
#include "source/cache/cache_impl.h"
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_cache_config_t, _field)

const char *const ingot_peer_failure_names[] = {[INGOT_PEER_FAILURE_ABORT] = "abort",
                                                [INGOT_PEER_FAILURE_STORAGE] = "storage",
                                                [INGOT_PEER_FAILURE_STORAGE + 1] = NULL};

static const char *const cache_memories[] = {[INGOT_CACHE_MEMORY_HOST] = "host",
                                             [INGOT_CACHE_MEMORY_DEVICE] = "device",
                                             [INGOT_CACHE_MEMORY_DEVICE + 1] = NULL};

static const char *const cache_fetches[] = {[INGOT_CACHE_FETCH_AUTO] = "auto",
                                            [INGOT_CACHE_FETCH_HOST] = "host",
                                            [INGOT_CACHE_FETCH_DEVICE] = "device",
                                            [INGOT_CACHE_FETCH_DEVICE + 1] = NULL};

/* The size part of INGOT_CACHE_BYTES, parsed as every INGOT_* size. */
static const ingot_config_field_t budget_size_field = {
    .name = "CACHE_BYTES", .dfl = "0", .type = INGOT_CONFIG_SIZE, .min = 0, .max = INT64_MAX};

ingot_status_t ingot_cache_budget_parse(const char *spec, ingot_cache_budget_t *budget_p)
{
    char size[64], err[256];
    const char *slash = strchr(spec, '/');
    size_t n = slash != NULL ? (size_t)(slash - spec) : strlen(spec);
    if (n == 0 || n >= sizeof(size) || (slash != NULL && strcmp(slash, "/node") != 0)) {
        return INGOT_ERR_INVALID_PARAM;
    }
    memcpy(size, spec, n);
    size[n] = '\0';
    budget_p->per_node = slash != NULL;
    return ingot_config_parse(&budget_size_field, size, &budget_p->bytes, err, sizeof(err));
}

static int cache_bytes_check(const char *value, char *err, size_t errlen)
{
    ingot_cache_budget_t b;
    if (value == NULL) { /* the syntax */
        snprintf(err, errlen,
                 "a size for the whole job ('96GiB') or per node ('64GiB/node'); "
                 "K or KiB = 1024, KB = 1000");
        return 0;
    }
    if (ingot_cache_budget_parse(value, &b) == INGOT_OK) {
        return 0;
    }
    snprintf(err, errlen, "not a size, or a size per node");
    return -1;
}

static const ingot_config_field_t cache_fields[] = {
    {"CACHE_BYTES", "0",
     "Peer cache budget. A size ('96GiB') is the budget of the whole job: each rank registers a "
     "window of CACHE_BYTES / ranks, so a node holds CACHE_BYTES * (its ranks / all ranks), and "
     "adding nodes needs a new value. A size per node ('64GiB/node', as Slurm's --mem): each "
     "node holds that much, split evenly over its ranks, so windows differ where nodes run "
     "different numbers of ranks, and the job's budget grows with its nodes. After the first "
     "epoch, cached samples come from their home's window (shared memory, RDMA or tcp) instead "
     "of storage. 0: no cache.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_STRING, F(cache_bytes), 0, 0, NULL, cache_bytes_check},
    {"CACHE_MEMORY", "host",
     "Where a rank's cache window lives: 'host' (shared memory, mapped by the node's readers) or "
     "'device' (the placement's GPU memory, read over cuda_ipc/cuda_copy; needs a UCX built "
     "with CUDA, and refused naming the UCX version otherwise). Where fetched bytes land is "
     "INGOT_CACHE_FETCH.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(memory), 0, 0, cache_memories, NULL},
    {"CACHE_FETCH", "auto",
     "Where a GPU loader's bytes fetched from peers land: 'auto' (a calibration at start-up "
     "reads a peer's window straight into GPU memory and into pinned host memory plus the H2D "
     "copy, and takes the faster), 'host' or 'device' (the batch slot in GPU memory). GPU memory "
     "needs a UCX built with CUDA, INGOT_VERIFY=off and samples delivered as stored; otherwise "
     "host memory, the reason in the cache's report.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(fetch), 0, 0, cache_fetches, NULL},
    {"PEER_FAILURE", "abort",
     "What a read from a peer that misses INGOT_PEER_TIMEOUT does: 'abort' fails the batch with "
     "an error naming the rank (the job ends), 'storage' reads that peer's samples from storage "
     "from then on (a peer alive but late: stopped, overloaded).",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(peer_failure), 0, 0, ingot_peer_failure_names,
     NULL},
};

_Static_assert(sizeof(ingot_peer_failure_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_cache_memory_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_cache_fetch_t) == sizeof(int), "enum variables are stored as int");

INGOT_CONFIG_MODULE(ingot_cache, "cache", INGOT_CONFIG_ORDER_RUNTIME + 2, cache_fields,
                    ingot_cache_config_t, NULL)

int ingot_cache_enabled(void)
{
    const ingot_cache_config_t *cfg;
    ingot_cache_budget_t b;
    return ingot_cache_config(&cfg) == INGOT_OK &&
           ingot_cache_budget_parse(cfg->cache_bytes, &b) == INGOT_OK && b.bytes > 0;
}
