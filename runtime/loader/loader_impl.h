/*
 * Loader internals. One batch slot per prefetched step; a step's samples are grouped into runs
 * (one storage request each: adjacent samples of a shard coalesced). Threads and queues:
 *
 *   trainer --free slot ids (SPSC)--> planner --runs (MPMC)--> readers --runs (MPMC)--> workers
 *      ^                                                                                  |
 *      +---------------- slot READY / FAILED (event) ------------------------------------+
 *
 * A run is read either straight into the slot (scatter read: stored == delivered bytes, no
 * transform) or into a staging buffer (zstd, transform, O_DIRECT), from which workers decode.
 */
#ifndef INGOT_RUNTIME_LOADER_LOADER_IMPL_H
#define INGOT_RUNTIME_LOADER_LOADER_IMPL_H

#include <ingot/loader.h>
#include <ingot/shard.h>
#include "base/mem.h"
#include "base/ring.h"
#include "base/wait.h"
#include "source/tiers.h"
#include "runtime/telemetry.h"
#include "shard/codec.h"
#include <pthread.h>
#include <stddef.h>
#include <sys/uio.h>

#define LOADER_RUN_SAMPLES_MAX 256        /* samples per coalesced request (iovec bound) */
#define LOADER_RUN_BYTES       (4u << 20) /* coalesce up to this many bytes per request */
#define LOADER_REQS_PER_READER 2          /* requests per reader: one may sit in quarantine */

/* Whether a sample at @p offset of @p length bytes in @p shard joins the run [@p run_offset,
 * +@p run_length) of @p run_count samples of @p run_shard, samples sorted by location: one storage
 * request (the planner's rule, and ingot-sim's). */
static inline int ingot_loader_run_joins(uint32_t run_shard, uint64_t run_offset,
                                         uint64_t run_length, uint32_t run_count, uint32_t shard,
                                         uint64_t offset, uint64_t length, uint64_t gap_max)
{
    uint64_t end = offset + length;
    return run_shard == shard && offset >= run_offset + run_length &&
           offset - (run_offset + run_length) <= gap_max && run_count < LOADER_RUN_SAMPLES_MAX &&
           end - run_offset <= LOADER_RUN_BYTES;
}

typedef enum loader_slot_state {
    SLOT_FREE,
    SLOT_FILLING,
    SLOT_READY,
    SLOT_FAILED,
    SLOT_HELD
} loader_slot_state_t;

struct loader_slot;

typedef struct loader_run {
    struct loader_slot *slot;
    uint32_t shard;
    uint64_t shard_id;       /* the manifest's id of the shard (for sources) */
    uint64_t offset, length; /* byte range in the shard */
    uint32_t first, count;   /* entries of slot->sorted */
    int scatter;             /* read straight into the slot */
    void *staging;           /* staging buffer (not scatter) */
    size_t shift;            /* where offset lies in staging (O_DIRECT alignment) */
    int located;             /* samples of one group of a tier read by location (tier.h): the
                                run's bytes are their records back to back (offset unused, length
                                their sum) */
    ingot_tier_loc_t loc;    /* located: the tier, group, where from, into GPU memory */
    int verified;            /* the reader verified every sample (runs from a tier or through
                                a source that is not local) */
    int direct;              /* read from the source itself, around every cache (a re-read) */
    int transit;             /* out: its bytes came through a source that is not local (a
                                network, a link, a cache): a bad sample is read again */
    size_t room;             /* bytes of the staging target (slack = room - length) */
} loader_run_t;

