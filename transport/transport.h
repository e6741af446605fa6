/*
 * The UCX transport of a context (worker.c and the other files of transport/README.md): one
 * ucp_context and one ucp_worker per rank, worker addresses exchanged with one MPI allgather,
 * endpoints created at first use, and reads
 * of peers' registered windows by two protocols:
 *
 *   get  ucp_get_nbx from the peer's window into the destination. Zero-copy where UCX has an
 *        RMA lane for the pair (posix/sysv shared memory, cma, RDMA); the owner takes no part.
 *   am   an active-message request; the owner checks it against its window and answers with the
 *        bytes (eager, or rendezvous straight into the destination). For transports where UCX
 *        only emulates get over active messages (tcp), at ten times the speed of that emulation.
 *   put  an active-message request naming a destination the requester registered
 *        (ingot_transport_dest_create()); the owner checks both ranges, ucp_put_nbx's the bytes
 *        there, flushes, and answers with a status. Only where asked for (INGOT_PEER_PROTOCOL=put):
 *        over tcp UCX 1.13's put runs at a third of am (docs/cache.md); a read whose destination
 *        is not registered goes by am.
 *
 * Services (service.c) name bytes by a key rather than a window range: a read asks a peer's
 * service for [off, off + len) of what key names, and the owner's code answers it (a node's disk
 * tier reading its entries); a push hands a peer's service bytes it keeps or drops.
 *
 * Error mode per pair, the same on both ends (both compute it from the exchanged table): none
 * between ranks of one node when both have shared-memory transports (asking UCX 1.13 for peer
 * error handling there removes shared memory), peer otherwise. Every read carries ingot's own
 * deadline (INGOT_PEER_TIMEOUT): UCX cannot see a stopped peer, and shared memory cannot report
 * a dead one.
 *
 * Threads: the worker is SERIALIZED under the transport's lock; a progress thread
 * ("ingot-ucx") serves the owner side and expires reads past their deadline, sleeping on the
 * worker's event fd; callers may also progress (ingot_transport_progress()).
 */
#ifndef INGOT_TRANSPORT_TRANSPORT_H
#define INGOT_TRANSPORT_TRANSPORT_H

#include <ingot/ingot.h>
#include "topology/topo.h"
#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** INGOT_PEER_PROTOCOL values (indexes of ingot_peer_protocol_names). */
typedef enum ingot_peer_protocol {
    INGOT_PEER_PROTOCOL_AUTO = 0, /**< get where UCX has an RMA lane, am elsewhere */
    INGOT_PEER_PROTOCOL_GET = 1,
    INGOT_PEER_PROTOCOL_AM = 2,
    INGOT_PEER_PROTOCOL_PUT = 3,
    INGOT_PEER_PROTOCOL_LAST
} ingot_peer_protocol_t;

extern const char *const ingot_peer_protocol_names[];

/** INGOT_PEER_FAILURE values: what a peer that misses INGOT_PEER_TIMEOUT makes of the job. */
typedef enum ingot_peer_failure {
    INGOT_PEER_FAILURE_ABORT = 0,  /**< end the job, naming the rank */
    INGOT_PEER_FAILURE_STORAGE = 1 /**< read that peer's bytes from storage from then on */
} ingot_peer_failure_t;

extern const char *const ingot_peer_failure_names[];

/** INGOT_PEER_WINDOW values: who allocates a window. */
typedef enum ingot_peer_window {
    INGOT_PEER_WINDOW_UCX = 0,       /**< ucp_mem_map allocates it (shared memory first) */
    INGOT_PEER_WINDOW_REGISTERED = 1 /**< ingot's memory (huge pages, NUMA), registered */
} ingot_peer_window_t;

/** The transport's INGOT_PEER_* table, parsed once (config.c). */
typedef struct ingot_transport_config {
    ingot_peer_protocol_t protocol;
    uint64_t peer_timeout; /**< ns */
    ingot_peer_failure_t peer_failure;
    ingot_peer_window_t window;
} ingot_transport_config_t;

