/*
 * The node-local disk tier (docs/tiers.md): a byte source that decorates storage (POSIX files,
 * the emulated store, the object store) with a persistent, content-addressed cache on each node's
 * disk, shared by every job that runs there. The order of tiers is the peer memory cache, this
 * tier, storage.
 *
 * A request's byte range is cut into pieces (aligned slices of INGOT_DISK_CACHE_PIECE bytes of a
 * shard, named by the shard's content hash: entry.h). Each piece has a home node, chosen by
 * rendezvous hashing of its key over the job's node names, so the job's disks together hold up to
 * the sum of their budgets and a later job on the same nodes finds each piece at its home whatever
 * its ranks per node. For each piece:
 *   - homed here: read from this node's folder (any rank reads it directly), checked (entry.h);
 *   - homed elsewhere: asked of a rank of its home over the transport (a service read);
 *   - a miss: the whole piece is read from the source below, the request's part copied out, and
 *     the piece written through: handed to its home's keeper (pushed over the transport when
 *     that is another process), which admits it by the policy and writes it.
 * A bad entry (torn, truncated, damaged, older format) is removed and read from below; the first
 * one is said once (a warning naming the file and why), the rest counted.
 *
 * One rank per node (the node's lowest) is its keeper: it owns the node's budget for this job
 * (policy.h: clairvoyant admission and eviction over the known order), writes every fill, and runs
 * the prefetcher that fills the disk ahead of the loader within its bandwidth share. Every rank
 * serves reads of its node's folder to other nodes.
 *
 * Thread safety: the source's ops as source.h says; ingot_disk_advance and ingot_disk_stats from
 * any thread. Create and destroy are collective over the job.
 */
#ifndef INGOT_SOURCE_DISK_DISK_H
#define INGOT_SOURCE_DISK_DISK_H

#include <ingot/order.h>
#include <ingot/shard.h>
#include "source/source.h"
#include "topology/topo.h"
#include "transport/transport.h"
#include <mpi.h>
#include <stdint.h>

typedef struct ingot_disk ingot_disk_t;

typedef struct ingot_disk_params {
    MPI_Comm comm;                 /* the job's ranks */
    const ingot_node_info_t *node; /* this rank's node (its name: the homes; its ranks) */
    ingot_transport_t *transport;  /* the job's transport; NULL for a job of one rank */
    uint64_t timeout_ns;           /* INGOT_TIMEOUT */
    ingot_manifest_h manifest;     /* outlives the tier */
    ingot_order_h order;           /* copied: the tier's threads use their own */
    uint64_t start_step;           /* the job's first global step (resume included) */
    uint64_t total_steps;          /* steps it delivers */
    uint64_t steps_per_epoch, global_batch;
    uint32_t depth; /* the loader's prefetch depth, in steps */
    uint32_t nreqs; /* requests the loader may have in flight at once */
    int direct;     /* INGOT_DIRECT_IO: read entries' blocks with O_DIRECT */
} ingot_disk_params_t;

/** The tier's counters on this rank (ingot_disk_stats()). */
typedef struct ingot_disk_stats {
    uint64_t hits;           /* pieces read from a disk: this node's or their home's */
    uint64_t remote_hits;    /* of which from another node's disk */
    uint64_t misses;         /* pieces read from the source below */
    uint64_t bytes_disk;     /* request bytes served from a disk */
    uint64_t bytes_below;    /* bytes read from the source below: misses (whole pieces) and
                                 prefetches; the remote's share of this rank */
    uint64_t admitted;       /* pieces written (keeper) */
    uint64_t refused;        /* admissions refused: the policy's bypass, no room, a full queue */
    uint64_t evictions;      /* entries removed to make room (keeper) */
    uint64_t prefetched;     /* pieces the prefetcher read (keeper) */
    uint64_t prefetch_bytes; /* their bytes */
    uint64_t bad_entries;    /* entries found bad, removed and read again from below */
    uint64_t fill_errors;    /* fills that failed (ENOSPC, I/O), the piece left uncached */
} ingot_disk_stats_t;

/** Whether INGOT_DISK_CACHE_BYTES asks for a disk tier (non-zero). */
int ingot_disk_enabled(void);

/**
 * Create the tier over @p below (owned from the call on, destroyed with the tier, also when this
 * fails). Collective over @p params->comm, agreed (every rank returns the same status): the
 * budgets of each node's ranks compared (differing ones refused, naming the ranks and values),
 * each node's folder opened and checked (a folder that cannot serve, read-only, missing, on a
 * filesystem shared between nodes: one warning naming it, and that node is no piece's home), the
 * homes computed, the keeper's scan (orphans removed, the ledger rewritten) and policy built, the
 * service and the threads started.
 * @return INGOT_OK with *@p src_p the tier's source (ingot_source_destroy() ends the tier,
 *         collectively: pending fills are written first); INGOT_ERR_CONFIG (budgets differ);
 *         INGOT_ERR_NO_MEMORY; manifest errors.
 */
ingot_status_t ingot_disk_create(const ingot_disk_params_t *params, ingot_source_t *below,
                                 ingot_source_t **src_p);

/** The tier behind a source made by ingot_disk_create(), or NULL for any other source. */
ingot_disk_t *ingot_disk_of(ingot_source_t *src);

/** The loader planned global step @p step: the clock of the policy and prefetcher. */
void ingot_disk_advance(ingot_disk_t *d, uint64_t step);

/** This rank's counters. */
void ingot_disk_stats(const ingot_disk_t *d, ingot_disk_stats_t *stats_p);

/** A report for people: the folder, the budget and usage, the homes, the counters.
 *  Returns @p buf. */
const char *ingot_disk_report(const ingot_disk_t *d, char *buf, size_t len);

#endif