typedef struct loader_slot {
    uint32_t id;
    uint64_t token;     /* of the batch handed over from it (ingot_batch_t) */
    _Atomic int state;  /* loader_slot_state_t */
    _Atomic int status; /* first error of the step */
    char error[512];    /* its message, by the thread that set status (slot_note_error) */
    _Atomic uint32_t runs_left;
    _Atomic uint32_t skipped_count;
    uint64_t step, epoch, epoch_step;
    ingot_tier_step_t tiers; /* what the tiers do in this step (fills) */
    uint32_t nsamples;       /* the rank's slice */
    uint32_t count;          /* delivered (after skips) */
    uint64_t bytes;
    ingot_mem_t host;             /* payload (pinned on the GPU path) */
    void *device;                 /* device payload, or NULL */
    uint8_t *on_device;           /* per position: its bytes were fetched into device (no H2D) */
    _Atomic uint32_t ndevice;     /* positions fetched into device this step */
    void *event, *h2d_start;      /* cudaEvent_t */
    void *consumed;               /* cudaEvent_t recorded by ingot_loader_release_after() */
    _Atomic int consumed_pending; /* the planner waits on consumed before refilling */
    ingot_sample_info_t *info;    /* per slice position: its manifest row, read once */
    ingot_field_info_t *fields;   /* per slice position: fields_max field rows */
    uint64_t *offsets, *lengths, *indices;
    int32_t *labels;
    const char **keys;
    uint8_t *skipped;
    uint8_t *scatter;      /* per position: stored bytes == delivered bytes */
    uint64_t *skipped_ids; /* ids skipped in this step (VERIFY=skip) */
    uint32_t *sorted;      /* slice positions sorted by (shard, offset) */
    loader_run_t *runs;
    uint32_t nruns;
} loader_slot_t;

struct loader_reader_ctx;

/* The hash of a run's fields as its request's bytes land (landed.c): a walk over the run's
 * fields in the order of the request's bytes, fed each prefix the source reports. */
typedef struct loader_landed {
    ingot_shard_stream_t stream;
    loader_run_t *want;  /* the run whose reads are to be hashed (set by its reader) */
    loader_run_t *run;   /* the run being hashed, or NULL: none (the reader verifies after) */
    uint32_t k, f;       /* the sample (of the run) and field in progress */
    uint64_t rec;        /* where sample k's record starts in a located run's bytes */
    uint64_t packed;     /* where field f starts in sample k's delivered bytes (scatter runs) */
    uint64_t upto;       /* the longest prefix reported */
    uint64_t bad_end;    /* end of the first field whose hash differed, or 0 */
    _Atomic int walking; /* 1 while a report walks the run: a source's own thread may report
                            while the reader quarantines the request and gives the run up */
} loader_landed_t;

/* A byte-source request of one reader, and what it must take back when it completes late. */
typedef struct loader_req {
    ingot_source_req_t req;
    struct loader_reader_ctx *reader;
    void *staging;    /* staging buffer held in quarantine, or NULL */
    _Atomic int busy; /* 1: quarantined, 2: being released; 0: reusable */
    loader_landed_t landed;
} loader_req_t;

/* The loader request @p req is the first member of (no read of the request). */
static inline loader_req_t *ingot_loader_req_of(ingot_source_req_t *req)
{
    return (loader_req_t *)((char *)req - offsetof(loader_req_t, req));
}

typedef struct loader_reader_ctx {
    struct ingot_loader *loader;
    ingot_event_t done;             /* a request of this reader completed (late ones included) */
    struct iovec *iov;              /* iov_cap entries */
    ingot_source_extent_t *extents; /* LOADER_RUN_SAMPLES_MAX entries (located runs) */
    uint64_t disk; /* of the run's reads down the chain, bytes the disk tier served */
    loader_req_t reqs[LOADER_REQS_PER_READER]; /* its requests, made at create */
} loader_reader_ctx_t;

typedef struct loader_worker_ctx {
    struct ingot_loader *loader;
    ingot_shard_codec_t codec; /* zstd context over the loader's dictionary */
    int codec_ready;
    void *scratch; /* decoded fields for a transform */
    size_t scratch_size;
    ingot_field_view_t *views;
} loader_worker_ctx_t;

