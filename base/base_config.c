/* base's INGOT_* variables: logging, deadlines, waits, memory, the config and launch checks,
 * faults. */
#include "base/base_config.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/wait.h"
#include "base/watchdog.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_base_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK

static const char *const log_levels[] = {
    [INGOT_LOG_LEVEL_ERROR] = "error", [INGOT_LOG_LEVEL_WARN] = "warn",
    [INGOT_LOG_LEVEL_INFO] = "info",   [INGOT_LOG_LEVEL_DEBUG] = "debug",
    [INGOT_LOG_LEVEL_TRACE] = "trace", [INGOT_LOG_LEVEL_TRACE + 1] = NULL};
static const char *const pin_modes[] = {
    [INGOT_MEM_PIN_AUTO] = "auto", [INGOT_MEM_PIN_OFF] = "off", [INGOT_MEM_PIN_OFF + 1] = NULL};

static int check_fault_spec(const char *value, char *err, size_t errlen)
{
    if (value == NULL) { /* the syntax */
        snprintf(err, errlen,
                 "none, or SITE:N[+|*][:ERRNO] items separated by commas (test "
                 "builds)");
        return 0;
    }
    if (strcmp(value, "none") == 0) {
        return 0;
    }
    if (!INGOT_FAULT_ENABLED) {
        snprintf(err, errlen,
                 "fault injection is not compiled into this build "
                 "(configure with -DINGOT_FAULT_INJECTION=ON)");
        return -1;
    }
    return ingot_fault_validate(value, err, errlen) == INGOT_OK ? 0 : -1;
}

/* Rows are name, default, doc; then scope, type, offset, bounds: kept as laid out by hand. */
/* clang-format off */
static const ingot_config_field_t base_fields[] = {
    {"LOG_LEVEL", "warn", "Lowest level of messages printed.",
     RANK, INGOT_CONFIG_ENUM, F(log_level), 0, 0, log_levels, NULL, NULL, NULL},
    {"LOG_FILE", "stderr",
     "Where log lines go: 'stderr', or a file path in which %h is the host name, %p the pid and "
     "%r the rank (%u: the user).",
     RANK, INGOT_CONFIG_STRING, F(log_file), 0, 0, NULL, NULL, NULL, NULL},
    {"TIMEOUT", "300s",
     "Deadline of every blocking wait inside ingot (queues, thread joins, MPI and UCX waits); a "
     "wait that reaches it fails with a timeout error instead of hanging.",
     JOB, INGOT_CONFIG_DURATION, F(timeout_ns), 1000000 /* 1 ms */, 86400LL * 1000000000LL,
     NULL, NULL, NULL, NULL},
    {"SPIN", "0",
     "How long a waiting thread busy-polls before it sleeps. 0 (the default) sleeps at once: "
     "when ingot's threads outnumber the cores, spinning takes them from the threads doing work "
     "(16 KiB samples on 2 cores: 216k samples/s at 0, 76k at 20us). A few microseconds can "
     "shave wake-up latency on dedicated cores.",
     RANK, INGOT_CONFIG_DURATION, F(spin_ns), 0, 1000000000LL, NULL, NULL, NULL, NULL},
    {"HUGEPAGES", "y", "Back large payload buffers with transparent huge pages (madvise).",
     RANK, INGOT_CONFIG_BOOL, F(hugepages), 0, 0, NULL, NULL, NULL, NULL},
    {"PIN", "auto",
     "Page-lock payload buffers: 'auto' pins with cudaHostRegister where a GPU is usable, mlock "
     "otherwise (falling back to pageable memory, with a warning, beyond RLIMIT_MEMLOCK); 'off' "
     "never pins.",
     RANK, INGOT_CONFIG_ENUM, F(pin), 0, 0, pin_modes, NULL, NULL, NULL},
    {"CHECK_CONFIG", "y",
     "Check at init that job-wide variables have the same value on every rank.",
     JOB, INGOT_CONFIG_BOOL, F(check_job_config), 0, 0, NULL, NULL, NULL, NULL},
    /* Per rank: it acts only where MPI's world is the process alone, a job of one rank. */
    {"CHECK_LAUNCH", "y",
     "Refuse init when MPI's world is this process alone but a launcher's variables say the job "
     "has more processes (WORLD_SIZE from torchrun, SLURM_STEP_NUM_TASKS or SLURM_NTASKS, "
     "OMPI_COMM_WORLD_SIZE, PMI_SIZE above 1): started without MPI's wire-up, each process "
     "would read the whole dataset. 'n' lets each run alone.",
     RANK, INGOT_CONFIG_BOOL, F(check_launch), 0, 0, NULL, NULL, NULL, NULL},
    {"WARN_UNKNOWN", "y", "Warn about INGOT_* variables that ingot does not know.",
     RANK, INGOT_CONFIG_BOOL, F(warn_unknown), 0, 0, NULL, NULL, NULL, NULL},
    {"FAULT", "none",
     "Fault injection for tests (builds with -DINGOT_FAULT_INJECTION=ON only): "
     "'site:nth:action[,...]', site in malloc|mmap|mlock|cuda_pin|open|pread|thread|"
     "cuda_malloc, nth a 1-based call count, 'N+' or '*', action an errno name (ENOMEM, EIO, "
     "...) or 'fail'.",
     RANK, INGOT_CONFIG_STRING, F(fault), 0, 0, NULL, check_fault_spec, NULL, NULL},

};
/* clang-format on */

/* Settings that take effect when the configuration is loaded, before any module uses it. */
static ingot_status_t base_config_apply(const void *values)
{
    extern char **environ;
    const ingot_base_config_t *cfg = values;
    char err[256];
    ingot_log_configure(cfg->log_level, cfg->log_file);
    ingot_wait_set_spin(cfg->spin_ns);
    ingot_watchdog_set_timeout(cfg->timeout_ns);
    if (INGOT_FAULT_ENABLED && ingot_fault_arm(cfg->fault, err, sizeof(err)) != INGOT_OK) {
        return ingot_fail(INGOT_ERR_CONFIG, INGOT_ENV_PREFIX "FAULT='%s': %s", cfg->fault, err);
    }
    if (cfg->warn_unknown) {
        ingot_config_warn_unknown(environ);
    }
    return INGOT_OK;
}

INGOT_CONFIG_MODULE(ingot_base, "base", INGOT_CONFIG_ORDER_BASE, base_fields, ingot_base_config_t,
                    base_config_apply)
