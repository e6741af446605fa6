/*
 * ingot-allreduce-bench's modules (arb: all-reduce bench): command line (args.c), set-up and
 * the helpers every part shares (setup.c), the size sweep against MPI_Allreduce (sweep.c), the
 * ResNet-50 gradient set (resnet.c), the overlap run (overlap.c, step.c), and the output of both
 * modes (sweep_out.c, overlap_out.c, over the shared apps/common/report.h).
 */
#ifndef INGOT_APPS_ARB_H
#define INGOT_APPS_ARB_H

#include "common/report.h"

#include <ingot/ingot.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARB_TOOL       "ingot-allreduce-bench"
#define ARB_EXIT_FAIL  1
#define ARB_EXIT_USAGE 2
#define ARB_EXIT_SKIP  77 /* ctest's "skipped" */

#define ARB_US_PER_S  1e6
#define ARB_MS_PER_S  1e3
#define ARB_NS_PER_MS 1e6
#define ARB_NS_PER_S  1e9
#define ARB_GB        1e9 /* GB/s as nccl-tests counts them */

/* ---------------------------------------------------------------- command line */

typedef struct arb_args {
    uint64_t min_bytes, max_bytes, factor, iters, warmup; /* the sweep */
    uint64_t steps, batch;                                /* --overlap */
    double compute_ms;                                    /* < 0: T_ar, measured */
    int ready_by_params; /* --ready-by params: backward time per tensor by size, not by MACs */
    double forward;      /* fraction of the compute before backward (no reduction overlaps it) */
    int overlap, backend_set;
    ingot_comm_backend_t backend;
    const char *manifest, *json; /* NULL when not given; json "-" is stdout */
} arb_args_t;

/** Parse the command line; exits 0 on --help and 2 (naming the option and value) on a bad one. */
void arb_args_parse(int argc, char **argv, arb_args_t *a);

/* ---------------------------------------------------------------- set-up */

/** What every part of a run shares: the context, the communicator and how it was set up. */
typedef struct arb_setup {
    ingot_ctx_h ctx;
    ingot_comm_h comm;
    int rank, world, thread_level;
    ingot_comm_stats_t setup; /* SETUP fields: backend, reason, progress thread */
    report_rank_t *ranks;     /* rank 0: host and device of every rank */
} arb_setup_t;

/**
 * ingot_config_check, ingot_init, ingot_comm_create (the backend of --backend), its SETUP
 * stats, the rank map. Returns 0 or ARB_EXIT_FAIL (reported); on non-zero, nothing is left to
 * tear down.
 */
int arb_setup(const arb_args_t *a, arb_setup_t *s);
/** Destroy the communicator, finalize the context. */
void arb_teardown(arb_setup_t *s);

/** Report a failed ingot call on stderr (what, status, the thread's last error); returns st. */
ingot_status_t arb_fail(const arb_setup_t *s, const char *what, ingot_status_t st);
/** Every rank's @p st agreed: INGOT_OK when all are OK, else the first error (collective). */
ingot_status_t arb_agree(ingot_status_t st);

/** Monotonic nanoseconds. */
uint64_t arb_now_ns(void);
/** The median of @p n values (reorders @p v); 0 for n == 0. */
double arb_median(double *v, size_t n);
/** "25,557,032" into @p buf. */
const char *arb_grouped(uint64_t v, char *buf, size_t len);

/** The header block of both modes (rank 0): versions, config, rank map, backend. */
void arb_print_header(FILE *out, const arb_setup_t *s);
/** The JSON members both modes share: tool, version, ranks, backend, reason, progress, env. */
void arb_json_setup(report_json_t *j, const arb_setup_t *s, const char *mode);

/* ---------------------------------------------------------------- sweep */

/** One mode (out of place or in place) of one size. Times are max over ranks of the mean. */
typedef struct arb_mode_result {
    double time_us, algbw, busbw;  /* ingot */
    double mpi_time_us, mpi_busbw; /* MPI_Allreduce, same buffers */
    double ratio;                  /* ingot busbw / MPI busbw = MPI time / ingot time */
    uint64_t wrong;                /* elements not equal to the exact sum, over ranks */
} arb_mode_result_t;

typedef struct arb_row {
    uint64_t bytes, count;
    arb_mode_result_t oop, ip;
} arb_row_t;

typedef struct arb_sweep {
    arb_row_t *rows;
    size_t nrows;
} arb_sweep_t;

