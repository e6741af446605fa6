/*
 * Transport internals shared by its files (README.md has their roles): the transport object,
 * peers, windows, active-message entries and reply slots, and the calls between the files.
 */
#ifndef INGOT_TRANSPORT_TRANSPORT_IMPL_H
#define INGOT_TRANSPORT_TRANSPORT_IMPL_H

#include "transport/transport.h"
#include "base/config.h"
#include "base/mem.h"
#include "topology/topo.h"
#include <pthread.h>
#include <ucp/api/ucp.h>

#define TRANSPORT_ADDRESS_MAX (64 << 10) /* bytes of a worker address we accept */
#define TRANSPORT_RKEY_MAX    (16 << 10) /* bytes of a packed memory key we accept */
#define TRANSPORT_AM_ENTRIES  4096       /* active-message reads in flight per rank */
/* windows and put destinations per transport (a cached loader has one window, and depth + 2
 * destinations under put) */
#define TRANSPORT_WINDOWS_MAX    64
#define TRANSPORT_WINDOW_HDR     64 /* header bytes before a window's data */
#define TRANSPORT_ALLOC_PRIO     "md:posix,md:sysv,huge,thp,md:*,mmap,heap" /* UCX_ALLOC_PRIO */
#define TRANSPORT_AM_REQ         1                                          /* active-message ids */
#define TRANSPORT_AM_REP         2
#define TRANSPORT_AM_PUSH        3           /* bytes pushed to a peer's service (service.c) */
#define TRANSPORT_SERVICES_MAX   8           /* services per transport */
#define TRANSPORT_SERVICE_WINDOW 0x80000000u /* a request's window id names service (id & ~this) */


typedef struct transport_peer {
    struct ingot_transport *t;
    int rank;
    const void *address; /* its worker address (in t->addresses) */
    ucp_ep_h ep;         /* NULL until first use */
    int same_node;
    int err_peer; /* the pair's error mode is PEER */
    _Atomic int failed;
    _Atomic uint64_t silent_since; /* when a read of it missed its deadline; 0: it answers */
    int closed;
    int replies_failed;          /* replies to it that failed to send (the first is logged) */
    ingot_peer_protocol_t proto; /* AUTO until the endpoint exists */
    char lanes[256];             /* its endpoint's transports and roles */
    char host[INGOT_TOPO_HOST_MAX];
} transport_peer_t;

/* An entry's state: WAIT (no byte sent yet: droppable), RNDV (its reply lands in the
 * destination), PUT (the owner may write the destination at any time until it answers). */
enum { AM_ENTRY_FREE, AM_ENTRY_WAIT, AM_ENTRY_RNDV, AM_ENTRY_PUT };

/* The window id of a ping: the owner answers at once, with no bytes. */
#define TRANSPORT_PING_WINDOW UINT32_MAX

/* The header of a read request (kept until its send completes: UCX 1.13 has no
 * UCP_AM_SEND_FLAG_COPY_HEADER). */
typedef struct transport_am_req_hdr {
    uint32_t window, entry, gen;
    int32_t from; /* requesting rank */
    uint64_t off, len;
    uint32_t dest, pad; /* put: the requester's destination (window id); am: UINT32_MAX */
    uint64_t addr;      /* put: where in it */
    uint64_t key[2];    /* a service's request: what it names (service.c) */
} transport_am_req_hdr_t;

/* The header of a reply. */
typedef struct transport_am_rep_hdr {
    uint32_t entry, gen;
    int32_t status;
    uint32_t pad;
} transport_am_rep_hdr_t;

/* A reply header in flight on the owner (kept until its send completes). */
typedef struct transport_rep_slot {
    transport_am_rep_hdr_t hdr;
    struct ingot_transport *t;
    ucp_ep_h ep;               /* put: this rank's endpoint to the requester */
    int32_t from;              /* the requester */
    transport_am_req_hdr_t rq; /* put: the request, served after progress returns */
    uint32_t next_free;
    uint32_t next_put;       /* on the queue of puts to serve */
    void (*sent)(void *arg); /* a service's reply: its bytes are out of the owner's buffer */
    void *sent_arg;
} transport_rep_slot_t;

