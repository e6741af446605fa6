/**
 * @file loader.h
 * @brief The loader: prefetches, verifies, decodes, transforms and collates batches of this
 *        rank's samples ahead of the trainer, into host or GPU memory.
 *
 * A loader reads one manifest (opened once per node and shared by the node's ranks), walks its
 * deterministic per-epoch order (ingot/order.h) and hands the trainer one batch per step: this
 * rank's slice of the global batch, `global_batch / world_size` samples. Up to `depth` batches
 * are prepared ahead in slots sized and pre-faulted at create; nothing is allocated per sample.
 *
 * Placement: by default batches go to the GPU of the rank's placement; with INGOT_BIND set the
 * loader's threads run on the placement's ingest cores and, with cpu+mem, its batch slots are
 * bound to the placement's NUMA node.
 *
 * Threads: ingot_loader_next(), _release(), _stats() and _save() are called by one trainer
 * thread at a time. The loader owns a planner thread, `readers` storage threads and `workers`
 * verify/decode/collate threads (named ingot-plan, ingot-read*, ingot-work*); none of them
 * calls MPI. ingot_loader_create(), _save() and _destroy() are collective over the context's
 * communicator and call MPI on the caller's thread.
 *
 * Every wait has the INGOT_TIMEOUT deadline: a pipeline that cannot deliver fails with
 * INGOT_ERR_TIMED_OUT instead of hanging.
 */
#ifndef INGOT_LOADER_H
#define INGOT_LOADER_H

#include <ingot/def.h>
#include <ingot/status.h>
#include <ingot/order.h>

INGOT_BEGIN_DECLS

/** Opaque handle to a loader. */
typedef struct ingot_loader *ingot_loader_h;

/** What a sample whose stored bytes do not match the manifest's hash does. */
typedef enum ingot_verify_policy {
    INGOT_VERIFY_FAIL = 0, /**< The batch fails with INGOT_ERR_CORRUPT naming the sample. */
    INGOT_VERIFY_SKIP = 1, /**< The sample is left out (logged with its key, recorded in the
                                cursor), up to skip_budget per epoch; beyond that, FAIL. */
    INGOT_VERIFY_OFF  = 2  /**< No hashing. */
} ingot_verify_policy_t;

/** One field of a sample as the transform sees it (decoded). */
typedef struct ingot_field_view {
    const char *name; /**< Field name ("png", "cls", ...). */
    const void *data; /**< Decoded bytes (valid during the callback only). */
    size_t      len;  /**< Bytes of data. */
} ingot_field_view_t;

/** Members of ingot_sample_view_t after `fields` that its field_mask says are set. */
enum ingot_sample_view_field {
    INGOT_SAMPLE_VIEW_FIELD_EPOCH = INGOT_BIT(0), /**< epoch. */
    INGOT_SAMPLE_VIEW_FIELD_SEED  = INGOT_BIT(1), /**< seed. */
    INGOT_SAMPLE_VIEW_FIELD_WHERE = INGOT_BIT(2)  /**< shard, offset. */
};

/**
 * A sample as the transform sees it. The members from field_mask on were appended after the
 * first five (issue 26): transforms written before them never read them, so they keep working;
 * the loader sets field_mask to the bits of the members it filled in (all of them). A view made
 * by the caller (a test, a direct call) may leave field_mask 0: a transform then takes epoch 0,
 * seed 0 and an unnamed shard. As with any new symbol, a transform that reads them needs a
 * libingot at least as new as this header.
 */
typedef struct ingot_sample_view {
    uint64_t                  index;       /**< Global sample index. */
    const char               *key;         /**< Key within its shard. */
    int32_t                   label;       /**< Label, or -1. */
    uint32_t                  field_count; /**< Entries of fields. */
    const ingot_field_view_t *fields;      /**< Decoded fields, in shard order. */
    uint64_t                  field_mask;  /**< ingot_sample_view_field bits of the members below
                                                that are set. */
    uint64_t                  epoch;       /**< Epoch the sample is delivered in (from 0). */
    uint64_t                  seed;        /**< The loader's seed (its params.seed): with epoch
                                                and index, what a random augmentation draws
                                                from, so that any world size and a resumed run
                                                draw the same. */
    const char               *shard;       /**< Path of its shard (as the manifest names it). */
    uint64_t                  offset;      /**< Byte offset of its first member's data in the
                                                shard. */
} ingot_sample_view_t;

