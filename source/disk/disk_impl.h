/*
 * Disk tier internals shared by its files (README.md has their roles): the tier object, its
 * buffers, the keeper, the configuration, and the calls between the files.
 */
#ifndef INGOT_SOURCE_DISK_DISK_IMPL_H
#define INGOT_SOURCE_DISK_DISK_IMPL_H

#include "source/disk/disk.h"
#include "source/disk/folder.h"
#include "source/disk/policy.h"
#include "base/config.h"
#include "base/mem.h"
#include "base/ring.h"
#include "base/wait.h"
#include <pthread.h>
#include <stdatomic.h>

extern const char *const ingot_disk_policy_names[];
extern const char *const ingot_disk_fill_names[];

#define DISK_SLACK      8192 /* room past a piece for an O_DIRECT read from below */
#define DISK_FILL_QUEUE 16   /* pieces waiting for the keeper's writers */
/* Writer threads per keeper: each entry's write and sync runs outside the ledger's lock, so
 * several overlap (the filesystem commits their syncs together); one writer held 4 ranks' fills
 * of 32 KiB pieces to about 2,000 a second on this VM's disk. */
#define DISK_WRITERS     4
#define DISK_PUSH_SHARE  50 /* percent of destroy's INGOT_TIMEOUT the pushes may take */
#define DISK_SERVE_QUEUE 64 /* peers' reads waiting for this rank's server */
#define DISK_OUTBOX      8  /* buffers for pieces waiting to be handed to their keeper */
/* Parts (assemble.c) a rank has on their way to their keeper at once: the outbox's share of its
 * buffers (this many with INGOT_DISK_CACHE_FILL=parts, where every miss hands one over), so that
 * the reads keep theirs however far the pusher and the keeper's writers lag; a part that finds
 * none free within DISK_PARTS_WAIT_NS is dropped (its piece completed later). */
#define DISK_PARTS_OUT         16
#define DISK_PARTS_WAIT_NS     (2 * 1000000ull) /* a part's wait for a credit, at most */
#define DISK_COMPLETE_RUNS     64 /* reads below per piece to complete it, at most (runs merged) */
#define DISK_COMPLETE_INFLIGHT 4  /* completing reads in flight (of the spare buffers) */
#define DISK_COMPLETE_QUIET_NS (100 * 1000000ull) /* no part for this long: none is on its way */
#define DISK_FD_SLOTS          256                /* entries kept open per process (fdcache.c) */
#define DISK_SPARE_BUFS        8 /* buffers besides one per reader and the outbox: the prefetcher */
#define DISK_RX_BUFS           16 /* buffers for peers: reads this rank's server answers, pushes */

/* What a buffer holds for the keeper's writer. */
enum { DISK_FILL_DEMAND, DISK_FILL_PREFETCH, DISK_FILL_PUSH, DISK_FILL_PART };

/* A piece buffer: the entry's header then the piece (and slack), 4096-aligned; taken from the
 * rank's own pool for a read or a fill, or from its pool for peers (rx) for a peer's read or a
 * piece pushed to its keeper. Two pools, so that a peer's push is never refused for want of a
 * buffer that this rank's own fills hold while they wait on pushes to that peer (two nodes'
 * pushers waiting on each other until INGOT_TIMEOUT): an rx buffer is given back by this node's
 * writer or server alone, which wait on nothing remote. */
typedef struct disk_buf {
    uint8_t *mem;
    int rx; /* from the pool for peers */
    ingot_disk_key_t key;
    uint64_t piece;              /* this job's piece id, or UINT64_MAX (another manifest's) */
    uint64_t off;                /* where the payload lies in the piece (a part's; else 0) */
    uint64_t len;                /* payload bytes */
    uint64_t layout;             /* an assembled piece's layout (entry.h), else 0 */
    int kind;                    /* DISK_FILL_* */
    int credit;                  /* a part holding one of DISK_PARTS_OUT (given back at put) */
    uint64_t need;               /* a prefetch: the step it is needed at */
    ingot_transport_call_t call; /* the server's: the peer's read it answers */
    struct ingot_disk *d;
    ingot_source_req_t sub; /* its read from the source below */
    ingot_event_t ev;
    struct iovec iov;
    ingot_field_info_t *rows; /* room for the manifest's widest sample's field rows: the
                                 checks of a piece read from below (disk_source.c) */
} disk_buf_t;