extern ingot_config_table_t ingot_transport_config_table;
ingot_status_t ingot_transport_config(const ingot_transport_config_t **cfg_p);

typedef struct ingot_transport ingot_transport_t;
typedef struct ingot_transport_window ingot_transport_window_t;
typedef struct ingot_transport_op ingot_transport_op_t;

/** Called once when every read of an op completed (or it expired); may run in any thread,
 *  with the transport's lock held: must not call back into the transport. */
typedef void (*ingot_transport_op_cb_t)(ingot_transport_op_t *op);

/**
 * A set of reads from one peer that completes as one (the caller's; zeroed before the first
 * use, then reused). Between ingot_transport_op_begin() and ingot_transport_op_end() add reads
 * with ingot_transport_read(); the callback comes once after op_end.
 */
struct ingot_transport_op {
    /* in */
    ingot_transport_op_cb_t cb;
    void *arg;
    /* out: INGOT_OK, or the first failure (INGOT_ERR_TIMED_OUT past the deadline) */
    _Atomic int status;
    /* private */
    struct ingot_transport *t;
    const void *tag; /* the owner's name for this use (ingot_transport_op_cancel checks it) */
    int finished;    /* the callback ran for this use */
    _Atomic uint32_t pending; /* reads in flight, +1 until op_end */
    int peer;
    uint64_t deadline_ns;
    uint32_t gen;
    int active; /* on the transport's list of ops with a deadline */
    struct ingot_transport_op *next;
};

/** What the transport needs of the job: its ranks and where they run. */
typedef struct ingot_transport_params {
    MPI_Comm comm;                 /**< the job's ranks (used, not duplicated: outlives t) */
    const ingot_node_info_t *node; /**< this rank's node: its id (same-node pairs) and host */
    uint64_t timeout_ns;           /**< INGOT_TIMEOUT: the bound of collective waits (destroy) */
    const ingot_transport_config_t *cfg; /**< its INGOT_PEER_* values; NULL: the process's */
} ingot_transport_params_t;

/** Create a transport over @p params->comm (collective over it, agreed: every rank returns the
 *  same status). */
ingot_status_t ingot_transport_create(const ingot_transport_params_t *params,
                                      ingot_transport_t **t_p);
/** Close every endpoint and free the transport (collective: a barrier first, so no peer is
 *  still reading). Accepts NULL. */
void ingot_transport_destroy(ingot_transport_t *t);

/**
 * A window of @p bytes every peer can read, its key and address exchanged with every rank
 * (collective). In host memory (@p cuda_device < 0): allocated by UCX (ucp_mem_map with
 * ALLOCATE, POSIX shared memory first, so readers on the node can map it; bound to NUMA node
 * @p numa when >= 0), or, with INGOT_PEER_WINDOW=registered, ingot's own memory registered.
 * In device memory: cudaMalloc on @p cuda_device, registered as CUDA memory, refused (naming the
 * UCX version) when UCX has no CUDA memory type. The first 64 bytes are a header (the ready
 * word); the data follows at ingot_transport_window_data().
 */
ingot_status_t ingot_transport_window_create(ingot_transport_t *t, size_t bytes, int numa,
                                             int cuda_device, ingot_transport_window_t **w_p);
/** Copy @p len bytes from host memory @p src into this rank's window at data offset @p off
 *  (a cudaMemcpy for a device window). */
ingot_status_t ingot_transport_window_write(ingot_transport_window_t *w, uint64_t off,
                                            const void *src, size_t len);
/** Copy @p len bytes of this rank's window at data offset @p off into host memory @p dst. */
ingot_status_t ingot_transport_window_read_local(ingot_transport_window_t *w, uint64_t off,
                                                 void *dst, size_t len);
/**
 * Wait until every rank has come to @p what (collective; base/arrival.h): a rank that has not
 * is pinged through @p w, and one silent for @p silence_ns (0: no pings) or missing after
 * @p timeout_ns is named and the job ends. Returns when every rank is here.
 */