/**
 * Transform: turn one decoded sample into its fixed-size output (e.g. a normalised tensor).
 * Runs in the loader's worker threads, concurrently for different samples; must be
 * thread-safe. Returning an error fails the batch (the loader logs the sample's key).
 */
typedef ingot_status_t (*ingot_transform_fn_t)(const ingot_sample_view_t *sample, void *out,
                                               size_t out_size, void *arg);

/** Fields of ingot_loader_params_t. */
enum ingot_loader_params_field {
    INGOT_LOADER_PARAM_FIELD_MANIFEST = INGOT_BIT(0), /**< manifest_path (required). */
    INGOT_LOADER_PARAM_FIELD_BATCH    = INGOT_BIT(1), /**< global_batch (required). */
    INGOT_LOADER_PARAM_FIELD_SEED     = INGOT_BIT(2), /**< seed (default 0). */
    INGOT_LOADER_PARAM_FIELD_EPOCHS   = INGOT_BIT(3), /**< epochs (default 1). */
    INGOT_LOADER_PARAM_FIELD_DEPTH    = INGOT_BIT(4), /**< depth (default 4). */
    INGOT_LOADER_PARAM_FIELD_MEMORY   = INGOT_BIT(5), /**< memory_budget (INGOT_LOADER_MEMORY). */
    INGOT_LOADER_PARAM_FIELD_DEVICE   = INGOT_BIT(6), /**< device (default: the placement's). */
    INGOT_LOADER_PARAM_FIELD_TRANSFORM =
        INGOT_BIT(7), /**< transform, transform_arg, sample_out_size. */
    INGOT_LOADER_PARAM_FIELD_VERIFY  = INGOT_BIT(8),  /**< verify, skip_budget (INGOT_VERIFY...). */
    INGOT_LOADER_PARAM_FIELD_CURSOR  = INGOT_BIT(9),  /**< cursor: resume from it. */
    INGOT_LOADER_PARAM_FIELD_TAIL    = INGOT_BIT(10), /**< tail (default DROP). */
    INGOT_LOADER_PARAM_FIELD_ORDER   = INGOT_BIT(11), /**< order_mode, order_window. */
    INGOT_LOADER_PARAM_FIELD_THREADS = INGOT_BIT(12), /**< readers, workers (INGOT_READERS...). */
    INGOT_LOADER_PARAM_FIELD_ORDER_NODES = INGOT_BIT(13) /**< order_nodes (INGOT_ORDER's). */
};

/** Device value: deliver batches in host memory. */
#define INGOT_DEVICE_HOST (-1)
/** Device value (the default): the CUDA device of this rank's placement (ingot_placement_get),
 *  or host memory when the placement has no GPU or no CUDA device is usable. */
#define INGOT_DEVICE_PLACEMENT (-2)

/** Parameters of ingot_loader_create(). */
typedef struct ingot_loader_params {
    uint64_t              field_mask;      /**< ingot_loader_params_field bits. */
    const char           *manifest_path;   /**< Manifest file, or its URL (s3://BUCKET/KEY,
                                                http(s)://HOST/PATH: include/ingot/store.h). */
    uint64_t              global_batch;    /**< Samples per step over all ranks; the world size
                                                must divide it. */
    uint64_t              seed;            /**< Shuffle seed. */
    uint64_t              epochs;          /**< Epochs to deliver (>= 1). */
    uint32_t              depth;           /**< Batches prepared ahead (>= 2). */
    uint64_t              memory_budget;   /**< Bytes the loader may allocate. */
    int                   device;          /**< INGOT_DEVICE_PLACEMENT, INGOT_DEVICE_HOST or a
                                                CUDA device index. */
    ingot_transform_fn_t  transform;       /**< Optional per-sample transform. */
    void                 *transform_arg;   /**< Passed to transform. */
    size_t                sample_out_size; /**< Output bytes per sample with a transform. */
    ingot_verify_policy_t verify;          /**< Hash policy. */
    uint64_t              skip_budget;     /**< Samples skipped per epoch under SKIP. */
    const ingot_cursor_t *cursor;          /**< Resume point (read with ingot_cursor_read()). */
    ingot_order_tail_t    tail;            /**< Tail policy of the epoch. */
    ingot_order_mode_t    order_mode;      /**< Full or locality-aware shuffle (unset:
                                                INGOT_ORDER, default full). */
    uint32_t              order_window;    /**< Shards per window in locality mode. */
    uint32_t              readers;         /**< Storage reader threads (0: auto). */
    uint32_t              workers;         /**< Worker threads (0: auto). */
    /** Locality mode: the canonical nodes its windows are dealt to (order.h). 0 (the default,
     *  INGOT_ORDER=window:N): the resumed cursor's, else the job's node count. A resume under
     *  another value than the cursor's is refused, naming both. */
    uint32_t              order_nodes;
} ingot_loader_params_t;