struct ingot_loader {
    ingot_ctx_h ctx;
    ingot_loader_params_t params;
    int rank, world;
    ingot_manifest_h manifest;
    ingot_manifest_info_t minfo; /* queried once at create */
    void *manifest_window;       /* MPI_Win of the node-shared copy */
    ingot_order_h order;
    ingot_tier_chain_t *tiers; /* storage and the caches above it (source/tiers.h) */
    ingot_source_t *front[INGOT_TIER_SOURCES_MAX]; /* the caller's, until the chain takes them */
    uint32_t nfront;
    ingot_source_t *const *sources; /* the chain's sources for shard byte ranges; storage last */
    uint32_t nsources;
    _Atomic uint64_t *epoch_reads; /* [nepochs] samples read (requests per sample) */
    uint64_t first_epoch, nepochs; /* epochs this job delivers (per-epoch byte counters) */
    _Atomic uint64_t *epoch_bytes; /* [nepochs][INGOT_TIER_FROM_COUNT] record bytes by source */
    ingot_shard_dict_t *dict;      /* zstd dictionary, loaded once */
    uint64_t steps_per_epoch, total_steps, start_step;
    uint32_t slice;          /* samples per rank per step */
    uint32_t order_nodes;    /* canonical nodes of a locality order (0: the full order) */
    uint32_t slice_rank;     /* the slice of every step this rank takes (deal.c) */
    uint32_t *slice_of;      /* per rank: its slice */
    size_t sample_bytes_max; /* delivered bytes of the largest sample */
    size_t stored_max;       /* stored bytes of the largest sample */
    size_t slot_bytes, staging_bytes;
    uint32_t depth, nreaders, nworkers, nstaging;
    int device;   /* INGOT_DEVICE_HOST or CUDA index */
    void *stream; /* cudaStream_t */
    loader_slot_t *slots;
    ingot_spsc_t free_slots; /* trainer -> planner */
    ingot_mpmc_t read_q, work_q, staging_q;
    ingot_event_t ready; /* a slot became READY or FAILED */
    ingot_abort_t abort;
    pthread_t planner;
    pthread_t *threads; /* readers then workers */
    uint32_t threads_started;
    int planner_started;
    loader_worker_ctx_t *wctx;
    loader_reader_ctx_t *rctx;
    ingot_mem_t staging_mem;
    ingot_trace_t *trace;
    void *gap_scratch; /* sinks for tar headers between scattered fields: one of gap_scratch_size
                          per request (loader_gap), as tiers write them from several threads */
    size_t gap_scratch_size;
    int fetch_device;                  /* a tier fetches bytes into this GPU, or -1 */
    void *gap_device;                  /* the gap sinks in that GPU's memory */
    const ingot_source_mem_t *mem_dev; /* iov_cap of INGOT_SOURCE_MEM_DEVICE */
    uint64_t timeout_ns;
    uint64_t pacing_ns;    /* INGOT_INGEST_PACING: pause before a read while reductions run */
    uint64_t hash_piece;   /* INGOT_HASH_PIECE: bytes per read of a hashed run, 0: one read */
    uint64_t coalesce_gap; /* INGOT_COALESCE_GAP */
    int direct_io;         /* INGOT_DIRECT_IO */
    uint32_t iov_cap;      /* iovecs a scatter read may need */
    uint32_t fields_max;   /* fields of the widest sample */
    int numa_node;         /* slots bound here (INGOT_BIND=cpu+mem), or -1 */
    int bind_threads;      /* run the loader's threads on the ingest cores */
    _Atomic int bind_warned;
    /* planner state */
    uint64_t next_plan; /* next step to plan (relative to start_step) */
    uint64_t *slice_ids;
    ingot_tier_loc_t *plan_loc; /* per slice position: where a tier located it */
    uint8_t *plan_located;      /* per slice position: located (1) or read from the sources */
    const ingot_sample_info_t *plan_info; /* the slot being planned (its comparator's) */
    /* trainer state */
    uint64_t next_step;   /* next step to hand over (relative) */
    uint64_t oldest_held; /* first step handed over and not yet released */
    uint32_t held;
    uint64_t token_key;     /* keys batch tokens: per loader, not guessable */
    ingot_status_t failed;  /* sticky error after a failed step */
    char failed_msg[512];   /* its message: ingot_loader_next() makes it the caller's */
    uint64_t epoch_skipped; /* samples skipped in the current epoch (this rank) */
    uint64_t *skipped_ids;  /* ids skipped in the current epoch (this rank) */
    uint64_t skipped_len, skipped_cap;
    /* statistics */
    uint64_t t_first, t_last, stall_ns, stall_first_ns, samples, bytes;
    double read_q_sum, ready_sum;
    _Atomic uint64_t bytes_read, read_requests;
    /* samples that failed their hash after a read that could damage them, read again from the
     * source itself, by where the bad bytes came from (INGOT_TIER_FROM_*); of them, those whose
     * re-read returned the same wrong bytes (damage at rest) */
    _Atomic uint64_t rereads[INGOT_TIER_FROM_COUNT], rereads_at_rest;
    _Atomic int said_reread;
    _Atomic uint64_t paced;        /* storage requests delayed by INGOT_INGEST_PACING */
    _Atomic uint64_t bytes_landed; /* of reads hashed as their source reported them landing */
    ingot_hist_t h_stall, h_read, h_verify, h_decode, h_transform, h_h2d;
    long faults_at_create;
};