/* An open entry kept for the next reads of its piece (fdcache.c). */
typedef struct disk_fd_slot {
    uint64_t piece; /* UINT64_MAX: empty */
    uint32_t refs;  /* readers holding it */
    int stale;      /* closed when the last reader lets go */
    ingot_disk_open_t o;
} disk_fd_slot_t;

/* A reader's hold on an open entry: its slot's, or its own (slot NULL: closed at put). */
typedef struct disk_fd_ref {
    const ingot_disk_open_t *o;
    disk_fd_slot_t *slot;
} disk_fd_ref_t;

/* A record's bytes within a piece (assemble.c): [off, off + len) of the piece. */
typedef struct disk_span {
    uint32_t off, len;
} disk_span_t;

/* A piece being assembled (assemble.c): its slot of the keeper's assembly file. */
typedef struct disk_slot {
    uint64_t piece;
    uint64_t left;     /* bytes of its spans not yet in */
    uint64_t need;     /* when it serves first (claimed without room: what its victims outlast) */
    uint64_t last_ns;  /* when its last part came */
    uint32_t inflight; /* parts being written into it */
    int completing;    /* its missing spans are being read from below (until a part comes) */
    int owed;          /* claimed without room: room to be made before its first part */
    int failed;        /* its errno when a write failed, -1 when no room was made: dropped once
                          nothing is in flight */
} disk_slot_t;

/* The keeper's assemblies (assemble.c), under the keeper's lock. */
typedef struct disk_asm {
    int fd;               /* the assembly file (a locked temporary), or -1 */
    ingot_disk_key_t key; /* its name's */
    uint32_t *slot_of;    /* per piece: its slot, or DISK_NO_SLOT */
    disk_slot_t *slots;
    uint32_t nslots, cap;
    uint32_t *free, nfree; /* slots given back */
    uint32_t owed;         /* slots owed room (DISK_OWED_MAX at most) */
    uint8_t *done;         /* per span: in the slot */
} disk_asm_t;

#define DISK_NO_SLOT  UINT32_MAX
#define DISK_OWED_MAX DISK_FILL_QUEUE /* assemblies claimed without room, not yet made room for */

/* The node's keeper (keeper.c): the policy, the writer of fills, the prefetcher. */
typedef struct disk_keeper {
    ingot_disk_policy_t *pol;
    pthread_mutex_t lock;     /* the policy */
    ingot_mpmc_t fills;       /* disk_buf_t * to write */
    _Atomic uint64_t now;     /* the loader's planned step */
    ingot_event_t clock;      /* now moved */
    ingot_event_t idle;       /* the writer finished one */
    _Atomic uint64_t pending; /* fills queued or being written */
    _Atomic int dropping;     /* destroy's INGOT_TIMEOUT is up: queued fills are dropped */
    _Atomic uint64_t dropped; /* fills dropped so */
    pthread_t writers[DISK_WRITERS], prefetcher;
    int writers_started, prefetcher_started;
    _Atomic uint64_t budget;  /* the budget in effect (room.c): INGOT_DISK_CACHE_BYTES or less */
    _Atomic int fills_off;    /* the folder refused a fill for good (read-only): no more fills */
    _Atomic int said_full;    /* the first shrink was said */
    _Atomic uint64_t usage;   /* the folder's usage when the writer last looked (the ledger) */
    _Atomic uint64_t claimed; /* bytes of the pieces claimed for fills not yet written */
    _Atomic uint64_t writing; /* bytes of the fills the writers are writing (not in the ledger) */
    uint32_t *claimed_at;     /* per piece: when claimed (s since t0), so a claim can lapse */
    uint64_t t0;
    disk_asm_t as; /* INGOT_DISK_CACHE_FILL=parts: the pieces being assembled */
} disk_keeper_t;

