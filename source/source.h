/*
 * Byte sources: where the loader's bytes come from, behind one asynchronous interface. A source
 * reads a byte range of a shard (addressed by manifest shard row + offset + length, plus the
 * manifest's opaque per-shard id; no file descriptors) into caller iovecs, each tagged host or
 * device memory, and completes the request through a callback. Backends: POSIX files (posix.c,
 * completes in the submitting thread), the emulated remote store (emulate.c, a decorator over
 * another source); the UCX peer cache plugs in as a third by filling an ingot_source_ops_t.
 *
 * A request's life: the caller fills the "in" part and submits; the source completes it once
 * with ingot_source_complete() (bytes in place, or an error) or ingot_source_retry() ("not
 * here, ask the next source": the caller resubmits it to the next source of its chain). A
 * request past its deadline is cancelled if the source can take it back; otherwise it is
 * QUARANTINED: the source keeps writing into its buffer until it completes or fails it, so the
 * owner keeps the buffer out of service until the callback reports the late completion.
 *
 * Thread safety: submit, progress, cancel and describe may be called from any number of threads
 * at once; create and destroy from one thread. Requests come from the caller's pools (no
 * allocation on the hot path); a source's own per-request state is sized at its creation.
 */
#ifndef INGOT_SOURCE_SOURCE_H
#define INGOT_SOURCE_SOURCE_H

#include <ingot/status.h>
#include "base/wait.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/** Where an iovec's memory lives. */
typedef enum ingot_source_mem {
    INGOT_SOURCE_MEM_HOST = 0,
    INGOT_SOURCE_MEM_DEVICE = 1
} ingot_source_mem_t;

/** States of a request (ingot_source_req_t.state). */
enum {
    INGOT_SOURCE_REQ_IDLE,        /**< not submitted, or completed and seen by its owner */
    INGOT_SOURCE_REQ_PENDING,     /**< submitted, not completed */
    INGOT_SOURCE_REQ_QUARANTINED, /**< past its deadline, its buffer still owned by the source */
    INGOT_SOURCE_REQ_DONE         /**< completed (status, retry) */
};

typedef struct ingot_source ingot_source_t;

/** Room for a request's failure message (ingot_source_req_t.error). */
#define INGOT_SOURCE_ERROR_MAX 768
typedef struct ingot_source_req ingot_source_req_t;

/**
 * One sample of a request that names its samples (the peer cache's requests): its record in
 * the shard (offset, length) and its global index. Such a request's bytes are the records back
 * to back, in extent order (no gaps); storage sources do not take them.
 */
typedef struct ingot_source_extent {
    uint64_t offset, length;
    uint64_t index;
} ingot_source_extent_t;

/**
 * Completion callback: called once per request, by the thread that completes it (inside submit,
 * progress, or a thread of the source), after the request's status and state are set. @p late
 * is 1 when the request had been quarantined: its owner got INGOT_ERR_TIMED_OUT long ago and now
 * takes its buffer back into service. Must not block.
 */
typedef void (*ingot_source_cb_t)(ingot_source_req_t *req, int late);

/**
 * Landing callback: the first @p upto bytes of the request's range are in place and final (a
 * prefix: sources report in order). A source that writes bytes it reported again (a retried
 * range) first reports the lower prefix that stays. Called by the thread that wrote the bytes,
 * while they are still in its cache; must not block. The owner of the request hashes there.
 */
typedef void (*ingot_source_landed_cb_t)(ingot_source_req_t *req, uint64_t upto);

struct ingot_source_req {
    /* in: set by the caller before submit */
    uint32_t shard;    /**< manifest shard row */
    uint64_t shard_id; /**< the manifest's opaque id of the shard (its hash) */
    uint64_t offset;   /**< first byte of the range in the shard */
    uint64_t length;   /**< bytes of the range (== sum of iov lengths) */
    struct iovec *iov; /**< destination; consumed (advanced) by the read */
    int iovcnt;
    const ingot_source_mem_t *mem;        /**< memory kind per iovec; NULL: all host */
    size_t slack;                         /**< room in iov[0] past length (one iovec only): the
                                                source may read an enclosing aligned window and
                                                report where offset landed in @ref shift */
    uint64_t deadline_ns;                 /**< absolute CLOCK_MONOTONIC deadline; a source
                                               that bounds its reads itself (the peer cache:
                                               INGOT_PEER_TIMEOUT) may move it past its own
                                               bound at submit, so its verdict comes first */
    const ingot_source_extent_t *extents; /**< the samples, or NULL (a shard byte range) */
    uint32_t nextents;
    uint64_t epoch;       /**< the epoch the read serves (sources that count per epoch) */
    uint64_t step;        /**< the global step it serves (sources that pace the node's ranks
                               by it: the node's part cache), or 0: not known */
    uint64_t records;     /**< bytes of the samples the range holds (the rest: the gaps between
                               them), or 0: not known (sources that count what reads needed) */
    int direct;           /**< 1: from the source itself, around every cache (a caching tier,
                               the object store's part caches pass it below, neither looking nor
                               filling): the read again of bytes that failed their hash */
    ingot_source_cb_t cb; /**< may be NULL */
    ingot_source_landed_cb_t landed; /**< may be NULL: the owner checks the bytes at completion */
    uint64_t piece; /**< with @ref landed: a source that can choose reads this many bytes
                               at a time and reports each (POSIX); 0: as it likes */
    void *arg;      /**< the owner's */
    /* out */
    ingot_status_t status; /**< INGOT_OK, or what failed */
    int retry;             /**< 1: "retry elsewhere", status says why */
    size_t shift;          /**< where offset's byte lies in iov[0] (windows) */
    uint64_t cached;       /**< of length, bytes a caching tier in the chain (the node's disk)
                                served itself rather than from the source below it */
    /** Why it failed, from a source that completes on a thread of its own (the object store),
     *  or "": ingot_source_wait() makes it the waiter's ingot_last_error(). */
    char error[INGOT_SOURCE_ERROR_MAX];
    /* state shared by the source and the waiter */
    _Atomic int state;
    ingot_event_t *done_ev; /**< notified on completion (ingot_source_wait) */
};