void ingot_transport_window_arrive(ingot_transport_window_t *w, const char *what,
                                   uint64_t timeout_ns, uint64_t silence_ns);

/** ingot_transport_window_arrive() ("cache: window free"), then unregister and free
 *  (collective). Accepts NULL. */
void ingot_transport_window_destroy(ingot_transport_window_t *w, uint64_t timeout_ns,
                                    uint64_t silence_ns);
/** Unregister and free without the barrier (after a failed create, or when peers are gone). */
void ingot_transport_window_destroy_local(ingot_transport_window_t *w);
/** This rank's window data (the bytes asked for at create); a device pointer for a device
 *  window. */
void *ingot_transport_window_data(ingot_transport_window_t *w);
/** Mark this rank's window ready for readers (release store of its header word). */
void ingot_transport_window_set_ready(ingot_transport_window_t *w);
/**
 * Whether @p peer's window is ready: one read of its header word (bounded by the transport's
 * peer deadline). INGOT_OK with *ready_p; INGOT_ERR_TIMED_OUT / INGOT_ERR_UCX naming the peer.
 */
ingot_status_t ingot_transport_window_probe(ingot_transport_window_t *w, int peer, int *ready_p);

/**
 * Register @p bytes of host memory at @p ptr (the caller's, e.g. a loader's staging buffers and
 * batch slots) as a destination peers write into with the put protocol, its key exchanged with
 * every rank (collective; every rank registers the same number of destinations, in the same
 * order). Owners write only inside it: a request naming any other range is refused. Freed with
 * ingot_transport_window_destroy() / _destroy_local(), before the memory.
 */
ingot_status_t ingot_transport_dest_create(ingot_transport_t *t, void *ptr, size_t bytes,
                                           ingot_transport_window_t **w_p);
/** Unregister this rank's memory of a put destination (non-collective; once none of its reads
 *  is in flight, so no owner writes there), keeping the other ranks' keys: owners go on
 *  serving the ranks still reading until ingot_transport_window_destroy(). */
void ingot_transport_dest_release(ingot_transport_window_t *w);

/** Start an op of reads from @p peer, due by @p deadline_ns, named @p tag by its owner (e.g. the
 *  request it serves). */
void ingot_transport_op_begin(ingot_transport_t *t, ingot_transport_op_t *op, int peer,
                              uint64_t deadline_ns, const void *tag);
/**
 * Add a read of @p len bytes at data offset @p off of @p op's peer's window into host memory
 * @p dst. The requester checks the range against the peer's window size first (never asks
 * outside it): INGOT_ERR_OUT_OF_RANGE, logged with the peer, offset and size.
 */
ingot_status_t ingot_transport_read(ingot_transport_window_t *w, ingot_transport_op_t *op,
                                    uint64_t off, void *dst, size_t len);
/**
 * As ingot_transport_read(), into GPU memory @p dst: always ucp_get_nbx (UCX moves the bytes by
 * memory type: cuda_copy, cuda_ipc, GPUDirect RDMA where the fabric has it), whatever the pair's
 * protocol. INGOT_ERR_UNSUPPORTED when UCX has no CUDA memory type.
 */
ingot_status_t ingot_transport_read_device(ingot_transport_window_t *w, ingot_transport_op_t *op,
                                           uint64_t off, void *dst, size_t len);
/* ---- services: reads answered by the owner's code, and pushes */

typedef struct ingot_transport_service ingot_transport_service_t;

/** A read a peer asked of this rank's service; answered once with
 *  ingot_transport_service_reply(), from any thread. */
typedef struct ingot_transport_call {
    int from;        /**< the requesting rank */
    uint64_t key[2]; /**< what it names (the service's own meaning) */
    uint64_t off, len;
    uint32_t entry, gen; /* where the reply lands (private) */
} ingot_transport_call_t;

/** What a service does with what arrives. Both run in the progress thread with the transport's
 *  lock held: they must not block, nor call into the transport. */