/* The tier's counters on this rank. */
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
    uint64_t damaged_fills;  /* pieces from below that did not verify: never written */
    uint64_t keeper_busy;    /* peers' wants, pushes and releases that found the keeper's lock
                                held and were answered "busy" rather than waiting (keeper) */
    uint64_t parts;          /* samples' bytes handed to the keeper for assembly (keeper) */
    uint64_t parts_dropped;  /* parts this rank did not hand over (DISK_PARTS_OUT on their way) */
    uint64_t asm_below;      /* of bytes_below: the spans assemblies missed, read by the keeper */
    uint64_t assembled;      /* pieces whose every sample came, written (keeper) */
    uint64_t assembling;     /* pieces being assembled now (keeper) */
} ingot_disk_stats_t;

struct ingot_disk {
    ingot_tier_t tier;     /* first: the disk is a tier */
    ingot_source_t source; /* the tier's source (disk_source.c) */
    ingot_source_t *below; /* the chain's, not the tier's */
    ingot_tier_plan_t p;
    const ingot_disk_config_t *cfg;
    ingot_transport_t *transport; /* the job's; NULL for a job of one rank */
    ingot_order_h order;          /* the keeper's copy */
    int rank, world, lru, prefetch_pct;
    uint32_t piece_log2;
    uint64_t piece_bytes, budget;
    char dir[PATH_MAX];
    /* the manifest's pieces */
    ingot_disk_pieces_t pieces;
    uint64_t *piece0, *shard_hash, *shard_size;
    uint64_t npieces;
    int parts;          /* INGOT_DISK_CACHE_FILL=parts */
    uint64_t *span0;    /* per piece: its records' spans are spans[span0[p] .. span0[p + 1]) */
    disk_span_t *spans; /* in offset order within each piece (assemble.c); NULL unless parts */
    /* nodes and homes (home.c) */
    int node, nnodes, usable;       /* this node's id; the job's nodes; this node's folder serves */
    ingot_disk_homes_t homes;       /* the plan: what the fields below point into */
    int serving_nodes;              /* nodes whose folder serves (0: the tier passes through) */
    int *node_usable, *node_keeper; /* per node */
    int *node_first, *node_ranks;   /* per node: its ranks are node_ranks[node_first[n] ..
                                     node_first[n + 1]) */
    int32_t *home;                  /* per piece: its home node, or -1 (no usable node) */
    uint8_t *homed;                 /* per piece: home == this node */
    ingot_disk_folder_t folder;
    /* buffers */
    ingot_mem_t buf_mem;
    disk_buf_t *bufs;
    uint32_t nbufs, nrx;          /* the rank's own, then the peers' (the last nrx of bufs) */
    ingot_field_info_t *buf_rows; /* every buffer's rows (fields_max each) */
    uint32_t fields_max;          /* the manifest's widest sample */
    ingot_mpmc_t free_bufs, free_rx;
    disk_fd_slot_t *fds; /* entries kept open (fdcache.c) */
    pthread_mutex_t fds_lock;
    uint32_t fds_sweep; /* the next slot checked for a removed entry (under fds_lock) */
    /* roles */
    disk_keeper_t *keeper; /* this rank keeps its node, or NULL */
    ingot_transport_service_t *svc;
    ingot_mpmc_t calls; /* disk_buf_t * of peers' reads for the server thread */
    pthread_t server;
    int server_started;
    ingot_mpmc_t outbox; /* disk_buf_t * of pieces read from below, for their keeper */
    pthread_t pusher;
    int pusher_started;
    ingot_abort_t drain; /* the pusher ends once its outbox is empty */
    ingot_abort_t abort;
    /* counters */
    _Atomic uint64_t hits, remote_hits, misses, bytes_disk, bytes_below, admitted, refused,
        evictions, prefetched, prefetch_bytes, bad_entries, fill_errors, damaged_fills, keeper_busy,
        parts_in, assembled, assembling;
    _Atomic uint32_t *piece_hits;   /* per piece: reads this rank served from its node's folder */
    _Atomic int *node_failed;       /* per node: a read or push to it failed; left alone since */
    _Atomic uint64_t replies_out;   /* the server's replies not yet sent */
    _Atomic uint32_t parts_out;     /* parts on their way to their keeper (DISK_PARTS_OUT) */
    _Atomic uint64_t parts_dropped; /* parts not handed over: DISK_PARTS_OUT were on their way */
    _Atomic uint64_t asm_below;     /* bytes the keeper read below to complete assemblies */
    _Atomic uint64_t end_ns; /* set by destroy: when all of it must be done (now + INGOT_TIMEOUT);
                                     0 until then (disk_deadline) */
    _Atomic int said_bad, said_fill, said_push, said_damaged;
};

