/* The loader's INGOT_* variables (the order typed once, the pacing of its reads while reductions
 * run); the verify policies' names are indexed by ingot_verify_policy_t. */
#include "runtime/loader/loader_config.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(_field) offsetof(ingot_loader_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK

static const char *const verify_policies[] = {[INGOT_VERIFY_FAIL] = "fail",
                                              [INGOT_VERIFY_SKIP] = "skip",
                                              [INGOT_VERIFY_OFF] = "off",
                                              [INGOT_VERIFY_OFF + 1] = NULL};

/* A whole number >= 1 at @p s that fits 31 bits, ending at @p end_p. */
static int order_number(const char *s, const char **end_p, uint32_t *n_p)
{
    char *end;
    if (*s < '1' || *s > '9') {
        return -1;
    }
    errno = 0;
    unsigned long n = strtoul(s, &end, 10);
    if (errno != 0 || n > INT32_MAX) {
        return -1;
    }
    *end_p = end;
    *n_p = (uint32_t)n;
    return 0;
}

static int order_parse(const char *value, void *out, char *err, size_t errlen)
{
    ingot_loader_order_t *o = out;
    const char *end = value;
    *o = (ingot_loader_order_t){.mode = INGOT_ORDER_FULL, .window = 1};
    if (strcmp(value, "full") == 0) {
        return 0;
    }
    int ok = strncmp(value, "window:", 7) == 0 && order_number(value + 7, &end, &o->window) == 0;
    if (ok && strncmp(end, ",nodes:", 7) == 0) {
        ok = order_number(end + 7, &end, &o->nodes) == 0;
    }
    if (!ok || *end != '\0') {
        snprintf(err, errlen, "neither full nor window:N[,nodes:C] with whole N, C >= 1");
        return -1;
    }
    o->mode = INGOT_ORDER_LOCALITY;
    return 0;
}

static void order_format(const void *value, char *buf, size_t len)
{
    const ingot_loader_order_t *o = value;
    if (o->mode == INGOT_ORDER_FULL) {
        snprintf(buf, len, "full");
    } else if (o->nodes == 0) {
        snprintf(buf, len, "window:%u", o->window);
    } else {
        snprintf(buf, len, "window:%u,nodes:%u", o->window, o->nodes);
    }
}

static const ingot_config_codec_t order_codec = {
    .parse = order_parse,
    .format = order_format,
    .syntax = "full, or window:N (N >= 1 shards), or window:N,nodes:C (C >= 1 canonical nodes)",
    .size = sizeof(ingot_loader_order_t)};

static const ingot_config_field_t loader_fields[] = {
    {"TRACE", "none",
     "Write a Chrome-trace/Perfetto timeline of the loader stages of each rank to this path "
     "(%h host, %p pid, %r rank) when the loader is destroyed; 'none' disables it.",
     RANK, INGOT_CONFIG_STRING, F(trace), 0, 0, NULL, NULL, NULL, NULL},
    {"READERS", "0",
     "Storage reader threads per loader (0: 2; 32 under STORAGE_EMULATE and for a manifest at "
     "an s3:// or http(s):// URL under the full order, whose latency only many requests in "
     "flight can hide; 8 for such a manifest under the locality order, whose reads are mostly "
     "copies out of parts fetched whole).",
     RANK, INGOT_CONFIG_INT, F(readers), 0, 256, NULL, NULL, NULL, NULL},
    {"WORKERS", "0",
     "Verify/decode/transform/collate threads per loader (0: the cores of the process's "
     "cpuset, but no more than the rank's share of the node's CPUs: the node's allowed CPUs "
     "over its ranks; at least 1).",
     RANK, INGOT_CONFIG_INT, F(workers), 0, 256, NULL, NULL, NULL, NULL},
    {"LOADER_MEMORY", "1GiB",
     "Default memory budget of a loader (batch slots, staging buffers); a loader whose prefetch "
     "depth does not fit fails at create.",
     RANK, INGOT_CONFIG_SIZE, F(loader_memory), 1 << 20, INT64_MAX, NULL, NULL, NULL, NULL},
    {"DIRECT_IO", "n", "Read shards with O_DIRECT into aligned buffers (bypasses the page cache).",
     RANK, INGOT_CONFIG_BOOL, F(direct_io), 0, 0, NULL, NULL, NULL, NULL},
    {"VERIFY", "fail",
     "What a sample whose content hash differs from the manifest's does: 'fail' the batch, "
     "'skip' it (logged with its key, recorded in the cursor, at most SKIP_BUDGET per epoch), "
     "or 'off' (no hashing).",
     JOB, INGOT_CONFIG_ENUM, F(verify), 0, 0, verify_policies, NULL, NULL, NULL},
    {"SKIP_BUDGET", "100", "Corrupt samples skipped per epoch under VERIFY=skip before failing.",
     JOB, INGOT_CONFIG_INT, F(skip_budget), 0, INT64_MAX, NULL, NULL, NULL, NULL},
    {"COALESCE_GAP", "64KiB",
     "Samples of one shard closer than this are read with one request (the gap is read and "
     "discarded).",
     RANK, INGOT_CONFIG_SIZE, F(coalesce_gap), 0, 1LL << 30, NULL, NULL, NULL, NULL},
    {"ORDER", "full",
     "The sample order of loaders that do not choose one (ingot_loader_params_t.order_mode): "
     "'full', a uniform-looking shuffle of every sample; or 'window:N', the shards shuffled, "
     "then the samples shuffled within each window of N shards (reads stay within N shards at "
     "a time: what an object store needs, docs/objectstore.md), the windows dealt to C "
     "canonical nodes so that a node's ranks read only their node's windows and each byte "
     "leaves the store once per epoch for the whole cluster ('window:N,nodes:C'; C by default "
     "the resumed cursor's, else the job's node count; 'nodes:1' is the order of one window "
     "for the whole job). Identical on every rank, independent of the world size, and "
     "recorded in the resume cursor.",
     JOB, INGOT_CONFIG_TYPED, F(order), 0, 0, NULL, NULL, &order_codec, NULL},
    {"INGEST_PACING", "0",
     "While a gradient reduction is in flight, each loader storage request first pauses this "
     "long, leaving memory bandwidth and cores to the reduction; '0' disables pacing.",
     RANK, INGOT_CONFIG_DURATION, F(ingest_pacing), 0, 1000000000LL, NULL, NULL, NULL, NULL},
    {"HASH_PIECE", "256KiB",
     "With VERIFY on, shard reads of a run are made this many bytes at a time, and the fields "
     "of each piece are hashed right after it lands, while its bytes are still in the core's "
     "cache (a whole run read at once has left it: the hash would read it again from memory); "
     "sources that deliver at their own pace are hashed as they report bytes in place (the "
     "object store's ranged GETs: every this many bytes, on its I/O thread; the disk tier: by "
     "its pieces). '0': one read per run, hashed after it.",
     RANK, INGOT_CONFIG_SIZE, F(hash_piece), 0, 1LL << 30, NULL, NULL, NULL, NULL},
};

INGOT_CONFIG_MODULE(ingot_loader, "loader", INGOT_CONFIG_ORDER_RUNTIME, loader_fields,
                    ingot_loader_config_t, NULL)