typedef struct ingot_transport_service_ops {
    /** A read: INGOT_OK to answer later (ingot_transport_service_reply()), or a status to
     *  answer at once with no bytes (INGOT_ERR_NOT_FOUND, INGOT_ERR_NO_RESOURCE). */
    ingot_status_t (*call)(void *arg, const ingot_transport_call_t *call);
    /** Bytes a peer pushed (@p data valid during the call only): INGOT_OK when kept, another
     *  status when dropped (the pusher's read completes with it). */
    ingot_status_t (*push)(void *arg, int from, const uint64_t key[2], const void *data,
                           size_t len);
} ingot_transport_service_ops_t;

/**
 * Create a service on this rank (not collective: every rank creates the same services in the
 * same order, which names them alike everywhere). A request for a service a rank does not have
 * (closed, or never made) is answered INGOT_ERR_NOT_FOUND; a push to it is dropped.
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE (more than 8); INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_transport_service_create(ingot_transport_t *t,
                                              const ingot_transport_service_ops_t *ops, void *arg,
                                              ingot_transport_service_t **svc_p);
/** Stop delivering calls and pushes (those arriving later are answered NOT_FOUND or dropped).
 *  Calls already accepted must still be answered before ingot_transport_service_destroy(). */
void ingot_transport_service_close(ingot_transport_service_t *svc);
/** Close and free (after every accepted call was answered and its sent callback ran). Accepts
 *  NULL. */
void ingot_transport_service_destroy(ingot_transport_service_t *svc);
/**
 * Add to @p op a read of [@p off, @p off + @p len) of what @p key names, from @p op's peer's
 * service, landing in host memory @p dst; a reply with a status other than INGOT_OK completes the
 * read with it (INGOT_ERR_NOT_FOUND: the peer does not have it).
 */
ingot_status_t ingot_transport_service_read(ingot_transport_service_t *svc,
                                            ingot_transport_op_t *op, const uint64_t key[2],
                                            uint64_t off, void *dst, size_t len);
/**
 * Add to @p op a push of @p len bytes at @p data, named @p key, to @p op's peer's service (sent
 * eagerly). It completes once the peer answered (INGOT_OK: kept; its push's status otherwise) and
 * the bytes have left @p data.
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE (too many reads in flight); INGOT_ERR_UCX.
 */
ingot_status_t ingot_transport_service_push(ingot_transport_service_t *svc,
                                            ingot_transport_op_t *op, const uint64_t key[2],
                                            const void *data, size_t len);
/**
 * Answer @p call with @p status and @p len bytes at @p data (none unless INGOT_OK). @p sent
 * (@p sent_arg) runs once the bytes have left @p data, possibly inside this call, in any thread
 * with the transport's lock held (it must not call into the transport); also when no answer
 * could be sent (the requester's deadline then ends its read).
 */
void ingot_transport_service_reply(ingot_transport_service_t *svc,
                                   const ingot_transport_call_t *call, ingot_status_t status,
                                   const void *data, size_t len, void (*sent)(void *arg),
                                   void *sent_arg);

/** The version of the UCX library loaded ("1.13.1"). */
const char *ingot_transport_ucx_version(void);
/** Whether UCX here has the CUDA memory type (it can read into and out of GPU memory). */
int ingot_transport_cuda_memory(const ingot_transport_t *t);

/** What ingot_transport_calibrate_gpu() measured (GB/s; best of its rounds). */
typedef struct ingot_transport_gpu_calibration {
    size_t bytes;       /* read per round, in 1 MiB reads */
    double device_gbps; /* straight into GPU memory (ingot_transport_read_device) */
    double host_gbps;   /* into pinned host memory by the pair's protocol, then one cudaMemcpy
                           to the GPU: what the loader does otherwise */
} ingot_transport_gpu_calibration_t;