#define disk_of_source(_src) ((ingot_disk_t *)((char *)(_src)-offsetof(ingot_disk_t, source)))

/* disk.c */
/* Create the tier over @p below (the chain's: not destroyed with the tier), see disk.h. */
ingot_status_t ingot_disk_create(const ingot_tier_plan_t *plan, ingot_source_t *below,
                                 ingot_disk_t **d_p);
/* A wait's deadline: INGOT_TIMEOUT from now, but during destroy never past the first @p share
 * percent of destroy's one INGOT_TIMEOUT (pushes take the first half, so that every rank reaches
 * destroy's barrier in time; the keeper's writers and the replies the rest). May be past. */
uint64_t ingot_disk_deadline(const ingot_disk_t *d, int share);
/* This rank's counters. */
void ingot_disk_stats(const ingot_disk_t *d, ingot_disk_stats_t *stats_p);
/* A report for people: the folder, the budget and usage, the homes, the counters. */
const char *ingot_disk_report(const ingot_disk_t *d, char *buf, size_t len);
/* The loader planned global step @p step: the clock of the policy and prefetcher. */
void ingot_disk_advance(ingot_disk_t *d, uint64_t step);
/* End the tier (collective): a barrier, the server and keeper stopped (pending fills written),
 * hit counts added to the entries, everything freed (the source below is the chain's). */
void ingot_disk_destroy(ingot_disk_t *d);
/* The shard row holding this job's piece @p p. */
uint32_t ingot_disk_shard_of(const ingot_disk_t *d, uint64_t p);
/* The key of this job's piece @p p. */
ingot_disk_key_t ingot_disk_key(const ingot_disk_t *d, uint64_t p);
/* Payload bytes of piece @p p (the last piece of a shard is shorter). */
uint64_t ingot_disk_piece_len(const ingot_disk_t *d, uint64_t p);
/* This job's piece of @p key, or UINT64_MAX. */
uint64_t ingot_disk_piece_of(const ingot_disk_t *d, const ingot_disk_key_t *key);
/* A buffer from the pool, waiting until @p deadline_ns: NULL past it or at destroy. */
disk_buf_t *ingot_disk_buf_get(ingot_disk_t *d, uint64_t deadline_ns);
disk_buf_t *ingot_disk_buf_try(ingot_disk_t *d);
/* A buffer for a peer's read or push, or NULL (none free: the peer hears "busy"). */
disk_buf_t *ingot_disk_buf_rx(ingot_disk_t *d);
void ingot_disk_buf_put(ingot_disk_t *d, disk_buf_t *b);
/* Remove the bad entry of piece @p p (the ledger told), count it, say the first one. */
void ingot_disk_bad_entry(ingot_disk_t *d, uint64_t p, const char *why);
/* Sample @p s, read through this tier, failed its hash: this node's entries of the pieces it
 * spans are removed (counted and said as bad entries). 1 when there was one. */
int ingot_disk_damaged(ingot_disk_t *d, const ingot_sample_info_t *s);
/* Read piece @p p's bytes [off, off + len) from this node's folder into @p window (@p room bytes;
 * aligned for O_DIRECT), the blocks' hashes checked unless @p check is 0 (the reader's caller
 * checks every sample it takes from them): INGOT_OK with *shift_p where @p off's byte landed;
 * INGOT_ERR_NO_RESOURCE (its blocks do not fit @p room: nothing read); INGOT_ERR_NOT_FOUND (a
 * miss, a bad entry removed, or a read error said). */
ingot_status_t ingot_disk_read_local(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                     void *window, size_t room, int check, size_t *shift_p);