/**
 * ingot_loader_create() with byte sources tried before storage, in order (a peer cache; tests
 * use sources that answer "retry elsewhere" or never complete). The loader owns @p front from
 * the call on (destroyed with it, also when create fails). Collective, as ingot_loader_create().
 */
ingot_status_t ingot_loader_create_with_sources(ingot_ctx_h ctx,
                                                const ingot_loader_params_t *params,
                                                ingot_source_t *const *front, uint32_t nfront,
                                                ingot_loader_h *loader_p);

/* create.c: the order a loader runs (the shards' sample counts handed to the locality order). */
ingot_status_t ingot_loader_order_make(ingot_manifest_h manifest, const ingot_manifest_info_t *mi,
                                       uint64_t global_batch, uint64_t seed,
                                       ingot_order_tail_t tail, ingot_order_mode_t mode,
                                       uint32_t window, uint32_t nodes, ingot_order_h *order_p);

/* order_check.c: warn (rank 0) when the locality order runs over shards packed class by class. */
void ingot_loader_order_check(ingot_loader_h l);

/* deal.c: the locality order dealt over nodes: the canonical nodes (and the batch they must
 * divide: refused naming INGOT_ORDER); every rank's slice (collective, agreed; ranks numbered node
 * by node under a dealt order), the cost of a layout that does not line up said once; the order
 * as INGOT_ORDER writes it ("full", "window:N", "window:N,nodes:C" for C > 1). */
ingot_status_t ingot_loader_deal_params(ingot_loader_h l);
ingot_status_t ingot_loader_deal_slices(ingot_loader_h l);
/* Slices numbered node by node, from every rank's node (@p node_of, @p world ranks over @p nodes
 * nodes): @p slice_of per rank; @p ranks_of and @p first_of (nodes + 1 entries each) get every
 * node's ranks and its first slice. Pure: the loader and ingot-sim number them alike. */
void ingot_loader_deal_number(const int *node_of, int world, int nodes, uint32_t *ranks_of,
                              uint32_t *first_of, uint32_t *slice_of);
const char *ingot_loader_order_text(uint32_t window, uint32_t nodes, char *buf, size_t len);

/* tiers.c: the job plan handed to the tier chain, and the chain made from it (collective,
 * agreed); the figures the loader keeps beside the chain's. */
ingot_status_t ingot_loader_tiers(ingot_loader_h l, ingot_source_t *const *front, uint32_t nfront);

/* run.c: what every loader thread shares: its set-up, a sample's rows, a run's end and a slot's
 * completion (READY, or FAILED with the step's first error) with its waiter woken. */
void ingot_loader_thread_setup(ingot_loader_h l);
/* The manifest rows of sample @p pos of @p slot's step. */
ingot_shard_rows_t ingot_loader_run_rows(ingot_loader_h l, const loader_slot_t *slot, uint32_t pos);
/* Where sample @p s of @p run lies in the run's bytes: @p at (its record among a located run's,
 * back to back), else its offset from the run's. */
uint64_t ingot_loader_run_at(const loader_run_t *run, const ingot_sample_info_t *s, uint64_t at);
/* Where the stored bytes of the sample at slot position @p pos are, lying at @p at in the run's
 * bytes: the slot (scatter), else its place in the staging buffer. */
const char *ingot_loader_run_stored(const loader_run_t *run, uint32_t pos, uint64_t at);
/* A run's failure noted in its slot (the first cause is kept). */
void ingot_loader_slot_note_error(loader_slot_t *slot, ingot_status_t st);
/* A slot failed at once, its waiter woken (once per step, after every note of the step). */
void ingot_loader_slot_fail(ingot_loader_h l, loader_slot_t *slot, ingot_status_t st);
/* A run ended: its staging back, its failure noted; the step's last run completes the slot. */
void ingot_loader_run_done(ingot_loader_h l, loader_run_t *run, ingot_status_t status);