/**
 * A batch handed to the trainer. Without a transform, sample i's bytes (its fields decoded and
 * concatenated in shard order) are data[offsets[i] .. offsets[i] + lengths[i]); with one, they
 * are sample_out_size bytes at offsets[i] = i * sample_out_size. Host arrays (offsets, lengths,
 * labels, indices, keys) are always in host memory. The batch stays valid until released.
 * Every field is an output of ingot_loader_next(): the loader trusts none of them back, and
 * ingot_loader_release() identifies the batch by its token alone.
 */
typedef struct ingot_batch {
    uint64_t           step;        /**< Steps delivered before this one, over all epochs. */
    uint64_t           epoch;       /**< Epoch of the batch. */
    uint64_t           epoch_step;  /**< Step within the epoch. */
    uint32_t           count;       /**< Samples in the batch (fewer than the slice when
                                         samples were skipped). */
    int                device;      /**< Where data lives: INGOT_DEVICE_HOST or a CUDA index. */
    void              *data;        /**< Batch bytes (device pointer when device >= 0). */
    size_t             bytes;       /**< Bytes used in data. */
    const uint64_t    *offsets;     /**< Per sample: offset in data. */
    const uint64_t    *lengths;     /**< Per sample: bytes. */
    const int32_t     *labels;      /**< Per sample: label or -1. */
    const uint64_t    *indices;     /**< Per sample: global sample index. */
    const char *const *keys;        /**< Per sample: key (valid while the loader lives). */
    void              *ready_event; /**< cudaEvent_t the trainer's stream must wait on before
                                         reading data (device batches), else NULL. */
    /**
     * Opaque: names this hand-over to ingot_loader_release(). Unique per step, keyed per
     * loader (not a slot index; a guard against mistakes, not a secret); release refuses a
     * token that is not one of the batches the loader holds (forged, already released, or from
     * another loader). Do not change it.
     */
    uint64_t           token;
} ingot_batch_t;

/** Fields of ingot_loader_stats_t (each bit covers the members named). */
enum ingot_loader_stats_field {
    INGOT_LOADER_STATS_FIELD_COUNTS  = INGOT_BIT(0), /**< steps .. skipped. */
    INGOT_LOADER_STATS_FIELD_STALL   = INGOT_BIT(1), /**< wall_ns .. stall_p99_ns. */
    INGOT_LOADER_STATS_FIELD_STAGES  = INGOT_BIT(2), /**< read_p50_ns .. h2d_p99_ns. */
    INGOT_LOADER_STATS_FIELD_QUEUES  = INGOT_BIT(3), /**< read_queue_avg, ready_slots_avg. */
    INGOT_LOADER_STATS_FIELD_MEMORY  = INGOT_BIT(4), /**< memory_host .. minor_faults. */
    INGOT_LOADER_STATS_FIELD_THREADS = INGOT_BIT(5), /**< readers, workers, depth. */
    INGOT_LOADER_STATS_FIELD_STORE   = INGOT_BIT(6), /**< store_requests .. store_part_hits. */
    INGOT_LOADER_STATS_FIELD_DISK    = INGOT_BIT(7), /**< disk_hits .. disk_damaged_fills. */
    INGOT_LOADER_STATS_FIELD_REREAD  = INGOT_BIT(8), /**< reread_storage .. reread_at_rest. */
    INGOT_LOADER_STATS_FIELD_HEDGE   = INGOT_BIT(9), /**< store_hedges, store_hedge_wins. */
    INGOT_LOADER_STATS_FIELD_VERIFY  = INGOT_BIT(10) /**< bytes_hashed_landing. */
};

