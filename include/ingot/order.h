/**
 * @file order.h
 * @brief Deterministic per-epoch sample order, per-rank partition of the global batch, and the
 *        resume cursor.
 *
 * The order of epoch e is a seeded permutation of [0, N) that every rank computes identically,
 * independent of the world size. A rank computes only its own slice of a step, in O(slice)
 * time and memory: position p maps to a sample through a keyed bijection (a Feistel network
 * over the next power of four >= N, with cycle walking), never materialising the permutation.
 *
 * Partition: step s of an epoch covers positions [s*B, (s+1)*B) of the order (B = global
 * batch); rank r of W takes [s*B + r*B/W, s*B + (r+1)*B/W). W must divide B. The tail policy
 * makes every rank run the same number of steps: DROP ends the epoch at floor(N/B) steps, PAD
 * runs ceil(N/B) steps and fills the last one by wrapping to the start of the order.
 *
 * The locality order dealt across C canonical nodes (nodes > 1): per epoch the shards are
 * shuffled and laid end to end; canonical node c takes the contiguous run [c*M, (c+1)*M) of that
 * sample sequence (M = steps * B / C samples, a shard split between two nodes at a sample
 * boundary where the run ends inside it; PAD wraps around, DROP leaves the rest unread); a node's
 * run is cut into windows of `window` shard pieces and its samples shuffled within each window.
 * Step s takes B/C samples from every canonical node's stream: positions [s*B + c*B/C,
 * s*B + (c+1)*B/C) come from node c. Ranks numbered node by node (rank = node * R + local rank,
 * R ranks per node, P nodes carrying C/P canonical nodes each) then read only their own node's
 * canonical nodes, so every byte leaves storage once per epoch for the whole cluster. With C = 1
 * the order is the locality order above, bit for bit.
 */
#ifndef INGOT_ORDER_H
#define INGOT_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <ingot/def.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Opaque handle to an order. */
typedef struct ingot_order *ingot_order_h;

/** How samples are shuffled. */
typedef enum ingot_order_mode {
    INGOT_ORDER_FULL     = 0, /**< A uniform-looking permutation of all samples (default). */
    /**
     * Shuffle the shards, then the samples within each window of `window` consecutive shards
     * (of the shuffled shard order): reads stay within a few shards at a time.
     */
    INGOT_ORDER_LOCALITY = 1
} ingot_order_mode_t;

/** What happens to the last, partial global batch of an epoch. */
typedef enum ingot_order_tail {
    INGOT_ORDER_TAIL_DROP = 0, /**< Drop it: floor(N/B) steps (default). */
    INGOT_ORDER_TAIL_PAD  = 1  /**< Pad it by wrapping to the start of the order: ceil(N/B). */
} ingot_order_tail_t;

/** Fields of ingot_order_params_t. */
enum ingot_order_params_field {
    INGOT_ORDER_PARAM_FIELD_SAMPLES = INGOT_BIT(0), /**< sample_count (required). */
    INGOT_ORDER_PARAM_FIELD_BATCH   = INGOT_BIT(1), /**< global_batch (required). */
    INGOT_ORDER_PARAM_FIELD_SEED    = INGOT_BIT(2), /**< seed (default 0). */
    INGOT_ORDER_PARAM_FIELD_TAIL    = INGOT_BIT(3), /**< tail (default DROP). */
    INGOT_ORDER_PARAM_FIELD_MODE  = INGOT_BIT(4), /**< mode, shard_samples, shard_count, window. */
    INGOT_ORDER_PARAM_FIELD_NODES = INGOT_BIT(5), /**< nodes (default 1). */
};

/** Parameters of ingot_order_create(). */
typedef struct ingot_order_params {
    uint64_t           field_mask;   /**< ingot_order_params_field bits. */
    uint64_t           sample_count; /**< N >= 1. */
    uint64_t           global_batch; /**< B, 1 <= B <= N for DROP. */
    uint64_t           seed;         /**< Shuffle seed. */
    ingot_order_tail_t tail;         /**< Tail policy. */
    ingot_order_mode_t mode;         /**< Shuffle mode. */
    /** LOCALITY: samples per shard, shard i holding the next shard_samples[i] indices (as in a
     *  manifest); copied. Their sum must be sample_count. */
    const uint64_t    *shard_samples;
    uint32_t           shard_count; /**< LOCALITY: entries of shard_samples. */
    uint32_t           window;      /**< LOCALITY: shards per window (>= 1). */
    /** LOCALITY: canonical nodes the windows are dealt to (C >= 1, dividing global_batch). */
    uint32_t           nodes;
} ingot_order_params_t;

/**
 * @brief Create an order.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (missing or inconsistent fields, logged with the
 *         field); INGOT_ERR_NO_MEMORY.
 * Thread safety: an order may be used by one thread at a time (LOCALITY mode caches the
 * current epoch's shard windows); create one per thread otherwise.
 */