/* planner.c, readers.c, workers.c: the threads. */
void *ingot_loader_planner_main(void *arg);
void *ingot_loader_reader_main(void *arg);
void *ingot_loader_worker_main(void *arg);
/* landed.c: a run's fields hashed as its request's bytes land, in pieces still in the reader's
 * cache (INGOT_HASH_PIECE). The reader sets lr->landed.want to the run; arm: before each submit
 * of a request (hashes when it reads the wanted run whole, verify on, into host memory; else
 * off); finish: after its completion, hashing what no landing reported; 1 when every field of
 * the run has the manifest's hash (the run is verified), 0 otherwise (the reader verifies it
 * again, naming what differs); disarm: after a read that failed. */
void ingot_loader_landed_arm(ingot_loader_h l, loader_req_t *lr, loader_run_t *run);
int ingot_loader_landed_finish(loader_req_t *lr);
void ingot_loader_landed_disarm(loader_req_t *lr);
/* Wait until no report walks @p lr's run (its request is no longer pending: none starts). */
void ingot_loader_landed_settle(loader_req_t *lr);

/* readers.c: completion callback of the loader's byte-source requests: when a quarantined
 * request completes late, takes its staging buffer and the request itself back into service. */
void ingot_loader_req_done(ingot_source_req_t *req, int late);

/* gpu.c: device slots and the H2D copy (no-ops without CUDA). */
ingot_status_t ingot_loader_gpu_init(ingot_loader_h l);
/* INGOT_OK when CUDA device @p device is usable by this process, else INGOT_ERR_NO_DEVICE with
 * an error naming the device, how many this process sees and why none is usable. */
ingot_status_t ingot_loader_gpu_device_check(int device);
/* INGOT_OK when @p depth device slots of @p slot_bytes fit in @p free_bytes of device
 * @p device (of @p total_bytes), else INGOT_ERR_NO_MEMORY with an error naming both sizes. */
ingot_status_t ingot_loader_gpu_ring_fits(int device, uint32_t depth, size_t slot_bytes,
                                          size_t free_bytes, size_t total_bytes);
ingot_status_t ingot_loader_gpu_copy(ingot_loader_h l, loader_slot_t *slot);
void ingot_loader_gpu_release(ingot_loader_h l, loader_slot_t *slot);
/* Record the slot's consumed event on the trainer's @p stream (ingot_loader_release_after()). */
ingot_status_t ingot_loader_gpu_release_after(ingot_loader_h l, loader_slot_t *slot, void *stream);
/* Before the planner refills a slot: wait for the work its consumed event marks. */
void ingot_loader_gpu_reuse(ingot_loader_h l, loader_slot_t *slot);
void ingot_loader_gpu_cleanup(ingot_loader_h l);

struct ingot_ctx_config;
/* memory.c: the largest sample and run of the manifest; slots, readers and workers; every
 * buffer, queue and stage context (then the byte sources: create.c); all of it freed. */
ingot_status_t ingot_loader_maxima(ingot_loader_h l);
ingot_status_t ingot_loader_size(ingot_loader_h l, const struct ingot_ctx_config *cfg);
ingot_status_t ingot_loader_alloc(ingot_loader_h l, const struct ingot_ctx_config *cfg);
void ingot_loader_free_memory(ingot_loader_h l);
/* The bytes of every request's gap sink together (what gap_scratch and gap_device hold). */
static inline size_t ingot_loader_gap_bytes(const struct ingot_loader *l)
{
    return (size_t)l->nreaders * LOADER_REQS_PER_READER * l->gap_scratch_size;
}
/* create.c: minor page faults of this process so far (getrusage). */
long ingot_loader_minor_faults(void);
/* workers.c: verify a sample's stored bytes against the manifest (located runs are checked by
 * their reader); process a run (verify, decode, transform, collate) on worker @p w, or NULL (a
 * reader doing it itself). */
ingot_status_t ingot_loader_verify_sample(ingot_loader_h l, const ingot_shard_rows_t *rows,
                                          const char *stored, int scattered);
ingot_status_t ingot_loader_process_run(ingot_loader_h l, loader_worker_ctx_t *w,
                                        loader_run_t *run);

#endif