/** What a backend implements. */
typedef struct ingot_source_ops {
    /**
     * Start reading @p req. INGOT_OK: accepted, and the callback comes exactly once (possibly
     * before submit returns). Any other status: refused (invalid request, no room), no callback.
     */
    ingot_status_t (*submit)(ingot_source_t *src, ingot_source_req_t *req);
    /**
     * Make progress on outstanding requests, completing them in this thread. May sleep until
     * @p until_ns, never longer, when it holds requests that become ready later (the emulated
     * link). Returns non-zero when it completed or waited for something (call it again), 0 when
     * it can do nothing until a completion arrives from elsewhere (the caller then sleeps).
     */
    unsigned (*progress)(ingot_source_t *src, uint64_t until_ns);
    /**
     * Take @p req back before it completes. INGOT_OK: cancelled, no callback will come and the
     * buffer is free; INGOT_ERR_BUSY: in flight, the source still owns the buffer and the
     * callback will come (the caller quarantines it).
     */
    ingot_status_t (*cancel)(ingot_source_t *src, ingot_source_req_t *req);
    /**
     * Write a description for messages into @p buf: of the source as a whole when @p shard is
     * INGOT_SOURCE_ALL ("emulated(bw=200MiB/s,lat=5ms) over posix"), or of one shard
     * ("posix:/data/shard-0003.tar"). Returns @p buf.
     */
    const char *(*describe)(const ingot_source_t *src, uint32_t shard, char *buf, size_t len);
    /** Fail every outstanding request (its callback runs), then free the source. */
    void (*destroy)(ingot_source_t *src);
    /** 1: it reads local shard files as stored (POSIX), so bytes that fail their hash were
     *  damaged at rest; 0: a network, a link or a cache lies between (the object store, the
     *  emulated store, a disk tier, a peer's memory), so they are read again first. */
    int local;
} ingot_source_ops_t;

/** Alignment O_DIRECT needs of offsets, lengths and buffers (a window's slack is counted in it). */
#define INGOT_SOURCE_DIRECT_ALIGN 4096

/** ingot_source_describe() of the whole source. */
#define INGOT_SOURCE_ALL UINT32_MAX
/** Room for any description. */
#define INGOT_SOURCE_DESCRIBE_MAX 4352

/** Every backend's object begins with this. */
struct ingot_source {
    const ingot_source_ops_t *ops;
};

/** Submit @p req to @p src (state PENDING, out fields reset); see ingot_source_ops_t.submit. */
ingot_status_t ingot_source_submit(ingot_source_t *src, ingot_source_req_t *req);

/** Backends: the first @p upto bytes of @p req are in place (see ingot_source_landed_cb_t). */
static inline void ingot_source_landed(ingot_source_req_t *req, uint64_t upto)
{
    if (req->landed != NULL) {
        req->landed(req, upto);
    }
}

/** Backends: complete @p req with @p status (wakes its waiter, runs its callback). */
void ingot_source_complete(ingot_source_req_t *req, ingot_status_t status);

/** Backends: complete @p req as "retry elsewhere" (@p why: e.g. INGOT_ERR_NOT_FOUND). */
void ingot_source_retry(ingot_source_req_t *req, ingot_status_t why);

/**
 * Wait for @p req (submitted to @p src) to complete, driving @p src's progress, sleeping on
 * @p ev between completions. At its deadline, or when @p abort is raised, the request is
 * cancelled or else quarantined (*quarantined_p = 1: the callback will report it late). A wait
 * that comes back more than half a second later than it asked (the process was stopped, or not
 * run for that long) moves the deadline by that much: time this process lost is no source's.
 * @return the request's status when it completed (check req->retry); INGOT_ERR_TIMED_OUT at
 *         the deadline (logged, naming the source, shard, offset and length); INGOT_ERR_CANCELED.
 */
ingot_status_t ingot_source_wait(ingot_source_t *src, ingot_source_req_t *req, ingot_event_t *ev,
                                 const ingot_abort_t *abort, int *quarantined_p);

/** @p src's description (see ingot_source_ops_t.describe). */
const char *ingot_source_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len);

/** Destroy @p src (see ingot_source_ops_t.destroy). Accepts NULL. */
void ingot_source_destroy(ingot_source_t *src);

#endif
