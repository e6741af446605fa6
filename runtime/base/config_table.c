/*
 * The INGOT_* table: every variable ingot reads, in one place. Each module's variables sit in its
 * own section; ingot-info -c prints them in this order.
 */
#include "runtime/base/config.h"
#include "runtime/base/fault.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_config_t, _field)
#define JOB  INGOT_CONFIG_SCOPE_JOB
#define RANK INGOT_CONFIG_SCOPE_RANK

static const char *const log_levels[] = {"error", "warn", "info", "debug", "trace", NULL};
static const char *const pin_modes[]  = {"auto", "off", NULL};
static const char *const placement_modes[] = {"auto", "gpu", "cpu", NULL};
static const char *const sharing_modes[]   = {"error", "share", NULL};
static const char *const bind_modes[]      = {"none", "cpu", "cpu+mem", NULL};
static const char *const verify_policies[] = {"fail", "skip", "off", NULL};

static int check_fault_spec(const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "none") == 0) {
        return 0;
    }
    if (!INGOT_FAULT_ENABLED) {
        snprintf(err, errlen, "fault injection is not compiled into this build "
                 "(configure with -DINGOT_FAULT_INJECTION=ON)");
        return -1;
    }
    return ingot_fault_validate(value, err, errlen) == INGOT_OK ? 0 : -1;
}

const ingot_config_field_t ingot_config_table[] = {
    /* -- base (runtime/base) -- */
    {"LOG_LEVEL", "warn", "Lowest level of messages printed.",
     RANK, INGOT_CONFIG_ENUM, F(log_level), 0, 0, log_levels, NULL},
    {"LOG_FILE", "stderr",
     "Where log lines go: 'stderr', or a file path in which %h is the host name, %p the pid and "
     "%r the rank.",
     RANK, INGOT_CONFIG_STRING, F(log_file), 0, 0, NULL, NULL},
    {"TIMEOUT", "300s",
     "Deadline of every blocking wait inside ingot (queues, thread joins, MPI and UCX waits); a "
     "wait that reaches it fails with a timeout error instead of hanging.",
     JOB, INGOT_CONFIG_DURATION, F(timeout_ns), 1000000 /* 1 ms */, 86400LL * 1000000000LL,
     NULL, NULL},
    {"SPIN", "0",
     "How long a waiting thread busy-polls before it sleeps. 0 (the default) sleeps at once: "
     "when ingot's threads outnumber the cores, spinning takes them from the threads doing work "
     "(16 KiB samples on 2 cores: 216k samples/s at 0, 76k at 20us). A few microseconds can "
     "shave wake-up latency on dedicated cores.",
     RANK, INGOT_CONFIG_DURATION, F(spin_ns), 0, 1000000000LL, NULL, NULL},
    {"HUGEPAGES", "y", "Back large payload buffers with transparent huge pages (madvise).",
     RANK, INGOT_CONFIG_BOOL, F(hugepages), 0, 0, NULL, NULL},
    {"PIN", "auto",
     "Page-lock payload buffers: 'auto' pins with cudaHostRegister where a GPU is usable, mlock "
     "otherwise (falling back to pageable memory, with a warning, beyond RLIMIT_MEMLOCK); 'off' "
     "never pins.",
     RANK, INGOT_CONFIG_ENUM, F(pin), 0, 0, pin_modes, NULL},
    {"CHECK_CONFIG", "y",
     "Check at init that job-wide variables have the same value on every rank.",
     JOB, INGOT_CONFIG_BOOL, F(check_job_config), 0, 0, NULL, NULL},
    {"WARN_UNKNOWN", "y", "Warn about INGOT_* variables that ingot does not know.",
     RANK, INGOT_CONFIG_BOOL, F(warn_unknown), 0, 0, NULL, NULL},
    {"FAULT", "none",
     "Fault injection for tests (builds with -DINGOT_FAULT_INJECTION=ON only): "
     "'site:nth:action[,...]', site in malloc|mmap|mlock|cuda_pin|open|pread|thread, nth a "
     "1-based call count, 'N+' or '*', action an errno name (ENOMEM, EIO, ...) or 'fail'.",
     RANK, INGOT_CONFIG_STRING, F(fault), 0, 0, NULL, check_fault_spec},

    /* -- topology (topology/) -- */
    {"TOPOLOGY_XML", "none",
     "hwloc XML export (lstopo --of xml) to plan on instead of discovering this machine; 'none': "
     "live discovery. Per rank, so that a job may mix node types; binding is refused with it.",
     RANK, INGOT_CONFIG_STRING, F(topology_xml), 0, 0, NULL, NULL},
    {"PLACEMENT", "auto",
     "Placement plan: 'gpu' gives each local rank a GPU (no usable GPU is an error), 'cpu' plans "
     "NUMA-balanced cpusets only, 'auto' does 'gpu' when the node has usable GPUs, else 'cpu'.",
     JOB, INGOT_CONFIG_ENUM, F(placement), 0, 0, placement_modes, NULL},
    {"GPUS", "all",
     "GPUs the plan may use: 'all', or a comma-separated list of node GPU indices (PCI bus "
     "order, as nvidia-smi), PCI bus ids or UUIDs; a name that matches no GPU is an error.",
     JOB, INGOT_CONFIG_STRING, F(gpus), 0, 0, NULL, NULL},
    {"GPU_SHARING", "error",
     "More local ranks than usable GPUs: 'error' fails the plan, 'share' lets consecutive local "
     "ranks share a GPU.",
     JOB, INGOT_CONFIG_ENUM, F(gpu_sharing), 0, 0, sharing_modes, NULL},
    {"INGEST_CORES", "1",
     "Cores of each rank's cpuset reserved for ingot's ingest threads (the rest is the "
     "trainer's); 0 reserves none. With too few cores, ingest and trainer share them.",
     JOB, INGOT_CONFIG_INT, F(ingest_cores), 0, 4096, NULL, NULL},
    {"BIND", "none",
     "Bind each rank to its planned cpuset: 'none' leaves the launcher's binding alone, 'cpu' "
     "binds the process, 'cpu+mem' also binds its memory to the GPU's NUMA node.",
     JOB, INGOT_CONFIG_ENUM, F(bind), 0, 0, bind_modes, NULL},

    /* -- shard (shard/) -- */

    /* -- loader (runtime/) -- */
    {"STORAGE_EMULATE", "none",
     "Emulate a remote store in front of the shard files: 'bw=200MiB/s,lat=5ms' caps the "
     "bandwidth (token bucket) and adds a latency to every request; either part may be left "
     "out; 'none' reads the files directly.",
     JOB, INGOT_CONFIG_STRING, F(storage_emulate), 0, 0, NULL, ingot_config_check_storage_emulate},
    {"TRACE", "none",
     "Write a Chrome-trace/Perfetto timeline of the loader stages of each rank to this path "
     "(%h host, %p pid, %r rank) when the loader is destroyed; 'none' disables it.",
     RANK, INGOT_CONFIG_STRING, F(trace), 0, 0, NULL, NULL},
    {"READERS", "0", "Storage reader threads per loader (0: 2, or 32 under STORAGE_EMULATE, whose latency "
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

const size_t ingot_config_table_size = sizeof(ingot_config_table) / sizeof(ingot_config_table[0]);