/* One active-message read in flight: where its reply lands. */
typedef struct transport_am_entry {
    int state;
    uint32_t gen;
    void *dst;
    size_t len;
    ingot_transport_op_t *op;
    struct ingot_transport *t;
    uint32_t next_free;
    int sending;      /* its request header is still with UCX */
    int free_pending; /* freed while sending: back on the free list when the send completes */
    ingot_transport_op_t *send_op; /* a push: its op counts the send too (the data's buffer) */
    transport_am_req_hdr_t hdr;
} transport_am_entry_t;

/* A peer's window as this rank sees it. */
typedef struct transport_remote {
    uint64_t base, bytes; /* its address and size (header included) */
    ucp_rkey_h rkey;      /* unpacked at first use */
    ucp_ep_h rkey_ep;     /* the endpoint it was unpacked for (a put destination: the reply ep) */
    int device;           /* the window is in its owner's GPU memory */
    void *mapped;         /* its address here when shared memory maps it (ucp_rkey_ptr) */
    const void *packed;
    size_t packed_len;
} transport_remote_t;

struct ingot_transport_window {
    ingot_transport_t *t;
    uint32_t id;
    ucp_mem_h memh;
    ingot_mem_t mem;  /* ours when registered (not UCX-allocated) */
    int cuda_device;  /* the GPU whose memory holds it, or -1 (host) */
    int dest;         /* a put destination: the caller's memory, no header */
    void *device_ptr; /* its cudaMalloc'd memory */
    void *base;       /* header + data */
    size_t bytes;
    transport_remote_t *remote; /* per rank */
    void *packed_all;           /* every rank's packed key */
};

struct ingot_transport {
    MPI_Comm comm;                 /* the job's ranks (the caller's) */
    const ingot_node_info_t *node; /* this rank's node */
    uint64_t timeout_ns;           /* INGOT_TIMEOUT */
    int rank, world;
    ucp_context_h ucp;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
    void *addresses;
    transport_peer_t *peers;
    pthread_mutex_t lock;
    int efd;
    pthread_t thread;
    int thread_started;
    _Atomic int stop, sleeping, closing;
    ingot_peer_protocol_t protocol;
    uint64_t peer_timeout_ns;
    int window_ucx;                    /* INGOT_PEER_WINDOW=ucx: UCX allocates windows */
    ingot_peer_failure_t peer_failure; /* INGOT_PEER_FAILURE */
    ingot_transport_op_t *ops;         /* ops with a deadline */
    transport_am_entry_t am[TRANSPORT_AM_ENTRIES];
    uint32_t am_free;                               /* free list head, TRANSPORT_AM_ENTRIES: none */
    transport_rep_slot_t rep[TRANSPORT_AM_ENTRIES]; /* reply headers in flight (owner) */
    uint32_t rep_free;
    uint32_t puts_head, puts_tail; /* put requests received, to serve outside the callback */
    ingot_transport_window_t *windows[TRANSPORT_WINDOWS_MAX];
    uint32_t nwindows;
    _Atomic uint64_t refused; /* requests outside a window refused (owner side) */
    /* reads sent, by protocol: get through UCX, get as a memcpy of a mapped window, am, put */
    _Atomic uint64_t reads_get, reads_mapped, reads_am, reads_put, reads_device;
    int cuda_memory; /* UCX has the CUDA memory type (ucp_context_query) */
    struct ingot_transport_service *services[TRANSPORT_SERVICES_MAX]; /* service.c */
};

/* worker.c */
void ingot_transport_free(ingot_transport_t *t);
void ingot_transport_wake(ingot_transport_t *t);
/* ops.c */
void ingot_transport_op_put(ingot_transport_t *t, ingot_transport_op_t *op, ingot_status_t status);
/* Expire the ops past their deadline (lock held); returns the earliest deadline still ahead
 * (UINT64_MAX: none). */