/**
 * Statistics of a loader (ingot_loader_stats()). Times in nanoseconds. The caller sets
 * field_mask: ingot writes the fields it names and leaves every other byte untouched
 * (field_mask included; bits this library does not know are ignored), so fields can be
 * appended later without breaking programs built against this header.
 */
typedef struct ingot_loader_stats {
    uint64_t field_mask;     /**< In: ingot_loader_stats_field bits of the fields to write. */
    uint64_t steps;          /**< Batches handed over. */
    uint64_t samples;        /**< Samples handed over. */
    uint64_t bytes;          /**< Bytes handed over (decoded). */
    uint64_t bytes_read;     /**< Bytes read from storage (stored, including gaps). */
    uint64_t read_requests;  /**< Storage requests (after coalescing). */
    uint64_t skipped;        /**< Samples skipped (corrupt, VERIFY=skip) in this epoch. */
    uint64_t wall_ns;        /**< From the first ingot_loader_next() to the last return. */
    uint64_t stall_ns;       /**< Time spent waiting inside ingot_loader_next(). */
    uint64_t stall_first_ns; /**< Wait of the first step (pipeline fill), not in stall_ns. */
    uint64_t stall_p50_ns, stall_p99_ns;         /**< Per-step waits (first step excluded). */
    uint64_t read_p50_ns, read_p99_ns;           /**< Per storage request. */
    uint64_t verify_p50_ns, verify_p99_ns;       /**< Per sample. */
    uint64_t decode_p50_ns, decode_p99_ns;       /**< Per sample. */
    uint64_t transform_p50_ns, transform_p99_ns; /**< Per sample. */
    uint64_t h2d_p50_ns, h2d_p99_ns;             /**< Per batch (GPU path). */
    double   read_queue_avg;   /**< Mean read-queue occupancy seen at each step. */
    double   ready_slots_avg;  /**< Mean batches ready ahead of the trainer at each step. */
    uint64_t memory_host;      /**< Bytes of host memory allocated at create. */
    uint64_t memory_device;    /**< Bytes of device memory allocated at create. */
    uint64_t memory_pinned;    /**< Of memory_host, bytes actually page-locked. */
    uint64_t minor_faults;     /**< Minor page faults of the process since create. */
    uint32_t readers, workers; /**< Threads the loader runs. */
    uint32_t depth;            /**< Batch slots. */
    /* INGOT_LOADER_STATS_FIELD_STORE: the object store, when the manifest is at an s3:// or
     * http(s):// URL (all zero otherwise). Counted by the loader's own client, from create on. */
    uint64_t store_requests;         /**< GETs completed (once each, whatever their retries). */
    uint64_t store_failed;           /**< Of which failed. */
    uint64_t store_attempts;         /**< HTTP requests sent (first tries and retries). */
    uint64_t store_bytes;            /**< Bytes received from the store. */
    uint64_t store_retries_throttle; /**< Retries after 503 SlowDown or 429. */
    uint64_t store_retries_server;   /**< Retries after 500, 502, 504. */
    uint64_t store_retries_network;  /**< Retries after refused, reset or cut connections. */
    uint64_t store_retries_stall;    /**< Retries after INGOT_S3_STALL_TIMEOUT without a byte. */
    uint64_t store_retries_auth;     /**< Retries after ExpiredToken (credentials re-read). */
    uint64_t store_throttle_events;  /**< Halvings of the concurrency after SlowDown (AIMD). */
    uint64_t store_get_p50_ns;       /**< Latency of successful GET attempts, request to last */
    uint64_t store_get_p99_ns;       /**< byte. */
    double   store_gets_per_sample;  /**< store_requests / samples read so far. */
    uint64_t store_part_hits;        /**< Reads served from parts already fetched. */
    /* INGOT_LOADER_STATS_FIELD_DISK: the node's disk tier on this rank (INGOT_DISK_CACHE_BYTES;
     * all zero without it). A piece is an aligned slice of a shard (INGOT_DISK_CACHE_PIECE). */
    uint64_t disk_hits;           /**< Pieces read from a disk: this node's or their home's. */
    uint64_t disk_remote_hits;    /**< Of which from another node's disk. */
    uint64_t disk_misses;         /**< Pieces read from storage (whole). */
    uint64_t disk_bytes;          /**< Bytes of reads served from a disk. */
    uint64_t disk_bytes_below;    /**< Bytes the tier read from storage: misses and prefetches. */
    uint64_t disk_admitted;       /**< Pieces written to this node's disk (its keeper rank). */
    uint64_t disk_refused;        /**< Admissions refused: the policy's bypass, a full queue. */
    uint64_t disk_evictions;      /**< Entries removed to make room (keeper). */
    uint64_t disk_prefetched;     /**< Pieces the prefetcher read ahead (keeper). */
    uint64_t disk_prefetch_bytes; /**< Their bytes. */
    uint64_t disk_bad_entries;    /**< Entries found damaged, removed and read again. */
    uint64_t disk_fill_errors;    /**< Fills that failed (disk full, I/O): left uncached. */
    uint64_t disk_damaged_fills;  /**< Pieces read from storage that did not verify: damaged
                                       on their way in, never written. */
    /* INGOT_LOADER_STATS_FIELD_REREAD: samples whose bytes failed their hash after a read that
     * could have damaged them (anything but a local shard file), read again from the source
     * itself, around every cache; by where the bad bytes came from. */
    uint64_t reread_storage; /**< Storage: the object store, HTTP, the emulated store. */
    uint64_t reread_peer;    /**< The peer cache: a peer's memory or this rank's own. */
    uint64_t reread_disk;    /**< A node's disk tier (the entries they span removed). */
    uint64_t reread_at_rest; /**< Of all, re-read to the same wrong bytes: damaged at rest,
                                  decided by INGOT_VERIFY and named. */
    /* INGOT_LOADER_STATS_FIELD_HEDGE: the object store's hedged GETs (INGOT_S3_HEDGE). */
    uint64_t store_hedges;     /**< Hedge GETs started (also in store_attempts). */
    uint64_t store_hedge_wins; /**< Requests a hedge finished first. */
    /* INGOT_LOADER_STATS_FIELD_VERIFY: where the stored bytes were hashed (verify on). */
    uint64_t bytes_hashed_landing; /**< Bytes of reads (storage, disk tier) whose fields were
                                        hashed as their source reported them landing, by the
                                        thread that wrote them, in pieces of INGOT_HASH_PIECE
                                        still in its cache, and passed there; the rest of what
                                        is read (not reported, or a run with a field that did
                                        not pass) is hashed after its read completes. */
} ingot_loader_stats_t;

