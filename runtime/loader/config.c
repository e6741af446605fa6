/* The loader's INGOT_* variables; the verify policies' names are indexed by ingot_verify_policy_t. */
#include "runtime/loader/config.h"
#include <limits.h>
#include <stddef.h>

#define F(_field) offsetof(ingot_loader_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK

static const char *const verify_policies[] = {[INGOT_VERIFY_FAIL] = "fail",
                                              [INGOT_VERIFY_SKIP] = "skip",
                                              [INGOT_VERIFY_OFF] = "off",
                                              [INGOT_VERIFY_OFF + 1] = NULL};

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
     "Storage reader threads per loader (0: 2, or 32 under STORAGE_EMULATE, whose latency "
     "only many requests in flight can hide).",
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
};

INGOT_CONFIG_MODULE(ingot_loader, "loader", INGOT_CONFIG_ORDER_RUNTIME, loader_fields,
                    ingot_loader_config_t, NULL)