uint64_t ingot_transport_ops_expire(ingot_transport_t *t, uint64_t now);
/* Move every pending op's deadline @p by_ns later: time this process did not run (stopped, or
 * descheduled that long) is no peer's silence. Lock held. */
void ingot_transport_ops_postpone(ingot_transport_t *t, uint64_t by_ns);
/* endpoint.c */
ingot_status_t ingot_transport_ep_locked(ingot_transport_t *t, int peer, ucp_ep_h *ep_p);
ingot_status_t ingot_transport_peer_ready_locked(ingot_transport_t *t, int peer, ucp_ep_h *ep_p);
void ingot_transport_peer_close_locked(ingot_transport_t *t, int peer);
/* owner.c */
/* Serve the put requests received during progress (lock held, outside UCX callbacks: the
 * endpoint to the requester may have to be created). */
void ingot_transport_puts_serve(ingot_transport_t *t);
/* Register the request (owner) and reply (requester) handlers with the worker. */
ingot_status_t ingot_transport_am_register(ingot_transport_t *t);
/* A reply header for @p rq from the pool, or NULL (logged: that read will time out). Lock held. */
transport_rep_slot_t *ingot_transport_rep_take(ingot_transport_t *t,
                                               const transport_am_req_hdr_t *rq);
/* Send @p slot's reply with @p status and the bytes (or none). Lock held. */
void ingot_transport_rep_send(ingot_transport_t *t, ucp_ep_h ep, transport_rep_slot_t *slot,
                              int32_t status, const void *data, size_t len);
/* Reply to a read at once: the bytes (or a status alone). Lock held. */
void ingot_transport_am_reply(ingot_transport_t *t, ucp_ep_h ep, const transport_am_req_hdr_t *rq,
                              int32_t status, const void *data, size_t len);
/* service.c: a request naming service @p rq->window (owner, lock held); the push handler,
 * registered with the worker. */
void ingot_transport_service_call(ingot_transport_t *t, ucp_ep_h ep,
                                  const transport_am_req_hdr_t *rq);
ingot_status_t ingot_transport_service_register(ingot_transport_t *t);
/* requester.c */
void ingot_transport_am_entry_free(ingot_transport_t *t, transport_am_entry_t *e);
/* The endpoint to @p peer for a read, unless the peer failed earlier (logged). Lock held. */
ingot_status_t ingot_transport_peer_usable_locked(ingot_transport_t *t, int peer, ucp_ep_h *ep_p);
/* The endpoint to @p peer was closed by force: its put reads can no longer land; they fail. */
void ingot_transport_am_peer_closed(ingot_transport_t *t, int peer);
/* A reply arrived (an active-message handler, lock held). */
ucs_status_t ingot_transport_am_rep_cb(void *arg, const void *header, size_t header_length,
                                       void *data, size_t length, const ucp_am_recv_param_t *param);
/* Push @p len bytes at @p data to @p op's peer's service @p window (a TRANSPORT_SERVICE_WINDOW
 * id) under @p key: counted on @p op until both the peer's answer came and the bytes have left
 * @p data. Lock held. */
ingot_status_t ingot_transport_am_push(ingot_transport_t *t, ingot_transport_op_t *op, ucp_ep_h ep,
                                       uint32_t window, const uint64_t *key, const void *data,
                                       size_t len);
/* Send a read request of @p len bytes at @p off of window @p window to @p op's peer, its reply
 * landing in @p dst, or (put) written by the owner into destination @p d (@p past_dest: the fault
 * site's put past its end). Lock held. */
ingot_status_t ingot_transport_am_request(ingot_transport_t *t, ingot_transport_op_t *op,
                                          ucp_ep_h ep, uint32_t window, uint64_t off, void *dst,
                                          size_t len, ingot_transport_window_t *d, int past_dest,
                                          const uint64_t *key);

#endif