/* fdcache.c: entries kept open per process */
ingot_status_t ingot_disk_fds_init(ingot_disk_t *d);
void ingot_disk_fds_fini(ingot_disk_t *d);
/* Piece @p p's entry, open and its header checked: INGOT_OK with *@p ref (give it back with
 * ingot_disk_fd_put()); INGOT_ERR_NOT_FOUND also for an entry assembled for another layout
 * (checked once, at its open); as ingot_disk_entry_open() otherwise. */
ingot_status_t ingot_disk_fd_get(ingot_disk_t *d, uint64_t p, disk_fd_ref_t *ref,
                                 ingot_disk_bad_t *bad);
void ingot_disk_fd_put(ingot_disk_t *d, disk_fd_ref_t *ref);
/* Whether the entry held still has its name (not removed since it was opened). */
int ingot_disk_fd_linked(const disk_fd_ref_t *ref);
/* Piece @p p's entry was removed or found bad: not to be read through its kept descriptor. */
void ingot_disk_fd_drop(ingot_disk_t *d, uint64_t p);

/* home.c: every rank's node, budget and verdict (@p usable: this rank's folder serves)
 * gathered, budgets checked per node, the nodes' ranks and keepers, every piece's home
 * (collective). */
ingot_status_t ingot_disk_homes(ingot_disk_t *d, int usable);
/* The rank of node @p node that serves reads of piece @p p (spread over the node's ranks). */
int ingot_disk_home_rank(const ingot_disk_t *d, int node, uint64_t p);

/* disk_source.c */
extern const ingot_source_ops_t ingot_disk_source_ops;
/* Read bytes [@p off, @p off + @p len) of piece @p p (UINT64_MAX: to its end) from the source
 * below into @p b's payload (b->len set), for @p epoch (a source below that counts per epoch: the
 * object store); the deadline as the request's. */
ingot_status_t ingot_disk_read_below(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                     uint64_t epoch, disk_buf_t *b, uint64_t deadline_ns);
/* The same in two halves, so that several reads are in flight at once: submitted (the status of
 * the submit), then waited for with that status (as ingot_disk_read_below() returns). */
ingot_status_t ingot_disk_read_below_submit(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                            uint64_t epoch, disk_buf_t *b, uint64_t deadline_ns);
ingot_status_t ingot_disk_read_below_wait(ingot_disk_t *d, disk_buf_t *b, ingot_status_t st);
/* Whether piece @p p's bytes in @p b ([b->off, b->off + b->len), read from below or assembled)
 * may be written: every sample they hold whole verifies against the manifest (those cut by its edges are checked by the loader, which
 * removes the entry when they fail). One that does not was damaged on its way in: counted, said
 * once, never written. */
int ingot_disk_piece_sound(ingot_disk_t *d, uint64_t p, disk_buf_t *b);

/* keeper.c */
ingot_status_t ingot_disk_keeper_create(ingot_disk_t *d);
/* Write pending fills, stop the threads, free. */
void ingot_disk_keeper_destroy(ingot_disk_t *d);
/* Hand a claimed piece read from below to this node's keeper (this process): queued, waiting
 * while the queue is full; the buffer is the keeper's from the call on. */
void ingot_disk_keeper_offer(ingot_disk_t *d, disk_buf_t *b);
/* Queue a claimed piece's buffer for the writer, waiting until @p deadline_ns (0: not at all);
 * 0 when the queue stayed full: the buffer back, the claim let go (kept for a try: the pusher
 * tries again); the caller counts a refusal when it gives up. */
int ingot_disk_keeper_queue(ingot_disk_t *d, disk_buf_t *b, uint64_t deadline_ns);

/* The writer's admission and write of one whole piece in @p b (keeper.c), settling its claim. */
void ingot_disk_keeper_fill(ingot_disk_t *d, disk_buf_t *b);
/* At destroy, before the keeper stops (every rank's parts handed over): the writers' queue
 * drained, then what the assemblies still miss read from below and written (within the first
 * @p share percent of destroy's INGOT_TIMEOUT). */
void ingot_disk_keeper_finish(ingot_disk_t *d, int share);
/* Make room for what the writers and assemblies hold (ledger and keeper's locks taken here),
 * evicting only pieces needed after @p need: 1 when there is room. */