/**
 * @brief Create a loader in a context (collective over the context's communicator).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (missing or inconsistent field, e.g. a world size
 *         that does not divide global_batch: logged with the values); INGOT_ERR_NO_RESOURCE
 *         (depth batches do not fit the memory budget: logged with both sizes);
 *         INGOT_ERR_MISMATCH (cursor of another manifest or seed); manifest errors
 *         (INGOT_ERR_FORMAT, INGOT_ERR_CORRUPT, INGOT_ERR_NOT_FOUND); INGOT_ERR_NO_DEVICE.
 */
INGOT_API ingot_status_t ingot_loader_create(ingot_ctx_h ctx, const ingot_loader_params_t *params,
                                             ingot_loader_h *loader_p);

/**
 * @brief Hand over the next batch, waiting only if the pipeline is behind (the data stall,
 *        measured). Batches come in step order.
 * @return INGOT_OK; INGOT_END_OF_DATA after the last step of the last epoch; an error of the
 *         batch (INGOT_ERR_IO, INGOT_ERR_CORRUPT, INGOT_ERR_MISMATCH, INGOT_ERR_ZSTD, a
 *         transform's error), logged with the shard, sample key and offset (on the loader
 *         thread that found it, and made the caller's ingot_last_error() by this call): that
 *         step failed, no partial batch is handed over, and every later call returns the same
 *         error and message; INGOT_ERR_TIMED_OUT; INGOT_ERR_NO_RESOURCE, at
 *         once, when all depth batches are already held. The trainer may hold up to depth
 *         batches: with depth - 1 held the pipeline still fills the one free slot, so the call
 *         succeeds; with depth held no slot is left for the step asked for, and waiting would
 *         never end.
 */
