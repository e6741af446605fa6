/* The loader's INGOT_* variables; the verify policies' names are indexed by ingot_verify_policy_t. */
#include "runtime/loader/config.h"
#include <errno.h>
#include <limits.h>
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

int ingot_loader_order_parse(const char *value, ingot_order_mode_t *mode_p, uint32_t *window_p)
{
    if (strcmp(value, "full") == 0) {
        *mode_p = INGOT_ORDER_FULL;
        *window_p = 0;
        return 0;
    }
    if (strncmp(value, "window:", 7) != 0 || value[7] < '1' || value[7] > '9') {
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long n = strtoul(value + 7, &end, 10);
    if (errno != 0 || *end != '\0' || n == 0 || n > INT32_MAX) {
        return -1;
    }
    *mode_p = INGOT_ORDER_LOCALITY;
    *window_p = (uint32_t)n;
    return 0;
}

int ingot_loader_check_order(const char *value, char *err, size_t errlen)
{
    ingot_order_mode_t mode;
    uint32_t window;
    if (value == NULL) {
        snprintf(err, errlen, "full, or window:N (N >= 1 shards)");
        return 0;
    }
    if (ingot_loader_order_parse(value, &mode, &window) != 0) {
        snprintf(err, errlen, "neither full nor window:N with a whole N >= 1");
        return -1;
    }
    return 0;
}

static const ingot_config_field_t loader_fields[] = {
    {"STORAGE_EMULATE", "none",
     "Emulate a remote store in front of the shard files: 'bw=200MiB/s,lat=5ms' caps the "
     "bandwidth (token bucket) and adds a latency to every request; either part may be left "
     "out; 'none' reads the files directly.",
     JOB, INGOT_CONFIG_STRING, F(storage_emulate), 0, 0, NULL, ingot_config_check_storage_emulate},
    {"TRACE", "none",
     "Write a Chrome-trace/Perfetto timeline of the loader stages of each rank to this path "
     "(%h host, %p pid, %r rank) when the loader is destroyed; 'none' disables it.",
     RANK, INGOT_CONFIG_STRING, F(trace), 0, 0, NULL, NULL},
    {"READERS", "0",
     "Storage reader threads per loader (0: 2; 32 under STORAGE_EMULATE and for a manifest at "
     "an s3:// or http(s):// URL under the full order, whose latency only many requests in "
     "flight can hide; 8 for such a manifest under the locality order, whose reads are mostly "
     "copies out of parts fetched whole).",
     RANK, INGOT_CONFIG_INT, F(readers), 0, 256, NULL, NULL},
    {"WORKERS", "0",
     "Verify/decode/transform/collate threads per loader (0: the cores of the process's "
     "cpuset, at least 1).",
     RANK, INGOT_CONFIG_INT, F(workers), 0, 256, NULL, NULL},
    {"LOADER_MEMORY", "1GiB",
     "Default memory budget of a loader (batch slots, staging buffers); a loader whose prefetch "
     "depth does not fit fails at create.",
     RANK, INGOT_CONFIG_SIZE, F(loader_memory), 1 << 20, INT64_MAX, NULL, NULL},
    {"DIRECT_IO", "n", "Read shards with O_DIRECT into aligned buffers (bypasses the page cache).",
     RANK, INGOT_CONFIG_BOOL, F(direct_io), 0, 0, NULL, NULL},
    {"VERIFY", "fail",
     "What a sample whose content hash differs from the manifest's does: 'fail' the batch, "
     "'skip' it (logged with its key, recorded in the cursor, at most SKIP_BUDGET per epoch), "
     "or 'off' (no hashing).",
     JOB, INGOT_CONFIG_ENUM, F(verify), 0, 0, verify_policies, NULL},
    {"SKIP_BUDGET", "100", "Corrupt samples skipped per epoch under VERIFY=skip before failing.",
     JOB, INGOT_CONFIG_INT, F(skip_budget), 0, INT64_MAX, NULL, NULL},
    {"COALESCE_GAP", "64KiB",
     "Samples of one shard closer than this are read with one request (the gap is read and "
     "discarded).",
     RANK, INGOT_CONFIG_SIZE, F(coalesce_gap), 0, 1LL << 30, NULL, NULL},
    {"ORDER", "full",
     "The sample order of loaders that do not choose one (ingot_loader_params_t.order_mode): "
     "'full', a uniform-looking shuffle of every sample; or 'window:N', the shards shuffled, "
     "then the samples shuffled within each window of N shards (reads stay within N shards at "
     "a time: what an object store needs, docs/objectstore.md). Both are identical on every "
     "rank, independent of the world size, and recorded in the resume cursor.",
     JOB, INGOT_CONFIG_STRING, F(order), 0, 0, NULL, ingot_loader_check_order},
};

INGOT_CONFIG_MODULE(ingot_loader, "loader", INGOT_CONFIG_ORDER_RUNTIME, loader_fields,
                    ingot_loader_config_t, NULL)