int ingot_disk_keeper_pay(ingot_disk_t *d, uint64_t need);
/* Count a failed fill (@p why names it): a full disk shrinks the budget, a read-only folder turns
 * fills off, any other failure is said once. */
void ingot_disk_keeper_fill_failed(ingot_disk_t *d, ingot_status_t st, const char *why);

/* assemble.c: pieces assembled from the samples misses read */
/* Every piece's spans, in offset order, from the manifest (every rank, INGOT_DISK_CACHE_FILL=parts:
 * the keeper's assemblies and every reader's layouts). */
ingot_status_t ingot_disk_spans_build(ingot_disk_t *d);
void ingot_disk_spans_free(ingot_disk_t *d);
/* The layout of piece @p p as this job's manifest lays it out: a hash of its spans, never 0
 * (entry.h); without the spans built, its shard's records walked (an assembled entry's open), and
 * 0 when that fails (matching no entry). */
uint64_t ingot_disk_layout(const ingot_disk_t *d, uint64_t p);
/* The keeper's assemblies: set up (with the folder open; INGOT_OK with parts off when the
 * assembly file cannot be made, said once), and ended (what is still being assembled dropped,
 * the file removed). */
ingot_status_t ingot_disk_asm_create(ingot_disk_t *d);
void ingot_disk_asm_destroy(ingot_disk_t *d);
/* Whether piece @p p is being assembled. Keeper's lock held. */
int ingot_disk_asm_has(const ingot_disk_t *d, uint64_t p);
/* Give piece @p p a slot to be assembled in, claimed without room (@p owed: room made before its
 * first part, for a piece that serves from @p need): 1, or 0 when none can be had (DISK_OWED_MAX
 * slots owed room already). Keeper's lock held. */
int ingot_disk_asm_open(ingot_disk_t *d, uint64_t p, int owed, uint64_t need);
/* Read from below the spans still missing of the pieces being assembled that have no use ahead
 * in the clock's epoch and got no part for DISK_COMPLETE_QUIET_NS (their uses of the epoch were
 * all missed: what is missing was lost on the way or missed before the claim), or of every one
 * when @p all (the job's end), and hand them to the writers, until @p deadline_ns. The
 * prefetcher's thread, and destroy before it stops the keeper. */
void ingot_disk_asm_complete(ingot_disk_t *d, int all, uint64_t deadline_ns);
/* The writer's part of a piece being assembled (@p b: its bytes [b->off, b->off + b->len)): written
 * into its slot; the piece's entry written once its every span is in. Dropped when the piece is not
 * being assembled (written already, or dropped). */
void ingot_disk_keeper_part(ingot_disk_t *d, disk_buf_t *b);

/* claim.c: the keeper's answers to "shall I read piece p whole and hand it to you?" */
enum { DISK_WANT_FILL, DISK_WANT_THERE, DISK_WANT_NO, DISK_WANT_PART };
/* How a caller takes the keeper's lock: waiting (a reader, a writer, the prefetcher), or only if
 * it is free (the transport's progress thread, which holds the transport's lock and must never
 * wait behind an eviction's unlinks or an epoch's trace; a busy answer is counted). */
enum { DISK_WAIT, DISK_TRY };
/* DISK_WANT_FILL (the piece is claimed for the asker's fill), DISK_WANT_THERE (resident, or on
 * its way), DISK_WANT_NO (the policy would not admit it: no room, or a fill that would read
 * below more than it saves, the miss needing @p len of the piece's bytes; or DISK_TRY found the
 * keeper busy), DISK_WANT_PART (INGOT_DISK_CACHE_FILL=parts: the piece is being assembled, or now
 * claimed for assembly: the asker reads its own bytes and hands them to the keeper).
 * DISK_WAIT also moves the policy's clock first (an epoch's roll builds a trace). */
int ingot_disk_keeper_want(ingot_disk_t *d, uint64_t p, uint64_t len, int how);
/* Whether piece @p p is claimed for a fill (a push of it is welcome): 1 or 0, or -1 when the
 * keeper was busy (DISK_TRY; the pusher keeps its claim and tries again). */