INGOT_API ingot_status_t ingot_loader_next(ingot_loader_h loader, ingot_batch_t *batch_p);

/**
 * @brief Give a batch back so its slot can be refilled. Batches are released in the order they
 *        were handed over. The batch is identified by its token only.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for a batch released out of order (logged with both
 *         steps), or whose token names no batch this loader holds: released twice, forged or
 *         from another loader (logged with the token); nothing is released then.
 */
INGOT_API ingot_status_t ingot_loader_release(ingot_loader_h loader, ingot_batch_t *batch);

/**
 * @brief ingot_loader_release() for a device batch still read by work enqueued on a CUDA
 *        stream: the slot's device memory is refilled only once the work enqueued on @p stream
 *        so far is done (an event recorded on it; the loader's planner waits on it before
 *        refilling, the trainer never does). For a host batch, the same as
 *        ingot_loader_release().
 * @param stream a cudaStream_t of the batch's device (NULL: the legacy default stream).
 * @return as ingot_loader_release(); INGOT_ERR_CUDA (logged) when the event cannot be
 *         recorded on @p stream: nothing is released then.
 */
INGOT_API ingot_status_t ingot_loader_release_after(ingot_loader_h loader, ingot_batch_t *batch,
                                                    void *stream);

/**
 * @brief Make CUDA stream @p stream wait until a device batch's data is in place (its
 *        ready_event), without synchronising the host: the consumer's side of ready_event,
 *        for a trainer that does not call the CUDA runtime itself. A host batch is ready when
 *        handed over: INGOT_OK, nothing done.
 * @param stream a cudaStream_t of the batch's device (NULL: the legacy default stream).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (NULL batch); INGOT_ERR_CUDA (logged);
 *         INGOT_ERR_UNSUPPORTED for a device batch in a build without CUDA.
 */
INGOT_API ingot_status_t ingot_batch_stream_wait(const ingot_batch_t *batch, void *stream);

/**
 * @brief The resume cursor: epoch, samples of the epoch handed over (whole global batches) and
 *        the ids skipped in it over all ranks. Collective (gathers the skipped ids); every rank
 *        gets the same cursor. Release it with ingot_cursor_release().
 */
INGOT_API ingot_status_t ingot_loader_save(ingot_loader_h loader, ingot_cursor_t *cursor_p);

/**
 * @brief Statistics so far.
 * @param stats_p in: field_mask; out: the fields it names (nothing else is written).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for NULL arguments.
 * Called by the trainer thread (as ingot_loader_next()); no MPI call.
 */
INGOT_API ingot_status_t ingot_loader_stats(ingot_loader_h loader, ingot_loader_stats_t *stats_p);

/** Where one epoch's sample bytes came from, on this rank (record bytes: from a sample's first
 *  field to the end of its last, as the manifest lays it out; gaps read between samples count
 *  in ingot_loader_stats_t::bytes_read only). */
typedef struct ingot_loader_epoch_bytes {
    uint64_t epoch;         /**< The epoch. */
    uint64_t bytes_storage; /**< Read from storage. */
    uint64_t bytes_peer;    /**< Read from another rank's cache window (INGOT_CACHE_BYTES). */
    uint64_t bytes_local;   /**< Copied from this rank's own cache window. */
    uint64_t bytes_disk;    /**< Read from a node's disk tier (INGOT_DISK_CACHE_BYTES): this
                                 node's or the piece's home node's; bytes_storage is what came
                                 from the storage below every cache. */
} ingot_loader_epoch_bytes_t;

/**
 * @brief Where epoch @p epoch's bytes came from so far (counted when read, which runs ahead of
 *        delivery by the prefetch depth).
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for an epoch this loader does not deliver.
 */
INGOT_API ingot_status_t ingot_loader_epoch_bytes(ingot_loader_h loader, uint64_t epoch,
                                                  ingot_loader_epoch_bytes_t *bytes_p);

/** Fields of ingot_loader_store_stats_t. */
enum ingot_loader_store_stats_field {
    INGOT_LOADER_STORE_STATS_FIELD_COUNTS = INGOT_BIT(0), /**< epoch .. gets_per_sample. */
    INGOT_LOADER_STORE_STATS_FIELD_NODE   = INGOT_BIT(1)  /**< node_requests .. node_needed. */
};

