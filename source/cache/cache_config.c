/*
 * The peer cache's INGOT_* table: the budget (job-wide, or per node with "/node"), where windows
 * live, and where fetched bytes land (what a silent peer does is the transport's:
 * INGOT_PEER_FAILURE).
 */
#include "source/cache/cache.h"
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_cache_config_t, _field)

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

static int budget_parse(const char *spec, void *value, char *err, size_t errlen)
{
    ingot_cache_budget_t *b = value;
    if (ingot_config_parse_size_per(&budget_size_field, "/node", spec, &b->bytes, &b->per_node) !=
        0) {
        snprintf(err, errlen, "not a size, or a size per node");
        return -1;
    }
    snprintf(b->given, sizeof(b->given), "%s", spec);
    return 0;
}

static void budget_format(const void *value, char *buf, size_t len)
{
    const ingot_cache_budget_t *b = value;
    ingot_config_format_size_per(&budget_size_field, "/node", b->bytes, b->per_node, buf, len);
}

const ingot_config_codec_t ingot_cache_budget_codec = {
    .parse = budget_parse,
    .format = budget_format,
    .syntax = "a size for the whole job ('96GiB') or per node ('64GiB/node'); K or KiB = 1024, "
              "KB = 1000",
    .size = sizeof(ingot_cache_budget_t)};

static const ingot_config_field_t cache_fields[] = {
    {"CACHE_BYTES", "0",
     "Peer cache budget. A size ('96GiB') is the budget of the whole job: each rank registers a "
     "window of CACHE_BYTES / ranks, so a node holds CACHE_BYTES * (its ranks / all ranks), and "
     "adding nodes needs a new value. A size per node ('64GiB/node', as Slurm's --mem): each "
     "node holds that much, split evenly over its ranks, so windows differ where nodes run "
     "different numbers of ranks, and the job's budget grows with its nodes. After the first "
     "epoch, cached samples come from their home's window (shared memory, RDMA or tcp) instead "
     "of storage. 0: no cache.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_TYPED, F(budget), 0, 0, NULL, NULL,
     &ingot_cache_budget_codec, NULL},
    {"CACHE_MEMORY", "host",
     "Where a rank's cache window lives: 'host' (shared memory, mapped by the node's readers) or "
     "'device' (the placement's GPU memory, read over cuda_ipc/cuda_copy; needs a UCX built "
     "with CUDA, and refused naming the UCX version otherwise). Where fetched bytes land is "
     "INGOT_CACHE_FETCH.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(memory), 0, 0, cache_memories, NULL, NULL, NULL},
    {"CACHE_FETCH", "auto",
     "Where a GPU loader's bytes fetched from peers land: 'auto' (a calibration at start-up "
     "reads a peer's window straight into GPU memory and into pinned host memory plus the H2D "
     "copy, and takes the faster), 'host' or 'device' (the batch slot in GPU memory). GPU memory "
     "needs a UCX built with CUDA, INGOT_VERIFY=off and samples delivered as stored; otherwise "
     "host memory, the reason in the cache's report.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(fetch), 0, 0, cache_fetches, NULL, NULL, NULL},
};

_Static_assert(sizeof(ingot_cache_memory_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_cache_fetch_t) == sizeof(int), "enum variables are stored as int");

INGOT_CONFIG_MODULE(ingot_cache, "cache", INGOT_CONFIG_ORDER_RUNTIME + 2, cache_fields,
                    ingot_cache_config_t, NULL)
