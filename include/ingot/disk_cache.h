/**
 * @file disk_cache.h
 * @brief The folder of the node-local disk tier, for tools (`ingot-cache`): what it holds per
 *        manifest, its entries checked against a manifest, eviction to a size, orphans cleaned.
 *
 * The loader uses the tier by itself (INGOT_DISK_CACHE_BYTES, docs/tiers.md). A folder holds
 * entries: pieces of shards (INGOT_DISK_CACHE_PIECE bytes each, the last of a shard shorter)
 * named by the shard's content hash, each with its own header and block hashes. These calls work
 * on a folder whether or not jobs run on it: they change it only under its ledger's lock, as the
 * jobs do, and never touch a temporary a live writer holds.
 *
 * Errors: every call returns an ingot_status_t and writes its outputs only on success; the
 * function that detects an error logs it, naming the folder or the file.
 *
 * Threads: every call is thread-safe and blocking (it opens the folder itself; the changing ones
 * wait up to INGOT_TIMEOUT for the ledger's lock). None calls MPI: a tool needs no MPI_Init.
 */
#ifndef INGOT_DISK_CACHE_H
#define INGOT_DISK_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <ingot/def.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** What part of a folder a group of entries is (ingot_disk_cache_list()). */
typedef struct ingot_disk_cache_usage {
    uint64_t entries;     /**< Entries (pieces). */
    uint64_t bytes;       /**< Their bytes on disk, headers included. */
    uint64_t piece_bytes; /**< Of which shard bytes (what they hold). */
    uint64_t hits;        /**< Reads served from them, as counted by the jobs that ended. */
    uint64_t shard_bytes; /**< A manifest's: the bytes of all its shards (0 for the rest). */
} ingot_disk_cache_usage_t;

/** The folder as a whole. */
typedef struct ingot_disk_cache_folder {
    uint64_t entries, bytes; /**< Every entry, and its bytes on disk. */
    uint64_t ledger_bytes;   /**< The usage its ledger says (the jobs' budgets count it). */
    uint64_t orphans;        /**< Temporaries no live writer holds (a killed job's). */
    uint64_t fills;          /**< Temporaries a live writer holds (a job filling now). */
    uint64_t strangers;      /**< Other files in its fan-out folders. */
} ingot_disk_cache_folder_t;

/**
 * @brief What folder @p dir holds: per manifest of @p manifests (entries of its shards, at any
 *        piece size) into @p usage[0 .. n - 1], the entries of none of them into @p usage[n], and
 *        the folder's totals into @p folder_p. An entry of a shard two manifests share counts in
 *        both. Changes nothing.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND (no such folder); manifest errors; INGOT_ERR_IO.
 */
INGOT_API ingot_status_t ingot_disk_cache_list(const char *dir, const char *const *manifests,
                                               uint32_t n, ingot_disk_cache_usage_t *usage,
                                               ingot_disk_cache_folder_t *folder_p);

/** Called for each bad entry found by ingot_disk_cache_verify(). */
typedef void (*ingot_disk_cache_bad_cb_t)(void *arg, const char *entry, const char *why);

/** What ingot_disk_cache_verify() found. */
typedef struct ingot_disk_cache_verify {
    uint64_t checked;      /**< Entries of the manifest's shards read whole and checked. */
    uint64_t bad;          /**< Of which bad (removed when asked). */
    uint64_t shards_whole; /**< Shards with every piece present and good... */
    uint64_t shards_match; /**< ...of which the pieces hash to the manifest's shard hash. */
} ingot_disk_cache_verify_t;

/**
 * @brief Check every entry of @p manifest's shards in folder @p dir: its header, its length
 *        against the shard's size, every block's hash; and each shard held whole (every piece at
 *        one piece size) against the manifest's whole-shard hash. @p cb (may be NULL) hears of
 *        each bad entry; @p remove removes them (under the ledger's lock, the ledger told).
 * @return INGOT_OK (bad entries are counted, not an error); INGOT_ERR_NOT_FOUND; manifest
 *         errors; INGOT_ERR_NO_MEMORY; INGOT_ERR_IO.
 */
INGOT_API ingot_status_t ingot_disk_cache_verify(const char *dir, const char *manifest, int remove,
                                                 ingot_disk_cache_bad_cb_t cb, void *arg,
                                                 ingot_disk_cache_verify_t *verify_p);

/**
 * @brief Remove entries of folder @p dir, oldest first (a tool sees no job's future), until it
 *        holds at most @p target bytes; the ledger is written with what is left.
 * @param evicted_p entries removed and their bytes (two values).
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND; INGOT_ERR_TIMED_OUT (a job held the ledger's lock for
 *         INGOT_TIMEOUT); INGOT_ERR_IO.
 */
INGOT_API ingot_status_t ingot_disk_cache_evict(const char *dir, uint64_t target,
                                                uint64_t evicted_p[2]);

/**
 * @brief Remove the temporaries of folder @p dir that no live writer holds (orphans of killed
 *        jobs; every job's start does this too). @p removed_p: how many; @p live_p: how many a
 *        live writer holds (kept).
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND; INGOT_ERR_IO.
 */
INGOT_API ingot_status_t ingot_disk_cache_clean(const char *dir, uint64_t *removed_p,
                                                uint64_t *live_p);

/** @brief The folder INGOT_DISK_CACHE_DIR names here (%u and %h expanded) into @p buf.
 *  @return INGOT_OK; INGOT_ERR_CONFIG (an invalid INGOT_* variable, logged). */
INGOT_API ingot_status_t ingot_disk_cache_dir(char *buf, size_t len);

INGOT_END_DECLS

#endif /* INGOT_DISK_CACHE_H */