INGOT_API ingot_status_t ingot_order_create(const ingot_order_params_t *params,
                                            ingot_order_h              *order_p);

/**
 * @brief A copy of @p order for another thread (an order is used by one thread at a time).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (NULL); INGOT_ERR_NO_MEMORY.
 */
INGOT_API ingot_status_t ingot_order_copy(ingot_order_h order, ingot_order_h *copy_p);

/** @brief Destroy an order. Accepts NULL. */
INGOT_API void ingot_order_destroy(ingot_order_h order);

/** @brief Steps per epoch (the same on every rank). */
INGOT_API uint64_t ingot_order_steps(ingot_order_h order);

/**
 * @brief The sample at @p position of epoch @p epoch's order, in O(1) expected time.
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for position >= steps * global_batch.
 */
INGOT_API ingot_status_t ingot_order_at(ingot_order_h order, uint64_t epoch, uint64_t position,
                                        uint64_t *index_p);

/**
 * @brief The sample indices rank @p rank of @p world takes at step @p step of epoch @p epoch.
 * @param ids   destination of global_batch / world entries.
 * @param cap   entries of @p ids.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM when world does not divide the global batch or
 *         rank >= world (logged with the values); INGOT_ERR_OUT_OF_RANGE for step >= steps;
 *         INGOT_ERR_NO_RESOURCE when cap is too small.
 */
INGOT_API ingot_status_t ingot_order_slice(ingot_order_h order, uint64_t epoch, uint64_t step,
                                           uint32_t rank, uint32_t world, uint64_t *ids,
                                           size_t cap);

/* ------------------------------------------------------------------------------------------ */
/* Resume cursor                                                                                */

/** Current format version of cursor files (version 3 records the canonical nodes, version 2 the
 *  order; 1 and 2 are still read). */
#define INGOT_CURSOR_VERSION 3

/** Where training stands in an epoch: enough to resume exactly once. */
typedef struct ingot_cursor {
    uint32_t  version;         /**< INGOT_CURSOR_VERSION (set by ingot_cursor_read). */
    uint32_t  order_window;    /**< The order the positions count in: 0 the full shuffle, N
                                    the locality order with windows of N shards (version 2;
                                    0 in a version-1 cursor). */
    uint64_t  manifest_digest; /**< ingot_manifest_info_t::digest of the dataset. */
    uint64_t  seed;            /**< Shuffle seed. */
    uint64_t  epoch;           /**< Current epoch. */
    uint64_t  consumed;        /**< Positions of the epoch's order delivered (whole steps). */
    uint64_t  global_batch;    /**< Global batch the positions were cut with. */
    uint64_t  skipped_count;   /**< Entries of skipped. */
    uint64_t *skipped;         /**< Sample ids skipped (skip policy), or NULL. */
    uint32_t  order_nodes;     /**< The canonical nodes of the locality order (version 3; 1 in
                                    an older cursor, and 0 under the full shuffle). */
} ingot_cursor_t;

/** What a resuming job expects of a cursor. */
typedef struct ingot_cursor_expect {
    uint64_t manifest_digest; /**< Must equal the cursor's. */
    uint64_t seed;            /**< Must equal the cursor's. */
    uint32_t world_size;      /**< Must divide the cursor's global batch. */
} ingot_cursor_expect_t;

/**
 * @brief Write a cursor atomically: temp file beside @p path, fsync, rename, fsync of the
 *        directory. A reader sees the old cursor or the new one, never a torn one.
 * @return INGOT_OK; INGOT_ERR_IO (logged with the file); INGOT_ERR_INVALID_PARAM when
 *         consumed is not a multiple of global_batch.
 */
INGOT_API ingot_status_t ingot_cursor_write(const char *path, const ingot_cursor_t *cursor);

/**
 * @brief Read and check a cursor.
 * @param expect may be NULL to skip the checks against the resuming job.
 * @param cursor_p out, written only on success; release it with ingot_cursor_release().
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND / INGOT_ERR_IO; INGOT_ERR_FORMAT (wrong magic, version,
 *         size or field); INGOT_ERR_CORRUPT (checksum: torn or corrupt); INGOT_ERR_MISMATCH
 *         (other manifest or seed); INGOT_ERR_INVALID_PARAM (world size does not divide the
 *         global batch). Every error names the file and the field; a bad cursor is never
 *         silently replaced by a fresh start.
 */
INGOT_API ingot_status_t ingot_cursor_read(const char *path, const ingot_cursor_expect_t *expect,
                                           ingot_cursor_t *cursor_p);

/** @brief Free what ingot_cursor_read() allocated (skipped). Accepts NULL. */
INGOT_API void ingot_cursor_release(ingot_cursor_t *cursor);

INGOT_END_DECLS

#endif /* INGOT_ORDER_H */