/**
 * Measure, from @p peer's window @p w, reading @p bytes into GPU memory of @p cuda_device
 * against reading them into pinned host memory and copying them to that GPU (the window's
 * content does not matter). Non-collective; the peer takes part only on the am protocol (its
 * progress thread answers). Errors: the CUDA or UCX call that failed, logged.
 */
ingot_status_t ingot_transport_calibrate_gpu(ingot_transport_window_t *w, int peer, int cuda_device,
                                             size_t bytes, ingot_transport_gpu_calibration_t *out);
/** No more reads: the callback comes when they complete (possibly inside this call). */
void ingot_transport_op_end(ingot_transport_t *t, ingot_transport_op_t *op);
/**
 * Take @p op back before it completes, if it is still the use named @p tag: INGOT_OK when no
 * byte of it can land any more (its replies will be dropped; no callback), INGOT_ERR_BUSY when a
 * transfer into its destination is under way (the callback will still come),
 * INGOT_ERR_NOT_FOUND when that use already completed (its callback ran or is running).
 */
ingot_status_t ingot_transport_op_cancel(ingot_transport_t *t, ingot_transport_op_t *op,
                                         const void *tag);
/** Wait for an ended op of the caller's (progressing the worker; bounded by its deadline), then
 *  ingot_transport_settle(). */
void ingot_transport_op_wait(ingot_transport_t *t, ingot_transport_op_t *op);
/** Return once every callback already running in another thread is over (takes the lock). */
void ingot_transport_settle(ingot_transport_t *t);

/** Progress the worker once from the caller's thread; returns non-zero when it did work. */
unsigned ingot_transport_progress(ingot_transport_t *t);

/**
 * The data path to @p peer, e.g. "rank 1 (same node): posix/memory,cma/memory get, err mode
 * none" (creates the endpoint when needed). INGOT_OK, or the endpoint's failure (unreachable:
 * names the rank, its host and UCX_TLS).
 */
ingot_status_t ingot_transport_path(ingot_transport_t *t, int peer, char *buf, size_t len);
/** ingot_transport_path() of every rank, a line each, appended to @p buf (NUL-terminated).
 *  Returns the first rank's failure, or INGOT_OK. */
ingot_status_t ingot_transport_paths(ingot_transport_t *t, char *buf, size_t len);
/** INGOT_PEER_PROTOCOL as configured (a pair's own protocol is decided at its endpoint). */
ingot_peer_protocol_t ingot_transport_protocol(const ingot_transport_t *t);
/**
 * Ask @p n peers whether they are alive: an active message to each (answered by the peer's
 * progress thread, whatever the pair's protocol, so a peer busy elsewhere still answers) by
 * @p deadline_ns. @p silent[i]: 1 when rank ranks[i] did not answer, or had already missed a
 * read's deadline (INGOT_PEER_TIMEOUT) without answering since; 0 when it answered. Blocks until
 * every peer answered or the deadline. Any thread.
 */
void ingot_transport_ping(ingot_transport_t *t, const int *ranks, int n, uint64_t deadline_ns,
                          int *silent);

/** INGOT_PEER_TIMEOUT in ns. */
uint64_t ingot_transport_peer_timeout(const ingot_transport_t *t);
/** INGOT_PEER_FAILURE as configured: what a silent peer makes of the job. */
ingot_peer_failure_t ingot_transport_peer_failure(const ingot_transport_t *t);
/** Host name of @p peer. */
const char *ingot_transport_host(const ingot_transport_t *t, int peer);
/** Close the endpoint to @p peer by force (peer error mode only): its reads fail. */
void ingot_transport_peer_close(ingot_transport_t *t, int peer);

/** INGOT_OK for UCS_OK (or UCS_INPROGRESS); else log "<call> (<what>) failed: <UCX's text>",
 *  INGOT_ERR_UCX. The error boundary of every UCX call ingot makes. */
ingot_status_t ingot_ucx_check(int ucs_status, const char *call, const char *what);
#define INGOT_UCX_CALL(_what, _call, ...) ingot_ucx_check(_call(__VA_ARGS__), #_call, _what)

#endif