/** busbw / algbw: 2(n-1)/n, as nccl-tests. */
double arb_bus_factor(int world);
/** Run the sweep; @p sw's rows are malloc'd (arb_sweep_free). Statuses agreed. */
ingot_status_t arb_sweep_run(const arb_args_t *a, const arb_setup_t *s, arb_sweep_t *sw);
void arb_sweep_free(arb_sweep_t *sw);
/** Rank 0: the table (unless the JSON goes to stdout) and the JSON; 0 or -1 (reported). */
int arb_sweep_report(const arb_args_t *a, const arb_setup_t *s, const arb_sweep_t *sw);

/* ---------------------------------------------------------------- overlap */

/** ResNet-50's parameter count (torchvision resnet50, 1000 classes). */
#define ARB_RESNET50_PARAMS  25557032u
#define ARB_RESNET50_TENSORS 161u

/** The model: its tensors' element counts, in parameter order, and the share of backward's
 *  compute that ends with each tensor's gradient (its layer's multiply-adds at 224x224). */
typedef struct arb_model {
    size_t counts[ARB_RESNET50_TENSORS];
    double macs[ARB_RESNET50_TENSORS];
    size_t n;
    uint64_t params;
    double total_macs;
} arb_model_t;

/** ResNet-50's parameter tensors, from its architecture (conv, bn weight and bias, fc). */
void arb_resnet50(arb_model_t *m);

/** Per step metrics (times max over ranks; background completions summed over ranks). */
enum { S_STEP, S_WAIT, S_EXPOSED, S_STALL, S_BACKGROUND, S_COUNT };

/** One rank's cores: its cpuset, the ingest and trainer shares, the progress thread's. */
typedef struct arb_cpus {
    char cpuset[INGOT_TOPOLOGY_STR_MAX], ingest[INGOT_TOPOLOGY_STR_MAX];
    char trainer[INGOT_TOPOLOGY_STR_MAX], progress[INGOT_COMM_STR_MAX];
} arb_cpus_t;

typedef struct arb_overlap {
    arb_model_t model;
    uint64_t buckets, batch;
    double t_ar_ms, compute_ms;
    double forward;        /* fraction of compute_ms that is the forward pass */
    double ingest_ms;      /* the loader alone, per step (0 without a loader) */
    double loader_wall_ms; /* the loader's wall_ns over the training steps, per step */
    double *steps;         /* nsteps x S_COUNT */
    uint64_t nsteps;
    uint64_t background, completed; /* bucket reductions of the training steps, all ranks */
    arb_cpus_t *cpus;               /* rank 0: every rank's */
    float *grads;                   /* the gradients' memory (registered: free after the comm) */
} arb_overlap_t;

/** Summary of the steps (arb_overlap_summary). */
typedef struct arb_summary {
    double step_ms, wait_ms, exposed_ms, stall_ms; /* medians */
    double efficiency;                             /* max(compute, T_ar, ingest) / median step */
    double hidden_ms;                              /* T_ar - median exposed (stats), >= 0 */
    double bound_ms; /* max(compute, forward + T_ar, ingest): forward cannot hide a reduction */
    double efficiency_max; /* max(compute, T_ar, ingest) / bound: the best this emulation allows */
} arb_summary_t;

/** Run the overlap mode; @p o's arrays are malloc'd (arb_overlap_free). Agreed status. */
ingot_status_t arb_overlap_run(const arb_args_t *a, const arb_setup_t *s, arb_overlap_t *o);
void arb_overlap_free(arb_overlap_t *o);
void arb_overlap_summary(const arb_overlap_t *o, arb_summary_t *sum);
/** Rank 0: the table (unless the JSON goes to stdout) and the JSON; 0 or -1 (reported). */
int arb_overlap_report(const arb_args_t *a, const arb_setup_t *s, const arb_overlap_t *o);

/** The parts of one emulated training step (step.c). */
typedef struct arb_trainer {
    const arb_setup_t *s;  /* its communicator, the rank for messages */
    ingot_loader_h loader; /* NULL: no ingest */
    const arb_model_t *model;
    uint64_t forward_ns, backward_ns;
    int ready_by_params; /* backward time per tensor by its size instead of its MACs */
} arb_trainer_t;

/** One step: loader_next, forward, backward marking gradients ready, grads_wait, release. */
ingot_status_t arb_step(const arb_trainer_t *t, double *m);
/** Every gradient ready at once, last to first, then grads_wait: the all-reduce alone. */
ingot_status_t arb_step_allreduce(const arb_trainer_t *t, double *ms_p);

#endif