int ingot_disk_keeper_claimed(ingot_disk_t *d, uint64_t p);
/* Leave the claim of @p p for @p state (its bytes no longer counted as claimed). */
void ingot_disk_keeper_settle(ingot_disk_t *d, uint64_t p, int state);
/* The same taken as @p how: 0 when DISK_TRY found the keeper busy and nothing changed (a
 * release dropped: the claim lapses after INGOT_TIMEOUT, as a lost one does). */
int ingot_disk_keeper_settle_how(ingot_disk_t *d, uint64_t p, int state, int how);
/* A piece the prefetcher picked (FILLING by the policy): counted as claimed. Lock held. */
void ingot_disk_keeper_claim_locked(ingot_disk_t *d, uint64_t p);
/* Whether the budget has room for another whole piece, counting the claims in flight. */
int ingot_disk_keeper_has_room(const ingot_disk_t *d);

/* room.c: the keeper's budget in effect */
/* Decide it at start (the ledger locked, the folder holding @p held bytes): the smaller of
 * INGOT_DISK_CACHE_BYTES and the filesystem's room; said once (a warning when it is smaller). */
void ingot_disk_room_start(ingot_disk_t *d, uint64_t held);
/* The filesystem refused a fill (ENOSPC, EDQUOT; @p why names it) while the folder holds, or is
 * being written, @p held bytes (the ledger locked): the budget in effect shrinks to @p held, or
 * to the room measured again when that is less; said once. Returns the new budget, which the
 * caller evicts down to. */
uint64_t ingot_disk_room_shrink(ingot_disk_t *d, uint64_t held, const char *why);
/* The folder refused a fill for good (@p why: read-only, permission): fills off, said once. */
void ingot_disk_room_off(ingot_disk_t *d, const char *why);
/* Whether a fill of @p bytes could ever be taken: fills on and within the budget in effect. */
int ingot_disk_room_fits(const ingot_disk_t *d, uint64_t bytes);

/* serve.c */
ingot_status_t ingot_disk_serve_start(ingot_disk_t *d);
/* Stop serving: no new calls, the queued ones answered, every reply sent (bounded by the
 * timeout), the thread joined. */
void ingot_disk_serve_stop(ingot_disk_t *d);
/* Write piece @p p's bytes in @p b (claimed for this rank by its keeper) through to its home
 * node's keeper: queued for this rank's pusher thread (which hands it to the keeper in this
 * process, or pushes it over the transport, waiting out a busy keeper); the queue holds every
 * buffer, so nothing waits there long (dropped only at destroy or past @p deadline_ns, its claim
 * given back); the buffer goes with it. */
void ingot_disk_write_through(ingot_disk_t *d, uint64_t p, disk_buf_t *b, uint64_t deadline_ns);
/* Let go of the claim on piece @p p that this rank's keeper query made (its fill will not come):
 * at the keeper in this process, or told to it over the transport until @p deadline_ns. */
void ingot_disk_release_claim(ingot_disk_t *d, uint64_t p, uint64_t deadline_ns);
/* Start the pusher; end it once every queued piece was handed over (destroy, before the
 * barrier that lets keepers stop). */
ingot_status_t ingot_disk_pusher_start(ingot_disk_t *d);
void ingot_disk_pusher_drain(ingot_disk_t *d);
/* Whether this rank should read missed piece @p p whole and write it through, the miss needing
 * @p len of its bytes: its keeper's answer (DISK_WANT_*), asked over the transport when the keeper
 * is another process; DISK_WANT_NO when it cannot be asked. */
int ingot_disk_want(ingot_disk_t *d, uint64_t p, uint64_t len, uint64_t deadline_ns);
/* Read [off, off + len) of piece @p p from its home node @p home (another node) into @p dst:
 * INGOT_OK, INGOT_ERR_NOT_FOUND (not there), another status (that home failed: said once). */
ingot_status_t ingot_disk_read_home(ingot_disk_t *d, uint64_t p, int home, uint64_t off,
                                    uint64_t len, void *dst, uint64_t deadline_ns);

#endif