/**
 * One epoch's object-store requests on this rank (ingot_loader_epoch_store()): the GETs made for
 * that epoch's reads (a part fetched for a read counts in the read's epoch). As
 * ingot_loader_stats_t, the caller sets field_mask and only the named fields are written.
 */
typedef struct ingot_loader_store_stats {
    uint64_t field_mask;       /**< In: ingot_loader_store_stats_field bits. */
    uint64_t epoch;            /**< The epoch. */
    uint64_t requests;         /**< GETs completed. */
    uint64_t failed;           /**< Of which failed. */
    uint64_t bytes;            /**< Bytes received. */
    uint64_t retries_throttle; /**< Retries after 503 SlowDown or 429. */
    uint64_t retries_server;   /**< Retries after 500, 502, 504. */
    uint64_t retries_network;  /**< Retries after refused, reset or cut connections. */
    uint64_t retries_stall;    /**< Retries after INGOT_S3_STALL_TIMEOUT. */
    uint64_t retries_auth;     /**< Retries after ExpiredToken. */
    uint64_t throttle_events;  /**< Concurrency halvings after SlowDown. */
    uint64_t get_p50_ns;       /**< Latency of the epoch's successful GET attempts. */
    uint64_t get_p99_ns;
    uint64_t samples;         /**< Samples of the epoch read so far (every source). */
    double   gets_per_sample; /**< requests / samples. */
    /** This rank's node, under the part cache its ranks share (INGOT_S3_CACHE=auto under the
     *  locality order, or SIZE/node; all 0 without one): the GETs of parts the node made for the
     *  epoch's reads, their bytes (what left the store for the node), and the bytes of the
     *  samples its ranks read through it (what the node needed: each sample is read once per
     *  epoch). node_bytes / node_needed is the node's amplification (1.0: each byte once); the
     *  same values on every rank of a node. */
    uint64_t node_requests;
    uint64_t node_bytes;
    uint64_t node_needed;
} ingot_loader_store_stats_t;

/**
 * @brief Epoch @p epoch's object-store requests so far (counted when read, which runs ahead of
 *        delivery by the prefetch depth).
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for an epoch this loader does not deliver;
 *         INGOT_ERR_NOT_FOUND when the manifest is not at a URL (no object store).
 */
INGOT_API ingot_status_t ingot_loader_epoch_store(ingot_loader_h loader, uint64_t epoch,
                                                  ingot_loader_store_stats_t *stats_p);

/**
 * @brief The peer cache's report: its counters ("window N bytes in host memory; S samples (B
 *        bytes) cached over W ranks, H here; hash fallbacks F, reads sent to storage R, homes
 *        given up G"), where fetched bytes land, then its data path to each rank, e.g.
 *        "rank 1 (same node, host a): get (its window mapped here: one memcpy) over
 *        posix/memory(am) cma/memory(rma_bw), err mode none" or "rank 2 (other node, host b):
 *        am (request, eager reply) over tcp/eth0(am), err mode peer". Creates the endpoints it reports on.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND when the loader has no cache (INGOT_CACHE_BYTES=0).
 */
INGOT_API ingot_status_t ingot_loader_cache_paths(ingot_loader_h loader, char *buf, size_t len);

/**
 * @brief The disk tier's report: its folder, budget and homes, then its counters ("disk tier
 *        counters: hits H (R from other nodes), misses M, bytes from disk ..., admitted A,
 *        refused F, evictions E, prefetched P (B bytes), bad entries X, failed fills Y,
 *        damaged fills Z").
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND when the loader has no disk tier
 *         (INGOT_DISK_CACHE_BYTES=0).
 */
INGOT_API ingot_status_t ingot_loader_disk_report(ingot_loader_h loader, char *buf, size_t len);

/**
 * @brief Stop the pipeline and free the loader (collective). Batches still held become invalid
 *        (their memory is freed): release them first; destroying with batches held is allowed,
 *        logs a warning with their count, and never crashes. Accepts NULL.
 */
INGOT_API void ingot_loader_destroy(ingot_loader_h loader);

INGOT_END_DECLS

#endif /* INGOT_LOADER_H */
