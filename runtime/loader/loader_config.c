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

static int order_parse(const char *value, void *out, char *err, size_t errlen)
{
    ingot_loader_order_t *o = out;
    if (strcmp(value, "full") == 0) {
        *o = (ingot_loader_order_t){.mode = INGOT_ORDER_FULL, .window = 1};
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long n = strncmp(value, "window:", 7) == 0 && value[7] >= '1' && value[7] <= '9'
                          ? strtoul(value + 7, &end, 10)
                          : 0;
    if (n == 0 || errno != 0 || *end != '\0' || n > INT32_MAX) {
        snprintf(err, errlen, "neither full nor window:N with a whole N >= 1");
        return -1;
    }
    *o = (ingot_loader_order_t){.mode = INGOT_ORDER_LOCALITY, .window = (uint32_t)n};
    return 0;
}

static void order_format(const void *value, char *buf, size_t len)
{
    const ingot_loader_order_t *o = value;
    if (o->mode == INGOT_ORDER_FULL) {
        snprintf(buf, len, "full");
    } else {
        snprintf(buf, len, "window:%u", o->window);
    }
}

static const ingot_config_codec_t order_codec = {
    .parse = order_parse, .format = order_format, .syntax = "full, or window:N (N >= 1 shards)"};

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
     "cpuset, at least 1).",
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
     "a time: what an object store needs, docs/objectstore.md). Both are identical on every "
     "rank, independent of the world size, and recorded in the resume cursor.",
     JOB, INGOT_CONFIG_TYPED, F(order), 0, 0, NULL, NULL, &order_codec, NULL},
    {"INGEST_PACING", "0",
     "While a gradient reduction is in flight, each loader storage request first pauses this "
     "long, leaving memory bandwidth and cores to the reduction; '0' disables pacing.",
     RANK, INGOT_CONFIG_DURATION, F(ingest_pacing), 0, 1000000000LL, NULL, NULL, NULL, NULL},
};

INGOT_CONFIG_MODULE(ingot_loader, "loader", INGOT_CONFIG_ORDER_RUNTIME, loader_fields,
                    ingot_loader_config_t, NULL)
